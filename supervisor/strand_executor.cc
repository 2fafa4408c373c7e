#include "supervisor/strand_executor.h"

#include <glog/logging.h>

#include <algorithm>

namespace sluice::supervisor {

StrandExecutor::Strand::~Strand() { pool_->Remove(id_); }

void StrandExecutor::Strand::Wake() { pool_->Wake(id_); }

StrandExecutor::StrandExecutor(StrandExecutorOptions options) : options_(std::move(options)) {
  const int n = std::max(1, options_.threads);
  threads_.reserve(n);
  for (int i = 0; i < n; ++i) threads_.emplace_back([this] { Work(); });
}

StrandExecutor::~StrandExecutor() {
  {
    absl::MutexLock lock(&mu_);
    if (!entries_.empty()) {
      LOG(ERROR) << "[" << options_.name << "] destroyed with " << entries_.size()
                 << " strands left; they stop stepping";
    }
    stop_ = true;
  }
  for (std::thread& t : threads_) t.join();
}

std::unique_ptr<StrandExecutor::Strand> StrandExecutor::AddStrand(Step step, absl::Time first_at) {
  absl::MutexLock lock(&mu_);
  const uint64_t id = next_id_++;
  auto entry = std::make_shared<Entry>();
  entry->step = std::move(step);
  entries_[id] = entry;
  if (first_at <= options_.clock->Now()) {
    MakeReady(id, *entry);
  } else {
    SetTimer(id, *entry, first_at);
  }
  return std::unique_ptr<Strand>(new Strand(this, id));
}

void StrandExecutor::Run(std::function<void()> job) {
  absl::MutexLock lock(&mu_);
  jobs_.push_back(std::move(job));
}

int StrandExecutor::strands() {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(entries_.size());
}

void StrandExecutor::Wake(uint64_t id) {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(id);
  if (it != entries_.end()) MakeReady(id, *it->second);
}

void StrandExecutor::Remove(uint64_t id) {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(id);
  if (it == entries_.end()) return;
  std::shared_ptr<Entry> entry = it->second;
  entries_.erase(it);
  ClearTimer(id, *entry);
  if (entry->queued) {
    ready_.erase(std::remove(ready_.begin(), ready_.end(), id), ready_.end());
    entry->queued = false;
  }
  auto idle = [&entry]() { return !entry->running; };
  mu_.Await(absl::Condition(&idle));
}

void StrandExecutor::MakeReady(uint64_t id, Entry& entry) {
  ClearTimer(id, entry);
  if (entry.running) {
    entry.woken = true;
    return;
  }
  if (entry.queued) return;
  entry.queued = true;
  ready_.push_back(id);
}

void StrandExecutor::SetTimer(uint64_t id, Entry& entry, absl::Time due) {
  ClearTimer(id, entry);
  entry.due = due;
  timers_.emplace(due, id);
  ++timers_version_;
}

void StrandExecutor::ClearTimer(uint64_t id, Entry& entry) {
  if (entry.due == absl::InfiniteFuture()) return;
  timers_.erase({entry.due, id});
  entry.due = absl::InfiniteFuture();
}

void StrandExecutor::Work() {
  absl::MutexLock lock(&mu_);
  while (true) {
    if (stop_) return;
    const absl::Time now = options_.clock->Now();
    while (!timers_.empty() && timers_.begin()->first <= now) {
      const uint64_t id = timers_.begin()->second;
      auto it = entries_.find(id);
      if (it == entries_.end()) {
        timers_.erase(timers_.begin());
        continue;
      }
      MakeReady(id, *it->second);  // clears the timer
    }
    if (!jobs_.empty()) {
      std::function<void()> job = std::move(jobs_.front());
      jobs_.pop_front();
      mu_.Unlock();
      job();
      job = nullptr;  // its captures go before the lock is taken again
      mu_.Lock();
      continue;
    }
    if (ready_.empty()) {
      const absl::Time deadline =
          timers_.empty() ? absl::InfiniteFuture() : timers_.begin()->first;
      const uint64_t version = timers_version_;
      auto wake = [this, version]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stop_ || !ready_.empty() || !jobs_.empty() || timers_version_ != version;
      };
      options_.clock->AwaitWithDeadline(&mu_, absl::Condition(&wake), deadline);
      continue;
    }
    const uint64_t id = ready_.front();
    ready_.pop_front();
    auto it = entries_.find(id);
    if (it == entries_.end()) continue;
    std::shared_ptr<Entry> entry = it->second;
    entry->queued = false;
    entry->running = true;
    entry->woken = false;
    absl::Time next;
    {
      mu_.Unlock();
      next = entry->step();
      mu_.Lock();
    }
    entry->running = false;
    if (!entries_.count(id)) continue;  // removed meanwhile (Remove waits for us)
    if (entry->woken || next <= options_.clock->Now()) {
      entry->woken = false;
      MakeReady(id, *entry);
    } else if (next != absl::InfiniteFuture()) {
      SetTimer(id, *entry, next);
    }
  }
}

}  // namespace sluice::supervisor
