// The exactly-once audit of a datasource: do the published segments account
// for every Kafka record exactly once?
//
// For every partition, the committed sequences must tile
// [initial offset, committed offset) with no gap and no overlap, except where
// the commit log records an offset reset (operator or automatic): the range
// it skipped or made read again is reported as declared, not as a failure; every used
// segment must belong to a committed sequence and carry its offset ranges,
// except a compacted segment (no sequence name), each of whose ranges must
// be a committed sequence's range of that partition, carried by no other
// used segment of the same interval (the segments it replaced are unused;
// their commit records may list them); per sequence and partition, the
// records that became rows (summed over the used segments carrying the
// sequence's range, compacted ones included) plus the unparseable and thrown-away records must
// equal the records Kafka holds in that range, and where the counter re-parses
// the records, the unparseable count must be what re-parsing finds (a
// publish's claims are checked, not trusted); every segment file must pass
// verification with the checksum and row count the metadata store recorded.
// A committed range that starts before the earliest offset Kafka still holds
// (retention, or DeleteRecords, removed records the datasource ingested)
// cannot be counted again: it is reported as not re-readable with its
// counts, not as a discrepancy; everything Kafka still holds is checked.
//
// The checks are plain functions over the commit log and the segment list;
// reading Kafka and segment files goes through the two interfaces below, so
// the audit is testable without either.
#ifndef SLUICE_TOOLS_AUDIT_EXACTLY_ONCE_AUDIT_H_
#define SLUICE_TOOLS_AUDIT_EXACTLY_ONCE_AUDIT_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sluice/v1/supervisor_service.pb.h"

namespace sluice::audit {

// Counts the records Kafka holds in [start, end) of a partition (reading them
// back; offsets of compacted-away records or transaction markers are not
// records).
// What a range holds: its records and, when the counter re-parses them with
// the datasource's spec (the task's parser and rules), how many do not parse.
struct RangeCount {
  int64_t records = 0;
  // -1: not re-parsed (the claim is then only checked for its sum).
  int64_t unparseable = -1;
};

class RecordCounter {
 public:
  virtual ~RecordCounter() = default;
  virtual absl::StatusOr<int64_t> CountRecords(const std::string& topic, int32_t partition,
                                               int64_t start, int64_t end) = 0;
  // Default: CountRecords, not re-parsed.
  virtual absl::StatusOr<RangeCount> CountRange(const std::string& topic, int32_t partition,
                                                int64_t start, int64_t end) {
    absl::StatusOr<int64_t> records = CountRecords(topic, partition, start, end);
    if (!records.ok()) return records.status();
    return RangeCount{*records, -1};
  }
  // The earliest offset Kafka still holds of a partition. Default:
  // UNIMPLEMENTED (every range is then counted).
  virtual absl::StatusOr<int64_t> EarliestOffset(const std::string& topic, int32_t partition) {
    return absl::UnimplementedError("the record counter does not know earliest offsets");
  }
};

// Verifies a segment file in deep storage: structure and checksum.
struct VerifiedSegment {
  int64_t num_rows = 0;
  std::string checksum;
  // "sha256:<64 hex>" of the file's bytes; empty: not computed.
  std::string sha256;
  // What the file says about itself, compared with the metadata store when
  // given: its segment id (empty: not checked) and its Kafka provenance
  // (topic, ranges and the rows of each partition).
  std::string segment_id;
  bool has_provenance = false;
  v1::Provenance provenance;
};
class SegmentVerifier {
 public:
  virtual ~SegmentVerifier() = default;
  virtual absl::StatusOr<VerifiedSegment> Verify(const std::string& path) = 0;
};

struct AuditReport {
  std::string datasource;
  int64_t partitions = 0;
  int64_t sequences = 0;
  int64_t segments = 0;
  int64_t records_in_kafka = 0;  // in the committed ranges
  int64_t rows_ingested = 0;     // records that became rows
  int64_t unparseable = 0;
  int64_t thrown_away = 0;
  int64_t segment_rows = 0;  // rows in segment files (after rollup)
  // Records in the committed ranges, per partition.
  std::map<int32_t, int64_t> records_by_partition;
  // Records Kafka holds in each range it counted: sequence name ->
  // partition -> records (what the table audit compares a snapshot with;
  // ranges not re-readable or not counted are absent).
  std::map<std::string, std::map<int32_t, int64_t>> records_by_sequence;
  // The offset resets in the commit log, each with the range it skipped or
  // made read again: declared, so not discrepancies.
  std::vector<std::string> declared_resets;
  // Committed ranges starting before the earliest offset Kafka still holds:
  // deleted by retention, not re-readable, so not checked (one line each).
  std::vector<std::string> not_rereadable;
  int64_t not_rereadable_offsets = 0;  // offsets of those ranges
  int64_t not_rereadable_rows = 0;     // rows ingested from them
  // Empty when the audit passed.
  std::vector<std::string> discrepancies;

  bool ok() const { return discrepancies.empty(); }
  // A multi-line human-readable report ending with PASS or FAIL.
  std::string ToString() const;
};

// Runs every check. Errors reading Kafka or files are discrepancies, not
// statuses: the report says everything that is wrong at once.
AuditReport RunAudit(const v1::GetCommitLogResponse& commit_log,
                     const std::vector<v1::SegmentDescriptor>& used_segments,
                     RecordCounter* counter, SegmentVerifier* verifier);

}  // namespace sluice::audit

#endif  // SLUICE_TOOLS_AUDIT_EXACTLY_ONCE_AUDIT_H_
