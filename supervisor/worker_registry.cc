#include "supervisor/worker_registry.h"

#include <glog/logging.h>

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/names.h"
#include "common/status_macros.h"

namespace sluice::supervisor {

WorkerRegistry::WorkerRegistry(WorkerRegistryOptions options) : options_(options) {}

absl::Duration WorkerRegistry::lost_timeout() const {
  return std::max(options_.heartbeat_interval * options_.lost_after_heartbeats,
                  options_.min_lost_timeout);
}

void WorkerRegistry::UpdateReported(Worker* worker, const std::vector<v1::TaskStatus>& tasks,
                                    absl::Time now) {
  worker->view.reported_tasks.clear();
  worker->running_reported.clear();
  for (const v1::TaskStatus& task : tasks) {
    worker->view.reported_tasks.insert(task.task_id());
    if (!IsTerminal(task.state())) worker->running_reported.insert(task.task_id());
  }
  worker->view.reported_at = now;
}

void WorkerRegistry::SettlePlacements(const std::string& worker_id,
                                      const std::vector<v1::TaskStatus>& tasks, absl::Time now) {
  std::map<std::string, v1::TaskState> reported;
  for (const v1::TaskStatus& task : tasks) reported[task.task_id()] = task.state();
  for (auto it = assigned_.begin(); it != assigned_.end();) {
    const Placement& placement = it->second;
    if (placement.worker_id != worker_id) {
      ++it;
      continue;
    }
    const auto report = reported.find(it->first);
    bool settled;
    if (report != reported.end()) {
      // Listed: a running task counts through running_reported from now
      // on; an ended one holds no slot.
      settled = true;
    } else {
      settled = now - placement.at >= options_.unreported_grace;
      if (settled) {
        LOG(INFO) << "[supervisor] worker " << worker_id << " does not list task " << it->first
                  << ", placed on it " << absl::FormatDuration(now - placement.at)
                  << " ago: its slot is free";
      }
    }
    it = settled ? assigned_.erase(it) : std::next(it);
  }
}

absl::Status WorkerRegistry::Register(const v1::WorkerInfo& info,
                                      const std::vector<v1::TaskStatus>& tasks) {
  SLUICE_RETURN_IF_ERROR(ValidateWorkerId(info.worker_id()));
  if (info.address().empty() || info.address().find(':') == std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat("worker ", info.worker_id(), ": address \"",
                                                   info.address(), "\" is not host:port"));
  }
  if (info.capacity() < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "worker ", info.worker_id(), ": capacity must be at least 1 (got ", info.capacity(), ")"));
  }
  const absl::Time now = options_.clock->Now();
  absl::MutexLock lock(&mu_);
  // One live worker per address: the supervisor calls an address with the
  // token of the worker registered there.
  for (const auto& [id, other] : workers_) {
    if (id != info.worker_id() && other.view.registered && other.view.info.alive() &&
        absl::EqualsIgnoreCase(other.view.info.address(), info.address())) {
      return absl::AlreadyExistsError(absl::StrCat("worker ", info.worker_id(), ": address ",
                                                   info.address(), " is registered by worker ",
                                                   id, ", which is alive"));
    }
  }
  Worker& worker = workers_[info.worker_id()];
  const bool was_alive = worker.view.registered && worker.view.info.alive();
  worker.view.info = info;
  worker.view.info.set_alive(true);
  worker.view.registered = true;
  worker.view.last_heartbeat = now;
  worker.run_task_failures = 0;
  worker.skip_until = absl::InfinitePast();
  UpdateReported(&worker, tasks, now);
  SettlePlacements(info.worker_id(), tasks, now);
  LOG(INFO) << "[supervisor] worker " << info.worker_id() << " registered at " << info.address()
            << " with " << info.capacity() << " slots and " << tasks.size() << " tasks"
            << (was_alive ? " (again)" : "");
  return absl::OkStatus();
}

void WorkerRegistry::Seed(const WorkerRecord& record) {
  const absl::Time now = options_.clock->Now();
  absl::MutexLock lock(&mu_);
  if (workers_.count(record.worker_id)) return;
  Worker& worker = workers_[record.worker_id];
  worker.view.info.set_worker_id(record.worker_id);
  worker.view.info.set_address(record.address);
  worker.view.info.set_capacity(record.capacity);
  worker.view.info.set_alive(true);
  worker.view.registered = false;
  worker.view.last_heartbeat = now;
}

absl::Status WorkerRegistry::Heartbeat(const std::string& worker_id,
                                       const std::vector<v1::TaskStatus>& tasks) {
  const absl::Time now = options_.clock->Now();
  absl::MutexLock lock(&mu_);
  auto it = workers_.find(worker_id);
  if (it == workers_.end() || !it->second.view.registered) {
    return absl::NotFoundError(
        absl::StrCat("worker ", worker_id, " is not registered with this supervisor; register"));
  }
  Worker& worker = it->second;
  if (!worker.view.info.alive()) {
    LOG(INFO) << "[supervisor] worker " << worker_id << " is back after being lost";
  }
  worker.view.info.set_alive(true);
  worker.view.last_heartbeat = now;
  UpdateReported(&worker, tasks, now);
  SettlePlacements(worker_id, tasks, now);
  return absl::OkStatus();
}

std::vector<std::string> WorkerRegistry::CheckLiveness() {
  const absl::Time now = options_.clock->Now();
  const absl::Duration timeout = lost_timeout();
  std::vector<std::string> lost;
  absl::MutexLock lock(&mu_);
  for (auto& [id, worker] : workers_) {
    if (!worker.view.info.alive()) continue;
    if (now - worker.view.last_heartbeat < timeout) continue;
    worker.view.info.set_alive(false);
    lost.push_back(id);
    LOG(WARNING) << "[supervisor] worker " << id << " lost: silent for "
                 << absl::FormatDuration(now - worker.view.last_heartbeat) << " (timeout "
                 << absl::FormatDuration(timeout) << ")";
  }
  return lost;
}

bool WorkerRegistry::IsAlive(const std::string& worker_id) {
  absl::MutexLock lock(&mu_);
  auto it = workers_.find(worker_id);
  return it != workers_.end() && it->second.view.info.alive();
}

std::optional<std::string> WorkerRegistry::Address(const std::string& worker_id) {
  absl::MutexLock lock(&mu_);
  auto it = workers_.find(worker_id);
  if (it == workers_.end()) return std::nullopt;
  return it->second.view.info.address();
}

std::optional<std::string> WorkerRegistry::WorkerAt(const std::string& address) {
  absl::MutexLock lock(&mu_);
  std::optional<std::string> found;
  for (const auto& [id, worker] : workers_) {
    if (!absl::EqualsIgnoreCase(worker.view.info.address(), address)) continue;
    // A registered worker wins over one only known from the store.
    if (!found || worker.view.registered) found = id;
    if (worker.view.registered && worker.view.info.alive()) return id;
  }
  return found;
}

int WorkerRegistry::RunningTasks(const std::string& worker_id, const Worker& worker) const {
  std::set<std::string> running = worker.running_reported;
  for (const auto& [task, placement] : assigned_) {
    if (placement.worker_id == worker_id) running.insert(task);
  }
  return static_cast<int>(running.size());
}

void WorkerRegistry::FillInfo(const std::string& worker_id, Worker* worker) {
  worker->view.info.set_last_heartbeat_ms(absl::ToUnixMillis(worker->view.last_heartbeat));
  worker->view.info.set_running_tasks(RunningTasks(worker_id, *worker));
}

std::optional<WorkerView> WorkerRegistry::Get(const std::string& worker_id) {
  absl::MutexLock lock(&mu_);
  auto it = workers_.find(worker_id);
  if (it == workers_.end()) return std::nullopt;
  FillInfo(worker_id, &it->second);
  return it->second.view;
}

std::vector<v1::WorkerInfo> WorkerRegistry::List() {
  absl::MutexLock lock(&mu_);
  std::vector<v1::WorkerInfo> out;
  for (auto& [id, worker] : workers_) {
    FillInfo(id, &worker);
    out.push_back(worker.view.info);
  }
  return out;
}

absl::StatusOr<std::string> WorkerRegistry::PickWorker(const std::set<std::string>& avoid) {
  const absl::Time now = options_.clock->Now();
  absl::MutexLock lock(&mu_);
  std::string best;
  int best_free = 0;
  bool best_avoided = true;
  int backing_off = 0;
  int silent = 0;
  const absl::Duration silent_after = std::max(
      options_.silent_after_heartbeats * options_.heartbeat_interval, options_.min_silent);
  for (const auto& [id, worker] : workers_) {
    if (!worker.view.registered || !worker.view.info.alive()) continue;
    if (now - worker.view.last_heartbeat > silent_after) {
      ++silent;
      continue;
    }
    if (now < worker.skip_until) {
      ++backing_off;
      continue;
    }
    const int free_slots = worker.view.info.capacity() - RunningTasks(id, worker);
    if (free_slots <= 0) continue;
    const bool avoided = avoid.count(id) > 0;
    // Prefer not avoided, then more free slots; ties keep the smaller id.
    if (best.empty() || (best_avoided && !avoided) ||
        (avoided == best_avoided && free_slots > best_free)) {
      best = id;
      best_free = free_slots;
      best_avoided = avoided;
    }
  }
  if (best.empty()) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "no registered task worker has a free slot (", workers_.size(), " workers known",
        backing_off > 0 ? absl::StrCat(", ", backing_off, " skipped for a while after RunTask failed")
                        : "",
        silent > 0 ? absl::StrCat(", ", silent, " silent for more than ",
                                  absl::FormatDuration(silent_after))
                   : "",
        ")"));
  }
  return best;
}

void WorkerRegistry::Assign(const std::string& task_id, const std::string& worker_id) {
  const absl::Time now = options_.clock->Now();
  absl::MutexLock lock(&mu_);
  assigned_[task_id] = Placement{worker_id, now};
}

void WorkerRegistry::Release(const std::string& task_id) {
  absl::MutexLock lock(&mu_);
  assigned_.erase(task_id);
  for (auto& [id, worker] : workers_) worker.running_reported.erase(task_id);
}

void WorkerRegistry::NoteRunTaskFailed(const std::string& worker_id) {
  const absl::Time now = options_.clock->Now();
  absl::MutexLock lock(&mu_);
  auto it = workers_.find(worker_id);
  if (it == workers_.end()) return;
  Worker& worker = it->second;
  absl::Duration backoff = options_.placement_backoff;
  for (int i = 0; i < worker.run_task_failures && backoff < options_.max_placement_backoff; ++i) {
    backoff *= 2;
  }
  backoff = std::min(backoff, options_.max_placement_backoff);
  ++worker.run_task_failures;
  worker.skip_until = now + backoff;
  LOG(WARNING) << "[supervisor] worker " << worker_id << ": RunTask failed ("
               << worker.run_task_failures << " in a row); no new tasks for "
               << absl::FormatDuration(backoff);
}

void WorkerRegistry::NoteRunTaskSucceeded(const std::string& worker_id) {
  absl::MutexLock lock(&mu_);
  auto it = workers_.find(worker_id);
  if (it == workers_.end()) return;
  it->second.run_task_failures = 0;
  it->second.skip_until = absl::InfinitePast();
}

}  // namespace sluice::supervisor
