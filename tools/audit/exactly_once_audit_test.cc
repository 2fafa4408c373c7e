#include "tools/audit/exactly_once_audit.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "absl/strings/str_cat.h"

namespace sluice::audit {
namespace {

// Kafka as a table of record counts per (partition, start, end); by default
// every offset holds one record.
class TableCounter : public RecordCounter {
 public:
  absl::StatusOr<int64_t> CountRecords(const std::string&, int32_t p, int64_t start,
                                       int64_t end) override {
    auto it = overrides.find({p, start, end});
    if (it != overrides.end()) return it->second;
    return end - start;
  }
  absl::StatusOr<RangeCount> CountRange(const std::string& topic, int32_t p, int64_t start,
                                        int64_t end) override {
    asked.insert({topic, p});
    auto low = earliest.find(p);
    if (low != earliest.end() && start < low->second) {
      // As Kafka answers a read before the log start.
      return absl::OutOfRangeError(absl::StrCat("offset ", start, " is before the log start ",
                                                low->second, " (OFFSET_OUT_OF_RANGE)"));
    }
    absl::StatusOr<int64_t> records = CountRecords(topic, p, start, end);
    if (!records.ok()) return records.status();
    auto it = reparsed_unparseable.find({p, start, end});
    return RangeCount{*records, it == reparsed_unparseable.end() ? -1 : it->second};
  }
  absl::StatusOr<int64_t> EarliestOffset(const std::string&, int32_t p) override {
    auto it = earliest.find(p);
    if (it == earliest.end()) return absl::UnimplementedError("not scripted");
    return it->second;
  }
  std::map<std::tuple<int32_t, int64_t, int64_t>, int64_t> overrides;
  // Partition -> the earliest offset Kafka still holds (retention).
  std::map<int32_t, int64_t> earliest;
  // What re-parsing the range finds (absent: not re-parsed).
  std::map<std::tuple<int32_t, int64_t, int64_t>, int64_t> reparsed_unparseable;
  // Every (topic, partition) counted.
  std::set<std::pair<std::string, int32_t>> asked;
};

class TableVerifier : public SegmentVerifier {
 public:
  absl::StatusOr<VerifiedSegment> Verify(const std::string& path) override {
    auto it = files.find(path);
    if (it == files.end()) return absl::NotFoundError("no such file");
    return it->second;
  }
  std::map<std::string, VerifiedSegment> files;
};

v1::SegmentDescriptor Segment(const std::string& id, const std::string& sequence,
                              std::map<int32_t, std::tuple<int64_t, int64_t, int64_t>> ranges,
                              int64_t rows) {
  v1::SegmentDescriptor s;
  s.set_id(id);
  s.set_sequence_name(sequence);
  s.set_path("file:///deep/" + id);
  s.set_num_rows(rows);
  s.set_checksum("crc32c:" + id);
  s.mutable_provenance()->set_topic("edits");
  for (const auto& [p, r] : ranges) {
    auto* range = s.mutable_provenance()->add_ranges();
    range->set_partition(p);
    range->set_start_offset(std::get<0>(r));
    range->set_end_offset(std::get<1>(r));
    range->set_rows(std::get<2>(r));
  }
  return s;
}

class AuditTest : public testing::Test {
 protected:
  void SetUp() override {
    log_.set_datasource("wiki");
    log_.set_topic("edits");
    (*log_.mutable_initial_offsets())[0] = 0;
    (*log_.mutable_initial_offsets())[1] = 100;
    (*log_.mutable_committed_offsets())[0] = 30;
    (*log_.mutable_committed_offsets())[1] = 120;
    // seq_0: p0 [0,10) p1 [100,110): 2 segments (two hours), 1 unparseable in p0.
    AddSequence("wiki_abc_0", {{0, {0, 10}}, {1, {100, 110}}}, {{0, {9, 1, 0}}, {1, {10, 0, 0}}},
                {"s0a", "s0b"});
    segments_.push_back(Segment("s0a", "wiki_abc_0", {{0, {0, 10, 5}}, {1, {100, 110, 6}}}, 11));
    segments_.push_back(Segment("s0b", "wiki_abc_0", {{0, {0, 10, 4}}, {1, {100, 110, 4}}}, 8));
    // seq_1: p0 [10,30) p1 [110,120): all p1 records thrown away, one segment.
    AddSequence("wiki_abc_1", {{0, {10, 30}}, {1, {110, 120}}}, {{0, {20, 0, 0}}, {1, {0, 0, 10}}},
                {"s1"});
    segments_.push_back(Segment("s1", "wiki_abc_1", {{0, {10, 30, 20}}, {1, {110, 120, 0}}}, 3));
    for (const auto& s : segments_) verifier_.files[s.path()] = {s.num_rows(), s.checksum()};
  }

  void AddSequence(const std::string& name, std::map<int32_t, std::pair<int64_t, int64_t>> ranges,
                   std::map<int32_t, std::tuple<int64_t, int64_t, int64_t>> stats,
                   std::vector<std::string> ids) {
    auto* seq = log_.add_sequences();
    seq->set_sequence_name(name);
    for (const auto& [p, r] : ranges) {
      (*seq->mutable_start_offsets())[p] = r.first;
      (*seq->mutable_end_offsets())[p] = r.second;
    }
    for (const auto& [p, s] : stats) {
      auto* st = seq->add_partition_stats();
      st->set_partition(p);
      st->set_rows(std::get<0>(s));
      st->set_unparseable(std::get<1>(s));
      st->set_thrown_away(std::get<2>(s));
    }
    for (const auto& id : ids) seq->add_segment_ids(id);
  }

  AuditReport Run() { return RunAudit(log_, segments_, &counter_, &verifier_); }

  void ExpectFailure(const std::string& fragment) {
    AuditReport report = Run();
    ASSERT_FALSE(report.ok()) << report.ToString();
    bool found = false;
    for (const auto& d : report.discrepancies) found |= d.find(fragment) != std::string::npos;
    EXPECT_TRUE(found) << "no discrepancy mentions \"" << fragment << "\":\n" << report.ToString();
  }

  v1::GetCommitLogResponse log_;
  std::vector<v1::SegmentDescriptor> segments_;
  TableCounter counter_;
  TableVerifier verifier_;
};

TEST_F(AuditTest, ConsistentDatasourcePasses) {
  AuditReport report = Run();
  EXPECT_TRUE(report.ok()) << report.ToString();
  EXPECT_EQ(report.records_in_kafka, 50);
  EXPECT_EQ(report.rows_ingested, 39);
  EXPECT_EQ(report.unparseable, 1);
  EXPECT_EQ(report.thrown_away, 10);
  EXPECT_EQ(report.segment_rows, 22);
  EXPECT_EQ(report.partitions, 2);
  EXPECT_EQ(report.records_by_partition, (std::map<int32_t, int64_t>{{0, 30}, {1, 20}}));
  EXPECT_NE(report.ToString().find("PASS"), std::string::npos);
}

// ioConfig.topicPattern: stream partitions 0 and 1 are partitions of two
// topics; each range is counted in its own topic, and a segment that names
// another (topic, partition) for an id than the log is a discrepancy.
TEST_F(AuditTest, ATopicPatternDatasourceCountsEachStreamPartitionInItsTopic) {
  log_.clear_topic();
  log_.set_topic_pattern("edits-.*");
  auto name = [&](int32_t id, const std::string& topic, int32_t partition) {
    v1::StreamPartition* p = log_.add_stream_partitions();
    p->set_id(id);
    p->set_topic(topic);
    p->set_partition(partition);
  };
  name(0, "edits-en", 0);
  name(1, "edits-de", 3);
  for (v1::SegmentDescriptor& segment : segments_) {
    segment.mutable_provenance()->clear_topic();
    segment.mutable_provenance()->set_topic_pattern("edits-.*");
    for (v1::PartitionRange& range : *segment.mutable_provenance()->mutable_ranges()) {
      range.set_topic(range.partition() == 0 ? "edits-en" : "edits-de");
      range.set_topic_partition(range.partition() == 0 ? 0 : 3);
    }
  }
  AuditReport report = Run();
  EXPECT_TRUE(report.ok()) << report.ToString();
  EXPECT_EQ(report.records_in_kafka, 50);
  EXPECT_EQ(counter_.asked, (std::set<std::pair<std::string, int32_t>>{{"edits-en", 0},
                                                                       {"edits-de", 3}}));
  segments_[2].mutable_provenance()->mutable_ranges(1)->set_topic_partition(4);
  ExpectFailure("names stream partition 1 edits-de[4], the commit log does not");
  segments_[2].mutable_provenance()->set_topic_pattern("other");
  ExpectFailure("came from \"topicPattern:other\", not \"topicPattern:edits-.*\"");
}

// A publish that claims records as unparseable when they parse (the rows
// skipped, the offsets advanced) is caught by re-parsing the range.
TEST_F(AuditTest, AnUnparseableClaimIsCheckedByReparsing) {
  counter_.reparsed_unparseable[{0, 0, 10}] = 1;  // what the claim says: fine
  EXPECT_TRUE(Run().ok()) << Run().ToString();
  // seq_1 p0 [10, 30): claims 0 unparseable of 20, rows 20. A forged claim:
  // 20 unparseable, no rows, and no segment for p0.
  log_.mutable_sequences(1)->mutable_partition_stats(0)->set_rows(0);
  log_.mutable_sequences(1)->mutable_partition_stats(0)->set_unparseable(20);
  segments_[2].mutable_provenance()->mutable_ranges(0)->set_rows(0);
  counter_.reparsed_unparseable[{0, 10, 30}] = 0;
  ExpectFailure("re-parsing them with the spec finds 0");
}

// What the files say about themselves (id, provenance) must match the store.
VerifiedSegment AsFile(const v1::SegmentDescriptor& s) {
  VerifiedSegment v{s.num_rows(), s.checksum()};
  v.segment_id = s.id();
  v.has_provenance = true;
  v.provenance = s.provenance();
  return v;
}

TEST_F(AuditTest, FilesThatDescribeThemselvesAsRecordedPass) {
  for (const auto& s : segments_) verifier_.files[s.path()] = AsFile(s);
  // Range order in the file does not matter.
  auto& p = verifier_.files["file:///deep/s0a"].provenance;
  p.mutable_ranges()->SwapElements(0, 1);
  AuditReport report = Run();
  EXPECT_TRUE(report.ok()) << report.ToString();
}

TEST_F(AuditTest, FileHoldsAnotherSegment) {
  for (const auto& s : segments_) verifier_.files[s.path()] = AsFile(s);
  verifier_.files["file:///deep/s1"].segment_id = "s0a";
  ExpectFailure("holds segment s0a");
}

TEST_F(AuditTest, FileProvenanceDiffersFromTheStore) {
  for (const auto& s : segments_) verifier_.files[s.path()] = AsFile(s);
  verifier_.files["file:///deep/s1"].provenance.mutable_ranges(0)->set_rows(19);
  ExpectFailure(
      "file provenance edits p0[10,30)=19 p1[110,120)=0 differs from the recorded "
      "edits p0[10,30)=20");
}

TEST_F(AuditTest, GapBetweenSequences) {
  (*log_.mutable_sequences(1)->mutable_start_offsets())[0] = 12;
  ExpectFailure("partition 0: gap [10, 12)");
}

TEST_F(AuditTest, OverlapBetweenSequences) {
  (*log_.mutable_sequences(1)->mutable_start_offsets())[1] = 105;
  ExpectFailure("overlaps");
}

TEST_F(AuditTest, FirstSequenceMustStartAtTheInitialOffset) {
  (*log_.mutable_initial_offsets())[0] = 0;
  (*log_.mutable_sequences(0)->mutable_start_offsets())[0] = 1;
  ExpectFailure("gap [0, 1)");
}

TEST_F(AuditTest, CommittedOffsetBeyondTheSequences) {
  (*log_.mutable_committed_offsets())[1] = 125;
  ExpectFailure("committed offset is 125");
}

TEST_F(AuditTest, LostRecords) {
  counter_.overrides[{0, 10, 30}] = 21;
  ExpectFailure("Kafka holds 21 records");
}

// Hostile peers, point 9: retention deleted a committed range. It is said to
// be not re-readable, with its counts, not a failure of exactly-once; what
// Kafka still holds is checked as before.
TEST_F(AuditTest, RangesDeletedByRetentionAreNotReReadableNotAFailure) {
  counter_.earliest[0] = 10;  // p0 [0, 10) of wiki_abc_0 is gone
  AuditReport report = Run();
  EXPECT_TRUE(report.ok()) << report.ToString();
  ASSERT_EQ(report.not_rereadable.size(), 1u) << report.ToString();
  EXPECT_NE(report.not_rereadable[0].find("wiki_abc_0 partition 0 [0, 10): not re-readable: "
                                          "deleted by retention"),
            std::string::npos)
      << report.not_rereadable[0];
  EXPECT_EQ(report.not_rereadable_offsets, 10);
  EXPECT_EQ(report.not_rereadable_rows, 9);
  EXPECT_EQ(report.records_in_kafka, 40);
  EXPECT_NE(report.ToString().find("not re-readable (deleted by retention): 1 ranges"),
            std::string::npos)
      << report.ToString();
  EXPECT_NE(report.ToString().find("PASS"), std::string::npos);
  // A range Kafka still holds that does not match still fails.
  counter_.overrides[{0, 10, 30}] = 21;
  ExpectFailure("Kafka holds 21 records");
}

TEST_F(AuditTest, DuplicatedRows) {
  segments_[2].mutable_provenance()->mutable_ranges(0)->set_rows(21);
  ExpectFailure("Kafka holds 20 records but segments have 21");
}

TEST_F(AuditTest, SegmentOfUncommittedSequence) {
  segments_.push_back(Segment("zombie", "wiki_abc_2", {{0, {30, 40, 10}}}, 10));
  verifier_.files["file:///deep/zombie"] = {10, "crc32c:zombie"};
  ExpectFailure("which is not committed");
}

TEST_F(AuditTest, CommittedSegmentMissing) {
  segments_.pop_back();
  ExpectFailure("which is not a used segment");
}

// A compaction replaced s0a and s1 (same interval) by one segment with both
// sequences' ranges: the replaced ones are unused, their commit records still
// list them; the rows are accounted per range.
class CompactedAuditTest : public AuditTest {
 protected:
  void SetUp() override {
    AuditTest::SetUp();
    for (auto& s : segments_) {
      s.mutable_interval()->set_start_ms(s.id() == "s0b" ? 3600000 : 0);
      s.mutable_interval()->set_end_ms(s.id() == "s0b" ? 7200000 : 3600000);
    }
    compacted_ = Segment("c", "", {}, 14);
    compacted_.mutable_interval()->set_end_ms(3600000);
    auto add = [&](int32_t p, int64_t start, int64_t end, int64_t rows) {
      auto* r = compacted_.mutable_provenance()->add_ranges();
      r->set_partition(p);
      r->set_start_offset(start);
      r->set_end_offset(end);
      r->set_rows(rows);
    };
    add(0, 0, 10, 5);
    add(0, 10, 30, 20);
    add(1, 100, 110, 6);
    add(1, 110, 120, 0);
    verifier_.files[compacted_.path()] = {14, compacted_.checksum()};
  }
  // Used: s0b and the compacted segment; `keep` of the replaced ones too.
  void UseCompacted(const std::string& keep = "") {
    std::vector<v1::SegmentDescriptor> used;
    for (const auto& s : segments_) {
      if (s.id() == "s0b" || s.id() == keep) used.push_back(s);
    }
    used.push_back(compacted_);
    segments_ = used;
  }
  v1::SegmentDescriptor compacted_;
};

TEST_F(CompactedAuditTest, ACompactedSegmentReplacingSegmentsOfTwoSequencesPasses) {
  UseCompacted();
  AuditReport report = Run();
  EXPECT_TRUE(report.ok()) << report.ToString();
  EXPECT_EQ(report.rows_ingested, 29 + 10);
}

TEST_F(CompactedAuditTest, ACompactedSegmentWhoseRangeIsStillInAReplacedOneFails) {
  UseCompacted("s1");
  ExpectFailure("compacted segment c partition 0 range [10, 30) is also in used segment s1");
}

TEST_F(CompactedAuditTest, ACompactedRangeThatIsNoCommittedRangeFails) {
  compacted_.mutable_provenance()->mutable_ranges(1)->set_end_offset(31);
  UseCompacted();
  ExpectFailure("compacted segment c partition 0 range [10, 31) is no committed sequence's range");
}

TEST_F(CompactedAuditTest, ACompactedSegmentMissingRowsFails) {
  compacted_.mutable_provenance()->mutable_ranges(1)->set_rows(19);
  UseCompacted();
  ExpectFailure("Kafka holds 20 records but segments have 19");
}

TEST_F(AuditTest, DamagedFile) {
  verifier_.files.erase("file:///deep/s1");
  ExpectFailure("fails verification");
}

TEST_F(AuditTest, ChecksumMismatch) {
  verifier_.files["file:///deep/s1"].checksum = "crc32c:other";
  ExpectFailure("differs from the recorded");
}

TEST_F(AuditTest, AFileRewrittenBehindItsChecksumIsFoundByTheRecordedDigest) {
  // Same rows, same CRC-32C, other bytes: only the SHA-256 tells.
  segments_.back().set_sha256("sha256:" + std::string(64, 'a'));
  verifier_.files["file:///deep/s1"].sha256 = "sha256:" + std::string(64, 'b');
  ExpectFailure("was recorded when it was committed");
}

TEST_F(AuditTest, TheRecordedDigestOfAnIntactFilePasses) {
  segments_.back().set_sha256("sha256:" + std::string(64, 'a'));
  verifier_.files["file:///deep/s1"].sha256 = "sha256:" + std::string(64, 'a');
  for (const std::string& d : Run().discrepancies) EXPECT_EQ(d.find("SHA-256"), std::string::npos) << d;
}

TEST_F(AuditTest, RowCountMismatch) {
  verifier_.files["file:///deep/s1"].num_rows = 4;
  ExpectFailure("has 4 rows in its file but 3");
}

TEST_F(AuditTest, SegmentRangeDiffersFromSequence) {
  segments_[0].mutable_provenance()->mutable_ranges(0)->set_end_offset(11);
  ExpectFailure("differs from its sequence's");
}

TEST_F(AuditTest, SequenceCommittedTwice) {
  *log_.add_sequences() = log_.sequences(1);
  ExpectFailure("committed twice");
}

}  // namespace
}  // namespace sluice::audit

namespace sluice::audit {
namespace {

class AuditWithResetsTest : public AuditTest {
 protected:
  void SetUp() override {
    AuditTest::SetUp();
    log_.mutable_sequences(0)->set_committed_at_ms(100);
    log_.mutable_sequences(1)->set_committed_at_ms(300);
  }
  void AddReset(int32_t p, std::optional<int64_t> from, std::optional<int64_t> to, int64_t at) {
    auto* reset = log_.add_resets();
    reset->set_reset_id(log_.resets_size());
    reset->set_partition(p);
    if (from) reset->set_old_offset(*from);
    if (to) reset->set_new_offset(*to);
    reset->set_reason("operator reset of offsets");
    reset->set_reset_at_ms(at);
  }
  // A third sequence reading p0 [start, end) with every record a row.
  void AddP0Sequence(const std::string& name, int64_t start, int64_t end, int64_t at) {
    AddSequence(name, {{0, {start, end}}}, {{0, {end - start, 0, 0}}}, {name + "_s"});
    log_.mutable_sequences(log_.sequences_size() - 1)->set_committed_at_ms(at);
    segments_.push_back(Segment(name + "_s", name, {{0, {start, end, end - start}}}, 1));
    verifier_.files[segments_.back().path()] = {1, segments_.back().checksum()};
    (*log_.mutable_committed_offsets())[0] = end;
  }
  std::string Declared(const AuditReport& report) {
    std::string all;
    for (const auto& d : report.declared_resets) all += d + "\n";
    return all;
  }
};

TEST_F(AuditWithResetsTest, AResetBackwardsIsADeclaredOverlapNotAFailure) {
  AddReset(0, 30, 5, 400);
  AddP0Sequence("wiki_def_0", 5, 40, 500);
  AuditReport report = Run();
  EXPECT_TRUE(report.ok()) << report.ToString();
  EXPECT_NE(Declared(report).find("from 30 to 5: [5, 30) read again (25 offsets)"),
            std::string::npos)
      << report.ToString();
  EXPECT_NE(report.ToString().find("DECLARED: partition 0: reset 1 (operator reset of offsets)"),
            std::string::npos);
}

TEST_F(AuditWithResetsTest, AResetForwardIsADeclaredGap) {
  AddReset(0, 30, 50, 400);
  AddP0Sequence("wiki_def_0", 50, 60, 500);
  AuditReport report = Run();
  EXPECT_TRUE(report.ok()) << report.ToString();
  EXPECT_NE(Declared(report).find("[30, 50) skipped (20 offsets)"), std::string::npos);
}

TEST_F(AuditWithResetsTest, AResetWithNothingCommittedSinceMatchesTheStoredOffset) {
  AddReset(0, 30, 5, 400);
  (*log_.mutable_committed_offsets())[0] = 5;
  EXPECT_TRUE(Run().ok()) << Run().ToString();
}

TEST_F(AuditWithResetsTest, AClearingResetLetsReadingRestartAnywhere) {
  AddReset(0, 30, std::nullopt, 400);
  AddP0Sequence("wiki_def_0", 70, 80, 500);
  AuditReport report = Run();
  EXPECT_TRUE(report.ok()) << report.ToString();
  EXPECT_NE(Declared(report).find("to earliest/latest (cleared)"), std::string::npos);
}

TEST_F(AuditWithResetsTest, AnUndeclaredOverlapAfterAResetStillFails) {
  AddReset(0, 30, 10, 400);
  AddP0Sequence("wiki_def_0", 5, 40, 500);
  ExpectFailure("overlaps what was committed before (up to 10)");
}

TEST_F(AuditWithResetsTest, AResetLaterThanTheCommitDoesNotExplainIt) {
  AddP0Sequence("wiki_def_0", 5, 40, 500);
  AddReset(0, 30, 5, 600);
  ExpectFailure("overlaps");
}

}  // namespace
}  // namespace sluice::audit
