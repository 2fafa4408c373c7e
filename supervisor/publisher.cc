#include "supervisor/publisher.h"

#include <glog/logging.h>

#include <set>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/fault_injection.h"
#include "common/metrics/catalog.h"
#include "common/names.h"
#include "common/retry.h"
#include "common/spec.h"
#include "common/status_macros.h"
#include "common/stream_partitions.h"
#include "supervisor/task_claims.h"
#include "common/time_util.h"
#include "supervisor/naming.h"
#include "supervisor/segment_copy_check.h"

namespace sluice::supervisor {
namespace {

absl::Status Invalid(absl::string_view what) { return absl::InvalidArgumentError(what); }

}  // namespace

absl::Status ValidatePublishRequest(const v1::PublishSegmentsRequest& request) {
  SLUICE_RETURN_IF_ERROR(ValidateDatasource(request.datasource()));
  if (request.sequence_name().empty()) return Invalid("sequence_name is required");
  if (request.start_offsets().empty()) return Invalid("start_offsets is empty");
  const OffsetMap start = FromProto(request.start_offsets());
  const OffsetMap end = FromProto(request.end_offsets());
  if (start.size() != end.size()) {
    return Invalid(absl::StrCat("start_offsets ", FormatOffsets(start), " and end_offsets ",
                                FormatOffsets(end), " name different partitions"));
  }
  for (const auto& [partition, offset] : start) {
    auto it = end.find(partition);
    if (it == end.end()) {
      return Invalid(absl::StrCat("end_offsets has no partition ", partition));
    }
    if (partition < 0 || offset < 0) {
      return Invalid(absl::StrCat("partition ", partition, " offset ", offset, " is negative"));
    }
    if (it->second < offset) {
      return Invalid(absl::StrCat("partition ", partition, ": end offset ", it->second,
                                  " is before start offset ", offset));
    }
    if (it->second == kEndOfPartition) {
      return Invalid(
          absl::StrCat("partition ", partition,
                       ": end offset is END_OF_PARTITION; publish closed sequences only"));
    }
  }
  for (const v1::PartitionRange& range : request.partition_stats()) {
    if (!start.count(range.partition())) {
      return Invalid(absl::StrCat("partition_stats names partition ", range.partition(),
                                  " which the sequence does not cover"));
    }
  }
  for (const v1::SegmentDescriptor& segment : request.segments()) {
    const std::string where = absl::StrCat("segment ", segment.id());
    if (segment.id().empty()) return Invalid("a segment has no id");
    if (segment.datasource() != request.datasource()) {
      return Invalid(absl::StrCat(where, " belongs to datasource \"", segment.datasource(),
                                  "\", not ", request.datasource()));
    }
    if (!segment.sequence_name().empty() && segment.sequence_name() != request.sequence_name()) {
      return Invalid(absl::StrCat(where, " was built by sequence ", segment.sequence_name(),
                                  ", not ", request.sequence_name()));
    }
    if (segment.interval().end_ms() <= segment.interval().start_ms()) {
      return Invalid(absl::StrCat(where, " has an empty interval"));
    }
    const std::string expected =
        SegmentId(segment.datasource(), segment.interval().start_ms(), segment.interval().end_ms(),
                  segment.version(), segment.partition_num());
    if (segment.id() != expected) {
      return Invalid(absl::StrCat(where, " does not match its fields (expected ", expected, ")"));
    }
    if (segment.path().empty()) return Invalid(absl::StrCat(where, " has no path"));
    if (segment.num_rows() <= 0) return Invalid(absl::StrCat(where, " has no rows"));
    if (segment.size_bytes() <= 0) return Invalid(absl::StrCat(where, " has no bytes"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::map<std::string, std::string>> Publisher::CheckFiles(
    const v1::PublishSegmentsRequest& request) {
  std::map<std::string, std::string> digests;
  const OffsetMap start = FromProto(request.start_offsets());
  const OffsetMap end = FromProto(request.end_offsets());
  for (const v1::SegmentDescriptor& segment : request.segments()) {
    // The provenance must be this sequence's ranges: a segment built from
    // other offsets (another sequence's file) is not this sequence's data.
    for (const v1::PartitionRange& range : segment.provenance().ranges()) {
      auto s = start.find(range.partition());
      if (s == start.end() || range.start_offset() != s->second ||
          range.end_offset() != end.at(range.partition())) {
        return absl::FailedPreconditionError(absl::StrCat(
            "segment ", segment.id(), " claims partition ", range.partition(), " offsets [",
            range.start_offset(), ", ", range.end_offset(), "), which is not sequence ",
            request.sequence_name(), "'s range ", FormatOffsets(start), " -> ",
            FormatOffsets(end)));
      }
    }
    if (segment.provenance().ranges().empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat("segment ", segment.id(), " has no provenance (Kafka ranges)"));
    }
    if (options_.deep_storage == nullptr) continue;
    // The full check, the same the task ran before pushing: every block and
    // bitmap decoded.
    SegmentExpectation expected = ExpectationOf(segment);
    expected.depth = CopyCheckDepth::kFull;
    // The digest is the supervisor's own, of the bytes it has just checked:
    // later checks compare the file with it, not with anything a task said.
    std::string sha256;
    absl::Status copy =
        VerifySegmentCopy(options_.deep_storage, options_.scratch_dir, expected, &sha256);
    if (IsRetryable(copy)) return copy;  // transient (I/O, disk full): retried
    if (!copy.ok()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "segment ", segment.id(), ": deep-storage copy refused before the commit: ",
          copy.message()));
    }
    digests[segment.id()] = std::move(sha256);
  }
  return digests;
}

namespace {

// A topic-pattern datasource's ranges name the (topic, partition) of their
// stream partition as the store has it: a segment cannot claim records of
// another topic than the one its offsets were read from.
absl::Status CheckRangeTopics(StoreTxn& txn, const std::string& ds,
                              const v1::PublishSegmentsRequest& request) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<v1::StreamPartition> stored, txn.StreamPartitions(ds));
  std::map<int32_t, const v1::StreamPartition*> by_id;
  for (const v1::StreamPartition& p : stored) by_id[p.id()] = &p;
  auto check = [&](const v1::PartitionRange& range, const std::string& what) -> absl::Status {
    auto it = by_id.find(range.partition());
    if (it == by_id.end() || it->second->topic() != range.topic() ||
        it->second->partition() != range.topic_partition()) {
      return absl::FailedPreconditionError(absl::StrCat(
          what, " names stream partition ", range.partition(), " as ",
          FormatTopicPartition({range.topic(), range.topic_partition()}), "; the store has ",
          it == by_id.end()
              ? std::string("no such id")
              : FormatTopicPartition({it->second->topic(), it->second->partition()})));
    }
    return absl::OkStatus();
  };
  for (const v1::SegmentDescriptor& segment : request.segments()) {
    for (const v1::PartitionRange& range : segment.provenance().ranges()) {
      SLUICE_RETURN_IF_ERROR(check(range, absl::StrCat("segment ", segment.id())));
    }
  }
  for (const v1::PartitionRange& range : request.partition_stats()) {
    SLUICE_RETURN_IF_ERROR(check(range, "the sequence statistics"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<v1::PublishSegmentsResponse> Publisher::Publish(
    const v1::PublishSegmentsRequest& request, const std::string& base_sequence_name) {
  SLUICE_RETURN_IF_ERROR(ValidatePublishRequest(request));
  SLUICE_ASSIGN_OR_RETURN(const auto digests, CheckFiles(request));
  std::optional<IcebergPlan> iceberg;
  bool names_table = false;
  absl::StatusOr<v1::PublishSegmentsResponse> response =
      CommitWithIceberg(request, base_sequence_name, digests, iceberg, names_table);
  if (options_.iceberg_activity != nullptr && names_table) {
    const int64_t now_ms = options_.clock->NowMs();
    if (response.ok() && iceberg.has_value()) {
      options_.iceberg_activity->NoteCommit(request.datasource(), iceberg->staged.snapshot_id,
                                            now_ms);
    } else if (!response.ok()) {
      options_.iceberg_activity->NoteFailure(request.datasource(), response.status(), now_ms);
    }
  }
  return response;
}

absl::StatusOr<v1::PublishSegmentsResponse> Publisher::CommitWithIceberg(
    const v1::PublishSegmentsRequest& request, const std::string& base_sequence_name,
    const std::map<std::string, std::string>& digests, std::optional<IcebergPlan>& iceberg,
    bool& names_table) {
  // An Iceberg datasource: the transaction finds the spec naming a table
  // and asks for the snapshot (staged before it, outside it), then runs
  // again and swaps the catalog pointer; a swap that misses (another writer
  // moved the table) stages again on top of it. Other datasources commit in
  // one transaction, as before.
  int misses = 0;
  for (int round = 0;; ++round) {
    absl::StatusOr<v1::PublishSegmentsResponse> response =
        Commit(request, base_sequence_name, digests, iceberg ? &*iceberg : nullptr);
    if (iceberg.has_value()) names_table = true;
    if (response.ok()) return response;
    const IcebergRetry retry = IcebergRetryOf(response.status());
    if (retry == IcebergRetry::kNone) return response;
    names_table = true;
    if (retry == IcebergRetry::kSwapMissed) {
      ++misses;
      LOG(WARNING) << "[supervisor " << request.datasource() << "] publish of "
                   << request.sequence_name() << ": " << response.status().message()
                   << " (attempt " << misses << " of " << kIcebergCommitAttempts << ")";
    }
    if (misses >= kIcebergCommitAttempts || round > 2 * kIcebergCommitAttempts) {
      return absl::UnavailableError(absl::StrCat(
          iceberg ? absl::StrCat("Iceberg table ", iceberg->target.QualifiedName())
                  : std::string("the Iceberg table"),
          " of datasource ", request.datasource(), " was moved by another writer during each of ",
          misses, " attempts to commit sequence ", request.sequence_name(),
          "; nothing was committed (retry)"));
    }
    // The previous attempt's hold of the table goes first: a second hold
    // taken by the same publish would wait behind a compaction waiting for
    // the first (IcebergTableLocks::Committing), which waits for this one.
    iceberg.reset();
    SLUICE_ASSIGN_OR_RETURN(iceberg, StageIceberg(request));
    if (iceberg && options_.after_iceberg_stage) options_.after_iceberg_stage();
    // Staged in deep storage, nothing committed: a crash here leaves files
    // no snapshot references (tests/fault/iceberg_faults_test.cc).
    if (iceberg) SLUICE_RETURN_IF_ERROR(SLUICE_FAULT_POINT("supervisor.after_iceberg_stage"));
  }
}

absl::StatusOr<std::optional<Publisher::IcebergPlan>> Publisher::StageIceberg(
    const v1::PublishSegmentsRequest& request) {
  const std::string& ds = request.datasource();
  std::optional<SpecRecord> spec;
  std::optional<std::string> base;
  std::optional<std::string> topic;
  std::vector<v1::OffsetReset> resets;
  std::vector<v1::StreamPartition> stream_partitions;
  bool committed = false;
  SLUICE_RETURN_IF_ERROR(options_.store->InTransaction([&](StoreTxn& txn) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(spec, txn.LatestSpec(ds));
    if (!spec.has_value() || !spec->spec.has_iceberg_table()) return absl::OkStatus();
    SLUICE_ASSIGN_OR_RETURN(auto sequence, txn.CommittedSequence(ds, request.sequence_name()));
    committed = sequence.has_value();
    SLUICE_ASSIGN_OR_RETURN(topic, txn.CommitTopic(ds));
    SLUICE_ASSIGN_OR_RETURN(resets, txn.OffsetResets(ds));
    SLUICE_ASSIGN_OR_RETURN(stream_partitions, txn.StreamPartitions(ds));
    SLUICE_ASSIGN_OR_RETURN(base, txn.IcebergMetadataLocation(
                                      spec->spec.iceberg_table().table_namespace(),
                                      spec->spec.iceberg_table().table_name()));
    return absl::OkStatus();
  }));
  if (!spec.has_value() || !spec->spec.has_iceberg_table() || committed) {
    return std::optional<IcebergPlan>();  // a repeat is refused by the commit
  }
  if (options_.deep_storage == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("datasource ", ds, " names an Iceberg table; the supervisor needs deep "
                     "storage to write it"));
  }
  IcebergPlan plan;
  plan.target = *IcebergTargetOf(spec->spec, *options_.deep_storage);
  if (options_.iceberg_table_locks != nullptr) {
    plan.publishing = options_.iceberg_table_locks->Publishing(plan.target.location_key);
    // Read again once held: a compaction that held the table alone while
    // this publish waited has moved it, and staging on the location read
    // before would only lose the swap.
    SLUICE_RETURN_IF_ERROR(options_.store->InTransaction([&](StoreTxn& txn) -> absl::Status {
      SLUICE_ASSIGN_OR_RETURN(base, txn.IcebergMetadataLocation(plan.target.table_namespace,
                                                                plan.target.table_name));
      return absl::OkStatus();
    }));
  }
  IcebergCommitInput input;
  input.sequence_name = request.sequence_name();
  input.segments.assign(request.segments().begin(), request.segments().end());
  input.now_ms = options_.clock->NowMs();
  // The Kafka range of every partition of the sequence, by topic and
  // partition: exactly-once can be checked from the table alone.
  // Topic-pattern datasources name their stream partitions in the store.
  std::map<int32_t, std::pair<std::string, int32_t>> named;
  for (const v1::StreamPartition& p : stream_partitions) named[p.id()] = {p.topic(), p.partition()};
  for (const v1::PartitionRange& r : request.partition_stats()) {
    if (!r.topic().empty()) named[r.partition()] = {r.topic(), r.topic_partition()};
  }
  std::string plain_topic = topic.value_or("");
  if (plain_topic.empty() && !request.segments().empty()) {
    plain_topic = request.segments(0).provenance().topic();
  }
  auto kafka_key = [&](int32_t partition) {
    auto it = named.find(partition);
    return it != named.end()
               ? absl::StrCat("sluice.kafka.", it->second.first, ".", it->second.second)
               : absl::StrCat("sluice.kafka.", plain_topic, ".", partition);
  };
  const OffsetMap end = FromProto(request.end_offsets());
  for (const auto& [partition, start] : FromProto(request.start_offsets())) {
    input.kafka_ranges[kafka_key(partition)] = absl::StrCat(start, "-", end.at(partition));
  }
  for (const v1::OffsetReset& r : resets) {
    input.offset_resets.push_back(
        {r.reset_id(),
         absl::StrCat(kafka_key(r.partition()), " ",
                      r.has_old_offset() ? absl::StrCat(r.old_offset()) : std::string("none"),
                      " -> ",
                      r.has_new_offset() ? absl::StrCat(r.new_offset()) : std::string("none"),
                      " at ", FormatIsoInstant(r.reset_at_ms()), ": ", r.reason())});
  }
  const absl::Time started = absl::Now();
  SLUICE_ASSIGN_OR_RETURN(plan.staged,
                          StageIcebergCommit(options_.deep_storage, options_.scratch_dir,
                                             plan.target, base, input));
  plan.staging_ms = absl::ToInt64Milliseconds(absl::Now() - started);
  if (options_.metrics != nullptr) {
    options_.metrics
        ->GetHistogram(metrics::kSupervisorIcebergStageSeconds, {{"datasource", ds}})
        ->ObserveDuration(absl::Now() - started);
  }
  return std::optional<IcebergPlan>(std::move(plan));
}

namespace {
// On an ABORTED the publish transaction returns to have the snapshot staged
// (again): "stage" (none staged, or for another table) or "swap-missed".
constexpr char kIcebergRetryPayload[] = "sluice.iceberg/retry";

absl::Status IcebergRetryStatus(const std::string& why, const std::string& message) {
  absl::Status status = absl::AbortedError(message);
  status.SetPayload(kIcebergRetryPayload, absl::Cord(why));
  return status;
}
}  // namespace

Publisher::IcebergRetry Publisher::IcebergRetryOf(const absl::Status& status) {
  if (!absl::IsAborted(status)) return IcebergRetry::kNone;
  const auto why = status.GetPayload(kIcebergRetryPayload);
  if (!why.has_value()) return IcebergRetry::kNone;
  return *why == "swap-missed" ? IcebergRetry::kSwapMissed : IcebergRetry::kStage;
}

absl::StatusOr<v1::PublishSegmentsResponse> Publisher::Commit(
    const v1::PublishSegmentsRequest& request, const std::string& base_sequence_name,
    const std::map<std::string, std::string>& digests, const IcebergPlan* iceberg) {
  const std::string& ds = request.datasource();
  const OffsetMap start = FromProto(request.start_offsets());
  const OffsetMap end = FromProto(request.end_offsets());
  const std::vector<v1::PartitionRange> stats(request.partition_stats().begin(),
                                              request.partition_stats().end());
  const int64_t now_ms = options_.clock->NowMs();
  v1::PublishSegmentsResponse response;
  int skipped = 0;
  OffsetMap before;
  std::vector<ReplicaDivergence> divergences;

  const absl::Time transaction_start = absl::Now();
  absl::Status status = options_.store->InTransaction([&](StoreTxn& txn) -> absl::Status {
    response.Clear();
    skipped = 0;
    SLUICE_ASSIGN_OR_RETURN(bool exists, txn.DatasourceExists(ds));
    if (!exists) return absl::NotFoundError(absl::StrCat("unknown datasource ", ds));

    SLUICE_ASSIGN_OR_RETURN(auto committed, txn.CommittedSequence(ds, request.sequence_name()));
    if (committed) {
      SLUICE_ASSIGN_OR_RETURN(divergences, Diverging(txn, request, *committed));
      return absl::AbortedError(absl::StrCat(
          "sequence ", request.sequence_name(), " is already committed (by task ",
          committed->task_id(), " at ", FormatIsoInstant(committed->committed_at_ms()),
          ", offsets ", FormatOffsets(FromProto(committed->start_offsets())), " -> ",
          FormatOffsets(FromProto(committed->end_offsets())), "); check GetPublishedSegments"));
    }

    if (!base_sequence_name.empty()) {
      SLUICE_RETURN_IF_ERROR(CheckSequenceRangeIn(txn, base_sequence_name,
                                                  request.sequence_name(), start, end));
    }
    SLUICE_ASSIGN_OR_RETURN(before, txn.CommittedOffsets(ds));
    SLUICE_ASSIGN_OR_RETURN(std::optional<std::string> topic, txn.CommitTopic(ds));
    for (const v1::SegmentDescriptor& segment : request.segments()) {
      if (topic.has_value() && StreamNameOf(segment.provenance()) != *topic) {
        return absl::FailedPreconditionError(
            absl::StrCat("segment ", segment.id(), " was read from \"",
                         StreamNameOf(segment.provenance()), "\", datasource ", ds, " reads \"",
                         *topic, "\""));
      }
    }
    if (topic.has_value() && TopicPatternOf(*topic).has_value()) {
      SLUICE_RETURN_IF_ERROR(CheckRangeTopics(txn, ds, request));
    }
    bool behind = false;
    bool ahead = false;
    for (const auto& [partition, offset] : start) {
      auto stored = before.find(partition);
      if (stored == before.end() || !topic.has_value()) {
        return absl::FailedPreconditionError(
            absl::StrCat("datasource ", ds, " has no stored offset for partition ", partition,
                         " (it was reset, or this supervisor never started reading it); sequence ",
                         request.sequence_name(), " cannot be published"));
      }
      if (offset < stored->second) behind = true;
      if (offset > stored->second) ahead = true;
    }
    if (behind) {
      return absl::AbortedError(absl::StrCat(
          "start offsets ", FormatOffsets(start), " of sequence ", request.sequence_name(),
          " are behind the stored offsets ", FormatOffsets(Restrict(before, start)),
          ": a replica or an earlier publish already advanced them; check GetPublishedSegments"));
    }
    if (ahead) {
      return absl::UnavailableError(absl::StrCat(
          "start offsets ", FormatOffsets(start), " of sequence ", request.sequence_name(),
          " are ahead of the stored offsets ", FormatOffsets(Restrict(before, start)),
          ": an earlier group has not published yet; retry"));
    }

    SLUICE_ASSIGN_OR_RETURN(
        const int64_t commit_id,
        txn.InsertCommittedSequence(ds, request.sequence_name(), request.task_id(), start, end,
                                    stats, now_ms));
    std::set<std::string> seen;
    for (const v1::SegmentDescriptor& segment : request.segments()) {
      SLUICE_ASSIGN_OR_RETURN(auto pending, txn.PendingSegmentById(segment.id()));
      if (!pending || pending->datasource != ds ||
          pending->sequence_name != request.sequence_name()) {
        return absl::FailedPreconditionError(
            absl::StrCat("segment ", segment.id(), " was not allocated for sequence ",
                         request.sequence_name(), " (use AllocateSegment)"));
      }
      if (pending->version != segment.version() ||
          pending->partition_num != segment.partition_num()) {
        return absl::FailedPreconditionError(
            absl::StrCat("segment ", segment.id(), " does not match its allocation (version ",
                         pending->version, ", partition ", pending->partition_num, ")"));
      }
      SLUICE_ASSIGN_OR_RETURN(bool present, txn.SegmentExists(segment.id()));
      if (present || !seen.insert(segment.id()).second) {
        ++skipped;
        continue;
      }
      v1::SegmentDescriptor stored = segment;
      stored.set_sequence_name(request.sequence_name());
      auto digest = digests.find(segment.id());
      SLUICE_RETURN_IF_ERROR(txn.InsertSegment(
          stored, digest == digests.end() ? std::string() : digest->second, commit_id,
          request.task_id(), now_ms));
      response.add_inserted_segment_ids(segment.id());
    }
    SLUICE_RETURN_IF_ERROR(txn.SetCommittedOffsets(ds, *topic, end, now_ms));
    // The Iceberg table the spec names now (a live change included): the
    // staged snapshot of that table is swapped in, or the transaction
    // rolls back to have it staged.
    SLUICE_ASSIGN_OR_RETURN(std::optional<SpecRecord> spec, txn.LatestSpec(ds));
    if (spec.has_value() && spec->spec.has_iceberg_table()) {
      const v1::IcebergTable& table = spec->spec.iceberg_table();
      if (iceberg == nullptr || iceberg->target.table_namespace != table.table_namespace() ||
          iceberg->target.table_name != table.table_name()) {
        return IcebergRetryStatus(
            "stage", absl::StrCat("datasource ", ds, " writes Iceberg table ",
                                  table.table_namespace(), ".", table.table_name(),
                                  "; staging its snapshot"));
      }
      SLUICE_ASSIGN_OR_RETURN(
          const bool swapped,
          txn.SwapIcebergMetadataLocation(iceberg->target.table_namespace,
                                          iceberg->target.table_name, iceberg->staged.base,
                                          iceberg->staged.metadata_location));
      if (!swapped) {
        return IcebergRetryStatus(
            "swap-missed",
            absl::StrCat("Iceberg table ", iceberg->target.QualifiedName(), " no longer points at ",
                         iceberg->staged.base.value_or("(no table)"),
                         ": another writer committed first; staging again on top of it"));
      }
    } else {
      iceberg = nullptr;  // the spec names no table (any more): nothing to swap
    }
    SLUICE_ASSIGN_OR_RETURN(OffsetMap after, txn.CommittedOffsets(ds));
    ToProto(after, response.mutable_committed_offsets());
    return SLUICE_FAULT_POINT("supervisor.publish.before_commit");
  });
  if (options_.metrics != nullptr) {
    options_.metrics
        ->GetHistogram(metrics::kSupervisorPublishTransactionSeconds, {{"datasource", ds}})
        ->ObserveDuration(absl::Now() - transaction_start);
  }
  if (!status.ok()) {
    VLOG(1) << "[supervisor " << ds << "] publish of " << request.sequence_name() << " by "
            << request.task_id() << " refused: " << status;
    for (const ReplicaDivergence& divergence : divergences) {
      LOG(ERROR) << "[supervisor " << ds << "] " << divergence.Describe();
      if (options_.on_replica_divergence) options_.on_replica_divergence(divergence);
    }
    return status;
  }
  LOG(INFO) << "[supervisor " << ds << "] published sequence " << request.sequence_name()
            << " of task " << request.task_id() << ": " << request.segments_size() << " segments ("
            << response.inserted_segment_ids_size() << " new, " << skipped
            << " already present), offsets " << FormatOffsets(start) << " -> "
            << FormatOffsets(end)
            << (iceberg == nullptr
                    ? std::string()
                    : absl::StrCat(", Iceberg snapshot ", iceberg->staged.snapshot_id, " of ",
                                   iceberg->target.QualifiedName(), " (",
                                   iceberg->staged.data_files, " data files, ",
                                   iceberg->staged.records, " rows, staged in ",
                                   iceberg->staging_ms, " ms) at ",
                                   iceberg->staged.metadata_location));
  SLUICE_RETURN_IF_ERROR(SLUICE_FAULT_POINT("supervisor.publish.after_commit"));
  return response;
}

std::string ReplicaDivergence::Describe() const {
  return absl::StrCat(
      "replica divergence in sequence ", sequence_name, ": segment ", segment_id,
      " committed by task ", committed_task_id, " (", committed_rows, " rows, ", committed_bytes,
      " bytes, checksum ", committed_checksum, ", ", committed_path, ") differs from task ",
      replica_task_id, "'s (", replica_rows, " rows, ", replica_bytes, " bytes, checksum ",
      replica_checksum, ", ", replica_path, "); both files are kept");
}

absl::StatusOr<std::vector<ReplicaDivergence>> Publisher::Diverging(
    StoreTxn& txn, const v1::PublishSegmentsRequest& request,
    const v1::CommittedSequence& committed) {
  std::vector<ReplicaDivergence> out;
  if (committed.task_id() == request.task_id()) return out;  // our own retry
  for (const v1::SegmentDescriptor& segment : request.segments()) {
    SLUICE_ASSIGN_OR_RETURN(std::vector<v1::SegmentDescriptor> stored,
                            txn.ListSegments(request.datasource(), &segment.interval(),
                                             /*include_unused=*/true, /*limit=*/1 << 20));
    for (const v1::SegmentDescriptor& c : stored) {
      if (c.id() != segment.id()) continue;
      if (c.checksum() == segment.checksum() && c.num_rows() == segment.num_rows() &&
          c.size_bytes() == segment.size_bytes()) {
        break;
      }
      ReplicaDivergence d;
      d.datasource = request.datasource();
      d.sequence_name = request.sequence_name();
      d.segment_id = segment.id();
      d.committed_task_id = committed.task_id();
      d.committed_path = c.path();
      d.committed_checksum = c.checksum();
      d.committed_rows = c.num_rows();
      d.committed_bytes = c.size_bytes();
      d.replica_task_id = request.task_id();
      d.replica_path = segment.path();
      d.replica_checksum = segment.checksum();
      d.replica_rows = segment.num_rows();
      d.replica_bytes = segment.size_bytes();
      out.push_back(std::move(d));
      break;
    }
  }
  return out;
}

absl::StatusOr<v1::GetPublishedSegmentsResponse> Publisher::GetPublished(
    const v1::GetPublishedSegmentsRequest& request) {
  SLUICE_RETURN_IF_ERROR(ValidateDatasource(request.datasource()));
  const std::vector<std::string> ids(request.segment_ids().begin(), request.segment_ids().end());
  v1::GetPublishedSegmentsResponse response;
  SLUICE_RETURN_IF_ERROR(options_.store->InTransaction([&](StoreTxn& txn) -> absl::Status {
    response.Clear();
    SLUICE_ASSIGN_OR_RETURN(bool exists, txn.DatasourceExists(request.datasource()));
    if (!exists) {
      return absl::NotFoundError(absl::StrCat("unknown datasource ", request.datasource()));
    }
    SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> used,
                            txn.UsedSegmentIds(request.datasource(), ids));
    for (std::string& id : used) response.add_published_segment_ids(std::move(id));
    if (!request.sequence_name().empty()) {
      SLUICE_ASSIGN_OR_RETURN(auto committed,
                              txn.CommittedSequence(request.datasource(), request.sequence_name()));
      if (committed) {
        response.set_sequence_committed(true);
        *response.mutable_sequence_start_offsets() = committed->start_offsets();
        *response.mutable_sequence_end_offsets() = committed->end_offsets();
      }
    }
    return absl::OkStatus();
  }));
  return response;
}

}  // namespace sluice::supervisor
