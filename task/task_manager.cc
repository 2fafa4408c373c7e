#include "task/task_manager.h"

#include <algorithm>
#include <functional>

#include <glog/logging.h>

#include "absl/strings/str_cat.h"
#include "common/enum_names.h"
#include "common/file_util.h"
#include "common/metrics/catalog.h"
#include "common/names.h"
#include "common/proto_json.h"
#include "common/status_macros.h"
#include "google/protobuf/util/message_differencer.h"
#include "task/task_files.h"
#include "task/task_spec.h"

namespace sluice::task {

absl::StatusOr<std::unique_ptr<TaskManager>> TaskManager::Create(TaskManagerOptions options) {
  if (options.data_dir.empty()) return absl::InvalidArgumentError("no data directory");
  if (options.capacity < 1) return absl::InvalidArgumentError("capacity must be at least 1");
  if (options.supervisor == nullptr || options.deep_storage == nullptr || !options.engine_factory) {
    return absl::InvalidArgumentError(
        "a task manager needs a supervisor, deep storage and an "
        "engine factory");
  }
  SLUICE_RETURN_IF_ERROR(MakeDirs(absl::StrCat(options.data_dir, "/tasks")));
  std::unique_ptr<TaskManager> manager(new TaskManager(std::move(options)));
  SLUICE_RETURN_IF_ERROR(manager->Restore());
  if (manager->options_.metrics != nullptr) {
    TaskManager* raw = manager.get();
    manager->tasks_gauge_ = manager->options_.metrics->AddGaugeCallback(metrics::kTaskTasks, [raw] {
      std::map<std::string, int> by_state;
      for (const v1::TaskStatus& status : raw->ListTasks()) {
        ++by_state[ShortEnumName(status.state())];
      }
      std::vector<metrics::GaugeSample> samples;
      for (const auto& [state, count] : by_state) {
        samples.push_back({{{"state", state}}, static_cast<double>(count)});
      }
      return samples;
    });
  }
  return manager;
}

TaskManager::~TaskManager() {
  tasks_gauge_.reset();
  Shutdown();
}

std::string TaskManager::TaskDir(const std::string& task_id) const {
  return absl::StrCat(options_.data_dir, "/tasks/", task_id);
}

absl::StatusOr<std::unique_ptr<TaskRunner>> TaskManager::NewRunner(const v1::TaskSpec& spec) {
  SLUICE_ASSIGN_OR_RETURN(TaskSettings settings, CheckTaskSpec(spec));
  TaskRunnerOptions runner;
  runner.spec = spec;
  runner.task_dir = TaskDir(spec.task_id());
  runner.worker_id = options_.worker_id;
  runner.supervisor = options_.supervisor;
  runner.deep_storage = options_.deep_storage;
  SLUICE_ASSIGN_OR_RETURN(runner.engine, options_.engine_factory(settings.data_schema));
  runner.on_state_change = options_.on_state_change;
  runner.tuning = options_.tuning;
  runner.build_slots = &build_slots_;
  if (options_.ingestion_memory_bytes > 0) {
    runner.tuning.ingestion_memory_per_task = options_.ingestion_memory_bytes / options_.capacity;
  }
  runner.metrics = options_.metrics;
  return TaskRunner::Create(std::move(runner));
}

absl::Status TaskManager::Restore() {
  const std::string root = absl::StrCat(options_.data_dir, "/tasks");
  SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> names, ListDirectory(root));
  std::vector<std::string> ids;
  for (const std::string& name : names) {
    if (ValidateTaskId(name).ok()) ids.push_back(name);
  }
  for (const std::string& id : ids) {
    const TaskFiles files(TaskDir(id));
    Entry entry;
    const absl::Status spec_loaded = LoadProtoJson(files.spec(), &entry.spec);
    if (spec_loaded.code() == absl::StatusCode::kNotFound) {
      // RunTask writes the spec before anything else: nothing to restore.
      LOG(WARNING) << "[worker] removing " << files.dir << ": no spec.json";
      SLUICE_RETURN_IF_ERROR(RemoveAll(files.dir));
      continue;
    }
    if (!spec_loaded.ok() || entry.spec.task_id() != id) {
      LOG(ERROR) << "[worker] cannot restore task " << id << ": "
                 << (spec_loaded.ok() ? "spec.json names another task" : spec_loaded.ToString());
      continue;
    }
    const absl::Status final_loaded = LoadProtoJson(files.final_status(), &entry.final_status);
    if (final_loaded.ok()) {
      absl::MutexLock lock(&mu_);
      tasks_.emplace(id, std::move(entry));
      continue;
    }
    absl::StatusOr<std::unique_ptr<TaskRunner>> runner = NewRunner(entry.spec);
    if (!runner.ok()) {
      LOG(ERROR) << "[worker] cannot restore task " << id << ": " << runner.status();
      continue;
    }
    LOG(INFO) << "[worker] restoring task " << id;
    entry.runner = std::move(*runner);
    TaskRunner* started = entry.runner.get();
    {
      absl::MutexLock lock(&mu_);
      tasks_.emplace(id, std::move(entry));
    }
    started->Start();
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::RunTaskResponse> TaskManager::RunTask(const v1::TaskSpec& spec) {
  SLUICE_RETURN_IF_ERROR(CheckTaskSpec(spec).status());
  TaskRunner* started = nullptr;
  {
    absl::MutexLock lock(&mu_);
    if (shut_down_) return absl::UnavailableError("the worker is shutting down");
    const auto existing = tasks_.find(spec.task_id());
    if (existing != tasks_.end()) {
      if (!google::protobuf::util::MessageDifferencer::Equals(existing->second.spec, spec)) {
        return absl::AlreadyExistsError(absl::StrCat(
            "task ", spec.task_id(), " already exists on this worker with another spec"));
      }
      v1::RunTaskResponse response;
      *response.mutable_status() = existing->second.runner != nullptr
                                       ? existing->second.runner->Status()
                                       : existing->second.final_status;
      response.set_already_running(true);
      return response;
    }
    int running = 0;
    for (const auto& [id, entry] : tasks_) {
      if (entry.runner != nullptr && !entry.runner->finished()) ++running;
    }
    if (running >= options_.capacity) {
      return absl::ResourceExhaustedError(absl::StrCat("every task slot of worker ",
                                                       options_.worker_id, " is taken (", running,
                                                       "/", options_.capacity, ")"));
    }
    // The spec goes to disk first: a worker restarted from here on resumes
    // the task.
    SLUICE_RETURN_IF_ERROR(MakeDirs(TaskDir(spec.task_id())));
    SLUICE_RETURN_IF_ERROR(SaveProtoJson(TaskFiles(TaskDir(spec.task_id())).spec(), spec));
    absl::StatusOr<std::unique_ptr<TaskRunner>> runner = NewRunner(spec);
    if (!runner.ok()) {
      RemoveAll(TaskDir(spec.task_id())).IgnoreError();
      return runner.status();
    }
    Entry entry;
    entry.spec = spec;
    entry.runner = std::move(*runner);
    started = entry.runner.get();
    tasks_.emplace(spec.task_id(), std::move(entry));
  }
  LOG(INFO) << "[worker] running task " << spec.task_id() << " (" << spec.datasource() << ", group "
            << spec.group_id() << ")";
  started->Start();
  v1::RunTaskResponse response;
  *response.mutable_status() = started->Status();
  return response;
}

absl::StatusOr<TaskRunner*> TaskManager::Find(const std::string& task_id) const {
  absl::MutexLock lock(&mu_);
  const auto it = tasks_.find(task_id);
  if (it == tasks_.end()) {
    return absl::NotFoundError(
        absl::StrCat("no task ", task_id, " on worker ", options_.worker_id));
  }
  if (it->second.runner == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "task ", task_id, " is ", ShortEnumName(it->second.final_status.state())));
  }
  return it->second.runner.get();
}

absl::StatusOr<v1::TaskStatus> TaskManager::StopTask(const std::string& task_id, v1::StopMode mode,
                                                     const std::string& reason) {
  absl::StatusOr<TaskRunner*> runner = Find(task_id);
  if (runner.status().code() == absl::StatusCode::kFailedPrecondition) {
    return GetTaskStatus(task_id);  // finished before: nothing to stop
  }
  SLUICE_RETURN_IF_ERROR(runner.status());
  (*runner)->Stop(mode == v1::STOP_MODE_UNSPECIFIED ? v1::STOP_MODE_GRACEFUL : mode,
                  reason.empty() ? "requested" : reason);
  (*runner)->WaitFinished(absl::Seconds(5));
  return (*runner)->Status();
}

absl::StatusOr<v1::PauseResponse> TaskManager::Pause(const std::string& task_id,
                                                     absl::Duration timeout) {
  SLUICE_ASSIGN_OR_RETURN(TaskRunner * runner, Find(task_id));
  SLUICE_ASSIGN_OR_RETURN(OffsetMap offsets, runner->Pause(timeout));
  v1::PauseResponse response;
  response.set_state(v1::TASK_STATE_PAUSED);
  ToProto(offsets, response.mutable_current_offsets());
  return response;
}

absl::StatusOr<v1::ResumeResponse> TaskManager::Resume(const std::string& task_id) {
  SLUICE_ASSIGN_OR_RETURN(TaskRunner * runner, Find(task_id));
  v1::ResumeResponse response;
  response.set_state(runner->Resume());
  return response;
}

absl::StatusOr<v1::SetEndOffsetsResponse> TaskManager::SetEndOffsets(const std::string& task_id,
                                                                     const OffsetMap& offsets,
                                                                     bool finish) {
  SLUICE_ASSIGN_OR_RETURN(TaskRunner * runner, Find(task_id));
  return runner->SetEndOffsets(offsets, finish);
}

absl::StatusOr<v1::TaskStatus> TaskManager::GetTaskStatus(const std::string& task_id) const {
  absl::MutexLock lock(&mu_);
  const auto it = tasks_.find(task_id);
  if (it == tasks_.end()) {
    return absl::NotFoundError(
        absl::StrCat("no task ", task_id, " on worker ", options_.worker_id));
  }
  return it->second.runner != nullptr ? it->second.runner->Status() : it->second.final_status;
}

std::vector<v1::TaskStatus> TaskManager::ListTasks(const std::string& datasource) const {
  absl::MutexLock lock(&mu_);
  std::vector<v1::TaskStatus> statuses;
  for (const auto& [id, entry] : tasks_) {
    if (!datasource.empty() && entry.spec.datasource() != datasource) continue;
    statuses.push_back(entry.runner != nullptr ? entry.runner->Status() : entry.final_status);
  }
  return statuses;
}

int TaskManager::running() const {
  absl::MutexLock lock(&mu_);
  int running = 0;
  for (const auto& [id, entry] : tasks_) {
    if (entry.runner != nullptr && !entry.runner->finished()) ++running;
  }
  return running;
}

int TaskManager::ForgetEndedTasks(absl::Time now) {
  const int64_t cutoff_ms = absl::ToUnixMillis(now - options_.ended_task_retention);
  std::vector<Entry> forgotten;  // destroyed (runners joined) outside the lock
  {
    absl::MutexLock lock(&mu_);
    std::vector<std::pair<int64_t, std::string>> ended;  // end time, id
    for (const auto& [id, entry] : tasks_) {
      if (entry.runner != nullptr && !entry.runner->finished()) continue;
      const int64_t end_ms = entry.runner != nullptr ? entry.runner->Status().end_time_ms()
                                                     : entry.final_status.end_time_ms();
      ended.emplace_back(end_ms, id);
    }
    std::sort(ended.begin(), ended.end(), std::greater<>());  // newest first
    for (size_t i = 0; i < ended.size(); ++i) {
      const auto& [end_ms, id] = ended[i];
      if (static_cast<int>(i) < options_.max_ended_tasks && end_ms >= cutoff_ms) continue;
      auto it = tasks_.find(id);
      forgotten.push_back(std::move(it->second));
      tasks_.erase(it);
    }
  }
  for (const Entry& entry : forgotten) {
    absl::Status removed = RemoveAll(TaskDir(entry.spec.task_id()));
    if (!removed.ok()) {
      LOG(WARNING) << "[worker] forgetting task " << entry.spec.task_id() << ": " << removed;
    }
  }
  if (!forgotten.empty()) {
    LOG(INFO) << "[worker] forgot " << forgotten.size() << " ended task(s)";
  }
  return static_cast<int>(forgotten.size());
}

void TaskManager::Shutdown() {
  std::vector<TaskRunner*> runners;
  {
    absl::MutexLock lock(&mu_);
    if (shut_down_) return;
    shut_down_ = true;
    for (auto& [id, entry] : tasks_) {
      if (entry.runner != nullptr) runners.push_back(entry.runner.get());
    }
  }
  for (TaskRunner* runner : runners) runner->Shutdown();
}

}  // namespace sluice::task
