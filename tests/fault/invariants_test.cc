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
    return AuditAcrossReset(log_, segments_, reset, &counter_, &verifier_);
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

TEST_F(InvariantsTest, BackwardResetRereadsOnceAndPasses) {
  // Group a reads partitions 0 and 2, group b partition 1.
  Commit("a_0", {{0, {0, 10}}, {2, {0, 5}}});
  Commit("b_0", {{1, {0, 10}}});
  Commit("a_1", {{0, {10, 20}}, {2, {5, 8}}});
  // ResetOffsets {0: 5}: group a restarts at {0:5, 2:8}.
  Commit("b_1", {{1, {10, 30}}});
  Commit("a2_0", {{0, {5, 25}}, {2, {8, 12}}});
  Commit("a2_1", {{0, {25, 26}}, {2, {12, 12}}});
  audit::AuditReport report = Audit({{0, 5}});
  EXPECT_TRUE(report.ok()) << Discrepancies(report);
  // [5, 20) of partition 0 was read twice, on purpose.
  EXPECT_EQ(report.records_in_kafka, (20 + 21) + 30 + 12);
  EXPECT_EQ(report.sequences, 6);

  // A plain audit sees the overlap.
  audit::AuditReport plain = Audit({});
  EXPECT_FALSE(plain.ok());
}

TEST_F(InvariantsTest, ForwardResetSkipsAndPasses) {
  Commit("a_0", {{0, {0, 10}}, {2, {0, 5}}});
  Commit("a2_0", {{0, {40, 50}}, {2, {5, 6}}});
  audit::AuditReport report = Audit({{0, 40}});
  EXPECT_TRUE(report.ok()) << Discrepancies(report);
  EXPECT_EQ(report.records_in_kafka, 10 + 5 + 10 + 1);
}

TEST_F(InvariantsTest, SecondChainNotAtTheResetOffsetIsReported) {
  Commit("a_0", {{0, {0, 10}}, {2, {0, 5}}});
  Commit("a2_0", {{0, {6, 12}}, {2, {5, 6}}});  // reset was to 5
  audit::AuditReport report = Audit({{0, 5}});
  EXPECT_FALSE(report.ok());
  EXPECT_TRUE(absl::StrContains(Discrepancies(report), "before the reset: partition 0"))
      << Discrepancies(report);
}

TEST_F(InvariantsTest, GapAtTheJointOfAnotherPartitionIsReported) {
  Commit("a_0", {{0, {0, 10}}, {2, {0, 5}}});
  Commit("a2_0", {{0, {5, 12}}, {2, {7, 9}}});  // partition 2 skipped [5, 7)
  audit::AuditReport report = Audit({{0, 5}});
  EXPECT_FALSE(report.ok());
  EXPECT_TRUE(absl::StrContains(
      Discrepancies(report),
      "partition 2: after the reset the first sequence starts at 7 instead of where it was, 5"))
      << Discrepancies(report);
}

TEST_F(InvariantsTest, ProblemsInsideAPartAreLabelled) {
  Commit("a_0", {{0, {0, 10}}, {2, {0, 5}}});
  Commit("a2_0", {{0, {5, 12}}, {2, {5, 9}}});
  Commit("a2_1", {{0, {13, 15}}, {2, {9, 9}}});  // gap [12, 13) after the reset
  audit::AuditReport report = Audit({{0, 5}});
  EXPECT_TRUE(absl::StrContains(Discrepancies(report), "after the reset: partition 0: gap [12, 13)"))
      << Discrepancies(report);
}

TEST_F(InvariantsTest, ResetWithNothingCommittedAfterwards) {
  Commit("a_0", {{0, {0, 10}}, {2, {0, 5}}});
  (*log_.mutable_committed_offsets())[0] = 3;  // the reset's stored offset
  audit::AuditReport report = Audit({{0, 3}});
  EXPECT_TRUE(report.ok()) << Discrepancies(report);
  (*log_.mutable_committed_offsets())[0] = 4;
  report = Audit({{0, 3}});
  EXPECT_TRUE(absl::StrContains(Discrepancies(report), "nothing was committed after the reset"))
      << Discrepancies(report);
}

TEST(FormatPartitionOffsets, Braces) {
  EXPECT_EQ(FormatPartitionOffsets({{0, 12}, {3, 7}}), "{0:12, 3:7}");
  EXPECT_EQ(FormatPartitionOffsets({}), "{}");
}

}  // namespace
}  // namespace sluice::fault
