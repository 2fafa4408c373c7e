// A SupervisorManager over a real metadata store, scripted Kafka metadata, a
// fake clock and scripted task workers that are real gRPC servers (so the
// real TaskClient is used). Runs are deterministic: event-driven runs are off
// and every step ends with Run() / Sync().
#ifndef SLUICE_SUPERVISOR_TESTING_MANAGER_HARNESS_H_
#define SLUICE_SUPERVISOR_TESTING_MANAGER_HARNESS_H_

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "supervisor/supervisor_manager.h"
#include "supervisor/testing/fake_stream_metadata.h"
#include "supervisor/testing/fake_task_worker.h"
#include "supervisor/testing/test_util.h"

namespace sluice::supervisor::testing {

class ManagerHarness : public ::testing::Test {
 protected:
  ManagerHarness();
  ~ManagerHarness() override;

  // (Re)creates the manager over the same store ("a supervisor restart").
  void StartManager();
  void StopManager() { manager_.reset(); }

  FakeTaskWorker* AddWorker(const std::string& id, int capacity = 4);
  // Every worker heartbeats (registering again when told to).
  void Heartbeat();
  // Heartbeat, then one run of the datasource's supervisor.
  void Run(const std::string& datasource = "wiki");
  void Sync(const std::string& datasource = "wiki");
  v1::SupervisorSpec Submit(v1::SupervisorSpec spec);
  v1::SupervisorStatus Status(const std::string& datasource = "wiki");

  // The worker holding a task.
  FakeTaskWorker* WorkerOf(const std::string& task_id);
  // Task ids of the active group `group_id`, in id order.
  std::vector<std::string> GroupTasks(int group_id, const std::string& datasource = "wiki");
  // The live (non-terminal) tasks across all workers.
  std::vector<std::string> LiveTasks();
  // The stored group record of the active group `group_id`.
  TaskGroupRecord StoredGroup(const std::string& base_sequence_name);
  OffsetMap Committed(const std::string& datasource = "wiki");

  // A spec with test timings: startDelay and period PT24H (runs only when
  // driven),
  // taskDuration PT1H, completionTimeout PT30M, chat PT0.3S x 2.
  static v1::SupervisorSpec Spec(int task_count = 1, int replicas = 1);

  // Off: runs query the FakeStream themselves (deterministic). Set before
  // StartManager().
  bool background_stream_queries_ = false;
  // Off: every checkpoint round pauses (the fake workers' tasks accept end
  // offsets while reading only with FakeTaskScript::pauseless). Set before
  // StartManager().
  bool pauseless_checkpoints_ = false;
  PauselessMarginOptions pauseless_margin_;
  // What specs' Kafka properties may do (the default: the built-in rules, no
  // files, no secret reference bound anywhere). Set before StartManager().
  kafka::PropertyPolicyOptions kafka_policy_;
  TempDir dir_;
  FakeClock clock_;
  // The manager's metrics (declared before it: it outlives it).
  metrics::Registry metrics_;
  FakeStream stream_;
  std::unique_ptr<MetadataStore> store_;
  std::unique_ptr<DeepStorage> deep_;
  std::vector<std::unique_ptr<FakeTaskWorker>> workers_;
  std::unique_ptr<SupervisorManager> manager_;
};

}  // namespace sluice::supervisor::testing

#endif  // SLUICE_SUPERVISOR_TESTING_MANAGER_HARNESS_H_
