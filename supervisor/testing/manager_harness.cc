#include "supervisor/testing/manager_harness.h"

#include <glog/logging.h>

#include "common/fault_injection.h"
#include "common/open_deep_storage.h"
#include "common/spec.h"
#include "supervisor/grpc_task_client.h"

namespace sluice::supervisor::testing {

ManagerHarness::ManagerHarness() {
  store_ = OpenTestStore(dir_.path());
  auto deep = OpenDeepStorage("file://" + dir_.path() + "/deep");
  CHECK(deep.ok()) << deep.status();
  deep_ = std::move(*deep);
  stream_.SetPartitions(2, /*earliest=*/0, /*latest=*/100);
  StartManager();
}

ManagerHarness::~ManagerHarness() {
  manager_.reset();
  workers_.clear();
  ConfigureFaultPoints("").IgnoreError();
}

void ManagerHarness::StartManager() {
  manager_.reset();
  SupervisorManagerOptions options;
  options.store = store_.get();
  options.deep_storage = deep_.get();
  options.clock = &clock_;
  options.task_client_factory = [](const ChatOptions& chat) {
    ChatOptions fast = chat;
    fast.initial_backoff = absl::Milliseconds(5);
    return NewGrpcTaskClient(fast);
  };
  options.stream_metadata_factory = stream_.Factory();
  options.heartbeat_interval = absl::Seconds(1);
  options.min_worker_lost_timeout = absl::Seconds(10);
  options.housekeeping = false;
  options.run_on_events = false;
  options.background_stream_queries = background_stream_queries_;
  options.pauseless_checkpoints = pauseless_checkpoints_;
  options.pauseless_margin = pauseless_margin_;
  options.kafka_policy = kafka_policy_;
  options.loop_timeout = absl::Seconds(20);
  options.metrics = &metrics_;
  auto manager = SupervisorManager::Create(options);
  CHECK(manager.ok()) << manager.status();
  manager_ = std::move(*manager);
}

FakeTaskWorker* ManagerHarness::AddWorker(const std::string& id, int capacity) {
  FakeTaskWorkerOptions options;
  options.worker_id = id;
  options.capacity = capacity;
  auto worker = FakeTaskWorker::Start(options);
  CHECK(worker.ok()) << worker.status();
  workers_.push_back(std::move(*worker));
  auto registered = manager_->protocol()->RegisterWorker(workers_.back()->RegistrationRequest());
  CHECK(registered.ok()) << registered.status();
  return workers_.back().get();
}

void ManagerHarness::Heartbeat() {
  for (auto& worker : workers_) {
    auto beat = manager_->protocol()->Heartbeat(worker->HeartbeatRequest());
    if (absl::IsNotFound(beat.status())) {
      CHECK(manager_->protocol()->RegisterWorker(worker->RegistrationRequest()).ok());
    }
  }
}

void ManagerHarness::Run(const std::string& datasource) {
  Heartbeat();
  StreamSupervisor* supervisor = manager_->stream_supervisor(datasource);
  ASSERT_NE(supervisor, nullptr) << "no supervisor for " << datasource;
  ASSERT_TRUE(supervisor->RunNow(absl::Seconds(20)).ok());
}

void ManagerHarness::Sync(const std::string& datasource) {
  StreamSupervisor* supervisor = manager_->stream_supervisor(datasource);
  ASSERT_NE(supervisor, nullptr);
  ASSERT_TRUE(supervisor->Sync(absl::Seconds(20)).ok());
}

v1::SupervisorSpec ManagerHarness::Submit(v1::SupervisorSpec spec) {
  auto response = manager_->specs()->Submit(spec);
  CHECK(response.ok()) << response.status();
  return response->spec();
}

v1::SupervisorStatus ManagerHarness::Status(const std::string& datasource) {
  auto status = manager_->reads()->Status(datasource);
  CHECK(status.ok()) << status.status();
  return *status;
}

FakeTaskWorker* ManagerHarness::WorkerOf(const std::string& task_id) {
  for (auto& worker : workers_) {
    if (worker->Task(task_id)) return worker.get();
  }
  return nullptr;
}

std::vector<std::string> ManagerHarness::GroupTasks(int group_id, const std::string& datasource) {
  std::vector<std::string> out;
  const v1::SupervisorStatus status = Status(datasource);
  for (const auto& group : status.active_groups()) {
    if (group.group_id() != group_id) continue;
    for (const auto& task : group.tasks()) {
      if (task.state() != v1::TASK_STATE_FAILED && task.state() != v1::TASK_STATE_STOPPED) out.push_back(task.task_id());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> ManagerHarness::LiveTasks() {
  std::vector<std::string> out;
  for (auto& worker : workers_) {
    for (const std::string& id : worker->TaskIds()) {
      auto task = worker->Task(id);
      if (task->state != v1::TASK_STATE_SUCCESS && task->state != v1::TASK_STATE_FAILED && task->state != v1::TASK_STATE_STOPPED) {
        out.push_back(id);
      }
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

TaskGroupRecord ManagerHarness::StoredGroup(const std::string& base_sequence_name) {
  std::optional<TaskGroupRecord> group;
  CHECK(store_
            ->InTransaction([&](StoreTxn& txn) -> absl::Status {
              auto g = txn.GetTaskGroup(base_sequence_name);
              if (!g.ok()) return g.status();
              group = *g;
              return absl::OkStatus();
            })
            .ok());
  CHECK(group.has_value()) << base_sequence_name;
  return *group;
}

OffsetMap ManagerHarness::Committed(const std::string& datasource) {
  OffsetMap out;
  CHECK(store_
            ->InTransaction([&](StoreTxn& txn) -> absl::Status {
              auto c = txn.CommittedOffsets(datasource);
              if (c.ok()) out = *c;
              return c.status();
            })
            .ok());
  return out;
}

v1::SupervisorSpec ManagerHarness::Spec(int task_count, int replicas) {
  v1::SupervisorSpec spec = TestSpec("wiki", "events", task_count, replicas);
  spec.mutable_io_config()->set_period("PT24H");
  spec.mutable_io_config()->set_start_delay("PT24H");
  spec.mutable_tuning_config()->set_chat_timeout("PT0.3S");
  spec.mutable_tuning_config()->set_chat_retries(2);
  auto normalized = NormalizeSpec(spec);
  CHECK(normalized.ok()) << normalized.status();
  return *normalized;
}

}  // namespace sluice::supervisor::testing
