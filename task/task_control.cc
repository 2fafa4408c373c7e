#include "task/task_control.h"

#include <glog/logging.h>

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/enum_names.h"
#include "common/status_macros.h"
#include "common/time_util.h"

namespace sluice::task {
namespace {

constexpr char kWaitingForEndOffsets[] = "waiting for the supervisor's end offsets";
constexpr char kCheckpointFailedPrefix[] = "checkpoint request failed (";

bool Terminal(v1::TaskState state) {
  return state == v1::TASK_STATE_SUCCESS || state == v1::TASK_STATE_FAILED || state == v1::TASK_STATE_STOPPED;
}

}  // namespace

TaskControl::TaskControl(TaskControlOptions options) : options_(std::move(options)) {}

bool TaskControl::ControlClosedLocked() const {
  return done_ || Terminal(state_) || state_ == v1::TASK_STATE_PUBLISHING || stop_ != StopKind::kNone;
}

std::string TaskControl::StateNameLocked() const {
  return stop_ != StopKind::kNone && !done_ ? "stopping" : ShortEnumName(state_);
}

absl::StatusOr<OffsetMap> TaskControl::Pause(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  if (ControlClosedLocked()) {
    return absl::FailedPreconditionError(
        absl::StrCat("task ", options_.task_id, " cannot be paused: it is ", StateNameLocked()));
  }
  pause_requested_ = true;
  supervisor_pause_deadline_ = absl::Now() + options_.self_resume_after;
  UpdateInterruptLocked();
  auto settled = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return parked_ || done_ || state_ == v1::TASK_STATE_PUBLISHING || stop_ != StopKind::kNone;
  };
  mu_.AwaitWithTimeout(absl::Condition(&settled), timeout);
  if (parked_) return current_;
  if (done_ || state_ == v1::TASK_STATE_PUBLISHING || stop_ != StopKind::kNone) {
    return absl::FailedPreconditionError(
        absl::StrCat("task ", options_.task_id, " is ", ShortEnumName(state_)));
  }
  return absl::UnavailableError(absl::StrCat("task ", options_.task_id,
                                             " has not paused within ",
                                             absl::FormatDuration(timeout), " (it is ",
                                             ShortEnumName(state_), "); call Pause again"));
}

v1::TaskState TaskControl::Resume() {
  absl::MutexLock lock(&mu_);
  if (pause_requested_ || parked_) {
    pause_requested_ = false;
    awaiting_checkpoint_ = false;
    ++resume_generation_;
    UpdateInterruptLocked();
    // Give the loop a moment to leave the parked state, so the answer says
    // READING when it resumed.
    auto resumed = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !parked_ || done_; };
    mu_.AwaitWithTimeout(absl::Condition(&resumed), absl::Seconds(1));
  }
  return state_;
}

absl::StatusOr<v1::SetEndOffsetsResponse> TaskControl::SetEndOffsets(const OffsetMap& offsets,
                                                                     bool finish) {
  absl::MutexLock lock(&mu_);
  if (ControlClosedLocked()) {
    return absl::FailedPreconditionError(absl::StrCat("task ", options_.task_id, " is ",
                                                      StateNameLocked(),
                                                      ": its end offsets are final"));
  }
  if (!options_.sequences->loaded()) {
    return absl::FailedPreconditionError(
        absl::StrCat("task ", options_.task_id, " is starting: pause it first"));
  }
  // Parked: the parked offsets are exact. Reading: every record the loop
  // routed or is routing is counted in the claims, so an end at or past
  // them cannot cut a record out of the closing sequence. A final end
  // (roll-over) still wants a pause.
  OffsetMap read = current_;
  if (!parked_) {
    for (const auto& [p, o] : claimed_) read[p] = std::max(read[p], o);
  }
  const bool fenced = parked_ || !finish;
  SLUICE_ASSIGN_OR_RETURN(SequenceList::SetEndOutcome outcome,
                          options_.sequences->SetEndOffsets(offsets, finish, read, fenced));
  if (outcome.duplicate) {
    LOG(INFO) << options_.log_prefix << " SetEndOffsets(" << FormatOffsets(offsets)
              << ", finish=" << finish << ") repeats the last call: resuming";
  } else {
    stats_.set_checkpoints(stats_.checkpoints() + 1);
    ++sequences_generation_;
    const std::optional<Sequence> latest = options_.sequences->Latest();
    LOG(INFO) << options_.log_prefix << " end offsets " << FormatOffsets(offsets)
              << (finish ? " are final" : " close the sequence; next is ")
              << (finish || !latest.has_value() ? "" : latest->name)
              << (parked_ ? "" : " (set while reading)");
    if (!finish) {
      if (parked_) {
        observe_at_unpark_ = true;
      } else {
        ObservePausedLocked();
      }
    }
  }
  pause_requested_ = false;
  awaiting_checkpoint_ = false;
  next_ask_ = absl::InfiniteFuture();
  error_.clear();
  ++resume_generation_;
  UpdateInterruptLocked();
  v1::SetEndOffsetsResponse response;
  ToProto(outcome.end_offsets, response.mutable_end_offsets());
  response.set_duplicate(outcome.duplicate);
  response.set_latest_sequence_id(outcome.latest_id);
  return response;
}

void TaskControl::ObservePausedLocked() {
  if (options_.paused_per_checkpoint != nullptr) {
    options_.paused_per_checkpoint->ObserveDuration(paused_since_checkpoint_);
  }
  paused_since_checkpoint_ = absl::ZeroDuration();
  observe_at_unpark_ = false;
}

void TaskControl::Stop(v1::StopMode mode, const std::string& reason) {
  absl::MutexLock lock(&mu_);
  if (done_) return;
  const StopKind kind = mode == v1::STOP_MODE_KILL ? StopKind::kKill : StopKind::kGraceful;
  if (stop_ == StopKind::kNone || (kind == StopKind::kKill && stop_ == StopKind::kGraceful)) {
    stop_ = kind;
    stop_reason_ = reason;
    LOG(INFO) << options_.log_prefix << " stop requested (" << ShortEnumName(mode)
              << "): " << reason;
  }
  UpdateInterruptLocked();
}

void TaskControl::RequestShutdown() {
  absl::MutexLock lock(&mu_);
  if (!done_ && stop_ == StopKind::kNone) stop_ = StopKind::kShutdown;
  UpdateInterruptLocked();
}

bool TaskControl::WaitFinished(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  mu_.AwaitWithTimeout(absl::Condition(&done_), timeout);
  return done_;
}

bool TaskControl::finished() const {
  absl::MutexLock lock(&mu_);
  return done_;
}

OffsetMap TaskControl::current() const {
  absl::MutexLock lock(&mu_);
  return current_;
}

v1::TaskState TaskControl::state() const {
  absl::MutexLock lock(&mu_);
  return state_;
}

void TaskControl::FillStatus(const OffsetMap& spec_start, v1::TaskStatus* status) const {
  absl::MutexLock lock(&mu_);
  status->set_state(state_);
  options_.sequences->FillStatus(spec_start, status);
  ToProto(current_, status->mutable_current_offsets());
  for (const auto& [p, t] : last_read_timestamps_) {
    (*status->mutable_last_read_timestamps_ms())[p] = t;
  }
  *status->mutable_row_stats() = stats_;
  for (const v1::ParseErrorSample& sample : parse_errors_) {
    *status->add_recent_parse_errors() = sample;
  }
  status->set_error(error_);
  status->set_start_time_ms(start_time_ms_);
  status->set_awaiting_checkpoint(awaiting_checkpoint_);
  status->set_end_time_ms(end_time_ms_);
}

bool TaskControl::stop_requested() const {
  absl::MutexLock lock(&mu_);
  return stop_ != StopKind::kNone;
}

StopKind TaskControl::stop_kind(std::string* reason) const {
  absl::MutexLock lock(&mu_);
  if (reason != nullptr) *reason = stop_reason_;
  return stop_;
}

void TaskControl::SetWaker(std::function<void()> waker) {
  absl::MutexLock lock(&wake_mu_);
  waker_ = std::move(waker);
}

void TaskControl::UpdateInterruptLocked() {
  const bool interrupt = pause_requested_ || stop_ != StopKind::kNone;
  interrupt_.store(interrupt, std::memory_order_relaxed);
  if (!interrupt) return;
  // A read loop waiting in a Kafka poll for records parks now, not when the
  // poll times out (what a Pause would otherwise wait for).
  absl::MutexLock lock(&wake_mu_);
  if (waker_) waker_();
}

bool TaskControl::SetState(v1::TaskState state) {
  absl::MutexLock lock(&mu_);
  if (state_ == state) return false;
  state_ = state;
  return true;
}

void TaskControl::SetStartTime(int64_t ms) {
  absl::MutexLock lock(&mu_);
  start_time_ms_ = ms;
}

void TaskControl::SetError(std::string error) {
  absl::MutexLock lock(&mu_);
  error_ = std::move(error);
}

bool TaskControl::TakeResume(int64_t* seen) {
  absl::MutexLock lock(&mu_);
  if (resume_generation_ == *seen) return false;
  *seen = resume_generation_;
  return true;
}

void TaskControl::PublishProgress(const OffsetMap& current, const v1::RowStats& counters,
                                  const std::map<int32_t, int64_t>& last_read_timestamps) {
  absl::MutexLock lock(&mu_);
  for (const auto& [p, o] : current) current_[p] = o;
  for (const auto& [p, t] : last_read_timestamps) last_read_timestamps_[p] = t;
  stats_.set_processed(counters.processed());
  stats_.set_processed_bytes(counters.processed_bytes());
  stats_.set_unparseable(counters.unparseable());
  stats_.set_thrown_away(counters.thrown_away());
  stats_.set_persists(counters.persists());
  stats_.set_rows_in_memory(counters.rows_in_memory());
  stats_.set_bytes_in_memory(counters.bytes_in_memory());
}

void TaskControl::AddParseError(const v1::ParseErrorSample& sample, int32_t keep,
                                int64_t unparseable) {
  absl::MutexLock lock(&mu_);
  if (keep > 0) {
    parse_errors_.push_back(sample);
    while (static_cast<int32_t>(parse_errors_.size()) > keep) parse_errors_.pop_front();
  }
  stats_.set_unparseable(unparseable);
}

bool TaskControl::RequestCheckpoint(const char* trigger, int32_t sequence_id, bool pause) {
  absl::MutexLock lock(&mu_);
  const std::optional<Sequence> latest = options_.sequences->Latest();
  if (!latest.has_value() || latest->checkpointed || latest->id != sequence_id ||
      stop_ != StopKind::kNone) {
    return false;
  }
  if (awaiting_checkpoint_) {
    // Asked while reading; the sequence filled up before the end offsets
    // came: park until they do (Park asks again only when due).
    if (!pause || pause_requested_) return false;
    pause_requested_ = true;
    UpdateInterruptLocked();
    LOG(INFO) << options_.log_prefix << " " << trigger << " reached before the end offsets of "
              << latest->name << " came: parking";
    return false;
  }
  if (pause_requested_) return false;
  awaiting_checkpoint_ = true;
  next_ask_ = absl::Now();
  if (pause) {
    pause_requested_ = true;
    UpdateInterruptLocked();
  }
  LOG(INFO) << options_.log_prefix << " " << trigger << " reached: asking to checkpoint "
            << latest->name << " " << FormatOffsets(latest->start)
            << (pause ? "" : " (reading on)");
  return true;
}

bool TaskControl::AskIfDue(const CheckpointAsker& ask) {
  absl::MutexLock lock(&mu_);
  if (!awaiting_checkpoint_ || pause_requested_ || parked_ || stop_ != StopKind::kNone ||
      absl::Now() < next_ask_) {
    return false;
  }
  AskLocked(ask);
  return true;
}

void TaskControl::AskLocked(const CheckpointAsker& ask) {
  const std::optional<Sequence> latest = options_.sequences->Latest();
  next_ask_ = absl::Now() + options_.checkpoint_retry_period;
  // The call runs unlocked: Pause and SetEndOffsets may come meanwhile.
  mu_.Unlock();
  absl::StatusOr<v1::CheckpointDataSourceMetadataResponse> response =
      latest.has_value() ? ask(*latest)
                         : absl::FailedPreconditionError("the sequence list is empty");
  mu_.Lock();
  if (!awaiting_checkpoint_) return;  // answered while we were calling
  if (!response.ok()) {
    error_ = absl::StrCat(kCheckpointFailedPrefix, response.status().ToString(),
                          "); asking again");
    LOG(WARNING) << options_.log_prefix << " " << error_;
  } else {
    error_ = kWaitingForEndOffsets;
    VLOG(1) << options_.log_prefix << " checkpoint request "
            << (response->accepted() ? "accepted" : "not needed") << ": " << response->message();
  }
}

int64_t TaskControl::Claim(const OffsetMap& next) {
  absl::MutexLock lock(&mu_);
  for (const auto& [p, o] : next) {
    int64_t& claimed = claimed_[p];
    claimed = std::max(claimed, o);
  }
  return sequences_generation_;
}

int64_t TaskControl::sequences_generation() const {
  absl::MutexLock lock(&mu_);
  return sequences_generation_;
}

bool TaskControl::Park(const CheckpointAsker& ask, const std::function<void()>& notify,
                       bool* asked_for_checkpoint) {
  {
    absl::MutexLock lock(&mu_);
    if (!pause_requested_ || stop_ != StopKind::kNone) return false;
    parked_ = true;
    state_ = v1::TASK_STATE_PAUSED;
    // Parked between two records: nothing beyond current_ is being routed.
    claimed_ = current_;
  }
  notify();
  {
    absl::MutexLock lock(&mu_);
    *asked_for_checkpoint = awaiting_checkpoint_;
    const absl::Time parked_at = absl::Now();
    if (!awaiting_checkpoint_ && supervisor_pause_deadline_ == absl::InfiniteFuture()) {
      supervisor_pause_deadline_ = parked_at + options_.self_resume_after;
    }
    while (pause_requested_ && stop_ == StopKind::kNone) {
      const absl::Time now = absl::Now();
      if (awaiting_checkpoint_ && now >= next_ask_) {
        AskLocked(ask);
        continue;
      }
      if (!awaiting_checkpoint_ && now >= supervisor_pause_deadline_) {
        LOG(WARNING) << options_.log_prefix << " paused by the supervisor for "
                     << absl::FormatDuration(options_.self_resume_after)
                     << " without Resume or SetEndOffsets: resuming by itself";
        pause_requested_ = false;
        break;
      }
      auto wake = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return !pause_requested_ || stop_ != StopKind::kNone;
      };
      mu_.AwaitWithDeadline(absl::Condition(&wake),
                            awaiting_checkpoint_ ? next_ask_ : supervisor_pause_deadline_);
    }
    parked_ = false;
    awaiting_checkpoint_ = false;
    next_ask_ = absl::InfiniteFuture();
    supervisor_pause_deadline_ = absl::InfiniteFuture();
    paused_since_checkpoint_ += absl::Now() - parked_at;
    if (observe_at_unpark_) ObservePausedLocked();
    if (stop_ == StopKind::kNone) state_ = v1::TASK_STATE_READING;
    if (error_ == kWaitingForEndOffsets || absl::StartsWith(error_, kCheckpointFailedPrefix)) {
      error_.clear();
    }
    UpdateInterruptLocked();
  }
  notify();
  return true;
}

bool TaskControl::Wait(absl::Duration d) {
  absl::MutexLock lock(&mu_);
  auto wake = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return pause_requested_ || stop_ != StopKind::kNone;
  };
  mu_.AwaitWithTimeout(absl::Condition(&wake), d);
  return stop_ == StopKind::kNone;
}

bool TaskControl::AllReadIsPublished() const {
  absl::MutexLock lock(&mu_);
  return options_.sequences->AllReadIsPublished(current_);
}

void TaskControl::MarkEnded(const OffsetMap& current) {
  absl::MutexLock lock(&mu_);
  for (const auto& [p, o] : current) current_[p] = o;
  parked_ = false;
  end_time_ms_ = NowMillis();
}

void TaskControl::Finish(v1::TaskState state, std::string error) {
  absl::MutexLock lock(&mu_);
  state_ = state;
  error_ = std::move(error);
  done_ = true;
}

}  // namespace sluice::task
