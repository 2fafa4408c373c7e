#include "tests/fault/invariants.h"

#include <algorithm>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace sluice::fault {

std::string FormatPartitionOffsets(const PartitionOffsets& offsets) {
  return absl::StrCat("{",
                      absl::StrJoin(offsets, ", ",
                                    [](std::string* out, const std::pair<const int32_t, int64_t>& e) {
                                      absl::StrAppend(out, e.first, ":", e.second);
                                    }),
                      "}");
}

void CheckResetsDeclared(const PartitionOffsets& reset, audit::AuditReport* report) {
  for (const auto& [p, offset] : reset) {
    const std::string prefix = absl::StrCat("partition ", p, ": reset ");
    // A named copy: C++17 lambdas cannot capture structured bindings (clang
    // refuses; gcc allows it).
    const std::string target = absl::StrCat(" to ", offset);
    const bool declared =
        std::any_of(report->declared_resets.begin(), report->declared_resets.end(),
                    [&](const std::string& d) {
                      return absl::StartsWith(d, prefix) && absl::StrContains(d, target);
                    });
    if (!declared) {
      report->discrepancies.push_back(absl::StrCat(
          "the reset of partition ", p, " to ", offset, " is not declared in the commit log"));
    }
  }
}

void CheckCommittedThrough(const v1::GetCommitLogResponse& log, const PartitionOffsets& end,
                           audit::AuditReport* report) {
  for (const auto& [p, want] : end) {
    auto c = log.committed_offsets().find(p);
    if (c == log.committed_offsets().end()) {
      report->discrepancies.push_back(absl::StrCat("partition ", p, ": produced through ", want,
                                                   " but nothing is committed"));
    } else if (c->second != want) {
      report->discrepancies.push_back(absl::StrCat("partition ", p, ": produced through ", want,
                                                   " but committed through ", c->second));
    }
  }
}

void CheckExpectedTotals(const Produced& produced, bool thrown_away_expected,
                         audit::AuditReport* report) {
  auto expect = [report](const char* what, int64_t got, int64_t want) {
    if (got != want) {
      report->discrepancies.push_back(
          absl::StrCat(what, " is ", got, " but the scenario produced ", want));
    }
  };
  expect("records accounted for (rows + unparseable + thrown away)",
         report->rows_ingested + report->unparseable + report->thrown_away, produced.records);
  expect("records in Kafka's committed ranges", report->records_in_kafka, produced.records);
  expect("unparseable records", report->unparseable, produced.malformed);
  expect("rows ingested + thrown away", report->rows_ingested + report->thrown_away,
         produced.records - produced.malformed);
  if (!thrown_away_expected) {
    expect("thrown-away rows", report->thrown_away, 0);
  } else if (report->thrown_away == 0) {
    report->discrepancies.push_back(
        "no row was thrown away, but the scenario produced rows before the rejection window");
  }
}

}  // namespace sluice::fault
