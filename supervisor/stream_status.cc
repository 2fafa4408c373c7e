#include "supervisor/stream_status.h"

#include <algorithm>

#include "common/enum_names.h"
#include "supervisor/time_lag.h"

namespace sluice::supervisor {

void SupervisorHealth::NoteRun(bool ok) {
  if (ok) {
    consecutive_run_failures_ = 0;
    ran_ok_once_ = true;
  } else {
    ++consecutive_run_failures_;
  }
}

void SupervisorHealth::NoteTaskOutcome(v1::TaskState state) {
  if (state != v1::TASK_STATE_SUCCESS && state != v1::TASK_STATE_FAILED) return;
  task_outcomes_.push_back(state == v1::TASK_STATE_SUCCESS);
  while (task_outcomes_.size() > kTaskOutcomes) task_outcomes_.pop_front();
}

void SupervisorHealth::NoteError(int64_t time_ms, const absl::Status& status) {
  v1::ErrorEvent event;
  event.set_time_ms(time_ms);
  event.set_message(status.ToString());
  recent_errors_.push_back(std::move(event));
  while (recent_errors_.size() > kRecentErrors) recent_errors_.pop_front();
}

int SupervisorHealth::task_failures_in_a_row() const {
  int failed = 0;
  for (auto it = task_outcomes_.rbegin(); it != task_outcomes_.rend() && !*it; ++it) ++failed;
  return failed;
}

v1::SupervisorState SupervisorStateOf(const StatusInputs& in) {
  if (in.stopping) return v1::SUPERVISOR_STATE_STOPPING;
  if (in.stream_unreachable) return v1::SUPERVISOR_STATE_UNABLE_TO_CONNECT_TO_STREAM;
  if (in.offsets_problem == StreamProblem::kStoredOffsetsUnavailable) {
    return v1::SUPERVISOR_STATE_STORED_OFFSETS_UNAVAILABLE;
  }
  if (in.offsets_problem == StreamProblem::kStoredOffsetsPastEnd) {
    return v1::SUPERVISOR_STATE_STORED_OFFSETS_PAST_END;
  }
  if (in.health->consecutive_run_failures() >= SupervisorHealth::kUnhealthyAfterRunFailures) {
    return v1::SUPERVISOR_STATE_UNHEALTHY_SUPERVISOR;
  }
  if (in.health->task_failures_in_a_row() >= SupervisorHealth::kUnhealthyAfterTaskFailures) {
    return v1::SUPERVISOR_STATE_UNHEALTHY_TASKS;
  }
  if (in.suspended) return v1::SUPERVISOR_STATE_SUSPENDED;
  if (in.idle) return v1::SUPERVISOR_STATE_IDLE;
  if (!in.health->ran_ok_once()) return v1::SUPERVISOR_STATE_PENDING;
  return v1::SUPERVISOR_STATE_RUNNING;
}

namespace {

v1::TaskGroupStatus DescribeGroup(const Group& group, bool publishing, absl::Duration task_duration,
                                  absl::Time now, OffsetMap* current) {
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
      *current = MaxOffsets(
          *current, Restrict(FromProto(task.status.current_offsets()), group.start_offsets));
    }
  }
  if (publishing) {
    ToProto(group.end_offsets, g.mutable_end_offsets());
    g.set_remaining_ms(absl::ToInt64Milliseconds(group.completion_deadline - now));
  } else {
    g.set_remaining_ms(absl::ToInt64Milliseconds(group.created_at + task_duration - now));
  }
  return g;
}

}  // namespace

v1::SupervisorStatus BuildStatus(const StatusInputs& in) {
  v1::SupervisorStatus s;
  s.set_datasource(in.datasource);
  s.set_topic(in.topic);
  s.set_topic_pattern(in.topic_pattern);
  for (const v1::StreamPartition& p : in.stream_partitions) *s.add_stream_partitions() = p;
  s.set_suspended(in.suspended);
  s.set_spec_version(in.spec_version);
  s.set_partitions(in.partitions);
  const v1::SupervisorState state = SupervisorStateOf(in);
  s.set_state(state);
  // A used segment whose deep-storage copy fails verification is lost data
  // until restored: the datasource is unhealthy whatever its tasks do.
  s.set_segments_failing_verification(in.segments_failing_verification);
  const bool unhealthy_state =
      state == v1::SUPERVISOR_STATE_UNHEALTHY_SUPERVISOR || state == v1::SUPERVISOR_STATE_UNHEALTHY_TASKS ||
      state == v1::SUPERVISOR_STATE_UNABLE_TO_CONNECT_TO_STREAM || state == v1::SUPERVISOR_STATE_STORED_OFFSETS_UNAVAILABLE ||
      state == v1::SUPERVISOR_STATE_STORED_OFFSETS_PAST_END;
  s.set_healthy(!unhealthy_state && in.segments_failing_verification == 0);
  std::string detailed = in.detailed_state;
  if (in.suspended && state == v1::SUPERVISOR_STATE_SUSPENDED) {
    detailed = "SUSPENDED";
  } else if (state == v1::SUPERVISOR_STATE_UNABLE_TO_CONNECT_TO_STREAM) {
    detailed = in.partitions_known ? "LOST_CONTACT_WITH_STREAM" : "UNABLE_TO_CONNECT_TO_STREAM";
  } else if (state == v1::SUPERVISOR_STATE_STORED_OFFSETS_UNAVAILABLE || state == v1::SUPERVISOR_STATE_STORED_OFFSETS_PAST_END) {
    detailed = ShortEnumName(state);
  }
  s.set_detailed_state(detailed);

  OffsetMap current;
  if (in.active != nullptr) {
    for (const auto& [id, group] : *in.active) {
      *s.add_active_groups() = DescribeGroup(group, false, in.task_duration, in.now, &current);
    }
  }
  if (in.publishing != nullptr) {
    for (const auto& [id, groups] : *in.publishing) {
      for (const Group& group : groups) {
        *s.add_publishing_groups() = DescribeGroup(group, true, in.task_duration, in.now, &current);
      }
    }
  }
  if (in.watermarks != nullptr) {
    for (const auto& [p, mark] : *in.watermarks) (*s.mutable_latest_offsets())[p] = mark.latest;
  }
  ToProto(current, s.mutable_current_offsets());
  if (in.watermarks != nullptr && in.newest_timestamps != nullptr) {
    // The last record read, per partition, by its furthest live reader.
    RecordTimes last_read;
    OffsetMap furthest;
    if (in.active != nullptr) {
      for (const auto& [id, group] : *in.active) {
        for (const auto& [task_id, task] : group.tasks) {
          if (!IsLive(task)) continue;
          for (const auto& [p, offset] : task.status.current_offsets()) {
            auto time = task.status.last_read_timestamps_ms().find(p);
            if (!group.HasPartition(p) || time == task.status.last_read_timestamps_ms().end()) {
              continue;
            }
            auto best = furthest.find(p);
            if (best != furthest.end() && best->second > offset) continue;
            furthest[p] = offset;
            last_read[p] = time->second;
          }
        }
      }
    }
    OffsetMap latest;
    for (const auto& [p, mark] : *in.watermarks) latest[p] = mark.latest;
    for (const auto& [p, lag] : PartitionTimeLags(latest, current, *in.newest_timestamps,
                                                  last_read)) {
      (*s.mutable_time_lag_ms())[p] = lag;
    }
  }
  if (in.watermarks_at != absl::InfinitePast()) {
    s.set_offsets_last_updated_ms(absl::ToUnixMillis(in.watermarks_at));
  }
  for (const v1::ErrorEvent& e : in.health->recent_errors()) *s.add_recent_errors() = e;
  return s;
}

v1::SupervisorStatus WithStoredFacts(v1::SupervisorStatus status, const OffsetMap& committed,
                                     int64_t segments_published, int64_t segments_failing) {
  ToProto(committed, status.mutable_committed_offsets());
  status.set_segments_published(segments_published);
  status.set_segments_failing_verification(segments_failing);
  if (segments_failing > 0) status.set_healthy(false);
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
    // Read to the end (e.g. by a group that finished): no time lag either.
    if (lag <= 0) (*status.mutable_time_lag_ms())[p] = 0;
  }
  status.set_aggregate_lag(aggregate);
  int64_t max_time_lag = 0;
  for (const auto& [p, lag] : status.time_lag_ms()) max_time_lag = std::max(max_time_lag, lag);
  status.set_max_time_lag_ms(max_time_lag);
  return status;
}

v1::SupervisorSummary SummaryOf(const std::string& datasource,
                                const v1::SupervisorStatus& status) {
  v1::SupervisorSummary summary;
  summary.set_datasource(datasource);
  summary.set_state(status.state());
  summary.set_suspended(status.suspended());
  summary.set_healthy(status.healthy());
  summary.set_spec_version(status.spec_version());
  summary.set_message(status.detailed_state());
  return summary;
}

}  // namespace sluice::supervisor
