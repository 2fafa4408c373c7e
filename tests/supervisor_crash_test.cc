// Process level: the sluice-supervisor binary crashes at the publish
// transaction's fault points (--fault_points) and is restarted on the same
// data dir. A crash after the commit keeps the publish (the task's retry is
// told it is already committed); a crash before it keeps nothing (the retry
// commits).
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/deep_storage.h"
#include "common/open_deep_storage.h"
#include "common/file_util.h"
#include "common/kafka/mock_cluster.h"
#include "sluice/v1/supervisor_service.grpc.pb.h"
#include "supervisor/naming.h"
#include "common/offsets.h"
#include "supervisor/testing/fake_task_worker.h"
#include "supervisor/testing/segment_files.h"
#include "supervisor/testing/test_util.h"

namespace sluice::supervisor {
namespace {

constexpr int kCrashExitCode = 86;  // common/fault_injection.h

// One sluice-supervisor process with its log in a file.
class SupervisorProcess {
 public:
  SupervisorProcess(const std::string& data_dir, const std::string& deep_storage,
                    const std::string& fault_points, const std::string& log,
                    const std::string& listen) {
    const char* srcdir = getenv("TEST_SRCDIR");
    const std::string binary =
        absl::StrCat(srcdir ? srcdir : ".", "/sluice/supervisor/sluice-supervisor");
    std::vector<std::string> args = {binary,
                                     "--listen=" + listen,
                                     "--heartbeat_interval_ms=100",
                                     "--data_dir=" + data_dir,
                                     "--deep_storage=" + deep_storage,
                                     "--handoff_period_ms=100",
        "--insecure_no_auth",  // a crash test; auth: tests/cluster_auth_test.cc
                                     "--fault_points=" + fault_points};
    log_ = log;
    pid_ = fork();
    if (pid_ == 0) {
      FILE* out = freopen(log.c_str(), "w", stderr);
      (void)out;
      std::vector<char*> argv;
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(binary.c_str(), argv.data());
      _exit(127);
    }
  }

  ~SupervisorProcess() {
    if (pid_ > 0 && !exited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }

  // The bound address, read from the startup log line.
  std::string Address() {
    const std::string marker = "serving sluice.v1.SupervisorService on ";
    const absl::Time deadline = absl::Now() + absl::Seconds(20);
    while (absl::Now() < deadline) {
      std::ifstream in(log_);
      std::stringstream text;
      text << in.rdbuf();
      const std::string s = text.str();
      const size_t at = s.find(marker);
      if (at != std::string::npos) {
        const size_t start = at + marker.size();
        return s.substr(start, s.find(' ', start) - start);
      }
      absl::SleepFor(absl::Milliseconds(20));
    }
    ADD_FAILURE() << "the supervisor did not start; log:\n" << ReadFile(log_).value_or("");
    return "";
  }

  // Waits for the process to exit; its exit code (-1 on timeout or signal).
  int Wait(absl::Duration timeout) {
    const absl::Time deadline = absl::Now() + timeout;
    while (absl::Now() < deadline) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        exited_ = true;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
      absl::SleepFor(absl::Milliseconds(10));
    }
    return -1;
  }

 private:
  pid_t pid_ = -1;
  bool exited_ = false;
  std::string log_;
};

class SupervisorCrashTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cluster = kafka::MockCluster::Create(1);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = std::move(*cluster);
    ASSERT_TRUE(cluster_->CreateTopic("events", 2).ok());
    data_dir_ = dir_.path() + "/supervisor";
    deep_uri_ = "file://" + dir_.path() + "/deep";
  }

  std::unique_ptr<SupervisorProcess> Start(const std::string& fault_points,
                                           const std::string& listen = "127.0.0.1:0") {
    auto process = std::make_unique<SupervisorProcess>(
        data_dir_, deep_uri_, fault_points, absl::StrCat(dir_.path(), "/log", ++starts_), listen);
    address_ = process->Address();
    stub_ = v1::SupervisorService::NewStub(
        grpc::CreateChannel(address_, grpc::InsecureChannelCredentials()));
    return process;
  }

  template <typename Request, typename Response>
  grpc::Status Call(grpc::Status (v1::SupervisorService::Stub::*rpc)(grpc::ClientContext*,
                                                                     const Request&, Response*),
                    const Request& request, Response* response) {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
    return (stub_.get()->*rpc)(&context, request, response);
  }

  v1::GetCommitLogResponse CommitLog() {
    v1::GetCommitLogRequest ref;
    ref.set_datasource("wiki");
    v1::GetCommitLogResponse log;
    grpc::Status status = Call(&v1::SupervisorService::Stub::GetCommitLog, ref, &log);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return log;
  }

  // Submits the spec and waits until the first group recorded its offsets.
  void SubmitAndWaitForInitialOffsets() {
    v1::SubmitSupervisorRequest submit;
    *submit.mutable_spec() = testing::TestSpec("wiki", "events");
    (*submit.mutable_spec()
          ->mutable_io_config()
          ->mutable_consumer_properties())["bootstrap.servers"] = cluster_->bootstrap_servers();
    submit.mutable_spec()->mutable_io_config()->set_period("PT0.2S");
    v1::SubmitSupervisorResponse submitted;
    ASSERT_TRUE(Call(&v1::SupervisorService::Stub::SubmitSupervisor, submit, &submitted).ok());
    const absl::Time deadline = absl::Now() + absl::Seconds(15);
    while (CommitLog().initial_offsets().empty() && absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(20));
    }
    ASSERT_EQ(FromProto(CommitLog().initial_offsets()), (OffsetMap{{0, 0}, {1, 0}}));
  }

  // A task the supervisor assigned: a fake worker registers, the supervisor
  // runs the group's task on it. Sets task_ and sequence_ (its sequence 0).
  void StartWorkerAndWaitForTask() {
    testing::FakeTaskWorkerOptions options;
    options.worker_id = "w1";
    options.supervisor_address = address_;
    auto worker = testing::FakeTaskWorker::Start(options);
    ASSERT_TRUE(worker.ok()) << worker.status();
    worker_ = *std::move(worker);
    const absl::Time deadline = absl::Now() + absl::Seconds(15);
    while (task_.empty() && absl::Now() < deadline) {
      auto ids = worker_->TaskIds();
      if (!ids.empty()) task_ = ids[0];
      absl::SleepFor(absl::Milliseconds(20));
    }
    ASSERT_FALSE(task_.empty());
    sequence_ = SequenceName(worker_->Task(task_)->spec.base_sequence_name(), 0);
    // The task reads and asks for a checkpoint: the supervisor records
    // sequence 0's end {0:5, 1:3} and sets it (the range the publish covers).
    worker_->Read(task_, {{0, 5}, {1, 3}});
    v1::CheckpointDataSourceMetadataResponse answer;
    ASSERT_TRUE(Call(&v1::SupervisorService::Stub::CheckpointDataSourceMetadata,
                     worker_->RequestCheckpoint(task_), &answer)
                    .ok());
    const absl::Time set = absl::Now() + absl::Seconds(15);
    while (worker_->Task(task_)->sequences.size() < 2 && absl::Now() < set) {
      absl::SleepFor(absl::Milliseconds(20));
    }
    ASSERT_EQ(worker_->Task(task_)->sequences.size(), 2u);
  }

  // What that task sends for its sequence 0: one allocated, pushed segment
  // file built from the sequence's offsets.
  v1::PublishSegmentsRequest PublishRequest() {
    v1::AllocateSegmentRequest allocate;
    allocate.set_datasource("wiki");
    allocate.set_task_id(task_);
    allocate.set_sequence_name(sequence_);
    allocate.mutable_interval()->set_start_ms(testing::SegmentHourStartMs());
    allocate.mutable_interval()->set_end_ms(allocate.interval().start_ms() + 3600 * 1000);
    v1::AllocateSegmentResponse allocated;
    EXPECT_TRUE(Call(&v1::SupervisorService::Stub::AllocateSegment, allocate, &allocated).ok());
    auto deep = OpenDeepStorage(deep_uri_);
    EXPECT_TRUE(deep.ok());
    const std::string key = absl::StrCat("wiki/t/v/0/attempt_", ++pushes_, ".sluice");
    auto segment = testing::PushSegment(deep->get(), dir_.path(), key, "wiki", allocated, 8,
                                        {{0, {0, 5}}, {1, {0, 3}}});
    EXPECT_TRUE(segment.ok()) << segment.status();

    v1::PublishSegmentsRequest publish;
    publish.set_datasource("wiki");
    publish.set_task_id(task_);
    publish.set_sequence_name(sequence_);
    (*publish.mutable_start_offsets())[0] = 0;
    (*publish.mutable_start_offsets())[1] = 0;
    (*publish.mutable_end_offsets())[0] = 5;
    (*publish.mutable_end_offsets())[1] = 3;
    if (segment.ok()) *publish.add_segments() = *segment;
    return publish;
  }

  testing::TempDir dir_;
  std::unique_ptr<kafka::MockCluster> cluster_;
  std::string data_dir_;
  std::string deep_uri_;
  int starts_ = 0;
  int pushes_ = 0;
  std::string address_;
  std::unique_ptr<v1::SupervisorService::Stub> stub_;
  std::unique_ptr<testing::FakeTaskWorker> worker_;
  std::string task_;
  std::string sequence_;
};

TEST_F(SupervisorCrashTest, ACrashAfterThePublishCommitKeepsIt) {
  auto process = Start("supervisor.publish.after_commit=crash");
  SubmitAndWaitForInitialOffsets();
  StartWorkerAndWaitForTask();
  const v1::PublishSegmentsRequest publish = PublishRequest();
  v1::PublishSegmentsResponse response;
  grpc::Status status = Call(&v1::SupervisorService::Stub::PublishSegments, publish, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
  EXPECT_EQ(process->Wait(absl::Seconds(10)), kCrashExitCode);

  process = Start("");
  const v1::GetCommitLogResponse log = CommitLog();
  ASSERT_EQ(log.sequences_size(), 1);
  EXPECT_EQ(log.sequences(0).sequence_name(), sequence_);
  EXPECT_EQ(FromProto(log.committed_offsets()), (OffsetMap{{0, 5}, {1, 3}}));
  // The task's retry: already committed, and visible as published.
  status = Call(&v1::SupervisorService::Stub::PublishSegments, publish, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::ABORTED) << status.error_message();
  v1::GetPublishedSegmentsRequest check;
  check.set_datasource("wiki");
  check.set_sequence_name(sequence_);
  check.add_segment_ids(publish.segments(0).id());
  v1::GetPublishedSegmentsResponse found;
  ASSERT_TRUE(Call(&v1::SupervisorService::Stub::GetPublishedSegments, check, &found).ok());
  EXPECT_TRUE(found.sequence_committed());
  EXPECT_EQ(found.published_segment_ids_size(), 1);
}

TEST_F(SupervisorCrashTest, ACrashBeforeThePublishCommitKeepsNothing) {
  auto process = Start("supervisor.publish.before_commit=crash");
  SubmitAndWaitForInitialOffsets();
  StartWorkerAndWaitForTask();
  const v1::PublishSegmentsRequest publish = PublishRequest();
  v1::PublishSegmentsResponse response;
  grpc::Status status = Call(&v1::SupervisorService::Stub::PublishSegments, publish, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
  EXPECT_EQ(process->Wait(absl::Seconds(10)), kCrashExitCode);

  process = Start("");
  v1::GetCommitLogResponse log = CommitLog();
  EXPECT_EQ(log.sequences_size(), 0);
  EXPECT_EQ(FromProto(log.committed_offsets()), (OffsetMap{{0, 0}, {1, 0}}));
  // The task's retry commits.
  status = Call(&v1::SupervisorService::Stub::PublishSegments, publish, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.inserted_segment_ids_size(), 1);
  log = CommitLog();
  EXPECT_EQ(log.sequences_size(), 1);
  EXPECT_EQ(FromProto(log.committed_offsets()), (OffsetMap{{0, 5}, {1, 3}}));
}

TEST_F(SupervisorCrashTest, ACrashBetweenRecordingACheckpointAndSettingItIsRepairedOnRestart) {
  auto process = Start("supervisor.checkpoint.before_set_end_offsets=crash");
  testing::FakeTaskWorkerOptions options;
  options.worker_id = "w1";
  options.supervisor_address = address_;
  auto worker = testing::FakeTaskWorker::Start(options);
  ASSERT_TRUE(worker.ok()) << worker.status();
  SubmitAndWaitForInitialOffsets();
  std::string task;
  const absl::Time deadline = absl::Now() + absl::Seconds(15);
  while (task.empty() && absl::Now() < deadline) {
    auto ids = (*worker)->TaskIds();
    if (!ids.empty()) task = ids[0];
    absl::SleepFor(absl::Milliseconds(20));
  }
  ASSERT_FALSE(task.empty());

  // The task read some records and asks for a checkpoint: the supervisor
  // pauses it, records {0:4, 1:2} and dies before SetEndOffsets.
  (*worker)->Read(task, {{0, 4}, {1, 2}});
  v1::CheckpointDataSourceMetadataResponse answer;
  ASSERT_TRUE(Call(&v1::SupervisorService::Stub::CheckpointDataSourceMetadata,
                   (*worker)->RequestCheckpoint(task), &answer)
                  .ok());
  EXPECT_EQ(process->Wait(absl::Seconds(10)), kCrashExitCode);
  EXPECT_EQ((*worker)->Task(task)->sequences.size(), 1u);
  EXPECT_TRUE((*worker)->Task(task)->paused);

  // Restarted on the same address: the worker registers again, the task is
  // adopted and gets the end offsets it missed.
  const std::string address = address_;
  process = Start("", address);
  const absl::Time repaired = absl::Now() + absl::Seconds(15);
  while ((*worker)->Task(task)->sequences.size() < 2 && absl::Now() < repaired) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  auto state = (*worker)->Task(task);
  ASSERT_EQ(state->sequences.size(), 2u);
  EXPECT_EQ(state->sequences[0].end, (OffsetMap{{0, 4}, {1, 2}}));
  EXPECT_EQ(state->state, v1::TASK_STATE_READING);
  EXPECT_EQ((*worker)->Calls("RunTask"), 1);
}

}  // namespace
}  // namespace sluice::supervisor
