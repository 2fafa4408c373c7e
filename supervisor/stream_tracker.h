// What a stream supervisor knows of its stream (Kafka): the connection, the
// partitions (a topic pattern's stream partition ids stored before anything
// uses them), the watermarks with their time and each partition's
// production rate, the newest record timestamps (time lag), whether Kafka
// answers, and the verdict on the stored offsets against the watermarks
// (stream_health.h). Fed by the background queries' answers
// (stream_queries.h) or, without them, by queries of its own during runs.
//
// Used on the stream supervisor's loop only; not copyable. What the options
// point to must outlive it.
#ifndef SLUICE_SUPERVISOR_STREAM_TRACKER_H_
#define SLUICE_SUPERVISOR_STREAM_TRACKER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/offsets.h"
#include "common/spec.h"
#include "common/stream_partitions.h"
#include "supervisor/clock.h"
#include "supervisor/store/metadata_store.h"
#include "supervisor/stream_health.h"
#include "supervisor/stream_metadata.h"
#include "supervisor/stream_queries.h"
#include "supervisor/stream_watermarks.h"
#include "supervisor/task_group.h"

namespace sluice::supervisor {

struct StreamTrackerOptions {
  std::string datasource;
  MetadataStore* store = nullptr;
  Clock* clock = Clock::Real();
  StreamMetadataFactory stream_metadata_factory;
  // The deadline of one Kafka metadata query, whatever the period (a short
  // period must not shorten it below a broker's answer).
  absl::Duration kafka_timeout = absl::Seconds(10);
  // The background queries feed it (ApplySnapshot); off: UpdatePartitions
  // and UpdateLag query.
  bool background_stream_queries = true;
  // The running spec (it may change live).
  std::function<const v1::SupervisorSpec&()> spec;
  // A stream was created after start (the background queries ask it now).
  std::function<void(StreamMetadata*)> stream_attached;
  // A failure worth the status' recent errors.
  std::function<void(const absl::Status&)> record_error;
};

class StreamTracker {
 public:
  explicit StreamTracker(StreamTrackerOptions options);
  StreamTracker(const StreamTracker&) = delete;
  StreamTracker& operator=(const StreamTracker&) = delete;

  // At start: creates the stream (a topic pattern's ids restored from the
  // store). A failure is a recorded error; each run tries again.
  void Connect();
  // A run's partitions: the background queries' last answer, or a query.
  // `detailed_state` is set when the stream is not usable (connecting,
  // lost, unreachable); `waiting`: no answer yet from the background
  // queries (neither success nor failure).
  absl::Status UpdatePartitions(std::string* detailed_state, bool* waiting);
  // A background query's answer; `reading`: the reading groups (their
  // partitions are not judged idle). True for the first answer (the runs
  // were waiting for it).
  bool ApplySnapshot(const StreamSnapshot& snapshot, const std::map<int32_t, Group>& reading);
  // Without background queries: watermarks, newest timestamps, the stored
  // offsets' verdict, queried now.
  void UpdateLag(const std::map<int32_t, Group>& reading);
  // Watermarks of some partitions, now (UNAVAILABLE without a stream).
  absl::StatusOr<std::map<int32_t, PartitionWatermarks>> QueryWatermarks(
      const std::vector<int32_t>& partitions);
  // The committed offsets (empty on error).
  OffsetMap StoredOffsets();
  // A new verdict on the stored offsets: a new problem is logged and
  // recorded.
  void SetOffsetsVerdict(StreamVerdict verdict);
  // After a full reset every partition starts as if first seen.
  void TreatAllAsFirstSeen();

  // ---- what is known ----
  StreamMetadata* stream() const { return stream_.get(); }
  // The ids of a topic-pattern stream (null: one topic, or no stream yet).
  const StreamPartitionIds* partition_ids() const;
  // "topic wiki" or "topicPattern wiki-.*", for logs and errors.
  std::string Label() const;
  const std::vector<int32_t>& partitions() const { return partitions_; }
  bool partitions_known() const { return partitions_known_; }
  // Partitions seen at the first listing (or since a full reset): a group
  // of them with no stored offset starts at earliest/latest.
  const std::set<int32_t>& first_partitions() const { return first_partitions_; }
  const std::map<int32_t, PartitionWatermarks>& watermarks() const { return marks_.watermarks(); }
  absl::Time watermarks_at() const { return marks_.at(); }
  const std::map<int32_t, double>& produce_rates() const { return marks_.produce_rates(); }
  const std::map<int32_t, int64_t>& newest_timestamps() const {
    return marks_.newest_timestamps();
  }
  bool unreachable() const { return unreachable_; }
  const StreamVerdict& offsets_verdict() const { return offsets_verdict_; }

 private:
  // Takes `stream`, a topic-pattern stream after its ids were restored from
  // the store (the ids it gives then never contradict stored ones). On
  // error stream_ stays unset.
  absl::Status Attach(std::unique_ptr<StreamMetadata> stream);
  // Stores the stream partition ids the stream gave since the last call:
  // before any group or offset uses them.
  absl::Status PersistStreamPartitions();
  // A metadata query's outcome decides whether Kafka is reachable (not while
  // the spec is suspended: a suspended datasource stays SUSPENDED).
  void NoteQuery(const absl::Status& status);
  // Judges the stored offsets (read before `marks` were queried) against
  // the watermarks.
  void CheckStoredOffsetsAgainst(const OffsetMap& stored,
                                 const std::map<int32_t, PartitionWatermarks>& marks,
                                 const std::map<int32_t, Group>& reading);
  std::string Prefix() const;

  const StreamTrackerOptions options_;
  std::unique_ptr<StreamMetadata> stream_;
  // What the background queries last fetched, applied by each run in place
  // of querying; empty until the first fetch.
  std::optional<absl::StatusOr<std::vector<int32_t>>> background_partitions_;
  std::vector<int32_t> partitions_;
  bool partitions_known_ = false;
  // Topic-pattern streams: ids below this are in the store.
  int32_t stored_stream_partitions_ = 0;
  std::set<int32_t> first_partitions_;
  // The last watermarks, their time, production rates, newest timestamps.
  StreamWatermarks marks_;
  // Kafka did not answer the last metadata query (UNABLE_TO_CONNECT_TO_STREAM).
  bool unreachable_ = false;
  // Stored offsets below the earliest or past the latest offset.
  StreamVerdict offsets_verdict_;
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_STREAM_TRACKER_H_
