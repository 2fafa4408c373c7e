#include "supervisor/stream_supervisor.h"

#include <glog/logging.h>

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/notification.h"
#include "common/metrics/catalog.h"
#include "common/status_macros.h"
#include "common/time_util.h"
#include "supervisor/naming.h"

namespace sluice::supervisor {
namespace {

constexpr int kUnhealthyAfterRunFailures = 3;
constexpr int kUnhealthyAfterTaskFailures = 3;
constexpr size_t kRecentErrors = 10;
constexpr size_t kTaskOutcomes = 10;
// The deadline of one RunTask (a single attempt): a healthy worker answers
// in milliseconds; a frozen one must not keep a replacement waiting.
constexpr absl::Duration kRunTaskTimeout = absl::Seconds(2);

}  // namespace

// ---- lifecycle ----

namespace {

// The pool the manager shares, or (a supervisor built alone, as in unit
// tests) one of its own, kept in `own`.
StrandExecutor* SharedOrOwnPool(StrandExecutor* shared, std::unique_ptr<StrandExecutor>* own,
                                StrandExecutorOptions options) {
  if (shared != nullptr) return shared;
  *own = std::make_unique<StrandExecutor>(std::move(options));
  return own->get();
}

}  // namespace

StreamSupervisor::StreamSupervisor(StreamSupervisorDeps deps, SpecRecord spec)
    : deps_(std::move(deps)), datasource_(spec.datasource), spec_(std::move(spec)) {}

absl::StatusOr<std::unique_ptr<StreamSupervisor>> StreamSupervisor::Start(StreamSupervisorDeps deps,
                                                                          SpecRecord spec) {
  std::unique_ptr<StreamSupervisor> s(new StreamSupervisor(std::move(deps), std::move(spec)));
  SLUICE_RETURN_IF_ERROR(s->Init());
  s->task_rpcs_ = SharedOrOwnPool(s->deps_.task_rpcs, &s->own_task_rpcs_,
                                   {.threads = 2, .name = "task rpcs " + s->datasource_});
  s->loops_ = SharedOrOwnPool(s->deps_.loops, &s->own_loops_,
                               {.threads = 1, .clock = s->deps_.clock,
                                .name = "supervisor " + s->datasource_});
  // Stepped only once the pointer is set (Post reads it from other threads).
  s->loop_strand_ = s->loops_->AddStrand([raw = s.get()] { return raw->LoopStep(); },
                                         absl::InfiniteFuture());
  s->loop_strand_->Wake();
  if (s->deps_.background_stream_queries) {
    s->queries_ = SharedOrOwnPool(s->deps_.queries, &s->own_queries_,
                                  {.threads = 1, .name = "stream queries " + s->datasource_});
    // Real time: the queries only run with the real clock (see deps).
    // The first query at once: an unreachable Kafka shows within a period.
    s->query_strand_ = s->queries_->AddStrand([raw = s.get()] { return raw->StreamQueryStep(); });
  }
  return s;
}

absl::Status StreamSupervisor::Init() {
  SLUICE_ASSIGN_OR_RETURN(timings_, ParseSpecTimings(spec_.spec));
  const ChatOptions chat = ChatOptionsFromTuning(spec_.spec.tuning_config());
  client_ = deps_.task_client_factory(chat);
  ChatOptions run = chat;
  run.timeout = std::min(chat.timeout, kRunTaskTimeout);
  run.attempts = 1;
  run_client_ = deps_.task_client_factory(run);
  // A stream that cannot be created (bad properties) is a supervisor error
  // reported in the status, not a refusal: the spec was validated already.
  auto stream = deps_.stream_metadata_factory(spec_.spec);
  if (stream.ok()) {
    stream_ = std::move(*stream);
    absl::MutexLock lock(&queue_mu_);
    stream_for_queries_ = stream_.get();
  } else {
    RecordError(Annotate(stream.status(), "connecting to the stream"));
  }
  {
    absl::MutexLock lock(&queue_mu_);
    next_run_at_ = deps_.clock->Now() + timings_.start_delay;
  }
  PublishView();
  return absl::OkStatus();
}

StreamSupervisor::~StreamSupervisor() {
  StopLoop();
  StopStreamQueries();
  AwaitRunTasks(absl::InfiniteFuture());  // their jobs use this supervisor
  loop_strand_.reset();
}

bool StreamSupervisor::AwaitRunTasks(absl::Time deadline) {
  absl::MutexLock lock(&queue_mu_);
  auto none = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(queue_mu_) {
    return run_tasks_in_flight_ == 0;
  };
  // Real time: RunTask deadlines are real.
  return queue_mu_.AwaitWithDeadline(absl::Condition(&none), deadline);
}

void StreamSupervisor::StopLoop() {
  if (loop_strand_ == nullptr) return;
  {
    absl::MutexLock lock(&queue_mu_);
    exit_ = true;
  }
  loop_strand_->Wake();
  {
    absl::MutexLock lock(&queue_mu_);
    auto stopped = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(queue_mu_) { return loop_stopped_; };
    queue_mu_.Await(absl::Condition(&stopped));
  }
  // The strand stays until the destructor: RPC threads holding a reference
  // may still Post (their notices are never handled, as before).
}

void StreamSupervisor::StopStreamQueries() {
  {
    absl::MutexLock lock(&queue_mu_);
    stream_queries_exit_ = true;
  }
  query_strand_.reset();  // waits for a query under way
}

absl::Time StreamSupervisor::StreamQueryStep() {
  StreamMetadata* stream = nullptr;
  {
    absl::MutexLock lock(&queue_mu_);
    if (stream_queries_exit_) return absl::InfiniteFuture();
    stream = stream_for_queries_;
  }
  const absl::Time next = absl::Now() + timings_.period;
  if (stream == nullptr) return next;
  // Read before the watermarks: a publish in between cannot make a stored
  // offset look past a stale latest.
  OffsetMap stored = StoredOffsets();
  absl::StatusOr<std::vector<int32_t>> partitions = stream->ListPartitions(QueryTimeout());
  absl::StatusOr<std::map<int32_t, PartitionWatermarks>> marks =
      absl::FailedPreconditionError("no partitions");
  if (partitions.ok() && !partitions->empty()) {
    marks = stream->QueryWatermarks(*partitions, QueryTimeout());
  }
  Post("stream metadata", [this, partitions = std::move(partitions), marks = std::move(marks),
                           stored = std::move(stored)] {
    const bool first = !background_partitions_.has_value();
    background_partitions_ = partitions;
    NoteStreamQuery(!partitions.ok() ? partitions.status()
                    : partitions->empty() ? absl::OkStatus()
                                          : marks.status());
    if (marks.ok()) {
      watermarks_ = *marks;
      watermarks_at_ = deps_.clock->Now();
      CheckStoredOffsetsAgainst(stored, *marks);
    } else {
      VLOG(1) << Prefix() << "watermarks: " << marks.status();
    }
    if (first) RequestRun();  // the runs were waiting for this answer
  });
  return next;
}

std::string StreamSupervisor::Prefix() const {
  return absl::StrCat("[supervisor ", datasource_, "] ");
}

// ---- notices ----

void StreamSupervisor::Post(std::string kind, std::function<void()> handle) {
  {
    absl::MutexLock lock(&queue_mu_);
    queue_.push_back({std::move(kind), std::move(handle)});
  }
  if (loop_strand_ != nullptr) loop_strand_->Wake();
}

absl::Status StreamSupervisor::PostAndWait(std::string kind, std::function<void()> handle,
                                           absl::Duration timeout) {
  auto done = std::make_shared<absl::Notification>();
  const std::string name = kind;
  Post(std::move(kind), [this, handle = std::move(handle), done] {
    handle();
    PublishView();  // the caller reads the state it waited for
    done->Notify();
  });
  if (!done->WaitForNotificationWithTimeout(timeout)) {
    return absl::UnavailableError(absl::StrCat("the supervisor of ", datasource_,
                                               " did not handle ", name, " within ",
                                               absl::FormatDuration(timeout), "; retry"));
  }
  return absl::OkStatus();
}

void StreamSupervisor::RequestRun() {
  if (!deps_.run_on_events) return;
  {
    absl::MutexLock lock(&queue_mu_);
    run_requested_ = true;
  }
  if (loop_strand_ != nullptr) loop_strand_->Wake();
}

absl::Status StreamSupervisor::RunNow(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  SLUICE_RETURN_IF_ERROR(PostAndWait(
      "run", [this] { RunOnce(); }, timeout));
  if (!AwaitRunTasks(deadline)) {
    return absl::UnavailableError(absl::StrCat("the RunTask calls of ", datasource_,
                                               " were not answered within ",
                                               absl::FormatDuration(timeout)));
  }
  // Their answers were posted before the count went down.
  return Sync(std::max(deadline - absl::Now(), absl::Seconds(1)));
}

absl::Status StreamSupervisor::Sync(absl::Duration timeout) {
  return PostAndWait(
      "sync", [] {}, timeout);
}

void StreamSupervisor::Reset() {
  Post("reset", [this] { HandleReset(); });
}

void StreamSupervisor::ResetOffsets(const OffsetMap& offsets) {
  Post("reset offsets",
       [this, offsets] { HandleResetOffsets(offsets, "operator reset of offsets"); });
}

void StreamSupervisor::UpdateSpec(SpecRecord spec) {
  Post("update spec", [this, spec = std::move(spec)] {
    const bool was_suspended = spec_.spec.suspended();
    spec_ = spec;
    LOG(INFO) << Prefix() << "spec version " << spec_.version
              << (spec_.spec.suspended() ? " suspends" : " resumes") << " the supervisor";
    if (was_suspended != spec_.spec.suspended()) RunOnce();
  });
}

void StreamSupervisor::StopGracefully() {
  Post("graceful stop", [this] {
    stopping_ = true;
    detailed_state_ = "STOPPING";
    std::vector<int32_t> ids;
    for (const auto& [id, group] : active_) ids.push_back(id);
    for (int32_t id : ids) Finalize(id, "the supervisor is stopping");
    absl::MutexLock lock(&queue_mu_);
    exit_ = true;
  });
  StopLoop();
  StopStreamQueries();
}

absl::Time StreamSupervisor::LoopStep() {
  if (!loop_started_) {
    loop_started_ = true;
    LOG(INFO) << Prefix() << "started (spec version " << spec_.version << ", topic "
              << spec_.spec.io_config().topic() << ", " << spec_.spec.io_config().task_count()
              << " groups x " << spec_.spec.io_config().replicas() << " replicas)";
    if (absl::Status recovered = Recover(); !recovered.ok()) {
      RecordError(Annotate(recovered, "recovering from the metadata store"));
    }
    PublishView();
    return absl::InfinitePast();
  }
  std::optional<Notice> notice;
  bool run = false;
  {
    absl::MutexLock lock(&queue_mu_);
    if (loop_stopped_) return absl::InfiniteFuture();
    if (!queue_.empty()) {
      notice = std::move(queue_.front());
      queue_.pop_front();
    } else if (exit_) {
      loop_stopped_ = true;
      LOG(INFO) << Prefix() << "stopped";
      return absl::InfiniteFuture();
    } else if (run_requested_ || deps_.clock->Now() >= next_run_at_) {
      run = true;
      run_requested_ = false;
    }
  }
  if (notice) {
    VLOG(1) << Prefix() << "notice: " << notice->kind;
    notice->handle();
  }
  if (run) RunOnce();
  if (notice || run) PublishView();
  absl::MutexLock lock(&queue_mu_);
  if (!queue_.empty() || run_requested_ || exit_) return absl::InfinitePast();
  return next_run_at_;
}

// ---- runs ----

void StreamSupervisor::RunOnce() {
  {
    absl::MutexLock lock(&queue_mu_);
    next_run_at_ = deps_.clock->Now() + timings_.period;
  }
  if (stopping_) return;
  waiting_for_stream_ = false;
  absl::Status status = RunSteps();
  if (waiting_for_stream_) return;  // neither a success nor a failure
  if (status.ok()) {
    consecutive_run_failures_ = 0;
    ran_ok_once_ = true;
  } else {
    ++consecutive_run_failures_;
    RecordError(status);
  }
}

absl::Status StreamSupervisor::RunSteps() {
  if (!recovered_) {
    SLUICE_RETURN_IF_ERROR(Annotate(Recover(), "recovering from the metadata store"));
  }
  const absl::Time t0 = absl::Now();
  absl::Status partitions = UpdatePartitions();
  if (!partitions.ok() && !partitions_known_) return partitions;
  const absl::Time t1 = absl::Now();
  UpdateTaskStatuses();
  const absl::Time t2 = absl::Now();
  CheckTaskDuration();
  CheckPendingCompletion();
  CheckCurrentTasks();
  absl::Status created = absl::OkStatus();
  if (spec_.spec.suspended()) {
    detailed_state_ = "SUSPENDED";
  } else {
    created = CreateGroupsAndTasks();
  }
  const absl::Time t3 = absl::Now();
  UpdateLag();
  const absl::Time t4 = absl::Now();
  if (t4 - t0 > absl::Milliseconds(50)) {
    LOG(INFO) << Prefix() << "slow run " << absl::ToDoubleMilliseconds(t4 - t0)
              << " ms: partitions " << absl::ToDoubleMilliseconds(t1 - t0) << ", task statuses "
              << absl::ToDoubleMilliseconds(t2 - t1) << ", groups and tasks "
              << absl::ToDoubleMilliseconds(t3 - t2) << ", lag "
              << absl::ToDoubleMilliseconds(t4 - t3);
  }
  SLUICE_RETURN_IF_ERROR(partitions);
  return created;
}

void StreamSupervisor::RecordError(const absl::Status& status) {
  LOG(WARNING) << Prefix() << status;
  v1::ErrorEvent event;
  event.set_time_ms(deps_.clock->NowMs());
  event.set_message(status.ToString());
  recent_errors_.push_back(std::move(event));
  while (recent_errors_.size() > kRecentErrors) recent_errors_.pop_front();
}

absl::Status StreamSupervisor::UpdatePartitions() {
  if (!stream_) {
    auto stream = deps_.stream_metadata_factory(spec_.spec);
    if (!stream.ok()) {
      detailed_state_ = "CONNECTING_TO_STREAM";
      return Annotate(stream.status(), "connecting to the stream");
    }
    stream_ = std::move(*stream);
    absl::MutexLock lock(&queue_mu_);
    stream_for_queries_ = stream_.get();
  }
  // With background queries, their latest answer stands in for a query
  // here: the loop never waits for Kafka to list partitions. Until the
  // first answer, runs wait (CONNECTING_TO_STREAM, neither success nor
  // failure).
  absl::StatusOr<std::vector<int32_t>> partitions = absl::UnavailableError("not asked");
  if (deps_.background_stream_queries) {
    if (!background_partitions_.has_value()) {
      detailed_state_ = "CONNECTING_TO_STREAM";
      waiting_for_stream_ = true;
      return absl::UnavailableError("waiting for the first answer from Kafka");
    }
    partitions = *background_partitions_;
  } else {
    partitions = stream_->ListPartitions(QueryTimeout());
    NoteStreamQuery(partitions.status());
  }
  if (!partitions.ok()) {
    detailed_state_ = !IsUnreachable(partitions.status()) ? "CONNECTING_TO_STREAM"
                      : partitions_known_                 ? "LOST_CONTACT_WITH_STREAM"
                                                          : "UNABLE_TO_CONNECT_TO_STREAM";
    return Annotate(partitions.status(), absl::StrCat("listing the partitions of topic ",
                                                      spec_.spec.io_config().topic()));
  }
  if (partitions->empty()) {
    return absl::UnavailableError(
        absl::StrCat("topic ", spec_.spec.io_config().topic(), " has no partitions"));
  }
  if (!partitions_known_) {
    first_partitions_.insert(partitions->begin(), partitions->end());
    LOG(INFO) << Prefix() << "topic " << spec_.spec.io_config().topic() << " has "
              << partitions->size() << " partitions";
  } else if (*partitions != partitions_) {
    LOG(INFO) << Prefix() << "partitions changed from [" << absl::StrJoin(partitions_, ",")
              << "] to [" << absl::StrJoin(*partitions, ",") << "]";
  }
  partitions_ = *partitions;
  partitions_known_ = true;
  return absl::OkStatus();
}

void StreamSupervisor::UpdateTaskStatuses() {
  std::map<std::string, v1::TaskStatus> reports;
  {
    absl::MutexLock lock(&reports_mu_);
    reports = reports_;
  }
  const absl::Time now = deps_.clock->Now();
  auto update = [&](Group& group) {
    for (auto& [id, task] : group.tasks) {
      if (!IsLive(task)) continue;
      auto report = reports.find(id);
      if (report != reports.end()) {
        task.status = report->second;
        task.reported = true;
        if (task.state != report->second.state()) {
          VLOG(1) << Prefix() << "task " << id << " is "
                  << v1::TaskState_Name(report->second.state());
        }
        task.state = report->second.state();
        if (!IsLive(task)) {
          deps_.registry->Release(id);
          NoteTaskOutcome(task);
          continue;
        }
      }
      if (!deps_.registry->IsAlive(task.worker_id)) {
        KillTask(task, absl::StrCat("its worker ", task.worker_id, " was lost"));
        continue;
      }
      std::optional<WorkerView> worker = deps_.registry->Get(task.worker_id);
      if (worker && worker->registered && !worker->reported_tasks.count(id) &&
          worker->reported_at > task.created_at + 2 * deps_.registry->heartbeat_interval() &&
          now > task.created_at + 2 * deps_.registry->heartbeat_interval()) {
        KillTask(task, absl::StrCat("worker ", task.worker_id, " no longer reports it"));
      }
    }
  };
  for (auto& [id, group] : active_) update(group);
  for (auto& [id, groups] : publishing_) {
    for (Group& group : groups) update(group);
  }
  // Forget reports of tasks no group holds any more.
  std::set<std::string> tracked;
  for (const auto& [id, group] : active_) {
    for (const auto& [task_id, task] : group.tasks) tracked.insert(task_id);
  }
  for (const auto& [id, groups] : publishing_) {
    for (const Group& group : groups) {
      for (const auto& [task_id, task] : group.tasks) tracked.insert(task_id);
    }
  }
  absl::MutexLock lock(&reports_mu_);
  for (auto it = reports_.begin(); it != reports_.end();) {
    it = tracked.count(it->first) ? std::next(it) : reports_.erase(it);
  }
}

void StreamSupervisor::CheckTaskDuration() {
  const absl::Time now = deps_.clock->Now();
  const bool stop_all = spec_.spec.suspended() || stopping_;
  std::vector<std::pair<absl::Time, int32_t>> due;
  std::set<int32_t> repartitioned;
  const int task_count = spec_.spec.io_config().task_count();
  for (const auto& [id, group] : active_) {
    // Partitions added to the topic (CreatePartitions) that belong to this
    // group (p % taskCount) are read by its next generation: roll over now
    // rather than at the end of the task duration (Druid waits
    // repartitionTransitionDuration, PT2M by default, then does the same).
    bool grown = false;
    for (int32_t p : partitions_) {
      if (task_count > 0 && p % task_count == id && !group.HasPartition(p)) grown = true;
    }
    if (grown) repartitioned.insert(id);
    if (stop_all || grown || now >= group.created_at + timings_.task_duration) {
      due.emplace_back(group.created_at, id);
    }
  }
  std::sort(due.begin(), due.end());
  int publishing = 0;
  for (const auto& [id, groups] : publishing_) publishing += static_cast<int>(groups.size());
  for (const auto& [created, id] : due) {
    if (!stop_all && publishing >= spec_.spec.io_config().stop_task_count()) {
      VLOG(1) << Prefix() << "group " << id << " is due to roll over but " << publishing
              << " groups are still publishing (stopTaskCount "
              << spec_.spec.io_config().stop_task_count() << ")";
      break;
    }
    Finalize(id, stop_all ? (stopping_ ? "the supervisor is stopping" : "the supervisor is suspended")
                 : repartitioned.count(id) ? "partitions were added to the topic"
                                           : "its task duration elapsed");
    ++publishing;
  }
}

void StreamSupervisor::CheckPendingCompletion() {
  const absl::Time now = deps_.clock->Now();
  for (auto& [group_id, groups] : publishing_) {
    bool earlier_timed_out = false;
    for (auto it = groups.begin(); it != groups.end();) {
      Group& group = *it;
      if (earlier_timed_out) {
        KillGroup(group, "an earlier group of the same partitions did not publish in time");
        FinishGroup(group, GroupState::kAbandoned, "an earlier group timed out");
        it = groups.erase(it);
        continue;
      }
      const TaskInfo* winner = nullptr;
      bool any_live = false;
      for (auto& [id, task] : group.tasks) {
        if (task.state == v1::SUCCESS && winner == nullptr) winner = &task;
        if (IsLive(task)) any_live = true;
      }
      if (winner != nullptr) {
        const std::string winner_id = winner->task_id;
        for (auto& [id, task] : group.tasks) {
          if (IsLive(task))
            StopTaskGracefully(task, absl::StrCat("replica ", winner_id, " succeeded"));
        }
        LOG(INFO) << Prefix() << "group " << group_id << " (" << group.base_sequence_name
                  << ") published everything up to " << FormatOffsets(group.end_offsets)
                  << ": task " << winner_id << " succeeded";
        FinishGroup(group, GroupState::kDone, absl::StrCat("task ", winner_id, " succeeded"));
        it = groups.erase(it);
        continue;
      }
      const bool timed_out = now >= group.completion_deadline;
      if (!any_live || timed_out) {
        const std::string why = !any_live
                                    ? "every task of the group failed"
                                    : absl::StrCat("no task succeeded within completionTimeout ",
                                                   spec_.spec.io_config().completion_timeout());
        LOG(ERROR) << Prefix() << "ALERT: publishing group " << group_id << " ("
                   << group.base_sequence_name << ", end " << FormatOffsets(group.end_offsets)
                   << "): " << why << "; killing it and the group reading after it, and "
                   << "restarting from the stored offsets";
        KillGroup(group, why);
        FinishGroup(group, GroupState::kAbandoned, why);
        for (int32_t p : group.partitions()) next_offsets_.erase(p);
        auto active = active_.find(group_id);
        if (active != active_.end()) {
          KillGroup(active->second, "the group it started after did not publish");
          FinishGroup(active->second, GroupState::kAbandoned,
                      "the group it started after did not publish");
          for (int32_t p : active->second.partitions()) next_offsets_.erase(p);
          active_.erase(active);
        }
        earlier_timed_out = true;
        it = groups.erase(it);
        continue;
      }
      ++it;
    }
  }
  for (auto it = publishing_.begin(); it != publishing_.end();) {
    it = it->second.empty() ? publishing_.erase(it) : std::next(it);
  }
}

void StreamSupervisor::CheckCurrentTasks() {
  for (auto it = active_.begin(); it != active_.end();) {
    Group& group = it->second;
    const TaskInfo* winner = nullptr;
    for (auto task = group.tasks.begin(); task != group.tasks.end();) {
      if (task->second.state == v1::SUCCESS && winner == nullptr) winner = &task->second;
      if (task->second.state == v1::FAILED || task->second.state == v1::STOPPED) {
        LOG(WARNING) << Prefix() << "task " << task->first << " of group " << it->first << " ended "
                     << v1::TaskState_Name(task->second.state) << ": "
                     << task->second.status.error() << "; it will be replaced";
        ++group.tasks_lost;
        task = group.tasks.erase(task);
        continue;
      }
      ++task;
    }
    if (winner != nullptr) {
      const std::string winner_id = winner->task_id;
      for (auto& [id, task] : group.tasks) {
        if (IsLive(task))
          StopTaskGracefully(task, absl::StrCat("replica ", winner_id, " succeeded"));
      }
      LOG(INFO) << Prefix() << "reading group " << it->first << " (" << group.base_sequence_name
                << ") ended: task " << winner_id << " succeeded; the next group starts from "
                << "the stored offsets";
      FinishGroup(group, GroupState::kDone, absl::StrCat("task ", winner_id, " succeeded"));
      for (int32_t p : group.partitions()) next_offsets_.erase(p);
      it = active_.erase(it);
      continue;
    }
    ++it;
  }
}

bool StreamSupervisor::IsPreviousSpec(int64_t version) {
  if (version == spec_.version) return false;
  auto cached = previous_spec_.find(version);
  if (cached != previous_spec_.end()) return cached->second;
  std::vector<SpecRecord> history;
  absl::Status read = deps_.store->InTransaction([&](StoreTxn& txn) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(history, txn.SpecHistory(datasource_));
    return absl::OkStatus();
  });
  if (!read.ok()) return true;  // unknown: be careful, wait
  bool previous = true;
  for (const SpecRecord& record : history) {
    if (record.version != version) continue;
    // Versions that differ only in `suspended` are the same spec.
    v1::SupervisorSpec a = record.spec;
    v1::SupervisorSpec b = spec_.spec;
    a.set_suspended(false);
    b.set_suspended(false);
    previous = a.SerializeAsString() != b.SerializeAsString();
  }
  previous_spec_[version] = previous;
  return previous;
}

absl::Status StreamSupervisor::CreateGroupsAndTasks() {
  for (const auto& [id, groups] : publishing_) {
    for (const Group& group : groups) {
      if (IsPreviousSpec(group.spec_version)) {
        detailed_state_ = "WAITING_FOR_PREVIOUS_SPEC_TO_PUBLISH";
        return absl::OkStatus();
      }
    }
  }
  const int task_count = spec_.spec.io_config().task_count();
  std::map<int32_t, std::vector<int32_t>> by_group;
  for (int32_t p : partitions_) by_group[p % task_count].push_back(p);
  absl::Status first_error = absl::OkStatus();
  for (const auto& [group_id, partitions] : by_group) {
    if (active_.count(group_id)) continue;
    absl::Status status = CreateGroup(group_id, partitions);
    if (!status.ok() && first_error.ok()) first_error = status;
  }
  bool waiting_for_workers = false;
  for (auto& [group_id, group] : active_) {
    int live = 0;
    for (const auto& [id, task] : group.tasks) live += IsLive(task) ? 1 : 0;
    for (int i = live; i < spec_.spec.io_config().replicas(); ++i) {
      absl::Status status = CreateTask(group);
      if (absl::IsResourceExhausted(status)) waiting_for_workers = true;
      if (!status.ok()) {
        if (first_error.ok() && !absl::IsResourceExhausted(status)) first_error = status;
        break;
      }
    }
  }
  if (waiting_for_workers) {
    detailed_state_ = "WAITING_FOR_WORKERS";
  } else if (first_error.ok()) {
    detailed_state_ = "RUNNING";
  }
  return first_error;
}

absl::Status StreamSupervisor::CreateGroup(int32_t group_id,
                                           const std::vector<int32_t>& partitions) {
  const std::string& topic = spec_.spec.io_config().topic();
  OffsetMap committed;
  SLUICE_RETURN_IF_ERROR(deps_.store->InTransaction([&](StoreTxn& txn) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(committed, txn.CommittedOffsets(datasource_));
    SLUICE_ASSIGN_OR_RETURN(std::optional<std::string> stored_topic, txn.CommitTopic(datasource_));
    if (stored_topic && *stored_topic != topic && !committed.empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat("the stored offsets of ", datasource_, " are for topic \"", *stored_topic,
                       "\", not \"", topic, "\"; reset the supervisor to switch topics"));
    }
    return absl::OkStatus();
  }));
  std::vector<int32_t> need_marks;
  for (int32_t p : partitions) {
    if (!next_offsets_.count(p)) need_marks.push_back(p);
  }
  std::map<int32_t, PartitionWatermarks> marks;
  if (!need_marks.empty()) {
    auto queried = stream_->QueryWatermarks(need_marks, QueryTimeout());
    if (!queried.ok()) {
      return Annotate(queried.status(), absl::StrCat("watermarks of group ", group_id));
    }
    marks = *queried;
  }
  OffsetMap start;
  std::vector<std::string> sources;
  OffsetMap auto_reset;
  for (int32_t p : partitions) {
    if (auto next = next_offsets_.find(p); next != next_offsets_.end()) {
      start[p] = next->second;
      sources.push_back(absl::StrCat(p, ":previous group"));
      continue;
    }
    const PartitionWatermarks& mark = marks[p];
    if (auto stored = committed.find(p); stored != committed.end()) {
      if (stored->second < mark.earliest) {
        if (!spec_.spec.tuning_config().reset_offset_automatically()) {
          // Kafka answered: this is not a connection problem.
          detailed_state_ = "STORED_OFFSETS_UNAVAILABLE";
          const std::string message = absl::StrCat(
              "stored offset ", stored->second, " of partition ", p,
              " is no longer available in Kafka (earliest ", mark.earliest,
              "); reset the supervisor or its offsets, or set resetOffsetAutomatically");
          SetOffsetsVerdict({StreamProblem::kStoredOffsetsUnavailable, message});
          return absl::FailedPreconditionError(message);
        }
        auto_reset[p] = mark.earliest;
        start[p] = mark.earliest;
        sources.push_back(absl::StrCat(p, ":auto-reset to earliest"));
        continue;
      }
      start[p] = stored->second;
      sources.push_back(absl::StrCat(p, ":stored"));
      continue;
    }
    const bool earliest =
        spec_.spec.io_config().use_earliest_offset() || !first_partitions_.count(p);
    start[p] = earliest ? mark.earliest : mark.latest;
    sources.push_back(absl::StrCat(p, earliest ? ":earliest" : ":latest"));
  }
  if (!auto_reset.empty()) {
    LOG(ERROR) << Prefix() << "ALERT: stored offsets of partitions "
               << FormatOffsets(Restrict(committed, auto_reset))
               << " are no longer in Kafka; resetting them to the earliest available "
               << FormatOffsets(auto_reset) << " (resetOffsetAutomatically): records were lost";
    HandleResetOffsets(auto_reset, "stored offset no longer available (resetOffsetAutomatically)");
  }

  const int64_t now_ms = deps_.clock->NowMs();
  int64_t min_time = 0;
  if (timings_.late_message_rejection_start_ms) {
    min_time = *timings_.late_message_rejection_start_ms;
  } else if (timings_.late_message_rejection_period) {
    min_time = now_ms - absl::ToInt64Milliseconds(*timings_.late_message_rejection_period);
  }
  int64_t max_time = 0;
  if (timings_.early_message_rejection_period) {
    max_time = now_ms + absl::ToInt64Milliseconds(timings_.task_duration) +
               absl::ToInt64Milliseconds(*timings_.early_message_rejection_period);
  }
  Group group;
  group.group_id = group_id;
  group.start_offsets = start;
  group.checkpoints[0] = start;
  group.min_message_time_ms = min_time;
  group.max_message_time_ms = max_time;
  group.created_at = deps_.clock->Now();
  group.spec_version = spec_.version;
  // Read after an automatic reset above: it counts too.
  OffsetMap reset_counts;
  SLUICE_RETURN_IF_ERROR(deps_.store->InTransaction([&](StoreTxn& txn) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(reset_counts, txn.OffsetResetCounts(datasource_));
    return absl::OkStatus();
  }));
  group.base_sequence_name =
      BaseSequenceName(datasource_, spec_.spec.data_schema(), spec_.spec.tuning_config(), start,
                       min_time, max_time, reset_counts);
  for (const auto& [id, groups] : publishing_) {
    for (const Group& other : groups) {
      if (other.base_sequence_name == group.base_sequence_name) {
        VLOG(1) << Prefix() << "group " << group_id << " would reuse the name of publishing group "
                << other.base_sequence_name << "; waiting for it to finish";
        return absl::OkStatus();
      }
    }
  }
  TaskGroupRecord record;
  record.base_sequence_name = group.base_sequence_name;
  record.datasource = datasource_;
  record.group_id = group_id;
  record.state = GroupState::kReading;
  record.spec_version = spec_.version;
  record.start_offsets = start;
  record.checkpoints = group.checkpoints;
  record.min_message_time_ms = min_time;
  record.max_message_time_ms = max_time;
  record.created_at_ms = now_ms;
  OffsetMap recorded;
  SLUICE_RETURN_IF_ERROR(deps_.store->InTransaction([&](StoreTxn& txn) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(recorded, txn.RecordInitialOffsets(datasource_, topic, start, now_ms));
    return txn.InsertTaskGroup(record);
  }));
  LOG(INFO) << Prefix() << "created group " << group_id << " (" << group.base_sequence_name
            << ") reading partitions [" << absl::StrJoin(group.partitions(), ",") << "] from "
            << FormatOffsets(start) << " (" << absl::StrJoin(sources, ", ") << ")"
            << (recorded.empty()
                    ? ""
                    : absl::StrCat("; recorded initial offsets ", FormatOffsets(recorded)));
  active_[group_id] = std::move(group);
  // Its tasks may ask to checkpoint before this run ends (RunTask of the
  // other tasks takes a while): CheckpointDataSourceMetadata must know it.
  PublishView();
  return absl::OkStatus();
}

absl::Status StreamSupervisor::CreateTask(Group& group) {
  // A replacement re-reads from the first sequence not yet published.
  std::map<int32_t, OffsetMap> checkpoints;
  SLUICE_RETURN_IF_ERROR(deps_.store->InTransaction([&](StoreTxn& txn) -> absl::Status {
    checkpoints.clear();
    for (const auto& [id, offsets] : group.checkpoints) {
      if (id != group.latest_sequence_id()) {
        SLUICE_ASSIGN_OR_RETURN(
            auto committed,
            txn.CommittedSequence(datasource_, SequenceName(group.base_sequence_name, id)));
        if (committed) continue;
      }
      checkpoints[id] = offsets;
    }
    return absl::OkStatus();
  }));
  std::set<std::string> avoid;
  for (const auto& [id, task] : group.tasks) {
    if (IsLive(task)) avoid.insert(task.worker_id);
  }
  auto worker = deps_.registry->PickWorker(avoid);
  if (!worker.ok()) {
    detailed_state_ = "WAITING_FOR_WORKERS";
    if (deps_.clock->Now() - last_resource_error_ > absl::Minutes(1)) {
      last_resource_error_ = deps_.clock->Now();
      RecordError(
          Annotate(worker.status(), absl::StrCat("placing a task of group ", group.group_id)));
    }
    return worker.status();
  }
  std::optional<std::string> address = deps_.registry->Address(*worker);
  if (!address) return absl::InternalError(absl::StrCat("worker ", *worker, " has no address"));

  const int64_t now_ms = deps_.clock->NowMs();
  v1::TaskSpec spec;
  spec.set_task_id(NewTaskId(group.base_sequence_name));
  spec.set_datasource(datasource_);
  spec.set_group_id(group.group_id);
  spec.set_base_sequence_name(group.base_sequence_name);
  spec.set_topic(spec_.spec.io_config().topic());
  *spec.mutable_consumer_properties() = spec_.spec.io_config().consumer_properties();
  ToProto(group.start_offsets, spec.mutable_start_offsets());
  for (const auto& [id, offsets] : checkpoints) {
    v1::Checkpoint* checkpoint = spec.add_checkpoints();
    checkpoint->set_sequence_id(id);
    ToProto(offsets, checkpoint->mutable_offsets());
  }
  spec.set_minimum_message_time_ms(group.min_message_time_ms);
  spec.set_maximum_message_time_ms(group.max_message_time_ms);
  *spec.mutable_data_schema() = spec_.spec.data_schema();
  *spec.mutable_tuning_config() = spec_.spec.tuning_config();
  spec.set_poll_timeout_ms(absl::ToInt64Milliseconds(timings_.poll_timeout));
  spec.set_created_at_ms(now_ms);

  TaskRecord record;
  record.task_id = spec.task_id();
  record.datasource = datasource_;
  record.group_id = group.group_id;
  record.base_sequence_name = group.base_sequence_name;
  record.worker_id = *worker;
  record.state = v1::NOT_STARTED;
  record.spec = spec;
  record.created_at_ms = now_ms;
  record.updated_at_ms = now_ms;
  SLUICE_RETURN_IF_ERROR(
      deps_.store->InTransaction([&](StoreTxn& txn) { return txn.InsertTask(record); }));
  deps_.registry->Assign(spec.task_id(), *worker);

  TaskInfo info;
  info.task_id = spec.task_id();
  info.worker_id = *worker;
  info.state = v1::NOT_STARTED;
  info.created_at = deps_.clock->Now();
  info.starting = true;
  const bool replacement = group.tasks_lost > 0;
  if (replacement) --group.tasks_lost;
  group.tasks[info.task_id] = info;
  LOG(INFO) << Prefix() << "starting " << (replacement ? "replacement " : "") << "task "
            << info.task_id << " of group " << group.group_id << " on worker " << *worker
            << " from sequence " << checkpoints.begin()->first << " at "
            << FormatOffsets(checkpoints.begin()->second) << " (" << checkpoints.size()
            << " checkpoints)";
  // Off the loop: a frozen worker costs this task its RunTask deadline, not
  // the datasource's loop. The answer comes back as a notice.
  {
    absl::MutexLock lock(&queue_mu_);
    ++run_tasks_in_flight_;
  }
  task_rpcs_->Run([this, address = *address, spec, group_id = group.group_id, worker = *worker] {
    absl::StatusOr<v1::RunTaskResponse> response = run_client_->RunTask(address, spec);
    Post("RunTask answer", [this, group_id, task_id = spec.task_id(), worker, response] {
      HandleRunTaskResult(group_id, task_id, worker, response);
    });
    absl::MutexLock lock(&queue_mu_);
    --run_tasks_in_flight_;
  });
  return absl::OkStatus();
}

void StreamSupervisor::HandleRunTaskResult(int32_t group_id, const std::string& task_id,
                                           const std::string& worker,
                                           const absl::StatusOr<v1::RunTaskResponse>& response) {
  TaskInfo* task = nullptr;
  if (auto group = active_.find(group_id); group != active_.end()) {
    auto it = group->second.tasks.find(task_id);
    if (it != group->second.tasks.end()) task = &it->second;
  }
  if (!response.ok()) {
    // The next placement goes elsewhere for a while: a frozen worker must
    // not take every replacement (and a RunTask deadline each time).
    deps_.registry->NoteRunTaskFailed(worker);
    deps_.registry->Release(task_id);
    const std::string error = absl::StrCat("RunTask failed: ", response.status().ToString());
    deps_.store
        ->InTransaction([&](StoreTxn& txn) {
          return txn.UpdateTask(task_id, v1::FAILED, error, {}, deps_.clock->NowMs());
        })
        .IgnoreError();
    RecordError(Annotate(response.status(), absl::StrCat("starting task ", task_id, " of group ",
                                                         group_id, " on worker ", worker)));
    if (task != nullptr && IsLive(*task)) {
      // Not a task outcome: the next run replaces it (on another worker).
      task->state = v1::FAILED;
      task->status.set_error(error);
    }
    RequestRun();
    return;
  }
  deps_.registry->NoteRunTaskSucceeded(worker);
  if (task == nullptr || !IsLive(*task)) {
    // Its group ended, or the task was killed, while RunTask was under way:
    // the worker must not keep it.
    LOG(INFO) << Prefix() << "task " << task_id << " started on worker " << worker
              << " after it was given up; killing it";
    if (std::optional<std::string> address = deps_.registry->Address(worker)) {
      client_->StopTask(*address, task_id, v1::KILL, "given up while starting").IgnoreError();
    }
    return;
  }
  task->starting = false;
  if (task->state == v1::NOT_STARTED &&
      response->status().state() != v1::TASK_STATE_UNSPECIFIED) {
    task->state = response->status().state();
  }
  LOG(INFO) << Prefix() << "started task " << task_id << " of group " << group_id
            << " on worker " << worker;
}

void StreamSupervisor::UpdateLag() {
  if (!stream_ || partitions_.empty()) return;
  // The background thread keeps watermarks_ fresh once it has answered.
  if (deps_.background_stream_queries) return;
  const OffsetMap stored = StoredOffsets();
  auto marks = stream_->QueryWatermarks(partitions_, QueryTimeout());
  NoteStreamQuery(marks.status());
  if (!marks.ok()) {
    VLOG(1) << Prefix() << "watermarks: " << marks.status();
    return;
  }
  watermarks_ = *marks;
  watermarks_at_ = deps_.clock->Now();
  CheckStoredOffsetsAgainst(stored, *marks);
}

absl::Duration StreamSupervisor::QueryTimeout() const {
  return std::min(deps_.kafka_timeout, timings_.period);
}

void StreamSupervisor::NoteStreamQuery(const absl::Status& status) {
  const bool unreachable = IsUnreachable(status);
  if (unreachable && !stream_unreachable_) {
    LOG(WARNING) << Prefix() << "Kafka cannot be reached: " << status;
    RecordError(Annotate(status, "Kafka cannot be reached"));
  } else if (!unreachable && stream_unreachable_) {
    LOG(INFO) << Prefix() << "Kafka answers again";
  }
  stream_unreachable_ = unreachable;
}

OffsetMap StreamSupervisor::StoredOffsets() {
  OffsetMap stored;
  deps_.store
      ->InTransaction([&](StoreTxn& txn) -> absl::Status {
        SLUICE_ASSIGN_OR_RETURN(stored, txn.CommittedOffsets(datasource_));
        return absl::OkStatus();
      })
      .IgnoreError();
  return stored;
}

void StreamSupervisor::CheckStoredOffsetsAgainst(
    const OffsetMap& stored, const std::map<int32_t, PartitionWatermarks>& marks) {
  std::set<int32_t> idle(partitions_.begin(), partitions_.end());
  for (const auto& [id, group] : active_) {
    for (int32_t p : group.partitions()) idle.erase(p);
  }
  SetOffsetsVerdict(CheckStoredOffsets(stored, marks, idle,
                                       spec_.spec.tuning_config().reset_offset_automatically()));
}

void StreamSupervisor::SetOffsetsVerdict(StreamVerdict verdict) {
  if (verdict.problem != StreamProblem::kNone &&
      (verdict.problem != offsets_verdict_.problem || verdict.message != offsets_verdict_.message)) {
    LOG(ERROR) << Prefix() << "ALERT: " << verdict.message;
    RecordError(absl::FailedPreconditionError(verdict.message));
  } else if (verdict.problem == StreamProblem::kNone &&
             offsets_verdict_.problem != StreamProblem::kNone) {
    LOG(INFO) << Prefix() << "the stored offsets are within Kafka's offsets again";
  }
  offsets_verdict_ = std::move(verdict);
}

// ---- task actions ----

std::optional<std::string> StreamSupervisor::AddressOf(const TaskInfo& task) {
  return deps_.registry->Address(task.worker_id);
}

void StreamSupervisor::KillTask(TaskInfo& task, const std::string& reason) {
  // A task still starting gets no call (its worker may be frozen): if its
  // RunTask succeeds after all, HandleRunTaskResult kills it there.
  if (std::optional<std::string> address = AddressOf(task);
      address && deps_.registry->IsAlive(task.worker_id) && !task.starting) {
    auto stopped = client_->StopTask(*address, task.task_id, v1::KILL, reason);
    if (!stopped.ok()) {
      VLOG(1) << Prefix() << "kill of " << task.task_id << ": " << stopped.status();
    }
  }
  LOG(WARNING) << Prefix() << "killed task " << task.task_id << " on worker " << task.worker_id
               << ": " << reason;
  task.state = v1::FAILED;
  task.status.set_error(absl::StrCat("killed by supervisor: ", reason));
  deps_.registry->Release(task.task_id);
  deps_.store
      ->InTransaction([&](StoreTxn& txn) {
        return txn.UpdateTask(task.task_id, v1::FAILED, task.status.error(), {},
                              deps_.clock->NowMs());
      })
      .IgnoreError();
  NoteTaskOutcome(task);
}

void StreamSupervisor::StopTaskGracefully(TaskInfo& task, const std::string& reason) {
  if (std::optional<std::string> address = AddressOf(task)) {
    auto stopped = client_->StopTask(*address, task.task_id, v1::GRACEFUL, reason);
    if (!stopped.ok()) {
      VLOG(1) << Prefix() << "stop of " << task.task_id << ": " << stopped.status();
    }
  }
  LOG(INFO) << Prefix() << "stopped task " << task.task_id << ": " << reason;
  task.state = v1::STOPPED;
  deps_.registry->Release(task.task_id);
  deps_.store
      ->InTransaction([&](StoreTxn& txn) {
        return txn.UpdateTask(task.task_id, v1::STOPPED, absl::StrCat("stopped: ", reason), {},
                              deps_.clock->NowMs());
      })
      .IgnoreError();
}

void StreamSupervisor::KillGroup(Group& group, const std::string& reason) {
  for (auto& [id, task] : group.tasks) {
    if (IsLive(task)) KillTask(task, reason);
  }
}

void StreamSupervisor::FinishGroup(const Group& group, GroupState state,
                                   const std::string& reason) {
  if (state == GroupState::kReading) return;
  absl::Status status = deps_.store->InTransaction([&](StoreTxn& txn) {
    return txn.FinishGroup(group.base_sequence_name, state, reason, deps_.clock->NowMs());
  });
  if (!status.ok()) RecordError(Annotate(status, "recording the end of a task group"));
}

void StreamSupervisor::NoteTaskOutcome(const TaskInfo& task) {
  if (task.state != v1::SUCCESS && task.state != v1::FAILED) return;
  task_outcomes_.push_back(task.state == v1::SUCCESS);
  while (task_outcomes_.size() > kTaskOutcomes) task_outcomes_.pop_front();
}

// ---- view and status ----

void StreamSupervisor::PublishView() {
  View view;
  const absl::Time now = deps_.clock->Now();
  v1::SupervisorStatus& s = view.status;
  s.set_datasource(datasource_);
  s.set_topic(spec_.spec.io_config().topic());
  s.set_suspended(spec_.spec.suspended());
  s.set_spec_version(spec_.version);
  s.set_partitions(static_cast<int32_t>(partitions_.size()));

  int failed_in_a_row = 0;
  for (auto it = task_outcomes_.rbegin(); it != task_outcomes_.rend() && !*it; ++it) {
    ++failed_in_a_row;
  }
  v1::SupervisorState state = v1::RUNNING;
  if (stopping_) {
    state = v1::STOPPING;
  } else if (stream_unreachable_) {
    state = v1::UNABLE_TO_CONNECT_TO_STREAM;
  } else if (offsets_verdict_.problem == StreamProblem::kStoredOffsetsUnavailable) {
    state = v1::STORED_OFFSETS_UNAVAILABLE;
  } else if (offsets_verdict_.problem == StreamProblem::kStoredOffsetsPastEnd) {
    state = v1::STORED_OFFSETS_PAST_END;
  } else if (consecutive_run_failures_ >= kUnhealthyAfterRunFailures) {
    state = v1::UNHEALTHY_SUPERVISOR;
  } else if (failed_in_a_row >= kUnhealthyAfterTaskFailures) {
    state = v1::UNHEALTHY_TASKS;
  } else if (spec_.spec.suspended()) {
    state = v1::SUSPENDED;
  } else if (!ran_ok_once_) {
    state = v1::PENDING;
  }
  s.set_state(state);
  // A used segment whose deep-storage copy fails verification is lost data
  // until restored: the datasource is unhealthy whatever its tasks do.
  int64_t failing = 0;
  deps_.store
      ->InTransaction([&](StoreTxn& txn) -> absl::Status {
        SLUICE_ASSIGN_OR_RETURN(failing, txn.CountFailedSegments(datasource_));
        return absl::OkStatus();
      })
      .IgnoreError();
  s.set_segments_failing_verification(failing);
  if (deps_.metrics != nullptr) {
    deps_.metrics
        ->GetGauge(metrics::kSupervisorSegmentsFailingVerification, {{"datasource", datasource_}})
        ->Set(static_cast<double>(failing));
  }
  const bool unhealthy_state =
      state == v1::UNHEALTHY_SUPERVISOR || state == v1::UNHEALTHY_TASKS ||
      state == v1::UNABLE_TO_CONNECT_TO_STREAM || state == v1::STORED_OFFSETS_UNAVAILABLE ||
      state == v1::STORED_OFFSETS_PAST_END;
  s.set_healthy(!unhealthy_state && failing == 0);
  std::string detailed = detailed_state_;
  if (spec_.spec.suspended() && state == v1::SUSPENDED) {
    detailed = "SUSPENDED";
  } else if (state == v1::UNABLE_TO_CONNECT_TO_STREAM) {
    detailed = partitions_known_ ? "LOST_CONTACT_WITH_STREAM" : "UNABLE_TO_CONNECT_TO_STREAM";
  } else if (state == v1::STORED_OFFSETS_UNAVAILABLE || state == v1::STORED_OFFSETS_PAST_END) {
    detailed = v1::SupervisorState_Name(state);
  }
  s.set_detailed_state(detailed);

  OffsetMap current;
  auto describe = [&](const Group& group, bool publishing) {
    v1::TaskGroupStatus g;
    g.set_group_id(group.group_id);
    g.set_base_sequence_name(group.base_sequence_name);
    for (int32_t p : group.partitions()) g.add_partitions(p);
    ToProto(group.start_offsets, g.mutable_start_offsets());
    for (const auto& [id, offsets] : group.checkpoints) {
      v1::Checkpoint* c = g.add_checkpoints();
      c->set_sequence_id(id);
      ToProto(offsets, c->mutable_offsets());
    }
    for (const auto& [id, task] : group.tasks) {
      v1::TaskSummary* t = g.add_tasks();
      t->set_task_id(id);
      t->set_worker_id(task.worker_id);
      t->set_state(task.state);
      *t->mutable_current_offsets() = task.status.current_offsets();
      t->set_start_time_ms(task.status.start_time_ms());
      if (IsLive(task) && !publishing) {
        current = MaxOffsets(
            current, Restrict(FromProto(task.status.current_offsets()), group.start_offsets));
      }
    }
    if (publishing) {
      ToProto(group.end_offsets, g.mutable_end_offsets());
      g.set_remaining_ms(absl::ToInt64Milliseconds(group.completion_deadline - now));
    } else {
      g.set_remaining_ms(
          absl::ToInt64Milliseconds(group.created_at + timings_.task_duration - now));
    }
    return g;
  };
  for (const auto& [id, group] : active_) {
    *s.add_active_groups() = describe(group, false);
    view.reading[id] = {group.base_sequence_name, group.checkpoints};
  }
  for (const auto& [id, groups] : publishing_) {
    for (const Group& group : groups) {
      *s.add_publishing_groups() = describe(group, true);
      view.publishing.insert(group.base_sequence_name);
    }
  }
  for (const auto& [p, mark] : watermarks_) (*s.mutable_latest_offsets())[p] = mark.latest;
  ToProto(current, s.mutable_current_offsets());
  if (watermarks_at_ != absl::InfinitePast()) {
    s.set_offsets_last_updated_ms(absl::ToUnixMillis(watermarks_at_));
  }
  for (const v1::ErrorEvent& e : recent_errors_) *s.add_recent_errors() = e;
  absl::MutexLock lock(&view_mu_);
  view_ = std::move(view);
}

v1::SupervisorStatus StreamSupervisor::Status() {
  v1::SupervisorStatus status;
  {
    absl::MutexLock lock(&view_mu_);
    status = view_.status;
  }
  OffsetMap committed;
  int64_t segments = 0;
  int64_t failing = 0;
  deps_.store
      ->InTransaction([&](StoreTxn& txn) -> absl::Status {
        SLUICE_ASSIGN_OR_RETURN(committed, txn.CommittedOffsets(datasource_));
        SLUICE_ASSIGN_OR_RETURN(segments, txn.CountSegments(datasource_));
        SLUICE_ASSIGN_OR_RETURN(failing, txn.CountFailedSegments(datasource_));
        return absl::OkStatus();
      })
      .IgnoreError();
  ToProto(committed, status.mutable_committed_offsets());
  status.set_segments_published(segments);
  status.set_segments_failing_verification(failing);
  if (failing > 0) status.set_healthy(false);
  // Current: the furthest a reading task got, else what is committed.
  OffsetMap current = FromProto(status.current_offsets());
  for (const auto& [p, offset] : committed) current.emplace(p, offset);
  ToProto(current, status.mutable_current_offsets());
  int64_t aggregate = 0;
  for (const auto& [p, latest] : status.latest_offsets()) {
    auto it = current.find(p);
    const int64_t lag = latest - (it == current.end() ? 0 : it->second);
    (*status.mutable_lag())[p] = lag;
    if (lag > 0) aggregate += lag;
  }
  status.set_aggregate_lag(aggregate);
  return status;
}

v1::SupervisorSummary StreamSupervisor::Summary() {
  absl::MutexLock lock(&view_mu_);
  v1::SupervisorSummary summary;
  summary.set_datasource(datasource_);
  summary.set_state(view_.status.state());
  summary.set_suspended(view_.status.suspended());
  summary.set_healthy(view_.status.healthy());
  summary.set_spec_version(view_.status.spec_version());
  summary.set_message(view_.status.detailed_state());
  return summary;
}

int64_t StreamSupervisor::spec_version() {
  absl::MutexLock lock(&view_mu_);
  return view_.status.spec_version();
}

void StreamSupervisor::OnTaskStatus(const v1::TaskStatus& status) {
  bool changed = false;
  {
    absl::MutexLock lock(&reports_mu_);
    auto [it, inserted] = reports_.emplace(status.task_id(), status);
    if (inserted) {
      changed = true;
    } else {
      changed = it->second.state() != status.state() ||
                it->second.awaiting_checkpoint() != status.awaiting_checkpoint();
      it->second = status;
    }
  }
  if (changed && deps_.run_on_events) RequestRun();
}

absl::StatusOr<v1::ReportOffsetOutOfRangeResponse> StreamSupervisor::OffsetOutOfRange(
    const v1::ReportOffsetOutOfRangeRequest& request, absl::Duration timeout) {
  auto response = std::make_shared<v1::ReportOffsetOutOfRangeResponse>();
  SLUICE_RETURN_IF_ERROR(PostAndWait(
      "offset out of range",
      [this, request, response] { *response = HandleOffsetOutOfRange(request); }, timeout));
  return *response;
}

}  // namespace sluice::supervisor
