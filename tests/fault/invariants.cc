#include "tests/fault/invariants.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace sluice::fault {
namespace {

// The part of a commit log made of `sequences` (a subset of log.sequences(),
// in commit order), with initial offsets where its chains start and
// committed offsets where they end.
v1::GetCommitLogResponse Part(const v1::GetCommitLogResponse& log,
                              const std::vector<const v1::CommittedSequence*>& sequences,
                              const PartitionOffsets& initial, const PartitionOffsets& committed) {
  v1::GetCommitLogResponse part;
  part.set_datasource(log.datasource());
  part.set_topic(log.topic());
  for (const auto& [p, o] : initial) (*part.mutable_initial_offsets())[p] = o;
  for (const auto& [p, o] : committed) (*part.mutable_committed_offsets())[p] = o;
  for (const v1::CommittedSequence* s : sequences) *part.add_sequences() = *s;
  return part;
}

void Merge(const audit::AuditReport& part, const std::string& label, audit::AuditReport* into) {
  into->sequences += part.sequences;
  into->segments += part.segments;
  into->records_in_kafka += part.records_in_kafka;
  into->rows_ingested += part.rows_ingested;
  into->unparseable += part.unparseable;
  into->thrown_away += part.thrown_away;
  into->segment_rows += part.segment_rows;
  for (const auto& [p, n] : part.records_by_partition) into->records_by_partition[p] += n;
  for (const std::string& d : part.discrepancies) {
    into->discrepancies.push_back(absl::StrCat(label, ": ", d));
  }
}

}  // namespace

std::string FormatPartitionOffsets(const PartitionOffsets& offsets) {
  return absl::StrCat("{",
                      absl::StrJoin(offsets, ", ",
                                    [](std::string* out, const std::pair<const int32_t, int64_t>& e) {
                                      absl::StrAppend(out, e.first, ":", e.second);
                                    }),
                      "}");
}

audit::AuditReport AuditAcrossReset(const v1::GetCommitLogResponse& log,
                                    const std::vector<v1::SegmentDescriptor>& used_segments,
                                    const PartitionOffsets& reset, audit::RecordCounter* counter,
                                    audit::SegmentVerifier* verifier) {
  if (reset.empty()) return audit::RunAudit(log, used_segments, counter, verifier);

  // 1. Walk the commit log in commit order. On a reset partition the first
  //    chain goes on while sequences start where the previous one ended; a
  //    sequence that starts at the reset offset instead begins the second.
  PartitionOffsets chain_end(log.initial_offsets().begin(), log.initial_offsets().end());
  std::set<int32_t> moved;  // reset partitions whose second chain began
  std::vector<const v1::CommittedSequence*> before, after;
  for (const v1::CommittedSequence& seq : log.sequences()) {
    bool is_after = false;
    for (const auto& [p, r] : reset) {
      auto start = seq.start_offsets().find(p);
      if (start == seq.start_offsets().end()) continue;
      if (moved.count(p)) {
        is_after = true;
      } else if (start->second != chain_end[p] && start->second == r) {
        is_after = true;
      }
    }
    if (is_after) {
      for (const auto& [p, r] : reset) {
        if (seq.start_offsets().count(p)) moved.insert(p);
      }
      after.push_back(&seq);
      continue;
    }
    for (const auto& [p, start] : seq.start_offsets()) {
      auto end = seq.end_offsets().find(p);
      if (end != seq.end_offsets().end() && start == chain_end[p]) chain_end[p] = end->second;
    }
    before.push_back(&seq);
  }

  // 2. Where each part starts and ends.
  PartitionOffsets after_start, after_end;
  for (const v1::CommittedSequence* seq : after) {
    for (const auto& [p, start] : seq->start_offsets()) {
      auto [it, inserted] = after_start.emplace(p, start);
      if (!inserted) it->second = std::min(it->second, start);
      auto end = seq->end_offsets().find(p);
      if (end != seq->end_offsets().end()) {
        auto [e, fresh] = after_end.emplace(p, end->second);
        if (!fresh) e->second = std::max(e->second, end->second);
      }
    }
  }
  const PartitionOffsets initial(log.initial_offsets().begin(), log.initial_offsets().end());
  const PartitionOffsets committed(log.committed_offsets().begin(),
                                   log.committed_offsets().end());
  PartitionOffsets before_committed = committed;
  PartitionOffsets after_initial, after_committed;
  for (const auto& [p, start] : after_start) {
    // The first part ends where its chain got to; the second takes over.
    before_committed[p] = chain_end.count(p) ? chain_end[p] : initial.count(p) ? initial.at(p) : 0;
    after_initial[p] = start;
    if (committed.count(p)) after_committed[p] = committed.at(p);
  }
  for (const auto& [p, r] : reset) {
    if (!after_start.count(p)) before_committed[p] = chain_end.count(p) ? chain_end[p] : r;
  }

  // 3. Audit the parts.
  std::set<std::string> after_names;
  for (const v1::CommittedSequence* seq : after) after_names.insert(seq->sequence_name());
  std::vector<v1::SegmentDescriptor> before_segments, after_segments;
  for (const v1::SegmentDescriptor& s : used_segments) {
    (after_names.count(s.sequence_name()) ? after_segments : before_segments).push_back(s);
  }
  audit::AuditReport report;
  report.datasource = log.datasource();
  std::set<int32_t> partitions;
  for (const auto& [p, o] : initial) partitions.insert(p);
  for (const auto& [p, o] : committed) partitions.insert(p);
  report.partitions = static_cast<int64_t>(partitions.size());
  Merge(audit::RunAudit(Part(log, before, initial, before_committed), before_segments, counter,
                        verifier),
        "before the reset", &report);
  if (!after.empty()) {
    Merge(audit::RunAudit(Part(log, after, after_initial, after_committed), after_segments,
                          counter, verifier),
          "after the reset", &report);
  }

  // 4. The joint: reset partitions restart at the reset offset, the others
  //    continue where they were.
  for (const auto& [p, start] : after_start) {
    auto r = reset.find(p);
    const int64_t want = r != reset.end() ? r->second : before_committed[p];
    if (start != want) {
      report.discrepancies.push_back(absl::StrCat(
          "partition ", p, ": after the reset the first sequence starts at ", start,
          r != reset.end() ? " instead of the reset offset " : " instead of where it was, ",
          want));
    }
  }
  for (const auto& [p, r] : reset) {
    if (after_start.count(p)) continue;
    auto c = committed.find(p);
    if (c == committed.end() || (c->second != r && c->second != chain_end[p])) {
      report.discrepancies.push_back(absl::StrCat(
          "partition ", p, ": nothing was committed after the reset to ", r,
          " but the committed offset is ",
          c == committed.end() ? std::string("missing") : absl::StrCat(c->second)));
    }
  }
  return report;
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
