// In-process: the real supervisor server (SQLite, deep storage directory,
// librdkafka metadata against a mock Kafka cluster) on 127.0.0.1:0, driven
// through its gRPC API, with scripted task workers that are real gRPC servers
// registering and heartbeating over gRPC like real workers.
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <functional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "common/file_util.h"
#include "common/kafka/mock_cluster.h"
#include "common/kafka/producer.h"
#include "common/metrics/registry.h"
#include "common/open_deep_storage.h"
#include "sluice/v1/supervisor_service.grpc.pb.h"
#include "supervisor/naming.h"
#include "supervisor/supervisor_server.h"
#include "supervisor/testing/fake_task_worker.h"
#include "supervisor/testing/segment_files.h"
#include "supervisor/testing/test_util.h"

namespace sluice::supervisor {
namespace {

using testing::FakeTaskWorker;

// Polls `done` until it holds or 15 s pass.
bool WaitFor(const std::function<bool()>& done) {
  const absl::Time deadline = absl::Now() + absl::Seconds(15);
  while (absl::Now() < deadline) {
    if (done()) return true;
    absl::SleepFor(absl::Milliseconds(20));
  }
  return done();
}

class SupervisorServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cluster = kafka::MockCluster::Create(1);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = std::move(*cluster);
    ASSERT_TRUE(cluster_->CreateTopic("events", 2).ok());
    StartServer("127.0.0.1:0");
  }

  void TearDown() override {
    workers_.clear();
    server_.reset();
  }

  void StartServer(const std::string& address) {
    SupervisorServerOptions options;
    options.auth.insecure_no_auth = true;  // auth: tests/cluster_auth_test.cc
    options.listen_address = address;
    options.data_dir = dir_.path() + "/supervisor";
    options.heartbeat_interval = absl::Milliseconds(100);
    options.min_worker_lost_timeout = absl::Seconds(3);
    options.handoff_period = absl::Milliseconds(100);
    options.metrics = &metrics_;
    auto server = SupervisorServer::Start(options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    stub_ = v1::SupervisorService::NewStub(
        grpc::CreateChannel(server_->address(), grpc::InsecureChannelCredentials()));
  }

  FakeTaskWorker* AddWorker(const std::string& id) {
    testing::FakeTaskWorkerOptions options;
    options.worker_id = id;
    options.supervisor_address = server_->address();
    auto worker = FakeTaskWorker::Start(options);
    EXPECT_TRUE(worker.ok()) << worker.status();
    workers_.push_back(std::move(*worker));
    return workers_.back().get();
  }

  v1::SupervisorSpec Spec() {
    v1::SupervisorSpec spec = testing::TestSpec("wiki", "events");
    (*spec.mutable_io_config()->mutable_consumer_properties())["bootstrap.servers"] =
        cluster_->bootstrap_servers();
    spec.mutable_io_config()->set_period("PT0.2S");
    spec.mutable_tuning_config()->set_chat_timeout("PT1S");
    return spec;
  }

  template <typename Request, typename Response>
  grpc::Status Call(grpc::Status (v1::SupervisorService::Stub::*rpc)(grpc::ClientContext*,
                                                                     const Request&, Response*),
                    const Request& request, Response* response) {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(20)));
    return (stub_.get()->*rpc)(&context, request, response);
  }

  v1::SupervisorStatus Status() {
    v1::GetSupervisorStatusRequest ref;
    ref.set_datasource("wiki");
    v1::GetSupervisorStatusResponse response;
    Call(&v1::SupervisorService::Stub::GetSupervisorStatus, ref, &response);
    return response.status();
  }

  // The one task of the one active group, once it is running on a worker.
  std::string WaitForTask() {
    std::string task;
    EXPECT_TRUE(WaitFor([&] {
      const v1::SupervisorStatus status = Status();
      if (status.active_groups_size() != 1 || status.active_groups(0).tasks_size() != 1) {
        return false;
      }
      task = status.active_groups(0).tasks(0).task_id();
      // The status lists a task as soon as its group has it, which can be
      // before RunTask has reached the worker.
      return WorkerOf(task) != nullptr;
    })) << Status().DebugString();
    return task;
  }

  FakeTaskWorker* WorkerOf(const std::string& task) {
    for (auto& w : workers_) {
      if (w->Task(task)) return w.get();
    }
    return nullptr;
  }

  testing::TempDir dir_;
  metrics::Registry metrics_;  // outlives the server
  std::unique_ptr<kafka::MockCluster> cluster_;
  std::unique_ptr<SupervisorServer> server_;
  std::unique_ptr<v1::SupervisorService::Stub> stub_;
  std::vector<std::unique_ptr<FakeTaskWorker>> workers_;
};

TEST_F(SupervisorServiceTest, SpecValidationErrorsNameTheField) {
  struct Case {
    std::function<void(v1::SupervisorSpec*)> breaks;
    std::string field;
  };
  const std::vector<Case> cases = {
      {[](v1::SupervisorSpec* s) { s->set_datasource("bad/name"); }, "datasource"},
      {[](v1::SupervisorSpec* s) { s->mutable_io_config()->clear_topic(); }, "ioConfig.topic"},
      {[](v1::SupervisorSpec* s) {
         s->mutable_io_config()->mutable_consumer_properties()->clear();
       },
       "bootstrap.servers"},
      {[](v1::SupervisorSpec* s) { s->mutable_io_config()->set_replicas(-2); },
       "ioConfig.replicas"},
      {[](v1::SupervisorSpec* s) { s->mutable_io_config()->set_task_duration("an hour"); },
       "ioConfig.taskDuration"},
      {[](v1::SupervisorSpec* s) {
         s->mutable_data_schema()->mutable_granularity_spec()->set_segment_granularity("FORTNIGHT");
       },
       "segmentGranularity"},
      {[](v1::SupervisorSpec* s) {
         s->mutable_data_schema()->mutable_metrics_spec(0)->set_type("avg");
       },
       "metricsSpec[0].type"},
  };
  for (const Case& c : cases) {
    v1::SubmitSupervisorRequest request;
    *request.mutable_spec() = Spec();
    c.breaks(request.mutable_spec());
    v1::SubmitSupervisorResponse response;
    grpc::Status status = Call(&v1::SupervisorService::Stub::SubmitSupervisor, request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << c.field;
    EXPECT_TRUE(absl::StrContains(status.error_message(), c.field))
        << c.field << ": " << status.error_message();
  }
  v1::ListSupervisorsResponse list;
  ASSERT_TRUE(
      Call(&v1::SupervisorService::Stub::ListSupervisors, v1::ListSupervisorsRequest(), &list)
          .ok());
  EXPECT_EQ(list.supervisors_size(), 0);
}

TEST_F(SupervisorServiceTest, AnUnknownDatasourceIsNotFoundEverywhere) {
  // Every call that names one datasource: its own request type, each with
  // the same `datasource` field.
  auto not_found = [&](auto rpc, auto request, auto response) {
    request.set_datasource("nobody");
    return Call(rpc, request, &response).error_code() == grpc::StatusCode::NOT_FOUND;
  };
  using Stub = v1::SupervisorService::Stub;
  EXPECT_TRUE(not_found(&Stub::GetSupervisor, v1::GetSupervisorRequest(),
                        v1::GetSupervisorResponse()));
  EXPECT_TRUE(not_found(&Stub::GetSupervisorStatus, v1::GetSupervisorStatusRequest(),
                        v1::GetSupervisorStatusResponse()));
  EXPECT_TRUE(not_found(&Stub::SuspendSupervisor, v1::SuspendSupervisorRequest(),
                        v1::SuspendSupervisorResponse()));
  EXPECT_TRUE(not_found(&Stub::ResumeSupervisor, v1::ResumeSupervisorRequest(),
                        v1::ResumeSupervisorResponse()));
  EXPECT_TRUE(not_found(&Stub::ResetSupervisor, v1::ResetSupervisorRequest(),
                        v1::ResetSupervisorResponse()));
  EXPECT_TRUE(not_found(&Stub::TerminateSupervisor, v1::TerminateSupervisorRequest(),
                        v1::TerminateSupervisorResponse()));
  EXPECT_TRUE(not_found(&Stub::GetCommitLog, v1::GetCommitLogRequest(),
                        v1::GetCommitLogResponse()));
  v1::ListSegmentsRequest list;
  list.set_datasource("nobody");
  v1::ListSegmentsResponse segments;
  EXPECT_EQ(Call(&v1::SupervisorService::Stub::ListSegments, list, &segments).error_code(),
            grpc::StatusCode::NOT_FOUND);
  v1::CheckpointDataSourceMetadataRequest checkpoint;
  checkpoint.set_datasource("nobody");
  checkpoint.set_task_id("t");
  (*checkpoint.mutable_start_offsets())[0] = 0;
  v1::CheckpointDataSourceMetadataResponse answer;
  EXPECT_EQ(Call(&v1::SupervisorService::Stub::CheckpointDataSourceMetadata, checkpoint, &answer)
                .error_code(),
            grpc::StatusCode::NOT_FOUND);
  v1::AllocateSegmentRequest allocate;
  allocate.set_datasource("nobody");
  allocate.set_sequence_name("s");
  v1::AllocateSegmentResponse allocated;
  EXPECT_EQ(Call(&v1::SupervisorService::Stub::AllocateSegment, allocate, &allocated).error_code(),
            grpc::StatusCode::NOT_FOUND);
  v1::PublishSegmentsRequest publish;
  publish.set_datasource("nobody");
  publish.set_sequence_name("s");
  (*publish.mutable_start_offsets())[0] = 0;
  (*publish.mutable_end_offsets())[0] = 1;
  v1::PublishSegmentsResponse published;
  EXPECT_EQ(Call(&v1::SupervisorService::Stub::PublishSegments, publish, &published).error_code(),
            grpc::StatusCode::NOT_FOUND);
  // A name that cannot be a datasource at all is invalid, not unknown.
  v1::GetSupervisorRequest invalid;
  invalid.set_datasource("../etc");
  v1::GetSupervisorResponse spec;
  EXPECT_EQ(Call(&v1::SupervisorService::Stub::GetSupervisor, invalid, &spec).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(SupervisorServiceTest, ACheckpointAndAPublishThroughTheApi) {
  // Two records per partition so there is real lag.
  auto producer = kafka::Producer::Create({{"bootstrap.servers", cluster_->bootstrap_servers()}});
  ASSERT_TRUE(producer.ok()) << producer.status();
  for (int p = 0; p < 2; ++p) {
    for (int i = 0; i < 2; ++i) ASSERT_TRUE((*producer)->Produce("events", p, "{}").ok());
  }
  ASSERT_TRUE((*producer)->Flush(absl::Seconds(10)).ok());

  AddWorker("w1");
  v1::SubmitSupervisorRequest submit;
  *submit.mutable_spec() = Spec();
  v1::SubmitSupervisorResponse submitted;
  ASSERT_TRUE(Call(&v1::SupervisorService::Stub::SubmitSupervisor, submit, &submitted).ok());
  EXPECT_EQ(submitted.version(), 1);
  EXPECT_EQ(submitted.spec().tuning_config().max_rows_per_segment(), 5000000);  // defaults filled

  const std::string task = WaitForTask();
  FakeTaskWorker* worker = WorkerOf(task);
  ASSERT_NE(worker, nullptr);
  ASSERT_TRUE(WaitFor([&] { return Status().aggregate_lag() == 4; })) << Status().DebugString();

  // The task read everything and asks for a checkpoint.
  worker->Read(task, {{0, 2}, {1, 2}});
  v1::CheckpointDataSourceMetadataResponse answer;
  ASSERT_TRUE(Call(&v1::SupervisorService::Stub::CheckpointDataSourceMetadata,
                   worker->RequestCheckpoint(task), &answer)
                  .ok());
  EXPECT_TRUE(answer.accepted());
  ASSERT_TRUE(WaitFor([&] { return worker->Task(task)->sequences.size() == 2; }));
  const std::string base = worker->Task(task)->spec.base_sequence_name();

  // It allocates, pushes and publishes sequence 0.
  v1::AllocateSegmentRequest allocate;
  allocate.set_datasource("wiki");
  allocate.set_task_id(task);
  allocate.set_sequence_name(SequenceName(base, 0));
  const int64_t hour = 3600 * 1000;
  allocate.mutable_interval()->set_start_ms(testing::SegmentHourStartMs());
  allocate.mutable_interval()->set_end_ms(allocate.interval().start_ms() + hour);
  v1::AllocateSegmentResponse allocated;
  ASSERT_TRUE(Call(&v1::SupervisorService::Stub::AllocateSegment, allocate, &allocated).ok());
  auto deep = OpenDeepStorage("file://" + dir_.path() + "/supervisor/deep-storage");
  ASSERT_TRUE(deep.ok());
  auto segment = testing::PushSegment(deep->get(), dir_.path(), "wiki/a/b/0/" + task + "_0.sluice",
                                      "wiki", allocated, 50, {{0, {0, 2}}, {1, {0, 2}}});
  ASSERT_TRUE(segment.ok()) << segment.status();
  v1::PublishSegmentsRequest publish;
  publish.set_datasource("wiki");
  publish.set_task_id(task);
  publish.set_sequence_name(SequenceName(base, 0));
  (*publish.mutable_start_offsets())[0] = 0;
  (*publish.mutable_start_offsets())[1] = 0;
  (*publish.mutable_end_offsets())[0] = 2;
  (*publish.mutable_end_offsets())[1] = 2;
  *publish.add_segments() = *segment;
  v1::PublishSegmentsResponse published;
  ASSERT_TRUE(Call(&v1::SupervisorService::Stub::PublishSegments, publish, &published).ok());
  EXPECT_EQ(published.inserted_segment_ids_size(), 1);
  // A replica publishing the same sequence is told it is behind...
  EXPECT_EQ(Call(&v1::SupervisorService::Stub::PublishSegments, publish, &published).error_code(),
            grpc::StatusCode::ABORTED);
  // ...and finds it published.
  v1::GetPublishedSegmentsRequest check;
  check.set_datasource("wiki");
  check.set_sequence_name(SequenceName(base, 0));
  check.add_segment_ids(allocated.segment_id());
  v1::GetPublishedSegmentsResponse found;
  ASSERT_TRUE(Call(&v1::SupervisorService::Stub::GetPublishedSegments, check, &found).ok());
  EXPECT_TRUE(found.sequence_committed());
  EXPECT_EQ(found.published_segment_ids_size(), 1);

  // The background verifier hands it off.
  v1::GetHandoffStatusRequest handoff;
  handoff.set_datasource("wiki");
  handoff.add_segment_ids(allocated.segment_id());
  ASSERT_TRUE(WaitFor([&] {
    v1::GetHandoffStatusResponse r;
    return Call(&v1::SupervisorService::Stub::GetHandoffStatus, handoff, &r).ok() &&
           r.handed_off_segment_ids_size() == 1;
  }));

  v1::GetCommitLogRequest ref;
  ref.set_datasource("wiki");
  v1::GetCommitLogResponse log;
  ASSERT_TRUE(Call(&v1::SupervisorService::Stub::GetCommitLog, ref, &log).ok());
  EXPECT_EQ(log.topic(), "events");
  EXPECT_EQ(log.sequences_size(), 1);
  EXPECT_EQ(FromProto(log.initial_offsets()), (OffsetMap{{0, 0}, {1, 0}}));
  EXPECT_EQ(FromProto(log.committed_offsets()), (OffsetMap{{0, 2}, {1, 2}}));
  ASSERT_TRUE(WaitFor([&] { return Status().aggregate_lag() == 0; })) << Status().DebugString();
  EXPECT_EQ(Status().segments_published(), 1);

  v1::SupervisorServiceListTasksResponse tasks;
  ASSERT_TRUE(
      Call(&v1::SupervisorService::Stub::ListTasks, v1::SupervisorServiceListTasksRequest(), &tasks).ok());
  ASSERT_EQ(tasks.tasks_size(), 1);
  EXPECT_EQ(tasks.tasks(0).worker_id(), "w1");
  v1::ListWorkersResponse workers;
  ASSERT_TRUE(
      Call(&v1::SupervisorService::Stub::ListWorkers, v1::ListWorkersRequest(), &workers).ok());
  ASSERT_EQ(workers.workers_size(), 1);
  EXPECT_TRUE(workers.workers(0).alive());
  EXPECT_EQ(workers.workers(0).running_tasks(), 1);

  // What the process exports (common/metrics/catalog.h).
  const std::string text = metrics_.Render();
  for (const char* line : {
           "sluice_supervisor_checkpoints_total{datasource=\"wiki\"} 1\n",
           "sluice_supervisor_publishes_total{code=\"OK\",datasource=\"wiki\"} 1\n",
           "sluice_supervisor_publishes_total{code=\"ABORTED\",datasource=\"wiki\"} 1\n",
           "sluice_supervisor_segments_published_total{datasource=\"wiki\"} 1\n",
           "sluice_supervisor_handoff_seconds_count{datasource=\"wiki\"} 1\n",
           "sluice_supervisor_checkpoint_seconds_count{datasource=\"wiki\"} 1\n",
           "sluice_supervisor_workers{state=\"alive\"} 1\n",
           "sluice_supervisor_tasks{datasource=\"wiki\",state=\"READING\"} 1\n",
           "sluice_supervisor_partition_lag{datasource=\"wiki\",partition=\"0\"} 0\n",
       }) {
    EXPECT_TRUE(absl::StrContains(text, line)) << line << " not in\n" << text;
  }
}

TEST_F(SupervisorServiceTest, ARestartedSupervisorAdoptsItsTasksAndResumesAPausedOne) {
  AddWorker("w1");
  v1::SubmitSupervisorRequest submit;
  *submit.mutable_spec() = Spec();
  v1::SubmitSupervisorResponse submitted;
  ASSERT_TRUE(Call(&v1::SupervisorService::Stub::SubmitSupervisor, submit, &submitted).ok());
  const std::string task = WaitForTask();
  FakeTaskWorker* worker = WorkerOf(task);

  // Mid-run: the task pauses to ask for a checkpoint just as the supervisor
  // goes down, so the request never reaches it.
  const std::string address = server_->address();
  server_->Shutdown(absl::ZeroDuration());
  server_.reset();
  worker->Read(task, {{0, 1}});
  worker->RequestCheckpoint(task);
  ASSERT_TRUE(worker->Task(task)->paused);

  StartServer(address);  // same address: the worker finds it and registers again
  ASSERT_TRUE(WaitFor([&] { return !worker->Task(task)->paused; }));
  EXPECT_EQ(worker->Task(task)->state, v1::TASK_STATE_READING);
  EXPECT_EQ(worker->Calls("RunTask"), 1);  // adopted, not recreated
  const v1::SupervisorStatus status = Status();
  ASSERT_EQ(status.active_groups_size(), 1);
  ASSERT_EQ(status.active_groups(0).tasks_size(), 1);
  EXPECT_EQ(status.active_groups(0).tasks(0).task_id(), task);
}

}  // namespace
}  // namespace sluice::supervisor

namespace sluice::supervisor {
namespace {

TEST_F(SupervisorServiceTest, RequestsBeyondTheirBoundsAreRefusedNamingTheField) {
  v1::SubmitSupervisorRequest submit;
  *submit.mutable_spec() = Spec();
  submit.mutable_spec()->mutable_io_config()->set_task_count(0);
  v1::SubmitSupervisorResponse submitted;
  grpc::Status status = Call(&v1::SupervisorService::Stub::SubmitSupervisor, submit, &submitted);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(), "spec.ioConfig.taskCount must be at least 1 (got 0)");

  v1::AllocateSegmentRequest allocate;
  allocate.set_datasource("wiki");
  allocate.set_sequence_name(std::string(4096, 's'));
  v1::AllocateSegmentResponse allocated;
  status = Call(&v1::SupervisorService::Stub::AllocateSegment, allocate, &allocated);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(), "sequenceName is 4096 bytes long; at most 512");

  // Each method bounds its whole request (limits.proto's method_limits):
  // AllocateSegment takes the default 64 KiB, SubmitSupervisor 1 MiB.
  allocate.set_sequence_name(std::string(100 << 10, 's'));
  status = Call(&v1::SupervisorService::Stub::AllocateSegment, allocate, &allocated);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_TRUE(absl::StrContains(status.error_message(),
                                "AllocateSegment requests are bounded to 65536 bytes"))
      << status.error_message();

  v1::SupervisorServiceListTasksRequest tasks;
  tasks.set_datasource(std::string(3 << 10, 'd'));
  v1::SupervisorServiceListTasksResponse listed;
  status = Call(&v1::SupervisorService::Stub::ListTasks, tasks, &listed);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StrContains(status.error_message(), "at most 128")) << status.error_message();

  tasks.set_datasource(std::string(3 << 20, 'd'));
  status = Call(&v1::SupervisorService::Stub::ListTasks, tasks, &listed);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << status.error_message();
  EXPECT_TRUE(absl::StrContains(status.error_message(), "ListTasks requests are bounded to 65536"))
      << status.error_message();

  // Past the server's request bound (4 MiB) gRPC refuses the message before
  // it is decoded, whoever sends it.
  tasks.set_datasource(std::string(5 << 20, 'd'));
  status = Call(&v1::SupervisorService::Stub::ListTasks, tasks, &listed);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << status.error_message();
}

TEST_F(SupervisorServiceTest, AnUnparseableRequestIsInvalidArgumentWithAMessage) {
  grpc::GenericStub generic(
      grpc::CreateChannel(server_->address(), grpc::InsecureChannelCredentials()));
  // Field 1 (datasource) as a length-delimited value claiming 100 bytes of 3.
  const std::string garbage = "\x0a\x64" "abc";
  grpc::Slice slice(garbage);
  grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer response;
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
  absl::Notification done;
  grpc::Status status;
  generic.UnaryCall(&context, "/sluice.v1.SupervisorService/GetSupervisorStatus",
                    grpc::StubOptions(), &request, &response, [&](grpc::Status s) {
                                     status = std::move(s);
                                     done.Notify();
                                   });
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(15)));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  EXPECT_EQ(status.error_message(),
            "the request to /sluice.v1.SupervisorService/GetSupervisorStatus is not a valid "
            "sluice.v1.GetSupervisorStatusRequest (it could not be parsed); nothing was changed");
}

TEST_F(SupervisorServiceTest, ResetOffsetsRefusesPartitionsTheTopicDoesNotHave) {
  AddWorker("w1");
  v1::SubmitSupervisorRequest submit;
  *submit.mutable_spec() = Spec();
  v1::SubmitSupervisorResponse submitted;
  ASSERT_TRUE(Call(&v1::SupervisorService::Stub::SubmitSupervisor, submit, &submitted).ok());
  ASSERT_TRUE(WaitFor([&] { return Status().latest_offsets_size() == 2; }))
      << Status().DebugString();

  v1::ResetOffsetsRequest reset;
  reset.set_datasource("wiki");
  (*reset.mutable_offsets())[9] = 5;
  v1::ResetOffsetsResponse summary;
  grpc::Status status = Call(&v1::SupervisorService::Stub::ResetOffsets, reset, &summary);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(),
            "topic \"events\" has no partition 9 (it has 2: 0 to 1); nothing was reset");
  EXPECT_FALSE(Status().committed_offsets().contains(9));

  reset.clear_offsets();
  (*reset.mutable_offsets())[1] = -3;
  status = Call(&v1::SupervisorService::Stub::ResetOffsets, reset, &summary);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(), "offsets[\"1\"] must be at least 0 (got -3)");

  // A partition it has: accepted, and the reset is in the commit log.
  reset.clear_offsets();
  (*reset.mutable_offsets())[1] = 0;
  ASSERT_TRUE(Call(&v1::SupervisorService::Stub::ResetOffsets, reset, &summary).ok());
  v1::GetCommitLogRequest ref;
  ref.set_datasource("wiki");
  v1::GetCommitLogResponse log;
  ASSERT_TRUE(WaitFor([&] {
    log.Clear();
    return Call(&v1::SupervisorService::Stub::GetCommitLog, ref, &log).ok() &&
           log.resets_size() == 1;
  })) << log.DebugString();
  EXPECT_EQ(log.resets(0).partition(), 1);
  EXPECT_EQ(log.resets(0).new_offset(), 0);
  EXPECT_EQ(log.resets(0).reason(), "operator reset of offsets");
}

}  // namespace
}  // namespace sluice::supervisor
