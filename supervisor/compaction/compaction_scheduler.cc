#include "supervisor/compaction/compaction_scheduler.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"

namespace sluice::supervisor {

CompactionScheduler::CompactionScheduler(CompactionSchedulerOptions options)
    : options_(std::move(options)) {}

CompactionScheduler::~CompactionScheduler() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void CompactionScheduler::Start() {
  thread_ = std::thread([this] {
    // Below ingestion: a compaction takes what the publishes leave.
    const pid_t tid = static_cast<pid_t>(syscall(SYS_gettid));
    if (setpriority(PRIO_PROCESS, static_cast<id_t>(tid), 10) != 0) {
      LOG(WARNING) << "compaction thread keeps the process's priority (setpriority failed)";
    }
    Loop();
  });
}

absl::Status CompactionScheduler::Enqueue(CompactionRequest request) {
  absl::MutexLock lock(&mu_);
  if (static_cast<int>(queue_.size()) >= options_.max_queued) {
    return absl::ResourceExhaustedError(
        absl::StrCat("compaction queue is full (", options_.max_queued,
                     " requests waiting); try again once sluicectl status shows them done"));
  }
  request.on_demand = true;
  queue_.push_back(std::move(request));
  return absl::OkStatus();
}

int CompactionScheduler::queued() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(queue_.size());
}

void CompactionScheduler::Loop() {
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      if (mu_.AwaitWithTimeout(absl::Condition(&stopping_), options_.tick)) return;
    }
    RunOnce(absl::Now());
  }
}

void CompactionScheduler::RunOnce(absl::Time now) {
  std::vector<v1::SupervisorSpec> specs = options_.running_specs();
  auto spec_of = [&](const std::string& datasource) -> const v1::SupervisorSpec* {
    for (const v1::SupervisorSpec& spec : specs) {
      if (spec.datasource() == datasource) return &spec;
    }
    return nullptr;
  };
  // Requests first, each to its end.
  while (true) {
    CompactionRequest request;
    {
      absl::MutexLock lock(&mu_);
      if (stopping_ || queue_.empty()) break;
      request = std::move(queue_.front());
      queue_.pop_front();
    }
    const v1::SupervisorSpec* spec = spec_of(request.datasource);
    if (spec == nullptr) {
      LOG(INFO) << "compaction of " << request.datasource
                << " dropped: the datasource is no longer running";
      continue;
    }
    absl::Status done = options_.compact(*spec, request);
    if (!done.ok()) LOG(WARNING) << "compaction of " << request.datasource << ": " << done;
  }
  for (const v1::SupervisorSpec& spec : specs) {
    std::optional<absl::Duration> period = options_.period(spec);
    if (!period.has_value()) continue;
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
      auto last = last_pass_.find(spec.datasource());
      if (last != last_pass_.end() && now - last->second < *period) continue;
      last_pass_[spec.datasource()] = now;
    }
    CompactionRequest request;
    request.datasource = spec.datasource();
    absl::Status done = options_.compact(spec, request);
    if (!done.ok()) LOG(WARNING) << "compaction of " << spec.datasource() << ": " << done;
    if (options_.upkeep) {
      absl::Status kept = options_.upkeep(spec);
      if (!kept.ok()) LOG(WARNING) << "table upkeep of " << spec.datasource() << ": " << kept;
    }
  }
}

}  // namespace sluice::supervisor
