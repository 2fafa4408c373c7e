#include "task/sequences.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/proto_json.h"
#include "common/spec.h"
#include "common/status_macros.h"

namespace sluice::task {
namespace {

bool SameKeys(const OffsetMap& offsets, const std::vector<int32_t>& partitions) {
  if (offsets.size() != partitions.size()) return false;
  size_t i = 0;
  for (const auto& entry : offsets) {
    if (entry.first != partitions[i++]) return false;
  }
  return true;
}

OffsetMap EndOfPartitions(const std::vector<int32_t>& partitions) {
  OffsetMap end;
  for (int32_t p : partitions) end[p] = kEndOfPartition;
  return end;
}

std::string PartitionsToString(const std::vector<int32_t>& partitions) {
  std::string out = "[";
  for (size_t i = 0; i < partitions.size(); ++i) {
    absl::StrAppend(&out, i ? ", " : "", partitions[i]);
  }
  return out + "]";
}

std::vector<int32_t> Sorted(std::vector<int32_t> partitions) {
  std::sort(partitions.begin(), partitions.end());
  partitions.erase(std::unique(partitions.begin(), partitions.end()), partitions.end());
  return partitions;
}

}  // namespace

std::string SequenceName(absl::string_view base_name, int32_t id) {
  return absl::StrCat(base_name, "_", id);
}

bool SequenceList::final_end_fixed() const {
  return !task_end_.empty() && task_end_.begin()->second != kEndOfPartition;
}

absl::StatusOr<SequenceList> SequenceList::FromCheckpoints(
    absl::string_view base_name, const std::vector<std::pair<int32_t, OffsetMap>>& checkpoints,
    const std::vector<int32_t>& partitions) {
  SequenceList list{std::string(base_name), Sorted(partitions)};
  if (list.partitions_.empty()) return absl::InvalidArgumentError("the task has no partitions");
  if (checkpoints.empty()) return absl::InvalidArgumentError("the task has no checkpoints");
  list.task_end_ = EndOfPartitions(list.partitions_);
  for (size_t i = 0; i < checkpoints.size(); ++i) {
    const auto& [id, offsets] = checkpoints[i];
    if (!SameKeys(offsets, list.partitions_)) {
      return absl::InvalidArgumentError(
          absl::StrCat("checkpoint ", id, " has offsets ", FormatOffsets(offsets),
                       " but the task reads partitions ", PartitionsToString(list.partitions_)));
    }
    Sequence sequence;
    sequence.id = id;
    sequence.name = SequenceName(base_name, id);
    sequence.start = offsets;
    if (i + 1 < checkpoints.size()) {
      sequence.end = checkpoints[i + 1].second;
      sequence.checkpointed = true;
    } else {
      sequence.end = list.task_end_;
    }
    list.sequences_.push_back(std::move(sequence));
  }
  SLUICE_RETURN_IF_ERROR(list.Validate(absl::StatusCode::kInvalidArgument));
  return list;
}

absl::StatusOr<SequenceList> SequenceList::FromRecord(absl::string_view base_name,
                                                      const state::SequenceFile& record,
                                                      const std::vector<int32_t>& partitions) {
  SequenceList list{std::string(base_name), Sorted(partitions)};
  list.task_end_ = FromProto(record.task_end_offsets());
  list.last_published_id_ = record.last_published_id();
  for (const state::SequenceRecord& r : record.sequences()) {
    Sequence sequence;
    sequence.id = r.id();
    sequence.name = r.name();
    sequence.start = FromProto(r.start_offsets());
    sequence.end = FromProto(r.end_offsets());
    sequence.checkpointed = r.checkpointed();
    list.sequences_.push_back(std::move(sequence));
  }
  SLUICE_RETURN_IF_ERROR(list.Validate(absl::StatusCode::kDataLoss));
  return list;
}

state::SequenceFile SequenceList::ToRecord() const {
  state::SequenceFile record;
  for (const Sequence& sequence : sequences_) {
    state::SequenceRecord* r = record.add_sequences();
    r->set_id(sequence.id);
    r->set_name(sequence.name);
    ToProto(sequence.start, r->mutable_start_offsets());
    ToProto(sequence.end, r->mutable_end_offsets());
    r->set_checkpointed(sequence.checkpointed);
  }
  ToProto(task_end_, record.mutable_task_end_offsets());
  record.set_last_published_id(last_published_id_);
  return record;
}

absl::Status SequenceList::Save(const std::string& path) const {
  return SaveProtoJson(path, ToRecord(), {.pretty = true, .print_defaults = true});
}

absl::StatusOr<SequenceList> SequenceList::Load(const std::string& path,
                                                absl::string_view base_name,
                                                const std::vector<int32_t>& partitions) {
  state::SequenceFile record;
  SLUICE_RETURN_IF_ERROR(LoadProtoJson(path, &record));
  absl::StatusOr<SequenceList> list = FromRecord(base_name, record, partitions);
  if (!list.ok()) return Annotate(list.status(), path);
  return list;
}

absl::Status SequenceList::Validate(absl::StatusCode code) const {
  auto error = [code](std::string message) { return absl::Status(code, std::move(message)); };
  if (!SameKeys(task_end_, partitions_)) {
    return error(absl::StrCat("task end offsets ", FormatOffsets(task_end_),
                              " do not name the task's partitions ",
                              PartitionsToString(partitions_)));
  }
  const bool fixed = final_end_fixed();
  for (const auto& [p, o] : task_end_) {
    if ((o == kEndOfPartition) == fixed || o < 0) {
      return error(absl::StrCat("task end offsets ", FormatOffsets(task_end_),
                                " mix END_OF_PARTITION and real offsets"));
    }
  }
  if (sequences_.empty() && !fixed) {
    return error("no sequence is left but the task's end is not fixed");
  }
  for (size_t i = 0; i < sequences_.size(); ++i) {
    const Sequence& s = sequences_[i];
    if (s.name != SequenceName(base_name_, s.id)) {
      return error(absl::StrCat("sequence ", s.id, " is named \"", s.name, "\", expected \"",
                                SequenceName(base_name_, s.id), "\""));
    }
    if (!SameKeys(s.start, partitions_) || !SameKeys(s.end, partitions_)) {
      return error(absl::StrCat("sequence ", s.name, " does not cover exactly partitions ",
                                PartitionsToString(partitions_)));
    }
    for (const auto& [p, start] : s.start) {
      if (start < 0 || start == kEndOfPartition) {
        return error(absl::StrCat("sequence ", s.name, " starts at ", start, " on partition ", p));
      }
      if (s.end.at(p) < start) {
        return error(absl::StrCat("sequence ", s.name, " ends before it starts on partition ", p,
                                  ": ", FormatOffsets(s.start), " -> ", FormatOffsets(s.end)));
      }
    }
    const bool last = i + 1 == sequences_.size();
    if (!last && !s.checkpointed) {
      return error(absl::StrCat("sequence ", s.name, " is open but is not the latest"));
    }
    if (s.checkpointed) {
      for (const auto& [p, end] : s.end) {
        if (end == kEndOfPartition) {
          return error(absl::StrCat("closed sequence ", s.name, " ends at END_OF_PARTITION"));
        }
      }
    } else if (s.end != task_end_) {
      return error(absl::StrCat("open sequence ", s.name, " ends at ", FormatOffsets(s.end),
                                ", not at the task's end ", FormatOffsets(task_end_)));
    }
    if (last && s.checkpointed && !fixed) {
      return error(absl::StrCat("the latest sequence ", s.name,
                                " is closed but the task's end is not fixed"));
    }
    if (last && fixed && s.end != task_end_) {
      return error(absl::StrCat("the last sequence ", s.name, " ends at ", FormatOffsets(s.end),
                                ", not at the task's final end ", FormatOffsets(task_end_)));
    }
    if (i > 0) {
      const Sequence& previous = sequences_[i - 1];
      if (s.id <= previous.id) {
        return error(absl::StrCat("sequence ids go down: ", previous.id, " then ", s.id));
      }
      if (s.start != previous.end) {
        return error(absl::StrCat("sequence ", s.name, " starts at ", FormatOffsets(s.start),
                                  " but ", previous.name, " ends at ",
                                  FormatOffsets(previous.end)));
      }
    } else if (s.id <= last_published_id_) {
      return error(absl::StrCat("sequence ", s.id, " is listed but ", last_published_id_,
                                " was already published"));
    }
  }
  return absl::OkStatus();
}

int SequenceList::Route(int32_t partition, int64_t offset) const {
  for (size_t i = 0; i < sequences_.size(); ++i) {
    const Sequence& s = sequences_[i];
    const auto start = s.start.find(partition);
    if (start == s.start.end()) return -1;
    if (start->second <= offset && offset < s.end.at(partition)) return static_cast<int>(i);
  }
  return -1;
}

bool SequenceList::IsFullyRead(const Sequence& sequence, const OffsetMap& current) {
  if (!sequence.checkpointed) return false;
  for (const auto& [p, end] : sequence.end) {
    const auto it = current.find(p);
    if (it == current.end() || it->second < end) return false;
  }
  return true;
}

absl::StatusOr<SequenceList::SetEndOutcome> SequenceList::SetEndOffsets(const OffsetMap& offsets,
                                                                        bool finish,
                                                                        const OffsetMap& current,
                                                                        bool fenced) {
  for (const auto& [p, o] : offsets) {
    if (!std::binary_search(partitions_.begin(), partitions_.end(), p)) {
      return absl::InvalidArgumentError(absl::StrCat("partition ", p,
                                                     " does not belong to this task (it reads ",
                                                     PartitionsToString(partitions_), ")"));
    }
    if (o < 0 || o == kEndOfPartition) {
      return absl::InvalidArgumentError(
          absl::StrCat("end offset ", o, " of partition ", p, " is not a real offset"));
    }
  }
  if (!SameKeys(offsets, partitions_)) {
    return absl::InvalidArgumentError(absl::StrCat("end offsets ", FormatOffsets(offsets),
                                                   " must name every partition of the task ",
                                                   PartitionsToString(partitions_)));
  }
  if (sequences_.empty()) {
    return absl::FailedPreconditionError(
        "every sequence of the task is published: its end is final");
  }
  Sequence& latest = sequences_.back();
  SetEndOutcome outcome;
  if ((!finish && offsets == latest.start) || (finish && offsets == latest.end)) {
    outcome.duplicate = true;
    outcome.end_offsets = latest.end;
    outcome.latest_id = latest.id;
    return outcome;
  }
  if (latest.checkpointed) {
    return absl::FailedPreconditionError(absl::StrCat(
        "sequence ", latest.name, " already has its end offsets ", FormatOffsets(latest.end),
        "; cannot set them to ", FormatOffsets(offsets)));
  }
  if (!fenced) {
    return absl::FailedPreconditionError("the task must be paused before its end offsets are set");
  }
  // Offsets before the latest sequence's start move the boundary between
  // the two latest sequences back (docs/protocol.md "Moving a checkpoint
  // back"): a pauseless checkpoint set it past the records that existed and
  // they did not come, so the supervisor ends the closed sequence at what
  // was read instead.
  bool lowers = false;
  for (const auto& [p, o] : offsets) lowers = lowers || o < latest.start.at(p);
  if (lowers) return MoveCheckpointBack(offsets, finish, current);
  for (const auto& [p, o] : offsets) {
    const auto it = current.find(p);
    const int64_t read = it == current.end() ? 0 : it->second;
    if (o < read) {
      return absl::AbortedError(absl::StrCat("already read past end offset ", o, " of partition ",
                                             p, ": the task's current offset is ", read));
    }
    if (o < latest.start.at(p)) {
      return absl::InvalidArgumentError(absl::StrCat("end offset ", o, " of partition ", p,
                                                     " is before the start ", latest.start.at(p),
                                                     " of sequence ", latest.name));
    }
  }
  return CloseLatest(offsets, finish);
}

absl::StatusOr<SequenceList::SetEndOutcome> SequenceList::MoveCheckpointBack(
    const OffsetMap& offsets, bool finish, const OffsetMap& current) {
  Sequence& latest = sequences_.back();
  if (sequences_.size() < 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "end offsets ", FormatOffsets(offsets), " are before the start ",
        FormatOffsets(latest.start), " of sequence ", latest.name,
        ", whose previous sequence is published: its start cannot move"));
  }
  Sequence& previous = sequences_[sequences_.size() - 2];
  // The new boundary: the offsets where they are before the latest start
  // (finish=true may end the latest sequence past its start elsewhere).
  OffsetMap boundary = latest.start;
  for (const auto& [p, o] : offsets) boundary[p] = std::min(o, latest.start.at(p));
  for (const auto& [p, o] : offsets) {
    const auto it = current.find(p);
    const int64_t read = it == current.end() ? 0 : it->second;
    // Nothing at or past the new boundary may have been routed: it would
    // sit in the previous sequence's rows on one side of it.
    const bool moves = boundary.at(p) < latest.start.at(p);
    if ((moves && boundary.at(p) < read) || o < read) {
      return absl::AbortedError(absl::StrCat("already read past end offset ",
                                             std::min(boundary.at(p), o), " of partition ", p,
                                             ": the task's current offset is ", read));
    }
    if (boundary.at(p) < previous.start.at(p)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "end offset ", o, " of partition ", p, " is before the start ", previous.start.at(p),
          " of sequence ", previous.name));
    }
  }
  previous.end = boundary;
  latest.start = boundary;
  SetEndOutcome outcome;
  if (boundary == offsets && !finish) {
    // Only the move: the latest sequence stays open from the boundary.
    outcome.end_offsets = boundary;
    outcome.latest_id = latest.id;
    return outcome;
  }
  // The move, and the latest sequence closes at the offsets as usual.
  return CloseLatest(offsets, finish);
}

SequenceList::SetEndOutcome SequenceList::CloseLatest(const OffsetMap& offsets, bool finish) {
  Sequence& latest = sequences_.back();
  latest.end = offsets;
  latest.checkpointed = true;
  if (finish) {
    task_end_ = offsets;
  } else {
    Sequence next;
    next.id = latest.id + 1;
    next.name = SequenceName(base_name_, next.id);
    next.start = offsets;
    next.end = task_end_;
    sequences_.push_back(std::move(next));
  }
  SetEndOutcome outcome;
  outcome.end_offsets = offsets;
  outcome.latest_id = sequences_.back().id;
  return outcome;
}

absl::Status SequenceList::RemovePublished(int32_t id) {
  if (sequences_.empty() || sequences_.front().id != id) {
    return absl::FailedPreconditionError(
        absl::StrCat("sequence ", id, " is not the oldest unpublished sequence"));
  }
  if (!sequences_.front().checkpointed) {
    return absl::FailedPreconditionError(
        absl::StrCat("sequence ", sequences_.front().name, " is still open"));
  }
  if (sequences_.size() == 1 && !final_end_fixed()) {
    return absl::FailedPreconditionError(
        absl::StrCat("sequence ", sequences_.front().name, " is the last one but is not final"));
  }
  last_published_id_ = id;
  sequences_.erase(sequences_.begin());
  return absl::OkStatus();
}

}  // namespace sluice::task
