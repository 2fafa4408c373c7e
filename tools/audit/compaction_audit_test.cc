// The exactly-once audit over real segment files where a compaction (the
// library) replaced two sequences' segments of an interval: the compacted
// segment alone passes; with a replaced segment still used, the audit fails
// naming the compacted one.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/segment/compaction.h"
#include "common/segment/incremental_index.h"
#include "common/segment/segment_builder.h"
#include "common/segment/test_rows.h"
#include "tools/audit/exactly_once_audit.h"
#include "tools/audit/segment_file_verifier.h"

namespace sluice::audit {
namespace {

using segment::testing::OwnedRow;

constexpr int kPartitions = 2;
constexpr int64_t kSplit = 300;  // sequence 0: [100, 300), sequence 1: [300, end)

// Kafka: the generated records, one per offset.
class RowsCounter : public RecordCounter {
 public:
  explicit RowsCounter(const std::vector<OwnedRow>* rows) : rows_(rows) {}
  absl::StatusOr<int64_t> CountRecords(const std::string&, int32_t p, int64_t start,
                                       int64_t end) override {
    int64_t n = 0;
    for (const OwnedRow& r : *rows_) n += r.partition == p && r.offset >= start && r.offset < end;
    return n;
  }

 private:
  const std::vector<OwnedRow>* rows_;
};

v1::SegmentDescriptor Descriptor(const segment::SegmentInfo& info, const std::string& id,
                                 const std::string& sequence) {
  v1::SegmentDescriptor d;
  d.set_id(id);
  d.set_datasource("wiki");
  d.mutable_interval()->set_start_ms(segment::testing::TestInterval().start_ms);
  d.mutable_interval()->set_end_ms(segment::testing::TestInterval().end_ms);
  d.set_version("v");
  d.set_num_rows(static_cast<int64_t>(info.num_rows));
  d.set_size_bytes(static_cast<int64_t>(info.size_bytes));
  d.set_checksum(info.checksum);
  d.set_path("file://" + info.path);
  d.set_sequence_name(sequence);
  d.mutable_provenance()->set_topic(info.provenance.topic);
  for (const segment::PartitionRange& r : info.provenance.ranges) {
    v1::PartitionRange* range = d.mutable_provenance()->add_ranges();
    range->set_partition(r.partition);
    range->set_start_offset(r.start_offset);
    range->set_end_offset(r.end_offset);
    range->set_rows(r.rows);
  }
  return d;
}

class CompactionAuditTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const segment::Schema schema = segment::testing::TestSchema(true, false);
    rows_ = segment::testing::RandomRows(11, 1000, schema, kPartitions);
    std::map<int32_t, int64_t> end;
    for (const OwnedRow& r : rows_) end[r.partition] = std::max(end[r.partition], r.offset + 1);
    std::vector<OwnedRow> early, late;
    for (const OwnedRow& r : rows_) (r.offset < kSplit ? early : late).push_back(r);
    const std::string dir = std::getenv("TEST_TMPDIR");
    auto build = [&](const std::vector<OwnedRow>& rows, const std::string& id, bool first) {
      segment::testing::TestSegment options;
      options.path = absl::StrCat(dir, "/", id, ".seg");
      options.segment_id = id;
      options.version = "v";
      for (int p = 0; p < kPartitions; ++p) {
        options.ranges.push_back({p, first ? 100 : kSplit, first ? kSplit : end[p], 0});
      }
      auto info = segment::testing::BuildTestSegment(rows, schema, options);
      EXPECT_TRUE(info.ok()) << info.status();
      return *info;
    };
    a_ = Descriptor(build(early, "a", true), "a", "wiki_s_0");
    b_ = Descriptor(build(late, "b", false), "b", "wiki_s_1");
    segment::CompactionOptions options;
    options.input_paths = {dir + "/b.seg", dir + "/a.seg"};
    options.path = dir + "/c.seg";
    options.version = "v2";
    options.segment_id = "c";
    auto compacted = segment::CompactSegments(options);
    ASSERT_TRUE(compacted.ok()) << compacted.status();
    c_ = Descriptor(*compacted, "c", "");

    log_.set_datasource("wiki");
    log_.set_topic("edits");
    for (int p = 0; p < kPartitions; ++p) {
      (*log_.mutable_initial_offsets())[p] = 100;
      (*log_.mutable_committed_offsets())[p] = end[p];
    }
    for (int s = 0; s < 2; ++s) {
      v1::CommittedSequence* seq = log_.add_sequences();
      seq->set_sequence_name(absl::StrCat("wiki_s_", s));
      seq->add_segment_ids(s == 0 ? "a" : "b");
      for (int p = 0; p < kPartitions; ++p) {
        (*seq->mutable_start_offsets())[p] = s == 0 ? 100 : kSplit;
        (*seq->mutable_end_offsets())[p] = s == 0 ? kSplit : end[p];
      }
    }
  }

  AuditReport Run(const std::vector<v1::SegmentDescriptor>& used) {
    RowsCounter counter(&rows_);
    SegmentFileVerifier verifier;
    return RunAudit(log_, used, &counter, &verifier);
  }

  std::vector<OwnedRow> rows_;
  v1::SegmentDescriptor a_, b_, c_;
  v1::GetCommitLogResponse log_;
};

TEST_F(CompactionAuditTest, TheSequencesSegmentsPass) {
  AuditReport report = Run({a_, b_});
  EXPECT_TRUE(report.ok()) << report.ToString();
}

TEST_F(CompactionAuditTest, TheCompactedSegmentInPlaceOfTheReplacedOnesPasses) {
  AuditReport report = Run({c_});
  EXPECT_TRUE(report.ok()) << report.ToString();
  EXPECT_EQ(report.rows_ingested, static_cast<int64_t>(rows_.size()));
  EXPECT_EQ(report.records_in_kafka, static_cast<int64_t>(rows_.size()));
  EXPECT_EQ(report.segment_rows, c_.num_rows());
}

TEST_F(CompactionAuditTest, TheCompactedSegmentWithAReplacedOneStillUsedFailsNamingIt) {
  AuditReport report = Run({c_, b_});
  ASSERT_FALSE(report.ok()) << report.ToString();
  bool named = false;
  for (const std::string& d : report.discrepancies) {
    named |= d.find("compacted segment c ") != std::string::npos &&
             d.find("also in used segment b") != std::string::npos;
  }
  EXPECT_TRUE(named) << report.ToString();
}

// Sequences that read nothing of a partition carry the same empty range of
// it ([100, 100) here, twice); the compacted segment holds both, and an
// empty range holds no record twice.
TEST(CompactionAuditEmptyRanges, RepeatedEmptyRangesOfACompactedSegmentPass) {
  const segment::Schema schema = segment::testing::TestSchema(true, false);
  const std::vector<OwnedRow> rows = segment::testing::RandomRows(13, 1000, schema, kPartitions);
  std::map<int32_t, int64_t> end;
  for (const OwnedRow& r : rows) end[r.partition] = std::max(end[r.partition], r.offset + 1);
  // Partition 0: s0 [100, 200), s1 [200, 300), s2 [300, end). Partition 1:
  // s0 and s1 read nothing ([100, 100)), s2 [100, end).
  const std::vector<std::map<int32_t, std::pair<int64_t, int64_t>>> ranges = {
      {{0, {100, 200}}, {1, {100, 100}}},
      {{0, {200, 300}}, {1, {100, 100}}},
      {{0, {300, end[0]}}, {1, {100, end[1]}}}};
  const std::string dir = std::getenv("TEST_TMPDIR");
  std::vector<std::string> paths;
  v1::GetCommitLogResponse log;
  log.set_datasource("wiki");
  log.set_topic("edits");
  for (int p = 0; p < kPartitions; ++p) {
    (*log.mutable_initial_offsets())[p] = 100;
    (*log.mutable_committed_offsets())[p] = end[p];
  }
  for (size_t s = 0; s < ranges.size(); ++s) {
    std::vector<OwnedRow> mine;
    for (const OwnedRow& r : rows) {
      const auto& [start, stop] = ranges[s].at(r.partition);
      if (r.offset >= start && r.offset < stop) mine.push_back(r);
    }
    const std::string id = absl::StrCat("e", s);
    segment::testing::TestSegment options;
    options.path = absl::StrCat(dir, "/", id, ".seg");
    options.segment_id = id;
    options.version = "v";
    v1::CommittedSequence* seq = log.add_sequences();
    seq->set_sequence_name(absl::StrCat("wiki_e_", s));
    seq->add_segment_ids(id);
    for (const auto& [p, range] : ranges[s]) {
      options.ranges.push_back({p, range.first, range.second, 0});
      (*seq->mutable_start_offsets())[p] = range.first;
      (*seq->mutable_end_offsets())[p] = range.second;
    }
    auto info = segment::testing::BuildTestSegment(mine, schema, options);
    ASSERT_TRUE(info.ok()) << info.status();
    paths.push_back(options.path);
  }
  segment::CompactionOptions options;
  options.input_paths = paths;
  options.path = dir + "/empties.seg";
  options.version = "v2";
  options.segment_id = "empties";
  auto compacted = segment::CompactSegments(options);
  ASSERT_TRUE(compacted.ok()) << compacted.status();
  const v1::SegmentDescriptor c = Descriptor(*compacted, "empties", "");
  int empty = 0;
  for (const v1::PartitionRange& r : c.provenance().ranges()) {
    empty += r.start_offset() == r.end_offset();
  }
  ASSERT_EQ(empty, 2);
  RowsCounter counter(&rows);
  SegmentFileVerifier verifier;
  AuditReport report = RunAudit(log, {c}, &counter, &verifier);
  EXPECT_TRUE(report.ok()) << report.ToString();
  EXPECT_EQ(report.rows_ingested, static_cast<int64_t>(rows.size()));
}

}  // namespace
}  // namespace sluice::audit
