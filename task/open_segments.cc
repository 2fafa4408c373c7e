#include "task/open_segments.h"

#include <glog/logging.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/retry.h"
#include "common/status_macros.h"
#include "common/time_util.h"
#include "task/task_files.h"

namespace sluice::task {
absl::StatusOr<v1::AllocateSegmentResponse> SupervisorSegmentAllocator::Allocate(
    const std::string& sequence_name, int64_t start_ms, int64_t end_ms) {
  v1::AllocateSegmentRequest request;
  request.set_datasource(options_.datasource);
  request.set_task_id(options_.task_id);
  request.set_sequence_name(sequence_name);
  request.mutable_interval()->set_start_ms(start_ms);
  request.mutable_interval()->set_end_ms(end_ms);
  RetryOptions retry;
  retry.initial_backoff = options_.min_backoff;
  retry.max_backoff = options_.max_backoff;
  return RetryCall<v1::AllocateSegmentResponse>(
      retry, options_.sleep, [&]() -> absl::StatusOr<v1::AllocateSegmentResponse> {
        absl::StatusOr<v1::AllocateSegmentResponse> response =
            options_.supervisor->AllocateSegment(request);
        if (!response.ok() && IsRetryable(response.status())) {
          LOG_EVERY_N(WARNING, 10) << options_.log_prefix << " allocating a segment for "
                                   << sequence_name << ": " << response.status() << "; retrying";
        }
        return response;
      });
}

OpenSegments::OpenSegments(SegmentEngine* engine, SegmentAllocator* allocator,
                           Granularity granularity, std::vector<int32_t> partitions)
    : engine_(engine),
      allocator_(allocator),
      granularity_(granularity),
      partition_of_slot_(std::move(partitions)) {
  int32_t max_partition = 0;
  for (int32_t p : partition_of_slot_) max_partition = std::max(max_partition, p);
  slot_of_partition_.assign(static_cast<size_t>(max_partition) + 1, -1);
  for (size_t i = 0; i < partition_of_slot_.size(); ++i) {
    slot_of_partition_[partition_of_slot_[i]] = static_cast<int>(i);
  }
}

absl::StatusOr<SegmentBuild*> OpenSegments::For(const Sequence& sequence, int64_t timestamp_ms) {
  // The cached build's index may have gone to the persister (TakeSpills
  // resets the cache too).
  if (last_ != nullptr && last_->index != nullptr && last_sequence_ == sequence.id &&
      timestamp_ms >= last_start_ && timestamp_ms < last_end_) {
    return last_;
  }
  const int64_t start = granularity_.Truncate(timestamp_ms);
  const int64_t end = granularity_.Next(start);
  auto it = segments_.find({sequence.id, start});
  if (it == segments_.end()) {
    absl::StatusOr<v1::AllocateSegmentResponse> response =
        allocator_->Allocate(sequence.name, start, end);
    if (absl::IsCancelled(response.status())) return response.status();
    if (!response.ok()) {
      return Annotate(response.status(), absl::StrCat("allocating a segment for ", sequence.name,
                                                      " at ", FormatIsoInstant(start)));
    }
    if (response->interval().start_ms() != start || response->interval().end_ms() != end) {
      return absl::FailedPreconditionError(
          absl::StrCat("the supervisor allocated ", response->segment_id(), " for [",
                       response->interval().start_ms(), ", ", response->interval().end_ms(),
                       ") instead of [", start, ", ", end, ")"));
    }
    SegmentBuild build;
    build.record.set_sequence_id(sequence.id);
    build.record.set_interval_start_ms(start);
    build.record.set_interval_end_ms(end);
    build.record.set_segment_id(response->segment_id());
    build.record.set_version(response->version());
    build.record.set_partition_num(response->partition_num());
    build.records_per_slot.assign(partition_of_slot_.size(), 0);
    VLOG(1) << "allocated " << response->segment_id() << " for " << sequence.name;
    it = segments_.emplace(std::make_pair(sequence.id, start), std::move(build)).first;
  }
  SegmentBuild* build = &it->second;
  if (build->index == nullptr && build->next_index != nullptr) {
    build->index = std::move(build->next_index);
  }
  if (build->index == nullptr) {
    v1::Interval interval;
    interval.set_start_ms(start);
    interval.set_end_ms(end);
    build->index = engine_->NewIndex(interval);
  }
  last_ = build;
  last_sequence_ = sequence.id;
  last_start_ = start;
  last_end_ = end;
  return build;
}

absl::Status OpenSegments::Restore(const state::SegmentState& record,
                                   const std::vector<std::string>& spill_paths) {
  SegmentBuild build;
  build.record = record;
  if (!spill_paths.empty()) {
    v1::Interval interval;
    interval.set_start_ms(record.interval_start_ms());
    interval.set_end_ms(record.interval_end_ms());
    absl::StatusOr<std::unique_ptr<SegmentIndex>> index =
        engine_->RestoreIndex(interval, spill_paths);
    if (!index.ok()) {
      return Annotate(index.status(), absl::StrCat("restoring segment ", record.segment_id()));
    }
    build.next_index = *std::move(index);
  }
  build.rows_total = record.spilled_rows();
  // The persister keeps that count from here on, as each spill or built
  // file says (Persister: the restore point's spilled_rows).
  build.record.clear_spilled_rows();
  build.records_per_slot.assign(partition_of_slot_.size(), 0);
  for (const auto& [p, n] : record.records_by_partition()) {
    if (p >= 0 && p < static_cast<int32_t>(slot_of_partition_.size()) &&
        slot_of_partition_[p] >= 0) {
      build.records_per_slot[slot_of_partition_[p]] = n;
    }
  }
  segments_.emplace(std::make_pair(record.sequence_id(), record.interval_start_ms()),
                    std::move(build));
  return absl::OkStatus();
}

void OpenSegments::Prune(int32_t published_id) {
  for (auto it = segments_.begin(); it != segments_.end();) {
    if (it->first.first <= published_id) {
      if (&it->second == last_) last_ = nullptr;
      it = segments_.erase(it);
    } else {
      ++it;
    }
  }
}

std::vector<OpenSegments::DirectBuild> OpenSegments::TakeBuilds(int32_t sequence_id,
                                                               int64_t* next_spill_number) {
  std::vector<DirectBuild> builds;
  for (auto it = segments_.lower_bound({sequence_id, INT64_MIN});
       it != segments_.end() && it->first.first == sequence_id; ++it) {
    SegmentBuild& build = it->second;
    if (build.index == nullptr || build.index->rows() == 0) continue;
    // A segment with spills is merged by the publisher as before (its index
    // spilled by TakeSpills): merging them here would hold the persist, and
    // with it the next one, for the whole segment's merge.
    if (build.record.spill_files_size() > 0) continue;
    DirectBuild out;
    out.record = Record(build);
    out.name = TaskFiles::BuiltFileName(it->first.first, it->first.second, (*next_spill_number)++);
    build.record.set_built_file(out.name);
    build.next_index = build.index->Successor();
    out.index = std::move(build.index);
    builds.push_back(std::move(out));
  }
  last_ = nullptr;  // its index may be gone
  return builds;
}

std::vector<std::pair<std::string, std::unique_ptr<SegmentIndex>>> OpenSegments::TakeSpills(
    int64_t* next_spill_number) {
  std::vector<std::pair<std::string, std::unique_ptr<SegmentIndex>>> spills;
  for (auto& [key, build] : segments_) {
    if (build.index == nullptr || build.index->rows() == 0) continue;
    std::string name = TaskFiles::SpillName(key.first, key.second, (*next_spill_number)++);
    build.record.add_spill_files(name);
    // The next row of this (sequence, interval) starts a new index.
    build.next_index = build.index->Successor();
    spills.emplace_back(std::move(name), std::move(build.index));
  }
  last_ = nullptr;  // its index may be gone
  return spills;
}

const state::SegmentState& OpenSegments::Record(SegmentBuild& build) const {
  auto* records = build.record.mutable_records_by_partition();
  for (size_t slot = 0; slot < build.records_per_slot.size(); ++slot) {
    if (build.records_per_slot[slot] != 0) {
      (*records)[partition_of_slot_[slot]] = build.records_per_slot[slot];
    }
  }
  return build.record;
}

void OpenSegments::AddTo(state::RestorePoint* point) {
  for (auto& [key, build] : segments_) *point->add_segments() = Record(build);
}

std::vector<state::SegmentState> OpenSegments::RecordsOf(int32_t sequence_id) {
  std::vector<state::SegmentState> records;
  for (auto it = segments_.lower_bound({sequence_id, INT64_MIN});
       it != segments_.end() && it->first.first == sequence_id; ++it) {
    records.push_back(Record(it->second));
  }
  return records;
}

std::set<std::string> OpenSegments::SpillFiles() const {
  std::set<std::string> names;
  for (const auto& [key, build] : segments_) {
    for (const std::string& name : build.record.spill_files()) names.insert(name);
    if (!build.record.built_file().empty()) names.insert(build.record.built_file());
  }
  return names;
}

}  // namespace sluice::task
