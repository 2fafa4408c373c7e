// The background Kafka queries of a stream supervisor: every period, on a
// strand of a shared query pool, the stored offsets (read first), the
// topic's partitions and their watermarks, handed to the supervisor's loop,
// so a slow or unreachable Kafka never holds up a checkpoint round queued
// behind a periodic run.
//
// Thread-safe: SetStream and Stop may be called from any thread; the
// queries run on the pool. The stream is not owned: whoever sets it keeps it
// alive until Stop() returns.
#ifndef SLUICE_SUPERVISOR_STREAM_QUERIES_H_
#define SLUICE_SUPERVISOR_STREAM_QUERIES_H_

#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/offsets.h"
#include "supervisor/strand_executor.h"
#include "supervisor/stream_metadata.h"

namespace sluice::supervisor {

// What one query found.
struct StreamSnapshot {
  absl::StatusOr<std::vector<int32_t>> partitions = absl::UnavailableError("not asked");
  // FAILED_PRECONDITION "no partitions" when the listing failed or was empty.
  absl::StatusOr<std::map<int32_t, PartitionWatermarks>> marks =
      absl::FailedPreconditionError("no partitions");
  // The committed offsets, read before the watermarks were queried (a
  // publish in between cannot make a stored offset look past a stale latest).
  OffsetMap stored;
  // Newest record timestamps of the partitions not read to their end by the
  // committed offsets (time lag); empty when not asked or when it failed.
  std::map<int32_t, int64_t> newest_timestamps;

  // What the query says about Kafka's reachability: the listing's error, OK
  // for an empty topic, else the watermarks' outcome.
  absl::Status Outcome() const;
};

// One query: `stored` as given, then partitions, then (if any) watermarks,
// then the newest timestamps of partitions whose latest offset is past the
// stored one.
StreamSnapshot QueryStream(StreamMetadata& stream, OffsetMap stored, absl::Duration timeout);

// The newest record timestamps of the partitions of `marks` that hold
// records past `stored` (empty on failure: the time lag is then unknown).
std::map<int32_t, int64_t> NewestTimestampsBehind(
    StreamMetadata& stream, const std::map<int32_t, PartitionWatermarks>& marks,
    const OffsetMap& stored, absl::Duration timeout);

struct StreamQueriesOptions {
  // The pool the queries run on (not owned).
  StrandExecutor* pool = nullptr;
  // Between queries (real time), and the deadline of each Kafka call.
  absl::Duration period = absl::Seconds(10);
  absl::Duration timeout = absl::Seconds(10);
  // Reads the committed offsets (empty on error).
  std::function<OffsetMap()> read_stored;
  // Receives each snapshot, on the pool thread.
  std::function<void(StreamSnapshot)> deliver;
  // The stream the first query asks (null: none until SetStream).
  StreamMetadata* stream = nullptr;
};

class StreamQueries {
 public:
  // Nothing runs before Start().
  explicit StreamQueries(StreamQueriesOptions options);
  // Stop().
  ~StreamQueries();
  StreamQueries(const StreamQueries&) = delete;
  StreamQueries& operator=(const StreamQueries&) = delete;

  // The first query runs at once (an unreachable Kafka shows within a
  // period), then every period; a step without a stream only waits. Once.
  void Start();
  // The stream to query from the next step on (null: none).
  void SetStream(StreamMetadata* stream) ABSL_LOCKS_EXCLUDED(mu_);
  // No query after this returns; waits for one under way.
  void Stop() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  absl::Time Step() ABSL_LOCKS_EXCLUDED(mu_);

  const StreamQueriesOptions options_;
  absl::Mutex mu_;
  StreamMetadata* stream_ ABSL_GUARDED_BY(mu_) = nullptr;
  bool exit_ ABSL_GUARDED_BY(mu_) = false;
  // Set by Start(), reset by Stop() (not concurrently: the owner starts
  // and stops). Last: steps use the members above.
  std::unique_ptr<StrandExecutor::Strand> strand_;
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_STREAM_QUERIES_H_
