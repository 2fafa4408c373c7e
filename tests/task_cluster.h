// Test helper: the in-process pieces around one task worker: a mock Kafka
// topic "wiki" with 2 partitions, a deep storage directory, the fake
// supervisor and a WorkerServer on loopback, plus what was produced.
#ifndef SLUICE_TESTS_TASK_CLUSTER_H_
#define SLUICE_TESTS_TASK_CLUSTER_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "common/deep_storage.h"
#include "task/worker_server.h"
#include "tests/task_fake_supervisor.h"
#include "tests/task_mock_kafka.h"
#include "tests/task_test_util.h"

namespace sluice::testing {

inline constexpr char kTestBase[] = "wiki_00112233aabbccdd";

class TaskCluster {
 public:
  // Kafka, deep storage and the fake supervisor (group 0 of kTestBase
  // starting at {0: 0, 1: 0}), then the worker.
  absl::Status Start(bool auto_checkpoint, int capacity = 4, bool hand_off = true);
  ~TaskCluster();

  // Produces `count` records made by Record() to the partition.
  absl::Status Produce(int32_t partition, int64_t count);
  // Produces raw values.
  absl::Status ProduceValues(int32_t partition, const std::vector<std::string>& values);

  SpecOptions Spec(const std::string& task_id) const;

  // Waits until the task's current offsets equal `offsets`.
  absl::Status WaitUntilRead(const std::string& task_id, const ::sluice::OffsetMap& offsets);
  // Waits for SUCCESS, FAILED or STOPPED and returns the status.
  absl::StatusOr<v1::TaskStatus> WaitUntilFinal(const std::string& task_id);

  std::string dir;
  std::unique_ptr<MockKafka> kafka;
  std::unique_ptr<DeepStorage> deep;
  std::unique_ptr<FakeSupervisor> supervisor;
  std::unique_ptr<task::WorkerServer> worker;
  std::unique_ptr<TaskClient> client;
  Produced produced;
};

}  // namespace sluice::testing

#endif  // SLUICE_TESTS_TASK_CLUSTER_H_
