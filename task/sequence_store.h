// The one owner of a task's sequence list (SequenceList) while it runs: it
// loads or creates the list, applies SetEndOffsets and published-sequence
// removals, persists every change before it takes effect, and hands out
// snapshots. The publisher notifies it (PublishListener) when a sequence is
// committed; the read loop reads snapshots once per batch at most; the
// control calls read it for the status.
//
// Thread-safe (one mutex; callers may hold TaskControl's mutex, which comes
// first).
#ifndef SLUICE_TASK_SEQUENCE_STORE_H_
#define SLUICE_TASK_SEQUENCE_STORE_H_

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "sluice/v1/task.pb.h"
#include "common/offsets.h"
#include "task/sequences.h"

namespace sluice::task {

// Told by the publisher once a sequence is committed (on its thread). An
// error fails the publisher.
class PublishListener {
 public:
  virtual ~PublishListener() = default;
  virtual absl::Status OnPublished(int32_t sequence_id) = 0;
};

class SequenceStore final : public PublishListener {
 public:
  // `path`: the task's sequences.json.
  SequenceStore(std::string path, std::string base_name, std::vector<int32_t> partitions);
  SequenceStore(const SequenceStore&) = delete;
  SequenceStore& operator=(const SequenceStore&) = delete;

  // Loads the list from `path`, or (when absent) builds it from `checkpoints`
  // and saves it. Returns whether it came from disk.
  absl::StatusOr<bool> Load(const std::vector<std::pair<int32_t, OffsetMap>>& checkpoints)
      ABSL_LOCKS_EXCLUDED(mu_);
  bool loaded() const ABSL_LOCKS_EXCLUDED(mu_);

  // A copy of the list (empty before Load).
  SequenceList Snapshot() const ABSL_LOCKS_EXCLUDED(mu_);
  // The latest sequence; nullopt if the list is empty or not loaded.
  std::optional<Sequence> Latest() const ABSL_LOCKS_EXCLUDED(mu_);
  // The task-wide end offsets; nullopt before Load.
  std::optional<OffsetMap> TaskEnd() const ABSL_LOCKS_EXCLUDED(mu_);
  // Highest published sequence id (-1: none), readable without the lock.
  int32_t last_published_id() const { return last_published_id_.load(); }

  // SequenceList::SetEndOffsets; a change is saved before it is kept (on a
  // save error the list is unchanged). FAILED_PRECONDITION before Load.
  absl::StatusOr<SequenceList::SetEndOutcome> SetEndOffsets(const OffsetMap& offsets, bool finish,
                                                            const OffsetMap& current, bool fenced)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Removes the published sequence and saves the list.
  absl::Status OnPublished(int32_t sequence_id) override ABSL_LOCKS_EXCLUDED(mu_);

  // Start and end offsets, checkpoints and latest sequence id of the status
  // (before Load: the start offsets are `spec_start`).
  void FillStatus(const OffsetMap& spec_start, v1::TaskStatus* status) const
      ABSL_LOCKS_EXCLUDED(mu_);

  // Whether nothing read beyond `current` is unpublished: no sequence, or one
  // whose start no partition read past.
  bool AllReadIsPublished(const OffsetMap& current) const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  const std::string path_;
  const std::string base_name_;
  const std::vector<int32_t> partitions_;

  mutable absl::Mutex mu_;
  bool loaded_ ABSL_GUARDED_BY(mu_) = false;
  SequenceList list_ ABSL_GUARDED_BY(mu_);
  std::atomic<int32_t> last_published_id_{-1};
};

}  // namespace sluice::task

#endif  // SLUICE_TASK_SEQUENCE_STORE_H_
