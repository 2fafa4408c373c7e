// Intermediate persists of one task, on their own thread, and the restore
// point they write.
//
// A persist (PersistJob) is the indexes the read loop took out of its open
// segments, each with the name of its spill file, and the restore point that
// names those spills (offsets, segments, accounting, counters). The indexes
// of a sequence that closed with a segment's rows all in memory come as
// direct builds instead: each is built into its segment file, which the
// restore point names in place of a spill and the publisher pushes as it
// is. The thread spills or builds each index, then writes the restore point
// atomically: a crash before that leaves files no restore point names (the
// restart deletes them and re-reads). Each segment's row count in the
// restore point (spilled_rows) is what its spills and built file say they
// hold, as each is written: the task does not count those rows a second
// time. One persist runs at a time; Submit waits for the previous one, so
// at most two sets of indexes are in memory (the read loop goes on into new
// ones, as Druid does with maxPendingPersists 0).
//
// Fault points: task.persist.after_spills, task.after_persist.
//
// Thread-safe: the read loop submits and waits; the persister thread writes.
#ifndef SLUICE_TASK_PERSISTER_H_
#define SLUICE_TASK_PERSISTER_H_

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "task/build_slots.h"
#include "task/segment_sink.h"
#include "task/task_files.h"
#include "task/task_metrics.h"
#include "task/task_state.pb.h"

namespace sluice::task {

// One segment built straight from its index (SegmentIndex::Build). Files
// by their names in the task's spill directory (TaskFiles).
struct PersistBuild {
  // The segment file to build: a segment's built_file in the job's point.
  std::string name;
  std::unique_ptr<SegmentIndex> index;
  // The segment's spill files, merged in.
  std::vector<std::string> spills;
  SegmentBuildInfo info;
};

struct PersistJob {
  std::vector<PersistBuild> builds;
  // Spill file name (one of a segment's spill_files in `point`) -> index.
  std::vector<std::pair<std::string, std::unique_ptr<SegmentIndex>>> spills;
  // Without the segments' spilled_rows: the persister fills them in.
  state::RestorePoint point;
  absl::Time started;
};

struct PersisterOptions {
  // The task's directory (TaskFiles: its spill directory and
  // restore_point.json).
  std::string task_dir;
  TaskMetrics metrics;
  // For log lines: "[task <id>]".
  std::string log_prefix;
  // A direct build takes one of the worker's build slots (as the
  // publisher's builds do); null: no limit. Not owned.
  BuildSlots* build_slots = nullptr;
};

class Persister {
 public:
  explicit Persister(PersisterOptions options);
  // Stops (after the job in progress) and joins.
  ~Persister();
  Persister(const Persister&) = delete;
  Persister& operator=(const Persister&) = delete;

  // The restore point on disk; nullopt if there is none (DATA_LOSS if it
  // does not parse).
  static absl::StatusOr<std::optional<state::RestorePoint>> LoadRestorePoint(
      const std::string& path);

  // Starts the thread.
  void Start() ABSL_LOCKS_EXCLUDED(mu_);
  // Hands `job` to the thread. The previous job must be written
  // (WaitPersisted) first.
  void Submit(PersistJob job) ABSL_LOCKS_EXCLUDED(mu_);
  // Waits until the last job is written; the first failure if any failed.
  absl::Status WaitPersisted() ABSL_LOCKS_EXCLUDED(mu_);
  // Waits until the job whose restore point counts `persists` persists is
  // written (or a later one), polling `stopping` (CANCELLED once it returns
  // true); the first failure if any failed. For the publisher: a closed
  // sequence goes to it as soon as the persist that makes it durable is
  // submitted, and its files are read once that persist is written.
  absl::Status AwaitPersisted(int64_t persists, const std::function<bool()>& stopping)
      ABSL_LOCKS_EXCLUDED(mu_);
  // The first failure, without waiting (OK if none).
  absl::Status failure() const ABSL_LOCKS_EXCLUDED(mu_);
  // Ends the thread after the job in progress (a queued one is dropped) and
  // joins it.
  void Stop() ABSL_LOCKS_EXCLUDED(mu_);

  // Persists on disk: the last written restore point's persist count.
  int64_t persists_written() const { return persists_written_.load(); }
  // Restore: the restore point written before the restart (its persist
  // count and its segments' row counts, which later persists add to).
  void Restore(const state::RestorePoint& point) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // A segment by (sequence id, interval start).
  using SegmentKey = std::pair<int32_t, int64_t>;

  void Run() ABSL_LOCKS_EXCLUDED(mu_);
  bool exiting() const ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status Write(PersistJob& job) ABSL_LOCKS_EXCLUDED(mu_);

  const PersisterOptions options_;
  const TaskFiles files_;

  mutable absl::Mutex mu_;
  std::optional<PersistJob> job_ ABSL_GUARDED_BY(mu_);
  // A job was handed over and is not written yet.
  bool running_ ABSL_GUARDED_BY(mu_) = false;
  // The first persist failure (the task fails with it).
  absl::Status error_ ABSL_GUARDED_BY(mu_);
  bool exit_ ABSL_GUARDED_BY(mu_) = false;
  std::atomic<int64_t> persists_written_{0};
  // Each segment's spilled_rows in the last restore point written.
  std::map<SegmentKey, int64_t> spilled_rows_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace sluice::task

#endif  // SLUICE_TASK_PERSISTER_H_
