#include "supervisor/worker_reports.h"

#include <glog/logging.h>

#include "absl/strings/str_cat.h"
#include "common/names.h"
#include "common/status_macros.h"
#include "supervisor/supervisor_reads.h"
#include "supervisor/task_claims.h"

namespace sluice::supervisor {

bool WorkerReports::OnTaskStatus(const v1::TaskStatus& status,
                                 const std::string& reporting_worker) {
  return OnTaskStatuses({status}, reporting_worker).front();
}

std::vector<bool> WorkerReports::OnTaskStatuses(const std::vector<v1::TaskStatus>& statuses,
                                                const std::string& reporting_worker) {
  // One transaction for the whole report: what each task is in the store,
  // and the state changes the worker reports.
  std::vector<std::optional<TaskRecord>> records(statuses.size());
  absl::Status read = options_.store->InTransaction([&](StoreTxn& txn) -> absl::Status {
    for (size_t i = 0; i < statuses.size(); ++i) {
      const v1::TaskStatus& status = statuses[i];
      records[i].reset();
      if (status.task_id().empty()) continue;
      SLUICE_ASSIGN_OR_RETURN(records[i], txn.GetTask(status.task_id()));
      const std::optional<TaskRecord>& record = records[i];
      // Only the worker the task was assigned to speaks for it.
      if (!record || record->worker_id != reporting_worker) continue;
      const bool ended_by_us = IsTerminal(record->state) && !IsTerminal(status.state());
      if (ended_by_us) continue;
      if (record->state != status.state() ||
          (!status.error().empty() && record->error != status.error())) {
        SLUICE_RETURN_IF_ERROR(txn.UpdateTask(status.task_id(), status.state(), status.error(),
                                              FromProto(status.current_offsets()),
                                              options_.clock->NowMs()));
      }
    }
    return absl::OkStatus();
  });
  std::vector<bool> unwanted(statuses.size(), false);
  if (!read.ok()) {
    LOG(WARNING) << "[supervisor] " << statuses.size() << " task status(es) from worker "
                 << reporting_worker << ": " << read;
    return unwanted;
  }
  for (size_t i = 0; i < statuses.size(); ++i) {
    const v1::TaskStatus& status = statuses[i];
    const std::optional<TaskRecord>& record = records[i];
    if (status.task_id().empty()) continue;
    if (record && record->worker_id != reporting_worker) {
      LOG(WARNING) << "[supervisor] worker " << reporting_worker << " reports task "
                   << status.task_id() << ", which runs on worker " << record->worker_id
                   << "; ignored";
      unwanted[i] = true;
      continue;
    }
    // Only statuses of tasks the supervisor assigned are kept: what a worker
    // says about other task ids costs no memory.
    if (!record) {
      unwanted[i] = !IsTerminal(status.state());
      continue;
    }
    {
      absl::MutexLock lock(&mu_);
      reported_[status.task_id()] = status;
    }
    if (IsTerminal(record->state) && !IsTerminal(status.state())) {
      unwanted[i] = true;
      continue;
    }
    options_.forward(record->datasource, status);
  }
  return unwanted;
}

absl::Status WorkerReports::CheckTaskCount(const std::string& worker_id, size_t tasks) {
  if (tasks <= static_cast<size_t>(kMaxReportedTasks)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "worker ", worker_id, " lists ", tasks, " tasks, more than the limit of ", kMaxReportedTasks,
      " per registration or heartbeat (a worker forgets its ended tasks after a retention)"));
}

absl::StatusOr<v1::RegisterWorkerResponse> WorkerReports::RegisterWorker(
    const v1::RegisterWorkerRequest& request, const auth::Caller& caller) {
  SLUICE_RETURN_IF_ERROR(CheckWorkerClaim(caller, request.worker().worker_id()));
  SLUICE_RETURN_IF_ERROR(CheckWorkerPlacement(caller, request.worker()));
  SLUICE_RETURN_IF_ERROR(CheckTaskCount(request.worker().worker_id(), request.tasks_size()));
  std::vector<v1::TaskStatus> tasks(request.tasks().begin(), request.tasks().end());
  SLUICE_RETURN_IF_ERROR(options_.registry->Register(request.worker(), tasks));
  WorkerRecord record;
  record.worker_id = request.worker().worker_id();
  record.address = request.worker().address();
  record.capacity = request.worker().capacity();
  record.registered_at_ms = options_.clock->NowMs();
  record.last_seen_ms = record.registered_at_ms;
  SLUICE_RETURN_IF_ERROR(
      options_.store->InTransaction([&](StoreTxn& txn) { return txn.UpsertWorker(record); }));
  OnTaskStatuses(tasks, record.worker_id);
  options_.run_all();
  v1::RegisterWorkerResponse response;
  response.set_heartbeat_interval_ms(absl::ToInt64Milliseconds(options_.heartbeat_interval));
  response.set_supervisor_instance_id(options_.instance_id);
  return response;
}

absl::StatusOr<v1::WorkerHeartbeatResponse> WorkerReports::Heartbeat(
    const v1::WorkerHeartbeatRequest& request, const auth::Caller& caller) {
  SLUICE_RETURN_IF_ERROR(CheckWorkerClaim(caller, request.worker_id()));
  SLUICE_RETURN_IF_ERROR(CheckTaskCount(request.worker_id(), request.tasks_size()));
  std::vector<v1::TaskStatus> tasks(request.tasks().begin(), request.tasks().end());
  SLUICE_RETURN_IF_ERROR(options_.registry->Heartbeat(request.worker_id(), tasks));
  v1::WorkerHeartbeatResponse response;
  response.set_supervisor_instance_id(options_.instance_id);
  const std::vector<bool> unwanted = OnTaskStatuses(tasks, request.worker_id());
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (unwanted[i] && !IsTerminal(tasks[i].state())) {
      response.add_stop_task_ids(tasks[i].task_id());
    }
  }
  if (response.stop_task_ids_size() > 0) {
    LOG(INFO) << "[supervisor] worker " << request.worker_id() << " is told to stop "
              << response.stop_task_ids_size() << " tasks the supervisor no longer wants";
  }
  return response;
}

absl::Status WorkerReports::ReportTaskStatus(const v1::ReportTaskStatusRequest& request,
                                           const auth::Caller& caller) {
  SLUICE_RETURN_IF_ERROR(ValidateWorkerId(request.worker_id()));
  SLUICE_RETURN_IF_ERROR(ValidateTaskId(request.status().task_id()));
  SLUICE_RETURN_IF_ERROR(CheckWorkerClaim(caller, request.worker_id()));
  v1::TaskStatus status = request.status();
  if (status.worker_id().empty()) status.set_worker_id(request.worker_id());
  if (status.worker_id() != request.worker_id()) {
    return absl::PermissionDeniedError(absl::StrCat("worker ", request.worker_id(),
                                                    " reports a status for worker ",
                                                    status.worker_id()));
  }
  // Only the worker the task runs on may report its state.
  std::optional<TaskRecord> record;
  SLUICE_RETURN_IF_ERROR(options_.store->InTransaction([&](StoreTxn& txn) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(record, txn.GetTask(status.task_id()));
    return absl::OkStatus();
  }));
  if (record && record->worker_id != request.worker_id()) {
    return absl::PermissionDeniedError(absl::StrCat("task ", status.task_id(), " runs on worker ",
                                                    record->worker_id, ", not on ",
                                                    request.worker_id()));
  }
  OnTaskStatus(status, request.worker_id());
  return absl::OkStatus();
}

v1::SupervisorServiceListTasksResponse WorkerReports::TaskList(
    const std::vector<TaskRecord>& tasks, const v1::SupervisorServiceListTasksRequest& request) {
  absl::MutexLock lock(&mu_);
  return TaskListResponse(tasks, request, reported_);
}

void WorkerReports::ForgetOld() {
  const int64_t cutoff = options_.clock->NowMs() - absl::ToInt64Milliseconds(absl::Hours(1));
  absl::MutexLock lock(&mu_);
  for (auto it = reported_.begin(); it != reported_.end();) {
    const v1::TaskStatus& status = it->second;
    const bool old = IsTerminal(status.state()) && status.end_time_ms() > 0 &&
                     status.end_time_ms() < cutoff;
    it = old ? reported_.erase(it) : std::next(it);
  }
}

std::optional<v1::TaskStatus> WorkerReports::Latest(const std::string& task_id) {
  absl::MutexLock lock(&mu_);
  auto it = reported_.find(task_id);
  if (it == reported_.end()) return std::nullopt;
  return it->second;
}

}  // namespace sluice::supervisor
