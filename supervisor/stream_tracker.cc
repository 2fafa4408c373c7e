// What a stream supervisor knows of its stream: see stream_tracker.h.
#include "supervisor/stream_tracker.h"

#include <glog/logging.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"

namespace sluice::supervisor {

StreamTracker::StreamTracker(StreamTrackerOptions options) : options_(std::move(options)) {}

std::string StreamTracker::Prefix() const {
  return absl::StrCat("[supervisor ", options_.datasource, "] ");
}

void StreamTracker::Connect() {
  // A stream that cannot be created (bad properties) is a supervisor error
  // reported in the status, not a refusal: the spec was validated already.
  auto stream = options_.stream_metadata_factory(options_.spec());
  absl::Status attached = stream.ok() ? Attach(std::move(*stream)) : stream.status();
  if (!attached.ok()) options_.record_error(Annotate(attached, "connecting to the stream"));
}

absl::StatusOr<std::map<int32_t, PartitionWatermarks>> StreamTracker::QueryWatermarks(
    const std::vector<int32_t>& partitions) {
  if (stream_ == nullptr) return absl::UnavailableError("no connection to the stream");
  return stream_->QueryWatermarks(partitions, options_.kafka_timeout);
}

void StreamTracker::TreatAllAsFirstSeen() {
  first_partitions_ = std::set<int32_t>(partitions_.begin(), partitions_.end());
}

absl::Status StreamTracker::UpdatePartitions(std::string* detailed_state, bool* waiting) {
  if (!stream_) {
    auto stream = options_.stream_metadata_factory(options_.spec());
    absl::Status attached = stream.ok() ? Attach(std::move(*stream)) : stream.status();
    if (!attached.ok()) {
      *detailed_state = "CONNECTING_TO_STREAM";
      return Annotate(attached, "connecting to the stream");
    }
    options_.stream_attached(stream_.get());
  }
  // With background queries, their latest answer stands in for a query
  // here: the loop never waits for Kafka to list partitions. Until the
  // first answer, runs wait (CONNECTING_TO_STREAM, neither success nor
  // failure).
  absl::StatusOr<std::vector<int32_t>> partitions = absl::UnavailableError("not asked");
  if (options_.background_stream_queries) {
    if (!background_partitions_.has_value()) {
      *detailed_state = "CONNECTING_TO_STREAM";
      *waiting = true;
      return absl::UnavailableError("waiting for the first answer from Kafka");
    }
    partitions = *background_partitions_;
  } else {
    partitions = stream_->ListPartitions(options_.kafka_timeout);
    NoteQuery(partitions.status());
  }
  if (!partitions.ok()) {
    *detailed_state = !IsUnreachable(partitions.status()) ? "CONNECTING_TO_STREAM"
                      : partitions_known_                 ? "LOST_CONTACT_WITH_STREAM"
                                                          : "UNABLE_TO_CONNECT_TO_STREAM";
    return Annotate(partitions.status(), absl::StrCat("listing the partitions of ", Label()));
  }
  if (partitions->empty()) {
    return absl::UnavailableError(absl::StrCat(Label(), " has no partitions"));
  }
  // Ids of new partitions are stored before anything uses them.
  SLUICE_RETURN_IF_ERROR(PersistStreamPartitions());
  if (!partitions_known_) {
    first_partitions_.insert(partitions->begin(), partitions->end());
    LOG(INFO) << Prefix() << Label() << " has " << partitions->size() << " partitions";
  } else if (*partitions != partitions_) {
    LOG(INFO) << Prefix() << "partitions changed from [" << absl::StrJoin(partitions_, ",")
              << "] to [" << absl::StrJoin(*partitions, ",") << "]";
  }
  partitions_ = *partitions;
  partitions_known_ = true;
  return absl::OkStatus();
}

absl::Status StreamTracker::Attach(std::unique_ptr<StreamMetadata> stream) {
  if (StreamPartitionIds* ids = stream->stream_partition_ids(); ids != nullptr) {
    std::vector<v1::StreamPartition> stored;
    SLUICE_RETURN_IF_ERROR(options_.store->InTransaction([&](StoreTxn& txn) -> absl::Status {
      SLUICE_ASSIGN_OR_RETURN(stored, txn.StreamPartitions(options_.datasource));
      return absl::OkStatus();
    }));
    SLUICE_RETURN_IF_ERROR(Annotate(ids->Restore(stored), "the stored stream partitions"));
    stored_stream_partitions_ = ids->next_id();
  }
  stream_ = std::move(stream);
  return absl::OkStatus();
}

absl::Status StreamTracker::PersistStreamPartitions() {
  StreamPartitionIds* ids = stream_ != nullptr ? stream_->stream_partition_ids() : nullptr;
  if (ids == nullptr) return absl::OkStatus();
  std::vector<v1::StreamPartition> added = ids->From(stored_stream_partitions_);
  if (added.empty()) return absl::OkStatus();
  SLUICE_RETURN_IF_ERROR(Annotate(options_.store->InTransaction([&](StoreTxn& txn) {
    return txn.AddStreamPartitions(options_.datasource, added, options_.clock->NowMs());
  }),
                                  "storing new stream partition ids"));
  for (const v1::StreamPartition& p : added) {
    LOG(INFO) << Prefix() << "stream partition " << p.id() << " is "
              << FormatTopicPartition({p.topic(), p.partition()});
  }
  stored_stream_partitions_ = added.back().id() + 1;
  return absl::OkStatus();
}

const StreamPartitionIds* StreamTracker::partition_ids() const {
  return stream_ != nullptr ? stream_->stream_partition_ids() : nullptr;
}

std::string StreamTracker::Label() const {
  const v1::IoConfig& io = options_.spec().io_config();
  return io.topic_pattern().empty() ? absl::StrCat("topic ", io.topic())
                                    : absl::StrCat("topicPattern ", io.topic_pattern());
}

bool StreamTracker::ApplySnapshot(const StreamSnapshot& snapshot,
                                  const std::map<int32_t, Group>& reading) {
  const bool first = !background_partitions_.has_value();
  background_partitions_ = snapshot.partitions;
  NoteQuery(snapshot.Outcome());
  if (snapshot.marks.ok()) {
    marks_.Note(*snapshot.marks, options_.clock->Now());
    marks_.SetNewestTimestamps(snapshot.newest_timestamps);
    CheckStoredOffsetsAgainst(snapshot.stored, *snapshot.marks, reading);
  } else {
    VLOG(1) << Prefix() << "watermarks: " << snapshot.marks.status();
  }
  return first;
}

void StreamTracker::UpdateLag(const std::map<int32_t, Group>& reading) {
  if (!stream_ || partitions_.empty()) return;
  // The background thread keeps marks_ fresh once it has answered.
  if (options_.background_stream_queries) return;
  const OffsetMap stored = StoredOffsets();
  auto marks = stream_->QueryWatermarks(partitions_, options_.kafka_timeout);
  NoteQuery(marks.status());
  if (!marks.ok()) {
    VLOG(1) << Prefix() << "watermarks: " << marks.status();
    return;
  }
  marks_.Note(*marks, options_.clock->Now());
  marks_.SetNewestTimestamps(
      NewestTimestampsBehind(*stream_, *marks, stored, options_.kafka_timeout));
  CheckStoredOffsetsAgainst(stored, *marks, reading);
}

void StreamTracker::NoteQuery(const absl::Status& status) {
  if (options_.spec().suspended()) {
    // A suspended datasource reads nothing: what Kafka answers does not
    // change its state (SUSPENDED) nor its errors. Judged again once resumed.
    if (!status.ok()) VLOG(1) << Prefix() << "suspended; Kafka query: " << status;
    unreachable_ = false;
    return;
  }
  const bool unreachable = IsUnreachable(status);
  if (unreachable && !unreachable_) {
    LOG(WARNING) << Prefix() << "Kafka cannot be reached: " << status;
    options_.record_error(Annotate(status, "Kafka cannot be reached"));
  } else if (!unreachable && unreachable_) {
    LOG(INFO) << Prefix() << "Kafka answers again";
  }
  unreachable_ = unreachable;
}

OffsetMap StreamTracker::StoredOffsets() {
  OffsetMap stored;
  options_.store
      ->InTransaction([&](StoreTxn& txn) -> absl::Status {
        SLUICE_ASSIGN_OR_RETURN(stored, txn.CommittedOffsets(options_.datasource));
        return absl::OkStatus();
      })
      .IgnoreError();
  return stored;
}

void StreamTracker::CheckStoredOffsetsAgainst(const OffsetMap& stored,
                                              const std::map<int32_t, PartitionWatermarks>& marks,
                                              const std::map<int32_t, Group>& reading) {
  std::set<int32_t> idle(partitions_.begin(), partitions_.end());
  for (const auto& [id, group] : reading) {
    for (int32_t p : group.partitions()) idle.erase(p);
  }
  SetOffsetsVerdict(CheckStoredOffsets(
      stored, marks, idle, options_.spec().tuning_config().reset_offset_automatically()));
}

void StreamTracker::SetOffsetsVerdict(StreamVerdict verdict) {
  if (verdict.problem != StreamProblem::kNone && (verdict.problem != offsets_verdict_.problem ||
                                                  verdict.message != offsets_verdict_.message)) {
    LOG(ERROR) << Prefix() << "ALERT: " << verdict.message;
    options_.record_error(absl::FailedPreconditionError(verdict.message));
  } else if (verdict.problem == StreamProblem::kNone &&
             offsets_verdict_.problem != StreamProblem::kNone) {
    LOG(INFO) << Prefix() << "the stored offsets are within Kafka's offsets again";
  }
  offsets_verdict_ = std::move(verdict);
}

}  // namespace sluice::supervisor
