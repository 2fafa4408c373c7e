// What must hold at the end of a fault scenario, as checks over what the
// supervisor reports (commit log, used segments) and what the scenario knows
// it produced. Pure functions: reading Kafka and segment files goes through
// the exactly-once audit's RecordCounter and SegmentVerifier.
//
//   audit::AuditReport report = AuditAcrossReset(log, segments, {}, &counter, &verifier);
//   CheckExpectedTotals(expected, false, &report);   // adds discrepancies
//   if (!report.ok()) FAIL() << report.ToString();
#ifndef SLUICE_TESTS_FAULT_INVARIANTS_H_
#define SLUICE_TESTS_FAULT_INVARIANTS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sluice/v1/supervisor_service.pb.h"
#include "tools/audit/exactly_once_audit.h"

namespace sluice::fault {

using PartitionOffsets = std::map<int32_t, int64_t>;

// What a scenario produced into the topic (from the producer's delivery
// reports): the end offset of every partition once everything was
// delivered, and how many records were produced and how many of them were
// malformed (to be counted as unparseable).
struct Produced {
  PartitionOffsets end_offsets;
  int64_t records = 0;
  int64_t malformed = 0;
};

// The exactly-once audit of a datasource whose stored offsets were reset
// once by an operator (`ResetOffsets(reset)`) while it ran. With `reset`
// empty this is exactly audit::RunAudit.
//
// A reset breaks the tiling on purpose: on a reset partition the committed
// sequences tile [initial, old committed) and then [reset offset, committed),
// where "old committed" is wherever the first chain ended. The log is split
// at that point, in commit order, into the sequences before the reset and
// those after it (a sequence belongs to "after" once any reset partition it
// covers has moved on); each part is audited on its own (tiling, segment
// provenance, record accounting, files), and the joint is checked: on a reset
// partition the second part starts exactly at the reset offset, on the
// others where the first part ended. Discrepancies say which part they come
// from ("before reset: ..." / "after reset: ...").
audit::AuditReport AuditAcrossReset(const v1::GetCommitLogResponse& log,
                                    const std::vector<v1::SegmentDescriptor>& used_segments,
                                    const PartitionOffsets& reset, audit::RecordCounter* counter,
                                    audit::SegmentVerifier* verifier);

// Every partition that was produced to is committed exactly through its end
// offset (nothing left behind, nothing past the end). Adds one discrepancy
// per partition that is not.
void CheckCommittedThrough(const v1::GetCommitLogResponse& log, const PartitionOffsets& end,
                           audit::AuditReport* report);

// With no reset and everything committed: the audit's totals equal what was
// produced (records accounted == produced records, unparseable == malformed,
// rows ingested + thrown away == the well-formed ones; nothing thrown away
// unless `thrown_away_expected`, and then some). Adds a discrepancy for each
// total that differs.
void CheckExpectedTotals(const Produced& produced, bool thrown_away_expected,
                         audit::AuditReport* report);

// The offsets as "{0:12, 1:7}" (for messages).
std::string FormatPartitionOffsets(const PartitionOffsets& offsets);

}  // namespace sluice::fault

#endif  // SLUICE_TESTS_FAULT_INVARIANTS_H_
