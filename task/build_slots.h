// How many segment builds (merge, write, verify) a worker runs at once,
// across its tasks (Druid's Indexer druid.worker.numConcurrentMerges). A
// build holds the segment's merged dictionaries, its spills' blocks being
// merged and one dimension's bitmaps (10-20 MiB for a 500k-row segment), so
// builds that all finish together, one per task, would add up: the slots keep
// the worker's memory bounded and its cores shared with the read loops.
//
// Thread-safe; shared by the publishers of one worker's tasks.
#ifndef SLUICE_TASK_BUILD_SLOTS_H_
#define SLUICE_TASK_BUILD_SLOTS_H_

#include <functional>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace sluice::task {

class BuildSlots {
 public:
  // At least one slot.
  explicit BuildSlots(int slots) : free_(slots < 1 ? 1 : slots), slots_(free_) {}
  BuildSlots(const BuildSlots&) = delete;
  BuildSlots& operator=(const BuildSlots&) = delete;

  // Waits for a free slot and takes it; false (nothing taken) once
  // `stopping` returns true (checked every 50 ms while waiting).
  bool Acquire(const std::function<bool()>& stopping) ABSL_LOCKS_EXCLUDED(mu_);
  void Release() ABSL_LOCKS_EXCLUDED(mu_);

  int slots() const { return slots_; }
  int in_use() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  mutable absl::Mutex mu_;
  int free_ ABSL_GUARDED_BY(mu_);
  const int slots_;
};

// Holds a slot for its scope (when acquired).
class BuildSlot {
 public:
  // `slots` may be null: no limit.
  BuildSlot(BuildSlots* slots, const std::function<bool()>& stopping)
      : slots_(slots), held_(slots == nullptr || slots->Acquire(stopping)) {}
  ~BuildSlot() {
    if (slots_ != nullptr && held_) slots_->Release();
  }
  BuildSlot(const BuildSlot&) = delete;
  BuildSlot& operator=(const BuildSlot&) = delete;
  // False: the wait ended because the publisher is stopping.
  bool held() const { return held_; }

 private:
  BuildSlots* const slots_;
  const bool held_;
};

}  // namespace sluice::task

#endif  // SLUICE_TASK_BUILD_SLOTS_H_
