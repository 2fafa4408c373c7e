#include "tools/audit/exactly_once_audit.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/stream_partitions.h"

namespace sluice::audit {
namespace {

struct SequenceRange {
  const v1::CommittedSequence* sequence;
  int64_t start;
  int64_t end;
};

// "topic p0[start,end)=rows p1[...]=rows", ranges sorted by partition and
// start (a compacted segment has several ranges of a partition).
std::string ProvenanceText(const v1::Provenance& provenance) {
  std::vector<const v1::PartitionRange*> ranges;
  for (const v1::PartitionRange& r : provenance.ranges()) ranges.push_back(&r);
  std::sort(ranges.begin(), ranges.end(),
            [](const v1::PartitionRange* a, const v1::PartitionRange* b) {
              return a->partition() != b->partition() ? a->partition() < b->partition()
                                                      : a->start_offset() < b->start_offset();
            });
  std::string out = StreamNameOf(provenance);
  for (const v1::PartitionRange* r : ranges) {
    absl::StrAppend(&out, " p", r->partition(), "[", r->start_offset(), ",", r->end_offset(),
                    ")=", r->rows());
  }
  return out;
}

// What the log's offsets are offsets of, as StreamNameOf names it.
std::string LogStreamName(const v1::GetCommitLogResponse& log) {
  return log.topic_pattern().empty() ? log.topic() : kTopicPatternPrefix + log.topic_pattern();
}

}  // namespace

std::string AuditReport::ToString() const {
  std::string out = absl::StrCat(
      "exactly-once audit of ", datasource, "\n",
      "  partitions ", partitions, ", committed sequences ", sequences, ", used segments ",
      segments, "\n",
      "  records in Kafka (committed ranges) ", records_in_kafka, "\n",
      "  = rows ingested ", rows_ingested, " + unparseable ", unparseable, " + thrown away ",
      thrown_away, " (", rows_ingested + unparseable + thrown_away, ")\n",
      "  rows in segment files (after rollup) ", segment_rows, "\n");
  for (const std::string& d : declared_resets) absl::StrAppend(&out, "  DECLARED: ", d, "\n");
  if (!not_rereadable.empty()) {
    absl::StrAppend(&out, "  not re-readable (deleted by retention): ", not_rereadable.size(),
                    " ranges, ", not_rereadable_offsets, " offsets, ", not_rereadable_rows,
                    " rows ingested from them (not checked)\n");
  }
  for (const std::string& d : not_rereadable) absl::StrAppend(&out, "  NOT RE-READABLE: ", d, "\n");
  for (const std::string& d : discrepancies) absl::StrAppend(&out, "  DISCREPANCY: ", d, "\n");
  absl::StrAppend(&out, ok() ? "PASS" : absl::StrCat("FAIL (", discrepancies.size(),
                                                    " discrepancies)"));
  return out;
}

AuditReport RunAudit(const v1::GetCommitLogResponse& log,
                     const std::vector<v1::SegmentDescriptor>& used_segments,
                     RecordCounter* counter, SegmentVerifier* verifier) {
  AuditReport report;
  report.datasource = log.datasource();
  report.sequences = log.sequences_size();
  report.segments = static_cast<int64_t>(used_segments.size());
  std::map<int32_t, TopicPartition> names;
  for (const v1::StreamPartition& p : log.stream_partitions()) {
    names[p.id()] = {p.topic(), p.partition()};
  }
  auto fail = [&report](std::string message) {
    report.discrepancies.push_back(std::move(message));
  };

  // 1. Tiling: per partition, sequences chain from the initial offset to the
  //    committed offset.
  std::set<int32_t> partitions;
  for (const auto& [p, unused] : log.initial_offsets()) partitions.insert(p);
  for (const auto& [p, unused] : log.committed_offsets()) partitions.insert(p);
  std::map<int32_t, std::vector<SequenceRange>> by_partition;
  std::map<std::string, const v1::CommittedSequence*> by_name;
  for (const v1::CommittedSequence& seq : log.sequences()) {
    if (!by_name.emplace(seq.sequence_name(), &seq).second) {
      fail(absl::StrCat("sequence ", seq.sequence_name(), " is committed twice"));
    }
    for (const auto& [p, start] : seq.start_offsets()) {
      auto end = seq.end_offsets().find(p);
      if (end == seq.end_offsets().end()) {
        fail(absl::StrCat("sequence ", seq.sequence_name(), " has no end offset for partition ", p));
        continue;
      }
      if (end->second < start) {
        fail(absl::StrCat("sequence ", seq.sequence_name(), " partition ", p, " ends (",
                          end->second, ") before it starts (", start, ")"));
      }
      by_partition[p].push_back({&seq, start, end->second});
      partitions.insert(p);
    }
  }
  std::map<int32_t, std::vector<const v1::OffsetReset*>> resets_by_partition;
  for (const v1::OffsetReset& reset : log.resets()) {
    resets_by_partition[reset.partition()].push_back(&reset);
    partitions.insert(reset.partition());
  }
  report.partitions = static_cast<int64_t>(partitions.size());
  for (int32_t p : partitions) {
    auto initial = log.initial_offsets().find(p);
    auto committed = log.committed_offsets().find(p);
    // In commit order: each publish starts where the stored offset was (the
    // publish compare-and-swap), so the chain is walked as it was built, with
    // the resets applied in between, when they happened.
    const std::vector<SequenceRange>& ranges = by_partition[p];
    const std::vector<const v1::OffsetReset*>& resets = resets_by_partition[p];
    if (initial == log.initial_offsets().end()) {
      fail(absl::StrCat("partition ", p, " has no recorded initial offset"));
      continue;
    }
    // The offset the next commit must start at; nullopt after a reset that
    // cleared the stored offset (the next start is then whatever Kafka's
    // earliest or latest offset was).
    std::optional<int64_t> expected = initial->second;
    size_t next_reset = 0;
    auto apply = [&](const v1::OffsetReset& reset) {
      if (reset.has_old_offset() && expected.has_value() && reset.old_offset() != *expected) {
        fail(absl::StrCat("partition ", p, ": reset ", reset.reset_id(), " (", reset.reason(),
                          ") moved the offset from ", reset.old_offset(), ", but the commits ",
                          "had reached ", *expected));
      }
      const std::optional<int64_t> from = expected;
      expected = reset.has_new_offset() ? std::optional<int64_t>(reset.new_offset())
                                        : std::nullopt;
      std::string what;
      if (!from.has_value() || !expected.has_value()) {
        what = absl::StrCat("from ", from ? absl::StrCat(*from) : "none", " to ",
                            expected ? absl::StrCat(*expected) : "earliest/latest (cleared)");
      } else if (*expected > *from) {
        what = absl::StrCat("from ", *from, " to ", *expected, ": [", *from, ", ", *expected,
                            ") skipped (", *expected - *from, " offsets)");
      } else if (*expected < *from) {
        what = absl::StrCat("from ", *from, " to ", *expected, ": [", *expected, ", ", *from,
                            ") read again (", *from - *expected, " offsets)");
      } else {
        what = absl::StrCat("to ", *from, " (unchanged)");
      }
      report.declared_resets.push_back(absl::StrCat("partition ", p, ": reset ",
                                                    reset.reset_id(), " (", reset.reason(),
                                                    ") ", what));
    };
    for (const SequenceRange& r : ranges) {
      const int64_t at = r.sequence->committed_at_ms();
      // Resets before this commit; one in the same millisecond only when the
      // chain needs it (the clock cannot order the two).
      while (next_reset < resets.size() &&
             (resets[next_reset]->reset_at_ms() < at ||
              (resets[next_reset]->reset_at_ms() == at && expected != r.start))) {
        apply(*resets[next_reset++]);
      }
      if (!expected.has_value()) {
        // The start after a clearing reset is where reading restarted.
      } else if (r.start > *expected) {
        fail(absl::StrCat("partition ", p, ": gap [", *expected, ", ", r.start,
                          ") before sequence ", r.sequence->sequence_name()));
      } else if (r.start < *expected) {
        fail(absl::StrCat("partition ", p, ": sequence ", r.sequence->sequence_name(), " [",
                          r.start, ", ", r.end, ") overlaps what was committed before (up to ",
                          *expected, ")"));
      }
      expected = r.end;
    }
    while (next_reset < resets.size()) apply(*resets[next_reset++]);
    const int64_t committed_offset =
        committed == log.committed_offsets().end() ? initial->second : committed->second;
    if (expected.has_value() && *expected != committed_offset) {
      fail(absl::StrCat("partition ", p, ": sequences end at ", *expected,
                        " but the committed offset is ", committed_offset));
    }
  }

  // 2. Segments belong to committed sequences and carry their ranges. A
  //    compacted segment (no sequence name) holds several sequences'
  //    records: each of its ranges must be a committed sequence's range of
  //    that partition, and its rows count for that sequence.
  std::map<std::string, std::map<int32_t, int64_t>> rows_by_sequence;  // name -> p -> rows
  // The segment's stream is the log's and, with a topic pattern, each of its
  // ranges names the (topic, partition) the log gives that stream partition.
  auto check_stream = [&](const v1::SegmentDescriptor& segment) {
    if (StreamNameOf(segment.provenance()) != LogStreamName(log)) {
      fail(absl::StrCat("segment ", segment.id(), " came from \"",
                        StreamNameOf(segment.provenance()), "\", not \"", LogStreamName(log),
                        "\""));
    }
    if (log.topic_pattern().empty()) return;
    for (const v1::PartitionRange& range : segment.provenance().ranges()) {
      auto name = names.find(range.partition());
      if (name == names.end() || name->second.topic != range.topic() ||
          name->second.partition != range.topic_partition()) {
        fail(absl::StrCat("segment ", segment.id(), " names stream partition ", range.partition(),
                          " ", FormatTopicPartition({range.topic(), range.topic_partition()}),
                          ", the commit log does not"));
      }
    }
  };
  // A segment of one sequence: the sequence is committed, lists it, and the
  // segment carries its ranges. False: not accounted (already reported).
  auto check_sequence_segment = [&](const v1::SegmentDescriptor& segment) -> bool {
    auto seq_it = by_name.find(segment.sequence_name());
    if (seq_it == by_name.end()) {
      fail(absl::StrCat("segment ", segment.id(), " belongs to sequence ", segment.sequence_name(),
                        ", which is not committed"));
      return false;
    }
    const v1::CommittedSequence& seq = *seq_it->second;
    if (std::find(seq.segment_ids().begin(), seq.segment_ids().end(), segment.id()) ==
        seq.segment_ids().end()) {
      fail(absl::StrCat("segment ", segment.id(), " is not in the commit record of ",
                        seq.sequence_name()));
    }
    check_stream(segment);
    for (const v1::PartitionRange& range : segment.provenance().ranges()) {
      auto start = seq.start_offsets().find(range.partition());
      auto end = seq.end_offsets().find(range.partition());
      if (start == seq.start_offsets().end() || end == seq.end_offsets().end() ||
          start->second != range.start_offset() || end->second != range.end_offset()) {
        fail(absl::StrCat("segment ", segment.id(), " partition ", range.partition(), " range [",
                          range.start_offset(), ", ", range.end_offset(),
                          ") differs from its sequence's"));
      }
      rows_by_sequence[seq.sequence_name()][range.partition()] += range.rows();
    }
    return true;
  };
  std::map<std::tuple<int32_t, int64_t, int64_t>, const v1::CommittedSequence*> by_range;
  for (const v1::CommittedSequence& seq : log.sequences()) {
    for (const auto& [p, start] : seq.start_offsets()) {
      auto end = seq.end_offsets().find(p);
      if (end != seq.end_offsets().end()) by_range[{p, start, end->second}] = &seq;
    }
  }
  // (interval, partition, start, end) -> the used segments carrying that
  // range in that interval: a compacted segment must be the only one (else
  // the records are in two used segments).
  std::map<std::tuple<int64_t, int64_t, int32_t, int64_t, int64_t>, std::vector<std::string>>
      carriers;
  std::set<std::string> compacted_ids;
  std::set<std::string> sequences_in_compacted;
  std::set<std::string> seen_ids;
  for (const v1::SegmentDescriptor& segment : used_segments) {
    if (!seen_ids.insert(segment.id()).second) {
      fail(absl::StrCat("segment ", segment.id(), " is listed twice"));
      continue;
    }
    for (const v1::PartitionRange& range : segment.provenance().ranges()) {
      // An empty range (a sequence that read nothing of the partition) holds
      // no record, twice or not: several sequences may have the same one.
      if (range.start_offset() == range.end_offset()) continue;
      carriers[{segment.interval().start_ms(), segment.interval().end_ms(), range.partition(),
                range.start_offset(), range.end_offset()}]
          .push_back(segment.id());
    }
    if (segment.sequence_name().empty()) {
      compacted_ids.insert(segment.id());
      check_stream(segment);
      for (const v1::PartitionRange& range : segment.provenance().ranges()) {
        auto seq = by_range.find({range.partition(), range.start_offset(), range.end_offset()});
        if (seq == by_range.end()) {
          fail(absl::StrCat("compacted segment ", segment.id(), " partition ", range.partition(),
                            " range [", range.start_offset(), ", ", range.end_offset(),
                            ") is no committed sequence's range"));
          continue;
        }
        rows_by_sequence[seq->second->sequence_name()][range.partition()] += range.rows();
        sequences_in_compacted.insert(seq->second->sequence_name());
      }
    } else if (!check_sequence_segment(segment)) {
      continue;
    }
    // 4. The file itself.
    auto verified = verifier->Verify(segment.path());
    if (!verified.ok()) {
      fail(absl::StrCat("segment ", segment.id(), " file ", segment.path(),
                        " fails verification: ", verified.status().message()));
      continue;
    }
    if (verified->num_rows != segment.num_rows()) {
      fail(absl::StrCat("segment ", segment.id(), " has ", verified->num_rows,
                        " rows in its file but ", segment.num_rows(), " in the metadata store"));
    }
    if (!segment.checksum().empty() && verified->checksum != segment.checksum()) {
      fail(absl::StrCat("segment ", segment.id(), " file checksum ", verified->checksum,
                        " differs from the recorded ", segment.checksum()));
    }
    // CRC-32C finds accidents; the SHA-256 the supervisor recorded at commit
    // finds a file rewritten with its values changed and its CRC kept.
    if (!segment.sha256().empty() && !verified->sha256.empty() &&
        verified->sha256 != segment.sha256()) {
      fail(absl::StrCat("segment ", segment.id(), " file ", segment.path(), " has SHA-256 ",
                        verified->sha256, " but ", segment.sha256(),
                        " was recorded when it was committed"));
    }
    if (!verified->segment_id.empty() && verified->segment_id != segment.id()) {
      fail(absl::StrCat("segment ", segment.id(), " file ", segment.path(), " holds segment ",
                        verified->segment_id));
    }
    if (verified->has_provenance &&
        ProvenanceText(verified->provenance) != ProvenanceText(segment.provenance())) {
      fail(absl::StrCat("segment ", segment.id(), " file provenance ",
                        ProvenanceText(verified->provenance), " differs from the recorded ",
                        ProvenanceText(segment.provenance())));
    }
    report.segment_rows += verified->num_rows;
  }
  for (const v1::CommittedSequence& seq : log.sequences()) {
    for (const std::string& id : seq.segment_ids()) {
      // A segment replaced by a compaction is no longer used; its records
      // are then accounted through the compacted segment's ranges.
      if (!seen_ids.count(id) && !sequences_in_compacted.count(seq.sequence_name())) {
        fail(absl::StrCat("sequence ", seq.sequence_name(), " committed segment ", id,
                          ", which is not a used segment"));
      }
    }
  }

  for (const auto& [key, ids] : carriers) {
    if (ids.size() < 2) continue;
    for (const std::string& id : ids) {
      if (!compacted_ids.count(id)) continue;
      std::vector<std::string> others;
      for (const std::string& other : ids) {
        if (other != id) others.push_back(other);
      }
      fail(absl::StrCat("compacted segment ", id, " partition ", std::get<2>(key), " range [",
                        std::get<3>(key), ", ", std::get<4>(key), ") is also in used segment",
                        others.size() > 1 ? "s " : " ", absl::StrJoin(others, ", "),
                        " of the same interval: the same records twice"));
    }
  }
  // 3. Record accounting against Kafka. A range starting before the earliest
  // offset Kafka still holds cannot be read again: said, not checked.
  std::map<std::pair<std::string, int32_t>, absl::StatusOr<int64_t>> earliest_offsets;
  auto earliest_of = [&](const TopicPartition& tp) -> const absl::StatusOr<int64_t>& {
    auto key = std::make_pair(tp.topic, tp.partition);
    auto it = earliest_offsets.find(key);
    if (it == earliest_offsets.end()) {
      it = earliest_offsets.emplace(key, counter->EarliestOffset(tp.topic, tp.partition)).first;
    }
    return it->second;
  };
  for (const v1::CommittedSequence& seq : log.sequences()) {
    std::map<int32_t, const v1::PartitionRange*> stats;
    for (const v1::PartitionRange& s : seq.partition_stats()) stats[s.partition()] = &s;
    for (const auto& [p, start] : seq.start_offsets()) {
      auto end_it = seq.end_offsets().find(p);
      if (end_it == seq.end_offsets().end()) continue;
      const int64_t end = end_it->second;
      // A topic-pattern datasource's stream partition p is a (topic,
      // partition) of the log's list.
      TopicPartition kafka{log.topic(), p};
      if (!log.topic_pattern().empty()) {
        auto name = names.find(p);
        if (name == names.end()) {
          fail(absl::StrCat("stream partition ", p, " of ", seq.sequence_name(),
                            " has no topic and partition in the commit log"));
          continue;
        }
        kafka = name->second;
      }
      if (const absl::StatusOr<int64_t>& earliest = earliest_of(kafka);
          earliest.ok() && start < *earliest && start < end) {
        const int64_t rows = rows_by_sequence[seq.sequence_name()][p];
        report.not_rereadable_offsets += end - start;
        report.not_rereadable_rows += rows;
        report.not_rereadable.push_back(absl::StrCat(
            "sequence ", seq.sequence_name(), " partition ", p, " [", start, ", ", end,
            "): not re-readable: deleted by retention (Kafka's earliest offset is ", *earliest,
            "); ", rows, " rows ingested from it"));
        continue;
      }
      absl::StatusOr<RangeCount> range =
          counter->CountRange(kafka.topic, kafka.partition, start, end);
      if (!range.ok()) {
        fail(absl::StrCat("cannot count Kafka records of partition ", p, " [", start, ", ", end,
                          "): ", range.status().message()));
        continue;
      }
      const int64_t* in_kafka = &range->records;
      const int64_t rows = rows_by_sequence[seq.sequence_name()][p];
      const v1::PartitionRange* s = stats.count(p) ? stats[p] : nullptr;
      const int64_t unparseable = s ? s->unparseable() : 0;
      const int64_t thrown_away = s ? s->thrown_away() : 0;
      report.records_in_kafka += *in_kafka;
      report.records_by_partition[p] += *in_kafka;
      report.records_by_sequence[seq.sequence_name()][p] = *in_kafka;
      report.rows_ingested += rows;
      report.unparseable += unparseable;
      report.thrown_away += thrown_away;
      if (rows + unparseable + thrown_away != *in_kafka) {
        fail(absl::StrCat("sequence ", seq.sequence_name(), " partition ", p, " [", start, ", ",
                          end, "): Kafka holds ", *in_kafka, " records but segments have ", rows,
                          " + unparseable ", unparseable, " + thrown away ", thrown_away));
      }
      if (range->unparseable >= 0 && range->unparseable != unparseable) {
        fail(absl::StrCat("sequence ", seq.sequence_name(), " partition ", p, " [", start, ", ",
                          end, "): the publish claims ", unparseable,
                          " unparseable records, re-parsing them with the spec finds ",
                          range->unparseable));
      }
      if (s != nullptr && s->rows() != rows) {
        fail(absl::StrCat("sequence ", seq.sequence_name(), " partition ", p, ": commit log says ",
                          s->rows(), " rows, its segments account for ", rows));
      }
    }
  }
  return report;
}

}  // namespace sluice::audit
