#include "task/persist_planner.h"

namespace sluice::task {

PersistPlanner::PersistPlanner(PersistPlannerOptions options)
    : options_(std::move(options)),
      persister_(options_.persister),
      last_persist_(absl::Now()) {}

void PersistPlanner::Restore(const state::RestorePoint& point) {
  submitted_ = point.counters().persists();
  persister_.Restore(point);
  next_spill_number_ = point.next_spill_number();
}

void PersistPlanner::OnRowAdded(const IngestCounters& counters) {
  // The set being persisted is still in memory while the next one fills:
  // each set persists at half of maxBytesInMemory, so both together stay
  // within it.
  const v1::TuningConfig& tuning = options_.settings->tuning;
  if (counters.rows_in_memory >= tuning.max_rows_in_memory() ||
      2 * counters.bytes_in_memory >= tuning.max_bytes_in_memory()) {
    wanted_ = true;
  }
}

void PersistPlanner::OnTime(absl::Time now) {
  if (dirty_ && now >= last_persist_ + options_.settings->timings.intermediate_persist_period) {
    wanted_ = true;
  }
}

void PersistPlanner::Submit(const std::vector<Sequence>& closed, const OffsetMap& current,
                            const IngestCounters& counters) {
  OpenSegments& segments = *options_.segments;
  PersistJob job;
  job.started = absl::Now();
  for (const Sequence& sequence : closed) {
    for (OpenSegments::DirectBuild& taken :
         segments.TakeBuilds(sequence.id, &next_spill_number_)) {
      PersistBuild build;
      build.name = std::move(taken.name);
      build.index = std::move(taken.index);
      build.spills.assign(taken.record.spill_files().begin(), taken.record.spill_files().end());
      build.info = options_.publisher->BuildInfo(sequence, taken.record);
      job.builds.push_back(std::move(build));
    }
  }
  job.spills = segments.TakeSpills(&next_spill_number_);
  state::RestorePoint& point = job.point;
  ToProto(current, point.mutable_current_offsets());
  segments.AddTo(&point);
  options_.router->AddTo(&point);
  state::Counters* c = point.mutable_counters();
  c->set_processed(counters.processed);
  c->set_processed_bytes(counters.processed_bytes);
  c->set_unparseable(counters.unparseable);
  c->set_thrown_away(counters.thrown_away);
  c->set_persists(submitted_ + 1);
  point.set_next_spill_number(next_spill_number_);
  ++submitted_;
  wanted_ = false;
  dirty_ = false;
  last_persist_ = absl::Now();
  persister_.Submit(std::move(job));
}

}  // namespace sluice::task
