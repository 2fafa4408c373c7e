// What must hold at the end of a fault scenario, as checks over what the
// supervisor reports (commit log, used segments) and what the scenario knows
// it produced. Pure functions: reading Kafka and segment files goes through
// the exactly-once audit's RecordCounter and SegmentVerifier.
//
//   audit::AuditReport report = audit::RunAudit(log, segments, &counter, &verifier);
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

// Each operator reset of the scenario (`ResetOffsets(reset)`) is declared by
// the audit, i.e. is in the commit log with its new offset (the audit itself
// accepts the gap or overlap a declared reset explains). Adds one discrepancy
// per reset that is not.
void CheckResetsDeclared(const PartitionOffsets& reset, audit::AuditReport* report);

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
