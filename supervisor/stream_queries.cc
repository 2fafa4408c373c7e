#include "supervisor/stream_queries.h"

#include <glog/logging.h>

#include "absl/time/clock.h"

namespace sluice::supervisor {

absl::Status StreamSnapshot::Outcome() const {
  if (!partitions.ok()) return partitions.status();
  if (partitions->empty()) return absl::OkStatus();
  return marks.status();
}

StreamSnapshot QueryStream(StreamMetadata& stream, OffsetMap stored, absl::Duration timeout) {
  StreamSnapshot snapshot;
  snapshot.stored = std::move(stored);
  snapshot.partitions = stream.ListPartitions(timeout);
  if (snapshot.partitions.ok() && !snapshot.partitions->empty()) {
    snapshot.marks = stream.QueryWatermarks(*snapshot.partitions, timeout);
  }
  if (snapshot.marks.ok()) {
    snapshot.newest_timestamps = NewestTimestampsBehind(stream, *snapshot.marks, snapshot.stored,
                                                        timeout);
  }
  return snapshot;
}

std::map<int32_t, int64_t> NewestTimestampsBehind(
    StreamMetadata& stream, const std::map<int32_t, PartitionWatermarks>& marks,
    const OffsetMap& stored, absl::Duration timeout) {
  std::map<int32_t, int64_t> behind;
  for (const auto& [p, m] : marks) {
    auto it = stored.find(p);
    if (m.latest > m.earliest && (it == stored.end() || it->second < m.latest)) {
      behind[p] = m.latest;
    }
  }
  if (behind.empty()) return {};
  absl::StatusOr<std::map<int32_t, int64_t>> newest = stream.QueryNewestTimestamps(behind, timeout);
  if (!newest.ok()) {
    VLOG(1) << "newest record timestamps: " << newest.status();
    return {};
  }
  return *std::move(newest);
}

StreamQueries::StreamQueries(StreamQueriesOptions options) : options_(std::move(options)) {
  {
    absl::MutexLock lock(&mu_);
    stream_ = options_.stream;
  }
}

void StreamQueries::Start() { strand_ = options_.pool->AddStrand([this] { return Step(); }); }

StreamQueries::~StreamQueries() { Stop(); }

void StreamQueries::SetStream(StreamMetadata* stream) {
  absl::MutexLock lock(&mu_);
  stream_ = stream;
}

void StreamQueries::Stop() {
  {
    absl::MutexLock lock(&mu_);
    exit_ = true;
  }
  strand_.reset();  // waits for a query under way
}

absl::Time StreamQueries::Step() {
  StreamMetadata* stream = nullptr;
  {
    absl::MutexLock lock(&mu_);
    if (exit_) return absl::InfiniteFuture();
    stream = stream_;
  }
  // Real time: the queries only run with the real clock.
  const absl::Time next = absl::Now() + options_.period;
  if (stream == nullptr) return next;
  // Read before the watermarks: a publish in between cannot make a stored
  // offset look past a stale latest.
  OffsetMap stored = options_.read_stored();
  options_.deliver(QueryStream(*stream, std::move(stored), options_.timeout));
  return next;
}

}  // namespace sluice::supervisor
