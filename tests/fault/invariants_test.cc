#include "tests/fault/invariants.h"

#include <gtest/gtest.h>

#include <map>
#include <tuple>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace sluice::fault {
namespace {

// Every offset holds one record.
class OneRecordPerOffset : public audit::RecordCounter {
 public:
  absl::StatusOr<int64_t> CountRecords(const std::string&, int32_t, int64_t start,
                                       int64_t end) override {
    return end - start;
  }
};

// Every file verifies with the rows and checksum the store recorded.
class TrustingVerifier : public audit::SegmentVerifier {
 public:
  absl::StatusOr<audit::VerifiedSegment> Verify(const std::string& path) override {
    auto it = files.find(path);
    if (it == files.end()) return absl::NotFoundError("no such file");
    return it->second;
  }
  std::map<std::string, audit::VerifiedSegment> files;
};

using Ranges = std::map<int32_t, std::pair<int64_t, int64_t>>;

class InvariantsTest : public testing::Test {
 protected:
  void SetUp() override {
    log_.set_datasource("wiki");
    log_.set_topic("edits");
    for (int32_t p : {0, 1, 2}) (*log_.mutable_initial_offsets())[p] = 0;
  }

  // A committed sequence whose records all became rows of one segment.
  void Commit(const std::string& name, const Ranges& ranges) {
    v1::CommittedSequence* seq = log_.add_sequences();
    seq->set_sequence_name(name);
    const std::string id = "seg_" + name;
    seq->add_segment_ids(id);
    v1::SegmentDescriptor segment;
    segment.set_id(id);
    segment.set_sequence_name(name);
    segment.set_path("file:///deep/" + id);
    segment.set_checksum("crc32c:" + id);
    segment.mutable_provenance()->set_topic("edits");
    int64_t rows = 0;
    for (const auto& [p, r] : ranges) {
      (*seq->mutable_start_offsets())[p] = r.first;
      (*seq->mutable_end_offsets())[p] = r.second;
      v1::PartitionRange* stats = seq->add_partition_stats();
      stats->set_partition(p);
      stats->set_start_offset(r.first);
      stats->set_end_offset(r.second);
      stats->set_rows(r.second - r.first);
      *segment.mutable_provenance()->add_ranges() = *stats;
      rows += r.second - r.first;
      (*log_.mutable_committed_offsets())[p] = r.second;
    }
    segment.set_num_rows(rows);
    verifier_.files[segment.path()] = {rows, segment.checksum()};
    segments_.push_back(segment);
  }

  audit::AuditReport Audit(const PartitionOffsets& reset) {
    audit::AuditReport report = audit::RunAudit(log_, segments_, &counter_, &verifier_);
    CheckResetsDeclared(reset, &report);
    return report;
  }

  static std::string Discrepancies(const audit::AuditReport& report) { return report.ToString(); }

  v1::GetCommitLogResponse log_;
  std::vector<v1::SegmentDescriptor> segments_;
  OneRecordPerOffset counter_;
  TrustingVerifier verifier_;
};

TEST_F(InvariantsTest, WithoutResetItIsTheAudit) {
  Commit("a_0", {{0, {0, 10}}, {2, {0, 5}}});
  Commit("b_0", {{1, {0, 7}}});
  Commit("a_1", {{0, {10, 12}}, {2, {5, 9}}});
  audit::AuditReport report = Audit({});
  EXPECT_TRUE(report.ok()) << Discrepancies(report);
  EXPECT_EQ(report.records_in_kafka, 10 + 5 + 7 + 2 + 4);

  CheckCommittedThrough(log_, {{0, 12}, {1, 7}, {2, 9}}, &report);
  CheckExpectedTotals({.end_offsets = {}, .records = 28, .malformed = 0}, false, &report);
  EXPECT_TRUE(report.ok()) << Discrepancies(report);
}

TEST_F(InvariantsTest, LeftBehindAndTotalsAreReported) {
  Commit("a_0", {{0, {0, 10}}});
  audit::AuditReport report = Audit({});
  ASSERT_TRUE(report.ok()) << Discrepancies(report);
  CheckCommittedThrough(log_, {{0, 11}, {1, 3}}, &report);
  CheckExpectedTotals({.end_offsets = {}, .records = 14, .malformed = 1}, false, &report);
  const std::string text = Discrepancies(report);
  EXPECT_TRUE(absl::StrContains(text, "partition 0: produced through 11 but committed through 10"))
      << text;
  EXPECT_TRUE(absl::StrContains(text, "partition 1: produced through 3 but nothing is committed"))
      << text;
  EXPECT_TRUE(absl::StrContains(text, "unparseable records is 0 but the scenario produced 1"))
      << text;
  EXPECT_TRUE(absl::StrContains(text, "FAIL")) << text;
}

TEST_F(InvariantsTest, ThrownAwayRowsCountWhenExpected) {
  Commit("a_0", {{0, {0, 10}}});
  log_.mutable_sequences(0)->mutable_partition_stats(0)->set_rows(7);
  log_.mutable_sequences(0)->mutable_partition_stats(0)->set_thrown_away(3);
  segments_[0].mutable_provenance()->mutable_ranges(0)->set_rows(7);
  segments_[0].set_num_rows(7);
  verifier_.files[segments_[0].path()].num_rows = 7;
  audit::AuditReport report = Audit({});
  ASSERT_TRUE(report.ok()) << Discrepancies(report);
  audit::AuditReport strict = report;
  CheckExpectedTotals({.end_offsets = {}, .records = 10, .malformed = 0}, false, &strict);
  EXPECT_TRUE(absl::StrContains(Discrepancies(strict), "thrown-away rows is 3"))
      << Discrepancies(strict);
  CheckExpectedTotals({.end_offsets = {}, .records = 10, .malformed = 0}, true, &report);
  EXPECT_TRUE(report.ok()) << Discrepancies(report);
}

// How resets are audited: tools/audit/exactly_once_audit_test.cc
// (AuditWithResetsTest). Here: a scenario's reset must be in the commit log.
TEST_F(InvariantsTest, AScenariosResetMustBeDeclaredInTheCommitLog) {
  Commit("a_0", {{0, {0, 10}}, {2, {0, 5}}});
  (*log_.mutable_committed_offsets())[0] = 3;
  audit::AuditReport report = Audit({{0, 3}});
  EXPECT_TRUE(absl::StrContains(Discrepancies(report),
                                "the reset of partition 0 to 3 is not declared in the commit log"))
      << Discrepancies(report);
  v1::OffsetReset* reset = log_.add_resets();
  reset->set_reset_id(1);
  reset->set_partition(0);
  reset->set_old_offset(10);
  reset->set_new_offset(3);
  reset->set_reason("operator reset of offsets");
  reset->set_reset_at_ms(1);
  log_.mutable_sequences(0)->set_committed_at_ms(0);
  report = Audit({{0, 3}});
  EXPECT_TRUE(report.ok()) << Discrepancies(report);
}

TEST(FormatPartitionOffsets, Braces) {
  EXPECT_EQ(FormatPartitionOffsets({{0, 12}, {3, 7}}), "{0:12, 3:7}");
  EXPECT_EQ(FormatPartitionOffsets({}), "{}");
}

}  // namespace
}  // namespace sluice::fault
