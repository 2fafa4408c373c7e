// When the read loop persists and what each persist holds: the triggers
// (maxRowsInMemory, half of maxBytesInMemory, intermediatePersistPeriod),
// the job handed to the Persister thread (the open segments' indexes as
// spills, or as direct builds for the segments of closed sequences that
// have no spill, and the restore point naming them with the offsets and
// counters), the spill numbering and the count of persists.
//
// Not thread-safe: owned and used by the read loop only (the Persister it
// owns runs its own thread).
#ifndef SLUICE_TASK_PERSIST_PLANNER_H_
#define SLUICE_TASK_PERSIST_PLANNER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "common/offsets.h"
#include "task/open_segments.h"
#include "task/persister.h"
#include "task/record_ingester.h"
#include "task/record_router.h"
#include "task/sequence_publisher.h"
#include "task/sequences.h"
#include "task/task_spec.h"
#include "task/task_state.pb.h"

namespace sluice::task {

struct PersistPlannerOptions {
  const TaskSettings* settings = nullptr;
  // Not owned; outlive the planner. The segments give their indexes; the
  // router its accounting; the publisher the build info of a direct build.
  OpenSegments* segments = nullptr;
  const RecordRouter* router = nullptr;
  const SequencePublisher* publisher = nullptr;
  // With the task directory: where spills and directly built segment files
  // go, named in the restore point.
  PersisterOptions persister;
};

class PersistPlanner {
 public:
  explicit PersistPlanner(PersistPlannerOptions options);
  PersistPlanner(const PersistPlanner&) = delete;
  PersistPlanner& operator=(const PersistPlanner&) = delete;

  // The persister thread.
  void Start() { persister_.Start(); }
  void Stop() { persister_.Stop(); }
  absl::Status failure() const { return persister_.failure(); }
  // Waits for the persist running, if any; its error.
  absl::Status WaitPersisted() { return persister_.WaitPersisted(); }
  // Waits until `persists` persists are written (Persister::AwaitPersisted).
  absl::Status AwaitPersisted(int64_t persists, const std::function<bool()>& stopping) {
    return persister_.AwaitPersisted(persists, stopping);
  }
  // The persist count and spill numbering of a restore point.
  void Restore(const state::RestorePoint& point);

  // Something was read since the last persist (offsets moved).
  void MarkDirty() { dirty_ = true; }
  bool dirty() const { return dirty_; }
  // A trigger fired: the loop persists at its next chance.
  bool wanted() const { return wanted_; }
  // The memory triggers, after a row was added.
  void OnRowAdded(const IngestCounters& counters);
  // The period trigger, and its start (reading begins).
  void OnTime(absl::Time now);
  void StartPeriod() { last_persist_ = absl::Now(); }

  // Hands every non-empty index and the restore point naming their spills
  // (offsets `current`, counters `counters`) to the persister; reading goes
  // on into new indexes. The indexes of the `closed` sequences' segments
  // that have no spill go as direct builds of those segments instead. Call
  // after WaitPersisted.
  void Submit(const std::vector<Sequence>& closed, const OffsetMap& current,
              const IngestCounters& counters);
  // Persists submitted, and written.
  int64_t submitted() const { return submitted_; }
  int64_t written() const { return persister_.persists_written(); }

 private:
  const PersistPlannerOptions options_;
  Persister persister_;
  int64_t submitted_ = 0;
  int64_t next_spill_number_ = 0;
  bool wanted_ = false;
  bool dirty_ = false;
  absl::Time last_persist_;
};

}  // namespace sluice::task

#endif  // SLUICE_TASK_PERSIST_PLANNER_H_
