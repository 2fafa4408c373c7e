// Publishes a task's closed sequences in the background, strictly in order,
// while the read loop goes on with later sequences.
//
// For each sequence (once the persist that makes its files durable is
// written: ClosedSequence::durable):
// build one segment file per time interval from the spills (or take the one
// the persister built directly from the rows in memory: the record's
// built_file), push each to deep storage under a unique key, PublishSegments with the sequence's start and
// end offsets, tell the owner of the sequence list (PublishListener: the
// sequence leaves it), then wait for handoff (bounded; a timeout is an alert,
// not a failure) and drop the local files. The outcome rules are those of docs/protocol.md:
// - UNAVAILABLE (an earlier group has not published) and unknown outcomes
//   (deadline, transport errors) are retried with backoff, with the same
//   pushed files; pushed files are never deleted when the outcome is unknown;
// - ABORTED (stored offsets are past our start): if GetPublishedSegments says
//   the sequence is committed with exactly our segment ids and offsets, a
//   replica won (or our own answer was lost): success, and only our pushed
//   copies that are not the published paths are deleted. Otherwise the task
//   fails with the reason.
// A sequence restored from disk after a restart is first checked with
// GetPublishedSegments: already committed means it was published before the
// restart (the crash came before the sequence file was updated).
//
// Thread-safe. One background thread; Stop() ends it at the next step.
#ifndef SLUICE_TASK_SEQUENCE_PUBLISHER_H_
#define SLUICE_TASK_SEQUENCE_PUBLISHER_H_

#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/deep_storage.h"
#include "common/retry.h"
#include "common/stream_partitions.h"
#include "sluice/v1/task.pb.h"
#include "task/build_slots.h"
#include "task/segment_sink.h"
#include "task/sequence_store.h"
#include "task/sequences.h"
#include "task/supervisor_client.h"
#include "task/task_files.h"
#include "task/task_metrics.h"
#include "task/task_state.pb.h"

namespace sluice::task {

// A closed, fully read sequence and what it produced.
struct ClosedSequence {
  Sequence sequence;
  // One per time interval that got rows, with its spill files (names in the
  // spill directory) and allocation.
  std::vector<state::SegmentState> segments;
  // Record accounting per partition.
  std::map<int32_t, state::PartitionCounts> counts;
  // Restored from disk by a restarted worker: it may already be published.
  bool restored = false;
  // When the read loop handed it over.
  absl::Time closed_at;
  // Waits (polling `stopping`) until the persist that makes the sequence's
  // files durable (its spills, its directly built segment files) is
  // written; the persist's failure if it failed. Null: they already are.
  std::function<absl::Status(const std::function<bool()>& stopping)> durable;
};

struct SequencePublisherOptions {
  std::string task_id;
  std::string datasource;
  int32_t group_id = 0;
  std::string topic;
  // Topic-pattern tasks: the pattern (topic empty) and the (topic,
  // partition) of each stream partition, named in every range sent.
  std::string topic_pattern;
  StreamPartitionMap stream_partitions;
  // The task directory (TaskFiles): its spills and directly built files,
  // and where segment files are built before the push.
  std::string task_dir;
  // Not owned; outlive the publisher.
  SupervisorClient* supervisor = nullptr;
  DeepStorage* deep_storage = nullptr;
  SegmentEngine* engine = nullptr;
  // Segment builds the worker runs at once across its tasks; null: no
  // limit. Not owned.
  BuildSlots* build_slots = nullptr;
  // The supervisor decodes every pushed segment before committing it
  // (TaskSpec.supervisor_decodes_segments): the build's read-back then
  // checks the file's checksum and structure only.
  bool supervisor_decodes_segments = false;
  // InfiniteDuration(): wait for handoff forever.
  absl::Duration handoff_timeout = absl::Minutes(15);
  absl::Duration handoff_poll_interval = absl::Seconds(1);
  absl::Duration min_backoff = absl::Milliseconds(100);
  absl::Duration max_backoff = absl::Seconds(5);
  // Told (on the publisher thread) once a sequence is committed, before the
  // handoff wait: the owner of the sequence list. An error fails the
  // publisher. Not owned.
  PublishListener* listener = nullptr;
  // For log lines: "[task <id>]".
  std::string log_prefix;
  TaskMetrics metrics;
};

class SequencePublisher {
 public:
  explicit SequencePublisher(SequencePublisherOptions options);
  // Stops (abandoning work in progress) and joins.
  ~SequencePublisher();
  SequencePublisher(const SequencePublisher&) = delete;
  SequencePublisher& operator=(const SequencePublisher&) = delete;

  void Start();
  // Sequences must be enqueued in order.
  void Enqueue(ClosedSequence sequence) ABSL_LOCKS_EXCLUDED(mu_);
  // Ends the thread after the current step (a call in flight completes; no
  // new step starts, backoffs and handoff waits are cut short) and joins it.
  void Stop() ABSL_LOCKS_EXCLUDED(mu_);

  // What the build of `segment` of `sequence` writes into the file's header
  // besides the rows (for the persister's direct builds too).
  SegmentBuildInfo BuildInfo(const Sequence& sequence, const state::SegmentState& segment) const;

  // Nothing queued, in flight, or waiting for handoff.
  bool Idle() const ABSL_LOCKS_EXCLUDED(mu_);
  // Waits until Idle(), a failure, or `timeout`; returns Idle().
  bool WaitIdle(absl::Duration timeout) ABSL_LOCKS_EXCLUDED(mu_);
  // OK until a sequence cannot be published; then the reason (the task fails).
  absl::Status failure() const ABSL_LOCKS_EXCLUDED(mu_);
  // Sequences queued or in flight, not yet committed.
  int pending() const ABSL_LOCKS_EXCLUDED(mu_);

  int64_t sequences_published() const { return sequences_published_.load(); }
  int64_t segments_published() const { return segments_published_.load(); }

 private:
  struct PushedSegment {
    v1::SegmentDescriptor descriptor;
    std::string local_path;
    absl::Duration build_time;  // waiting for a build slot included
    absl::Duration push_time;
  };
  struct HandoffWait {
    int32_t sequence_id = 0;
    std::vector<std::string> segment_ids;
    std::vector<std::string> local_files;
    absl::Time committed_at;
    absl::Time deadline;
    absl::Time next_poll;
  };

  void Run();
  // Publishes one sequence; on success its handoff wait is queued.
  absl::Status PublishOne(const ClosedSequence& sequence);
  absl::StatusOr<std::vector<PushedSegment>> BuildAndPush(const ClosedSequence& sequence);
  // Sets a range's topic and Kafka partition (topic-pattern tasks).
  void NameRange(v1::PartitionRange* range) const;
  absl::StatusOr<std::string> Push(const std::string& local_path, const std::string& key_stem);
  // ABORTED: whether the sequence is committed exactly as we would have.
  absl::StatusOr<bool> CommittedAsOurs(const ClosedSequence& sequence,
                                       const std::vector<std::string>& segment_ids);
  void DeleteCopiesNotPublished(const std::vector<PushedSegment>& pushed);
  absl::Status Committed(const ClosedSequence& sequence, std::vector<std::string> segment_ids,
                         std::vector<std::string> local_files);
  void PollHandoffs(bool force);
  // Sleeps `d` unless stopped; false when stopped.
  bool Sleep(absl::Duration d) ABSL_LOCKS_EXCLUDED(mu_);
  bool stopping() const ABSL_LOCKS_EXCLUDED(mu_);
  // min_backoff .. max_backoff, doubling, with common/retry's jitter.
  RetryOptions retry_options() const;

  const SequencePublisherOptions options_;
  const TaskFiles files_;

  mutable absl::Mutex mu_;
  std::deque<ClosedSequence> queue_ ABSL_GUARDED_BY(mu_);
  bool in_flight_ ABSL_GUARDED_BY(mu_) = false;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status failure_ ABSL_GUARDED_BY(mu_);
  size_t handoffs_waiting_ ABSL_GUARDED_BY(mu_) = 0;

  // Publisher thread only.
  std::vector<HandoffWait> handoffs_;

  std::atomic<int64_t> sequences_published_{0};
  std::atomic<int64_t> segments_published_{0};
  std::thread thread_;
};

}  // namespace sluice::task

#endif  // SLUICE_TASK_SEQUENCE_PUBLISHER_H_
