#include "tests/task_cluster.h"

#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/open_deep_storage.h"
#include "common/status_macros.h"

namespace sluice::testing {

using ::sluice::OffsetMap;

absl::Status TaskCluster::Start(bool auto_checkpoint, int capacity, bool hand_off) {
  dir = MakeTempDir("task_cluster");
  if (dir.empty()) return absl::InternalError("no temporary directory");
  SLUICE_ASSIGN_OR_RETURN(kafka, MockKafka::Start());
  SLUICE_RETURN_IF_ERROR(kafka->CreateTopic("wiki", 2));
  SLUICE_ASSIGN_OR_RETURN(deep, OpenDeepStorage("file://" + dir + "/deep"));
  FakeSupervisorOptions fake;
  fake.datasource = "wiki";
  fake.deep_storage = deep.get();
  fake.auto_checkpoint = auto_checkpoint;
  fake.hand_off = hand_off;
  SLUICE_ASSIGN_OR_RETURN(supervisor, FakeSupervisor::Start(fake));
  supervisor->SetStoredOffsets({{0, 0}, {1, 0}});
  supervisor->AddGroup(0, kTestBase, {{0, 0}, {1, 0}});

  task::WorkerServerOptions options;
  options.auth.insecure_no_auth = true;  // auth: tests/cluster_auth_test.cc
  options.data_dir = dir + "/worker";
  options.supervisor_address = supervisor->address();
  options.deep_storage_uri = "file://" + dir + "/deep";
  options.worker_id = "worker-0";
  options.capacity = capacity;
  options.heartbeat_interval = absl::Milliseconds(100);
  options.tuning.handoff_poll_interval = absl::Milliseconds(50);
  options.tuning.min_backoff = absl::Milliseconds(20);
  options.tuning.max_backoff = absl::Milliseconds(200);
  options.tuning.offset_out_of_range_retry = absl::Milliseconds(100);
  options.tuning.kafka_cluster = kafka::ClusterKind::kDevBroker;
  SLUICE_ASSIGN_OR_RETURN(worker, task::WorkerServer::Start(options));
  client = std::make_unique<TaskClient>(worker->address());
  return absl::OkStatus();
}

TaskCluster::~TaskCluster() {
  worker.reset();
  supervisor.reset();
  kafka.reset();
  deep.reset();
  if (!dir.empty()) RemoveAll(dir).IgnoreError();
}

absl::Status TaskCluster::Produce(int32_t partition, int64_t count) {
  std::vector<std::string> values;
  const int64_t first = static_cast<int64_t>(produced[partition].size());
  for (int64_t i = 0; i < count; ++i) values.push_back(Record(partition, first + i));
  return ProduceValues(partition, values);
}

absl::Status TaskCluster::ProduceValues(int32_t partition, const std::vector<std::string>& values) {
  std::vector<std::string>& all = produced[partition];
  SLUICE_ASSIGN_OR_RETURN(const int64_t first, kafka->Produce("wiki", partition, values));
  if (first != static_cast<int64_t>(all.size())) {
    return absl::InternalError(absl::StrCat("produced at ", first, ", expected ", all.size()));
  }
  all.insert(all.end(), values.begin(), values.end());
  return absl::OkStatus();
}

SpecOptions TaskCluster::Spec(const std::string& task_id) const {
  SpecOptions spec;
  spec.task_id = task_id;
  spec.base_sequence_name = kTestBase;
  spec.bootstrap = kafka->bootstrap();
  spec.start = {{0, 0}, {1, 0}};
  return spec;
}

absl::Status TaskCluster::WaitUntilRead(const std::string& task_id, const OffsetMap& offsets) {
  OffsetMap seen;
  if (WaitFor(
          [&] {
            auto current = client->CurrentOffsets(task_id);
            if (current.ok()) seen = *current;
            return current.ok() && *current == offsets;
          },
          absl::Seconds(30))) {
    return absl::OkStatus();
  }
  return absl::DeadlineExceededError(absl::StrCat("read ", FormatOffsets(seen), ", want ",
                                                  FormatOffsets(offsets)));
}

absl::StatusOr<v1::TaskStatus> TaskCluster::WaitUntilFinal(const std::string& task_id) {
  v1::TaskStatus last;
  if (WaitFor(
          [&] {
            auto status = client->Status(task_id);
            if (status.ok()) last = *status;
            return status.ok() && (last.state() == v1::TASK_STATE_SUCCESS || last.state() == v1::TASK_STATE_FAILED ||
                                   last.state() == v1::TASK_STATE_STOPPED);
          },
          absl::Seconds(30))) {
    return last;
  }
  return absl::DeadlineExceededError(
      absl::StrCat("still ", v1::TaskState_Name(last.state()), ": ", last.error()));
}

}  // namespace sluice::testing
