#include "task/record_router.h"

#include <algorithm>
#include <utility>

namespace sluice::task {

RecordRouter::RecordRouter(std::vector<int32_t> partitions)
    : partition_of_slot_(std::move(partitions)) {
  int32_t max_partition = 0;
  for (int32_t p : partition_of_slot_) max_partition = std::max(max_partition, p);
  slot_of_partition_.assign(static_cast<size_t>(max_partition) + 1, -1);
  for (size_t i = 0; i < partition_of_slot_.size(); ++i) {
    slot_of_partition_[partition_of_slot_[i]] = static_cast<int>(i);
  }
  task_end_.assign(partition_of_slot_.size(), kEndOfPartition);
  hint_.assign(partition_of_slot_.size(), 0);
}

OffsetMap RecordRouter::ToOffsetMap(const std::vector<int64_t>& per_slot) const {
  OffsetMap offsets;
  for (size_t slot = 0; slot < per_slot.size(); ++slot) {
    offsets[partition_of_slot_[slot]] = per_slot[slot];
  }
  return offsets;
}

void RecordRouter::Refresh(const SequenceList& list) {
  const size_t slots = partition_of_slot_.size();
  const OffsetMap& end = list.task_end();
  final_end_fixed_ = list.final_end_fixed();
  for (size_t slot = 0; slot < slots; ++slot) {
    const auto it = end.find(partition_of_slot_[slot]);
    task_end_[slot] = it == end.end() ? kEndOfPartition : it->second;
  }
  std::vector<RouteData> data(list.sequences().size());
  for (size_t i = 0; i < list.sequences().size(); ++i) {
    const Sequence& s = list.sequences()[i];
    RouteData& route = data[i];
    route.id = s.id;
    const int old = IndexOf(s.id);
    if (old >= 0) {
      route.counts = std::move(routes_data_[old].counts);
      route.rows = routes_data_[old].rows;
    } else {
      route.counts.assign(slots, state::PartitionCounts());
    }
    route.start.resize(slots);
    route.end.resize(slots);
    for (size_t slot = 0; slot < slots; ++slot) {
      const int32_t p = partition_of_slot_[slot];
      route.start[slot] = s.start.at(p);
      route.end[slot] = s.end.at(p);
    }
  }
  routes_ = list.sequences();
  routes_data_ = std::move(data);
  std::fill(hint_.begin(), hint_.end(), 0);
}

int RecordRouter::Route(int slot, int64_t offset) {
  int route = hint_[slot];
  const int routes = route_count();
  while (route < routes && offset >= routes_data_[route].end[slot]) ++route;
  if (route == routes || offset < routes_data_[route].start[slot]) return -1;
  hint_[slot] = route;
  return route;
}

int RecordRouter::IndexOf(int32_t sequence_id) const {
  for (size_t i = 0; i < routes_data_.size(); ++i) {
    if (routes_data_[i].id == sequence_id) return static_cast<int>(i);
  }
  return -1;
}

RecordRouter::Counts RecordRouter::CountsOf(int32_t sequence_id) const {
  Counts counts;
  const int i = IndexOf(sequence_id);
  if (i < 0) return counts;
  for (size_t slot = 0; slot < partition_of_slot_.size(); ++slot) {
    counts[partition_of_slot_[slot]] = routes_data_[i].counts[slot];
  }
  return counts;
}

int64_t RecordRouter::RowsOf(int32_t sequence_id) const {
  const int i = IndexOf(sequence_id);
  return i < 0 ? 0 : routes_data_[i].rows;
}

void RecordRouter::RestoreCounts(const state::SequenceStats& stats) {
  const int i = IndexOf(stats.sequence_id());
  if (i < 0) return;
  for (const auto& [p, c] : stats.partitions()) {
    const int slot = SlotOf(p);
    if (slot >= 0) routes_data_[i].counts[slot] = c;
  }
}

void RecordRouter::AddRows(int32_t sequence_id, int64_t rows) {
  const int i = IndexOf(sequence_id);
  if (i >= 0) routes_data_[i].rows += rows;
}

void RecordRouter::AddTo(state::RestorePoint* point) const {
  for (const RouteData& route : routes_data_) {
    state::SequenceStats* stats = point->add_sequence_stats();
    stats->set_sequence_id(route.id);
    for (size_t slot = 0; slot < partition_of_slot_.size(); ++slot) {
      (*stats->mutable_partitions())[partition_of_slot_[slot]] = route.counts[slot];
    }
  }
}

}  // namespace sluice::task
