// Creation of a stream supervisor's groups and tasks: see group_creation.h.
#include "supervisor/group_creation.h"

#include <glog/logging.h>

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "common/stream_partitions.h"
#include "supervisor/naming.h"
#include "supervisor/spec_changes.h"
#include "supervisor/start_offset_policy.h"

namespace sluice::supervisor {

GroupCreation::GroupCreation(GroupCreationOptions options) : options_(std::move(options)) {}

std::string GroupCreation::Prefix() const {
  return absl::StrCat("[supervisor ", options_.datasource, "] ");
}

bool GroupCreation::IsPreviousSpec(int64_t version) {
  const SpecRecord& running = options_.state->spec;
  if (version == running.version) return false;
  auto cached = previous_spec_.find(version);
  if (cached != previous_spec_.end()) return cached->second;
  std::vector<SpecRecord> history;
  absl::Status read = options_.store->InTransaction([&](StoreTxn& txn) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(history, txn.SpecHistory(options_.datasource));
    return absl::OkStatus();
  });
  if (!read.ok()) return true;  // unknown: be careful, wait
  bool previous = true;
  for (const SpecRecord& record : history) {
    if (record.version != version) continue;
    // Versions that differ only in fields taken live are the same spec.
    previous = !AppliesLive(ChangedSpecFields(record.spec, running.spec));
  }
  previous_spec_[version] = previous;
  return previous;
}

absl::Status GroupCreation::CreateGroupsAndTasks(int32_t task_count) {
  TaskGroups& groups = options_.state->groups;
  for (const auto& [id, list] : groups.publishing) {
    for (const Group& group : list) {
      if (IsPreviousSpec(group.spec_version)) {
        options_.state->detailed_state = "WAITING_FOR_PREVIOUS_SPEC_TO_PUBLISH";
        return absl::OkStatus();
      }
    }
  }
  std::map<int32_t, std::vector<int32_t>> by_group;
  for (int32_t p : options_.stream->partitions()) by_group[p % task_count].push_back(p);
  // After a live taskCount change, groups of the old count read on until
  // their roll-over: a new group waits while one of its partitions is read.
  std::set<int32_t> held;
  for (const auto& [id, group] : groups.reading) {
    for (int32_t p : group.partitions()) held.insert(p);
  }
  absl::Status first_error = absl::OkStatus();
  for (const auto& [group_id, partitions] : by_group) {
    if (groups.reading.count(group_id)) continue;
    if (std::any_of(partitions.begin(), partitions.end(),
                    [&](int32_t p) { return held.count(p) > 0; })) {
      VLOG(1) << Prefix() << "group " << group_id << " waits for the groups reading its partitions";
      continue;
    }
    absl::Status status = CreateGroup(group_id, partitions);
    if (!status.ok() && first_error.ok()) first_error = status;
  }
  bool waiting_for_workers = false;
  for (auto& [group_id, group] : groups.reading) {
    int live = 0;
    for (const auto& [id, task] : group.tasks) live += IsLive(task) ? 1 : 0;
    for (int i = live; i < options_.state->spec.spec.io_config().replicas(); ++i) {
      absl::Status status = CreateTask(group);
      if (absl::IsResourceExhausted(status)) waiting_for_workers = true;
      if (!status.ok()) {
        if (first_error.ok() && !absl::IsResourceExhausted(status)) first_error = status;
        break;
      }
    }
  }
  if (waiting_for_workers) {
    options_.state->detailed_state = "WAITING_FOR_WORKERS";
  } else if (first_error.ok()) {
    options_.state->detailed_state = "RUNNING";
  }
  return first_error;
}

absl::Status GroupCreation::CreateGroup(int32_t group_id, const std::vector<int32_t>& partitions) {
  TaskGroups& groups = options_.state->groups;
  const SpecRecord& spec = options_.state->spec;
  const std::string topic = StreamNameOf(spec.spec.io_config());
  OffsetMap committed;
  SLUICE_RETURN_IF_ERROR(options_.store->InTransaction([&](StoreTxn& txn) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(committed, txn.CommittedOffsets(options_.datasource));
    SLUICE_ASSIGN_OR_RETURN(std::optional<std::string> stored_topic,
                            txn.CommitTopic(options_.datasource));
    if (stored_topic && *stored_topic != topic && !committed.empty()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the stored offsets of ", options_.datasource, " are for topic \"", *stored_topic,
          "\", not \"", topic, "\"; reset the supervisor to switch topics"));
    }
    return absl::OkStatus();
  }));
  const std::vector<int32_t> need_marks =
      PartitionsNeedingWatermarks(partitions, groups.next_offsets);
  std::map<int32_t, PartitionWatermarks> marks;
  if (!need_marks.empty()) {
    auto queried = options_.stream->QueryWatermarks(need_marks);
    if (!queried.ok()) {
      return Annotate(queried.status(), absl::StrCat("watermarks of group ", group_id));
    }
    marks = *queried;
  }
  StartOffsetInputs inputs;
  inputs.partitions = partitions;
  inputs.committed = committed;
  inputs.next_offsets = groups.next_offsets;
  inputs.watermarks = std::move(marks);
  inputs.first_partitions = options_.stream->first_partitions();
  inputs.use_earliest_offset = spec.spec.io_config().use_earliest_offset();
  inputs.reset_offset_automatically = spec.spec.tuning_config().reset_offset_automatically();
  StartOffsetDecision decision = DecideStartOffsets(inputs);
  if (decision.unavailable) {
    // Kafka answered: this is not a connection problem.
    options_.state->detailed_state = "STORED_OFFSETS_UNAVAILABLE";
    options_.stream->SetOffsetsVerdict(
        {StreamProblem::kStoredOffsetsUnavailable, *decision.unavailable});
    return absl::FailedPreconditionError(*decision.unavailable);
  }
  const OffsetMap& start = decision.start;
  const std::vector<std::string>& sources = decision.sources;
  const OffsetMap& auto_reset = decision.auto_reset;
  if (!auto_reset.empty()) {
    LOG(ERROR) << Prefix() << "ALERT: stored offsets of partitions "
               << FormatOffsets(Restrict(committed, auto_reset))
               << " are no longer in Kafka; resetting them to the earliest available "
               << FormatOffsets(auto_reset) << " (resetOffsetAutomatically): records were lost";
    options_.reset_offsets(auto_reset,
                           "stored offset no longer available (resetOffsetAutomatically)");
  }

  const int64_t now_ms = options_.clock->NowMs();
  const MessageTimeBounds bounds = GroupMessageTimeBounds(options_.state->timings, now_ms);
  const int64_t min_time = bounds.min_ms;
  const int64_t max_time = bounds.max_ms;
  Group group;
  group.group_id = group_id;
  group.start_offsets = start;
  group.checkpoints[0] = start;
  group.min_message_time_ms = min_time;
  group.max_message_time_ms = max_time;
  group.created_at = options_.clock->Now();
  group.spec_version = spec.version;
  // Read after an automatic reset above: it counts too.
  OffsetMap reset_counts;
  SLUICE_RETURN_IF_ERROR(options_.store->InTransaction([&](StoreTxn& txn) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(reset_counts, txn.OffsetResetCounts(options_.datasource));
    return absl::OkStatus();
  }));
  group.base_sequence_name = BaseSequenceName(
      options_.datasource, spec.spec.data_schema(), spec.spec.tuning_config(), start, min_time,
      max_time, reset_counts, InputParsingBytes(spec.spec.io_config()));
  for (const auto& [id, groups] : groups.publishing) {
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
  record.datasource = options_.datasource;
  record.group_id = group_id;
  record.state = GroupState::kReading;
  record.spec_version = spec.version;
  record.start_offsets = start;
  record.checkpoints = group.checkpoints;
  record.min_message_time_ms = min_time;
  record.max_message_time_ms = max_time;
  record.created_at_ms = now_ms;
  OffsetMap recorded;
  SLUICE_RETURN_IF_ERROR(options_.store->InTransaction([&](StoreTxn& txn) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(recorded,
                            txn.RecordInitialOffsets(options_.datasource, topic, start, now_ms));
    return txn.InsertTaskGroup(record);
  }));
  LOG(INFO) << Prefix() << "created group " << group_id << " (" << group.base_sequence_name
            << ") reading partitions [" << absl::StrJoin(group.partitions(), ",") << "] from "
            << FormatOffsets(start) << " (" << absl::StrJoin(sources, ", ") << ")"
            << (recorded.empty()
                    ? ""
                    : absl::StrCat("; recorded initial offsets ", FormatOffsets(recorded)));
  groups.reading[group_id] = std::move(group);
  // Its tasks may ask to checkpoint before this run ends (RunTask of the
  // other tasks takes a while): CheckpointDataSourceMetadata must know it.
  options_.publish_view();
  return absl::OkStatus();
}

absl::Status GroupCreation::CreateTask(Group& group) {
  // A replacement re-reads from the first sequence not yet published.
  SLUICE_ASSIGN_OR_RETURN(const auto checkpoints, options_.actions->UnpublishedCheckpoints(group));
  absl::StatusOr<std::string> worker = options_.actions->PickWorker(group);
  if (!worker.ok()) {
    options_.state->detailed_state = "WAITING_FOR_WORKERS";
    if (options_.clock->Now() - last_resource_error_ > absl::Minutes(1)) {
      last_resource_error_ = options_.clock->Now();
      options_.state->RecordError(
          Annotate(worker.status(), absl::StrCat("placing a task of group ", group.group_id)));
    }
    return worker.status();
  }
  SLUICE_ASSIGN_OR_RETURN(
      TaskLaunch launch,
      options_.actions->CreateTask(group, *worker, checkpoints, options_.state->spec.spec,
                                   options_.state->timings, options_.stream->partition_ids()));
  // The answer comes back as a notice.
  const int32_t group_id = group.group_id;
  const std::string task_id = launch.spec.task_id();
  options_.actions->SendRunTask(
      std::move(launch), [this, group_id, task_id,
                          worker = *worker](const absl::StatusOr<v1::RunTaskResponse>& response) {
        options_.post("RunTask answer", [this, group_id, task_id, worker, response] {
          HandleRunTaskResult(group_id, task_id, worker, response);
        });
      });
  return absl::OkStatus();
}

void GroupCreation::HandleRunTaskResult(int32_t group_id, const std::string& task_id,
                                        const std::string& worker,
                                        const absl::StatusOr<v1::RunTaskResponse>& response) {
  TaskGroups& groups = options_.state->groups;
  TaskInfo* task = nullptr;
  if (auto group = groups.reading.find(group_id); group != groups.reading.end()) {
    auto it = group->second.tasks.find(task_id);
    if (it != group->second.tasks.end()) task = &it->second;
  }
  if (!response.ok()) {
    const std::string error = absl::StrCat("RunTask failed: ", response.status().ToString());
    options_.actions->NoteRunTaskFailed(task_id, worker, error);
    options_.state->RecordError(Annotate(
        response.status(),
        absl::StrCat("starting task ", task_id, " of group ", group_id, " on worker ", worker)));
    if (task != nullptr && IsLive(*task)) {
      // Not a task outcome: the next run replaces it (on another worker).
      task->state = v1::TASK_STATE_FAILED;
      task->status.set_error(error);
    }
    options_.request_run();
    return;
  }
  options_.registry->NoteRunTaskSucceeded(worker);
  if (task == nullptr || !IsLive(*task)) {
    // Its group ended, or the task was killed, while RunTask was under way:
    // the worker must not keep it.
    options_.actions->KillGivenUp(task_id, worker);
    return;
  }
  task->starting = false;
  if (task->state == v1::TASK_STATE_NOT_STARTED &&
      response->status().state() != v1::TASK_STATE_UNSPECIFIED) {
    task->state = response->status().state();
  }
  LOG(INFO) << Prefix() << "started task " << task_id << " of group " << group_id << " on worker "
            << worker;
}

}  // namespace sluice::supervisor
