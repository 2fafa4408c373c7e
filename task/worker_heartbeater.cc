#include "task/worker_heartbeater.h"

#include <glog/logging.h>

namespace sluice::task {

WorkerHeartbeater::WorkerHeartbeater(WorkerHeartbeaterOptions options)
    : options_(std::move(options)), interval_(options_.default_interval) {}

WorkerHeartbeater::~WorkerHeartbeater() { Stop(); }

void WorkerHeartbeater::Start() {
  thread_ = std::thread([this] { Run(); });
}

void WorkerHeartbeater::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void WorkerHeartbeater::ReportStatus(const v1::TaskStatus& status) {
  absl::MutexLock lock(&mu_);
  // Every state change matters to the supervisor: keep them all (bounded).
  if (reports_.size() >= 1000) reports_.pop_front();
  reports_.push_back(status);
}

bool WorkerHeartbeater::registered() const {
  absl::MutexLock lock(&mu_);
  return registered_;
}

bool WorkerHeartbeater::Register() {
  v1::RegisterWorkerRequest request;
  *request.mutable_worker() = options_.info;
  for (v1::TaskStatus& status : options_.list_tasks()) *request.add_tasks() = std::move(status);
  absl::StatusOr<v1::RegisterWorkerResponse> response =
      options_.supervisor->RegisterWorker(request);
  if (!response.ok()) {
    LOG_EVERY_N(WARNING, 30) << "[worker " << options_.info.worker_id()
                             << "] cannot register with the supervisor: " << response.status();
    return false;
  }
  interval_ = response->heartbeat_interval_ms() > 0
                  ? absl::Milliseconds(response->heartbeat_interval_ms())
                  : options_.default_interval;
  supervisor_instance_ = response->supervisor_instance_id();
  LOG(INFO) << "[worker " << options_.info.worker_id() << "] registered with supervisor "
            << supervisor_instance_ << " (" << request.tasks_size() << " task(s)); heartbeat every "
            << absl::FormatDuration(interval_);
  absl::MutexLock lock(&mu_);
  registered_ = true;
  return true;
}

void WorkerHeartbeater::Heartbeat() {
  v1::WorkerHeartbeatRequest request;
  request.set_worker_id(options_.info.worker_id());
  for (v1::TaskStatus& status : options_.list_tasks()) *request.add_tasks() = std::move(status);
  absl::StatusOr<v1::WorkerHeartbeatResponse> response =
      options_.supervisor->WorkerHeartbeat(request);
  if (!response.ok()) {
    if (response.status().code() == absl::StatusCode::kNotFound) {
      LOG(INFO) << "[worker " << options_.info.worker_id()
                << "] the supervisor does not know this worker: registering again";
      absl::MutexLock lock(&mu_);
      registered_ = false;
    } else {
      LOG_EVERY_N(WARNING, 30) << "[worker " << options_.info.worker_id()
                               << "] heartbeat failed: " << response.status();
    }
    return;
  }
  if (!response->supervisor_instance_id().empty() &&
      response->supervisor_instance_id() != supervisor_instance_) {
    LOG(INFO) << "[worker " << options_.info.worker_id() << "] the supervisor restarted ("
              << response->supervisor_instance_id() << "): registering again";
    absl::MutexLock lock(&mu_);
    registered_ = false;
  }
  for (const std::string& task_id : response->stop_task_ids()) {
    LOG(INFO) << "[worker " << options_.info.worker_id() << "] the supervisor no longer wants "
              << task_id << ": stopping it";
    options_.stop_task(task_id);
  }
}

void WorkerHeartbeater::Run() {
  absl::Time next_heartbeat = absl::InfinitePast();
  while (true) {
    bool registered;
    std::deque<v1::TaskStatus> reports;
    {
      absl::MutexLock lock(&mu_);
      if (stop_) return;
      registered = registered_;
      if (registered) reports.swap(reports_);
    }
    if (!registered) {
      if (!Register()) {
        absl::MutexLock lock(&mu_);
        mu_.AwaitWithTimeout(absl::Condition(&stop_), options_.retry_interval);
        continue;
      }
      next_heartbeat = absl::Now() + interval_;
      // Registration carried every task's status.
      absl::MutexLock lock(&mu_);
      reports_.clear();
      continue;
    }
    for (const v1::TaskStatus& status : reports) {
      v1::ReportTaskStatusRequest request;
      request.set_worker_id(options_.info.worker_id());
      *request.mutable_status() = status;
      const absl::Status sent = options_.supervisor->ReportTaskStatus(request);
      // The next heartbeat repeats every status anyway.
      if (!sent.ok()) {
        LOG_EVERY_N(WARNING, 30) << "[worker " << options_.info.worker_id() << "] status report of "
                                 << status.task_id() << " failed: " << sent;
      }
    }
    if (absl::Now() >= next_heartbeat) {
      Heartbeat();
      next_heartbeat = absl::Now() + interval_;
    }
    absl::MutexLock lock(&mu_);
    auto wake = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return stop_ || !reports_.empty() || !registered_;
    };
    mu_.AwaitWithDeadline(absl::Condition(&wake), next_heartbeat);
  }
}

}  // namespace sluice::task
