// A task publishes its segments to S3 and the supervisor hands them off from
// there: the in-process cluster (supervisor and one worker) with
// --deep_storage=s3://... on s3s-fs, ingesting from a mock Kafka.
#include <gtest/gtest.h>
#include <grpcpp/grpcpp.h>

#include <map>
#include <sstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/open_deep_storage.h"
#include "sluice/v1/supervisor_service.grpc.pb.h"
#include "tests/in_process_cluster.h"
#include "tests/s3/s3_server.h"
#include "tests/task_mock_kafka.h"
#include "tests/task_test_util.h"
#include "tools/cli/commands.h"

namespace sluice {
namespace {

constexpr int kPartitions = 2;
constexpr int kRecords = 60;  // per partition

TEST(S3ClusterTest, SegmentsArePushedToS3AndHandedOffFromThere) {
  s3::testing::S3Server* server = s3::testing::SharedS3Server();
  ASSERT_NE(server, nullptr);
  const std::string bucket = s3::testing::UniqueBucket();
  ASSERT_TRUE(server->CreateBucket(bucket).ok());

  auto kafka = testing::MockKafka::Start();
  ASSERT_TRUE(kafka.ok()) << kafka.status();
  ASSERT_TRUE((*kafka)->CreateTopic("wiki", kPartitions).ok());
  std::map<int32_t, int64_t> end;
  for (int32_t p = 0; p < kPartitions; ++p) {
    std::vector<std::string> values;
    for (int n = 0; n < kRecords; ++n) values.push_back(testing::Record(p, n));
    ASSERT_TRUE((*kafka)->Produce("wiki", p, values).ok());
    end[p] = kRecords;
  }

  testing::InProcessClusterOptions options;
  options.worker_knobs.kafka_cluster = kafka::ClusterKind::kDevBroker;
  options.worker_knobs.handoff_poll_interval = absl::Milliseconds(50);
  options.handoff_period = absl::Milliseconds(100);
  options.deep_storage_uri = absl::StrCat("s3://", bucket, "/deep");
  options.deep_storage_options.s3 = server->Options();
  auto cluster = testing::InProcessCluster::Start(options);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  auto stub = v1::SupervisorService::NewStub(
      grpc::CreateChannel((*cluster)->supervisor().address(), grpc::InsecureChannelCredentials()));

  v1::SupervisorSpec spec;
  spec.set_datasource("wiki");
  v1::IoConfig* io = spec.mutable_io_config();
  io->set_topic("wiki");
  (*io->mutable_consumer_properties())["bootstrap.servers"] = (*kafka)->bootstrap();
  io->set_task_duration("PT1H");
  io->set_start_delay("PT0.1S");
  io->set_period("PT0.2S");
  io->set_use_earliest_offset(true);
  io->set_poll_timeout("PT0.05S");
  spec.mutable_data_schema()->mutable_timestamp_spec()->set_format("millis");
  v1::MetricSpec* count = spec.mutable_data_schema()->add_metrics_spec();
  count->set_type("count");
  count->set_name("count");
  spec.mutable_tuning_config()->set_max_rows_per_segment(40);  // several segments
  spec.mutable_tuning_config()->set_handoff_mode(v1::HANDOFF_MODE_DEEP_STORAGE);
  spec.mutable_tuning_config()->set_handoff_condition_timeout("PT30S");
  {
    v1::SubmitSupervisorRequest request;
    *request.mutable_spec() = spec;
    v1::SubmitSupervisorResponse response;
    grpc::ClientContext ctx;
    const grpc::Status status = stub->SubmitSupervisor(&ctx, request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }
  // Every record read (the task's current offsets at the end), then suspend:
  // the open sequences publish and hand off.
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        v1::SupervisorServiceListTasksRequest request;
        request.set_datasource("wiki");
        v1::SupervisorServiceListTasksResponse tasks;
        grpc::ClientContext ctx;
        if (!stub->ListTasks(&ctx, request, &tasks).ok() || tasks.tasks_size() == 0) return false;
        for (const auto& [p, e] : end) {
          const auto it = tasks.tasks(0).current_offsets().find(p);
          if (it == tasks.tasks(0).current_offsets().end() || it->second != e) return false;
        }
        return true;
      },
      absl::Seconds(30)));
  {
    v1::SuspendSupervisorRequest ref;
    ref.set_datasource("wiki");
    v1::SuspendSupervisorResponse summary;
    grpc::ClientContext ctx;
    ASSERT_TRUE(stub->SuspendSupervisor(&ctx, ref, &summary).ok());
  }
  v1::ListSegmentsResponse segments;
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        v1::ListSegmentsRequest list;
        list.set_datasource("wiki");
        segments.Clear();
        grpc::ClientContext ctx;
        if (!stub->ListSegments(&ctx, list, &segments).ok()) return false;
        int64_t rows = 0;
        for (const v1::SegmentDescriptor& s : segments.segments()) {
          if (s.handoff_state() != v1::HANDOFF_STATE_HANDED_OFF) return false;
          rows += s.num_rows();
        }
        return segments.segments_size() > 0 && rows == kPartitions * kRecords;
      },
      absl::Seconds(60)))
      << segments.DebugString();

  const std::string prefix = absl::StrCat("s3://", bucket, "/deep/wiki/");
  for (const v1::SegmentDescriptor& s : segments.segments()) {
    ASSERT_TRUE(absl::StartsWith(s.path(), prefix)) << s.path();
    // The object is in the server's bucket, with the published size.
    const std::string key = s.path().substr(absl::StrCat("s3://", bucket, "/").size());
    absl::StatusOr<std::string> stored = ReadFile(server->ObjectPath(bucket, key));
    ASSERT_TRUE(stored.ok()) << stored.status();
    EXPECT_EQ(static_cast<int64_t>(stored->size()), s.size_bytes());
  }
  // Nothing was written to a local deep storage.
  EXPECT_FALSE(PathExists((*cluster)->dir() + "/deep"));

  // sluicectl verify reads the segments back from S3: PASS with the deep
  // storage, FAIL (saying what is missing) without it, FAIL naming the
  // segment once an object is damaged.
  absl::StatusOr<std::unique_ptr<DeepStorage>> storage =
      OpenDeepStorage(absl::StrCat("s3://", bucket, "/deep"), {.s3 = server->Options()});
  ASSERT_TRUE(storage.ok()) << storage.status();
  const std::string scratch = (*cluster)->dir() + "/verify-scratch";
  ASSERT_TRUE(MakeDirs(scratch).ok());
  sluicectl::CliOptions cli;
  cli.bootstrap = (*kafka)->bootstrap();
  cli.kafka_cluster = "dev";
  cli.expect_records = kPartitions * kRecords;
  cli.deep_storage = storage->get();
  cli.scratch_dir = scratch;
  {
    std::ostringstream out, err;
    EXPECT_EQ(sluicectl::RunCommand({"verify", "wiki"}, cli, *stub, out, err), sluicectl::kExitOk)
        << out.str() << err.str();
    EXPECT_TRUE(absl::StrContains(out.str(), "PASS")) << out.str();
  }
  {
    sluicectl::CliOptions no_storage = cli;
    no_storage.deep_storage = nullptr;
    std::ostringstream out, err;
    EXPECT_EQ(sluicectl::RunCommand({"verify", "wiki"}, no_storage, *stub, out, err),
              sluicectl::kExitAuditFailed)
        << out.str() << err.str();
    EXPECT_TRUE(absl::StrContains(out.str(), "remote deep storage")) << out.str();
  }
  {
    const v1::SegmentDescriptor& victim = segments.segments(0);
    const std::string key = victim.path().substr(absl::StrCat("s3://", bucket, "/").size());
    const std::string object = server->ObjectPath(bucket, key);
    absl::StatusOr<std::string> bytes = ReadFile(object);
    ASSERT_TRUE(bytes.ok()) << bytes.status();
    (*bytes)[bytes->size() / 2] ^= 0x5a;
    ASSERT_TRUE(WriteFileAtomically(object, *bytes).ok());
    std::ostringstream out, err;
    EXPECT_EQ(sluicectl::RunCommand({"verify", "wiki"}, cli, *stub, out, err),
              sluicectl::kExitAuditFailed)
        << out.str() << err.str();
    EXPECT_TRUE(absl::StrContains(out.str(), victim.id())) << out.str();
  }
}

}  // namespace
}  // namespace sluice
