// The loop of a stream supervisor: queue, strand, posting, leaving
// (supervisor_loop.h).
#include "supervisor/supervisor_loop.h"

#include <glog/logging.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"

namespace sluice::supervisor {

SupervisorLoop::SupervisorLoop(SupervisorLoopOptions options) : options_(std::move(options)) {}

void SupervisorLoop::Start(StrandExecutor* pool) {
  strand_ = pool->AddStrand([this] { return Step(); }, absl::InfiniteFuture());
  strand_->Wake();
}

void SupervisorLoop::Post(std::string kind, std::function<void()> handle) {
  notices_.Push({std::move(kind), std::move(handle)});
  if (strand_ != nullptr) strand_->Wake();
}

absl::Status SupervisorLoop::PostAndWait(std::string kind, std::function<void()> handle,
                                         absl::Duration timeout) {
  auto done = std::make_shared<absl::Notification>();
  const std::string name = kind;
  Post(std::move(kind), [this, handle = std::move(handle), done] {
    handle();
    options_.publish_view();  // the caller reads the state it waited for
    done->Notify();
  });
  if (!done->WaitForNotificationWithTimeout(timeout)) {
    return absl::UnavailableError(absl::StrCat("the supervisor of ", options_.datasource,
                                               " did not handle ", name, " within ",
                                               absl::FormatDuration(timeout), "; retry"));
  }
  return absl::OkStatus();
}

void SupervisorLoop::RequestRun() {
  notices_.RequestRun();
  if (strand_ != nullptr) strand_->Wake();
}

void SupervisorLoop::SetNextRun(absl::Time at) { notices_.SetNextRun(at); }

void SupervisorLoop::RequestExit() { notices_.RequestExit(); }

void SupervisorLoop::Stop() {
  if (strand_ == nullptr) return;
  notices_.RequestExit();
  strand_->Wake();
  notices_.AwaitLeft();
  // The strand stays until Close: RPC threads holding a reference may
  // still Post (their notices are never handled, as before).
}

void SupervisorLoop::Close() { strand_.reset(); }

absl::Time SupervisorLoop::Step() {
  if (!started_) {
    started_ = true;
    options_.first_step();
    options_.publish_view();
    return absl::InfinitePast();
  }
  NoticeQueue::Step step = notices_.Take(options_.clock->Now());
  if (step.left_now) LOG(INFO) << Prefix() << "stopped";
  if (step.left) return absl::InfiniteFuture();
  if (step.notice) {
    VLOG(1) << Prefix() << "notice: " << step.notice->kind;
    step.notice->handle();
  }
  if (step.run) options_.run();
  if (step.notice || step.run) options_.publish_view();
  return notices_.NextStepAt();
}

std::string SupervisorLoop::Prefix() const {
  return absl::StrCat("[supervisor ", options_.datasource, "] ");
}

}  // namespace sluice::supervisor
