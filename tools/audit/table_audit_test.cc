// The table audit on tables written by the real writers (//iceberg) into a
// temporary directory: a consistent table passes; each kind of damage fails
// naming the snapshot, file or partition.
#include "tools/audit/table_audit.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "iceberg/test_table.h"
#include "tests/testing/subprocess.h"

namespace sluice::audit {
namespace {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

using iceberg::testing::TestSnapshot;
using iceberg::testing::TestTable;

// The commit log and segments of the same sequences, and Kafka's counts.
struct Committed {
  v1::GetCommitLogResponse log;
  std::vector<v1::SegmentDescriptor> segments;
  KafkaCounts counts;

  Committed() {
    log.set_datasource("wiki");
    log.set_topic("wiki");
  }
  // `records` per partition in Kafka; `rows` in the segments; unparseable
  // records on partition 0.
  void Add(const TestSnapshot& s, std::map<int32_t, int64_t> records, int64_t rows,
           int64_t unparseable = 0) {
    v1::CommittedSequence* seq = log.add_sequences();
    seq->set_sequence_name(s.sequence);
    seq->set_committed_at_ms(1000 * log.sequences_size());
    for (const auto& [p, r] : s.ranges) {
      (*seq->mutable_start_offsets())[p] = r.first;
      (*seq->mutable_end_offsets())[p] = r.second;
      v1::PartitionRange* stats = seq->add_partition_stats();
      stats->set_partition(p);
      if (p == 0) stats->set_unparseable(unparseable);
      counts[s.sequence][p] = records[p];
    }
    v1::SegmentDescriptor segment;
    segment.set_id(s.sequence + "-seg");
    segment.set_sequence_name(s.sequence);
    segment.set_num_rows(rows);
    seq->add_segment_ids(segment.id());
    segments.push_back(segment);
  }
};

TableAuditReport Audit(const TestTable& table, const Committed& c) {
  DeepStorageFileReader files(nullptr, "");
  TableAuditOptions options;
  options.metadata_location = table.metadata_location();
  options.count_column = "count";
  TableAuditReport report = RunTableAudit(c.log, c.segments, c.counts, options, &files);
  return report;
}

// Three sequences over partitions 0 and 1: s1 [0,10) [0,5), s2 [10,20)
// [5,5) (nothing new on 1), s3 [20,25) [5,9). Rows rolled up: the count
// column sums to the records that became rows.
class TableAuditTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = *testing::MakeTempDir("table_audit"); }

  std::vector<TestSnapshot> Snapshots() {
    return {{"s1", {{0, {0, 10}}, {1, {0, 5}}}, {5, 4, 3, 2, 1}},      // 15 records
            {"s2", {{0, {10, 20}}, {1, {5, 5}}}, {9}},                 // 9 (+1 unparseable)
            {"s3", {{0, {20, 25}}, {1, {5, 9}}}, {4, 4, 1}}};          // 9
  }
  void Commit(Committed* c, const TestSnapshot& s) {
    int64_t records = 0;
    for (int64_t n : s.counts) records += n;
    if (s.sequence == "s1") c->Add(s, {{0, 10}, {1, 5}}, s.counts.size());
    if (s.sequence == "s2") c->Add(s, {{0, 10}, {1, 0}}, s.counts.size(), 1);
    if (s.sequence == "s3") c->Add(s, {{0, 5}, {1, 4}}, s.counts.size());
  }
  // Writes and commits every snapshot; returns the data files' paths.
  std::vector<std::string> WriteAll(TestTable* table, Committed* c,
                                    const std::vector<TestSnapshot>& snapshots) {
    std::vector<std::string> files;
    for (const TestSnapshot& s : snapshots) {
      files.push_back(table->Append(s));
      Commit(c, s);
    }
    return files;
  }

  std::string dir_;
};

TEST_F(TableAuditTest, ConsistentTablePasses) {
  TestTable table(dir_ + "/wiki");
  Committed c;
  WriteAll(&table, &c, Snapshots());
  const TableAuditReport report = Audit(table, c);
  EXPECT_TRUE(report.ok()) << report.ToString();
  EXPECT_EQ(report.snapshots, 3);
  EXPECT_EQ(report.data_files, 3);
  EXPECT_EQ(report.rows, 9);
  EXPECT_EQ(report.records, 33);
  EXPECT_THAT(report.notes, IsEmpty());
  EXPECT_THAT(report.ToString(), HasSubstr("Iceberg table: PASS"));
}

TEST_F(TableAuditTest, DeletedDataFileFails) {
  TestTable table(dir_ + "/wiki");
  Committed c;
  const std::vector<std::string> files = WriteAll(&table, &c, Snapshots());
  std::filesystem::remove(table.Path(files[1]));
  const TableAuditReport report = Audit(table, c);
  EXPECT_FALSE(report.ok());
  EXPECT_THAT(report.discrepancies,
              Contains(AllOf(HasSubstr("snapshot 1002 (sequence s2): data file"),
                             HasSubstr("s2.parquet is missing"))));
  EXPECT_THAT(report.ToString(), HasSubstr("Iceberg table: FAIL"));
}

TEST_F(TableAuditTest, TruncatedDataFileFails) {
  TestTable table(dir_ + "/wiki");
  Committed c;
  const std::vector<std::string> files = WriteAll(&table, &c, Snapshots());
  const std::string path = table.Path(files[2]);
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 20);
  const TableAuditReport report = Audit(table, c);
  EXPECT_THAT(report.discrepancies,
              Contains(AllOf(HasSubstr("snapshot 1003 (sequence s3): data file"),
                             HasSubstr("s3.parquet is not a readable Parquet file"))));
  EXPECT_THAT(report.discrepancies, Contains(HasSubstr("bytes, the manifest records")));
}

TEST_F(TableAuditTest, ManifestRecordCountThatDisagreesFails) {
  TestTable table(dir_ + "/wiki");
  Committed c;
  std::vector<TestSnapshot> snapshots = Snapshots();
  snapshots[0].record_count_delta = 1;
  WriteAll(&table, &c, snapshots);
  const TableAuditReport report = Audit(table, c);
  EXPECT_THAT(report.discrepancies,
              Contains(AllOf(HasSubstr("snapshot 1001 (sequence s1): data file"),
                             HasSubstr("s1.parquet holds 5 rows, the manifest records 6"))));
}

TEST_F(TableAuditTest, GapOrOverlapInTheSummaryRangesFails) {
  {
    TestTable table(dir_ + "/gap/wiki");
    Committed c;
    std::vector<TestSnapshot> snapshots = Snapshots();
    snapshots[1].ranges[0] = {12, 20};
    WriteAll(&table, &c, snapshots);
    const TableAuditReport report = Audit(table, c);
    EXPECT_THAT(report.discrepancies,
                Contains(HasSubstr("snapshot 1002 (sequence s2): sluice.kafka.wiki.0 gap [10, 12) "
                                   "after the previous snapshot")));
  }
  {
    TestTable table(dir_ + "/overlap/wiki");
    Committed c;
    std::vector<TestSnapshot> snapshots = Snapshots();
    snapshots[2].ranges[1] = {4, 9};
    WriteAll(&table, &c, snapshots);
    const TableAuditReport report = Audit(table, c);
    EXPECT_THAT(report.discrepancies,
                Contains(HasSubstr("snapshot 1003 (sequence s3): sluice.kafka.wiki.1 overlap [4, 5)")));
  }
  {
    // The same jump, explained by a listed offset reset: declared, passes.
    TestTable table(dir_ + "/reset/wiki");
    Committed c;
    std::vector<TestSnapshot> snapshots = Snapshots();
    snapshots[1].ranges[0] = {12, 20};
    snapshots[1].extra_summary["sluice.offset-reset.7"] =
        "sluice.kafka.wiki.0 10 -> 12 at 2024-02-29T13:00:00Z: operator";
    WriteAll(&table, &c, snapshots);
    const TableAuditReport report = Audit(table, c);
    EXPECT_TRUE(report.ok()) << report.ToString();
    EXPECT_THAT(report.declared, Contains(HasSubstr("gap [10, 12): offset reset 7")));
  }
}

TEST_F(TableAuditTest, SummaryThatDiffersFromTheCommitLogFails) {
  TestTable table(dir_ + "/wiki");
  Committed c;
  std::vector<TestSnapshot> snapshots = Snapshots();
  WriteAll(&table, &c, snapshots);
  (*c.log.mutable_sequences(1)->mutable_end_offsets())[0] = 21;
  const TableAuditReport report = Audit(table, c);
  EXPECT_THAT(report.discrepancies,
              Contains(HasSubstr("snapshot 1002 (sequence s2): sluice.kafka.wiki.0 is [10, 20), "
                                 "the commit log has [10, 21)")));
}

TEST_F(TableAuditTest, SnapshotMissingForACommittedSequenceFails) {
  TestTable table(dir_ + "/wiki");
  Committed c;
  const std::vector<TestSnapshot> snapshots = Snapshots();
  table.Append(snapshots[0]);
  Commit(&c, snapshots[0]);
  Commit(&c, snapshots[1]);  // committed, never in the table
  table.Append(snapshots[2]);
  Commit(&c, snapshots[2]);
  const TableAuditReport report = Audit(table, c);
  EXPECT_THAT(report.discrepancies,
              Contains(HasSubstr("sequence s2 was committed (at 2000 ms) but the table has no "
                                 "snapshot of it")));
}

TEST_F(TableAuditTest, RecordsThatDifferFromKafkaFail) {
  TestTable table(dir_ + "/wiki");
  Committed c;
  WriteAll(&table, &c, Snapshots());
  c.counts["s3"][1] = 5;  // Kafka holds one record more than the table
  TableAuditReport report = Audit(table, c);
  EXPECT_THAT(report.discrepancies,
              Contains(HasSubstr("snapshot 1003 (sequence s3): Kafka holds 10 records in its "
                                 "ranges; minus 0 unparseable and 0 thrown away that is 10, but "
                                 "its data files hold 9 (sum of count)")));
  // And rows that are not the segments'.
  c.counts["s3"][1] = 4;
  c.segments[0].set_num_rows(6);
  report = Audit(table, c);
  EXPECT_THAT(report.discrepancies,
              Contains(HasSubstr("snapshot 1001 (sequence s1): its data files hold 5 rows, the "
                                 "sequence's segments 6")));
}

TEST_F(TableAuditTest, UnreadableMetadataFails) {
  Committed c;
  DeepStorageFileReader files(nullptr, "");
  TableAuditOptions options;
  options.metadata_location = "file://" + dir_ + "/nope.metadata.json";
  const TableAuditReport report = RunTableAudit(c.log, c.segments, c.counts, options, &files);
  EXPECT_THAT(report.discrepancies, Contains(HasSubstr("nope.metadata.json cannot be read")));
}

// A compaction of s1's and s2's files into one of two rolled-up rows.
iceberg::ReplaceFiles CompactS1S2(TestTable* table, const std::vector<std::string>& files,
                                  std::vector<int64_t> counts) {
  iceberg::ReplaceFiles r;
  r.remove = {table->Uri(files[0]), table->Uri(files[1])};
  r.add = {table->WriteDataFile("compacted", counts)};
  r.rewritten_kafka_ranges[{"wiki", 0}] = {{0, 20}};
  r.rewritten_kafka_ranges[{"wiki", 1}] = {{0, 5}};
  return r;
}

TEST_F(TableAuditTest, AppendsThenAReplacePass) {
  TestTable table(dir_ + "/wiki");
  Committed c;
  const std::vector<std::string> files = WriteAll(&table, &c, Snapshots());
  iceberg::ReplaceFiles r = CompactS1S2(&table, files, {12, 12});  // 15 + 9 records
  r.rolled_up = iceberg::RolledUpCount{"count", 24};
  absl::StatusOr<iceberg::StagedReplace> staged = table.Replace("c1", r);
  ASSERT_TRUE(staged.ok()) << staged.status();
  const TableAuditReport report = Audit(table, c);
  EXPECT_TRUE(report.ok()) << report.ToString();
  EXPECT_EQ(report.snapshots, 3);
  EXPECT_EQ(report.replaces, 1);
  EXPECT_EQ(report.records, 33);
  EXPECT_EQ(report.live_files, 2);
  EXPECT_EQ(report.live_records, 33);
  EXPECT_THAT(report.rewritten,
              Contains(AllOf(HasSubstr("snapshot 1004 (replace)"), HasSubstr("wiki.0 0-20"),
                             HasSubstr("wiki.1 0-5"))));
  EXPECT_THAT(report.ToString(), HasSubstr("REWRITTEN: snapshot 1004 (replace)"));
  EXPECT_THAT(report.ToString(), HasSubstr("Iceberg table: PASS"));
}

TEST_F(TableAuditTest, AReplaceThatLostRecordsFails) {
  TestTable table(dir_ + "/wiki");
  Committed c;
  const std::vector<std::string> files = WriteAll(&table, &c, Snapshots());
  // Six rows for six rows (the writer's row check passes), but the counts
  // were lost: 6 records where the removed files held 24.
  iceberg::ReplaceFiles r = CompactS1S2(&table, files, {1, 1, 1, 1, 1, 1});
  absl::StatusOr<iceberg::StagedReplace> staged = table.Replace("c1", r);
  ASSERT_TRUE(staged.ok()) << staged.status();
  const TableAuditReport report = Audit(table, c);
  EXPECT_FALSE(report.ok());
  EXPECT_THAT(report.discrepancies,
              Contains(AllOf(HasSubstr("snapshot 1004 (replace): rows not conserved"),
                             HasSubstr("removed hold 24 records, the files it added 6"))));
  EXPECT_THAT(report.discrepancies,
              Contains(HasSubstr("live files hold 15 records, the appends committed 33")));
}

TEST_F(TableAuditTest, RewrittenRangesBeyondTheCommittedOnesFail) {
  TestTable table(dir_ + "/wiki");
  Committed c;
  const std::vector<std::string> files = WriteAll(&table, &c, Snapshots());
  iceberg::ReplaceFiles r = CompactS1S2(&table, files, {12, 12});
  r.rolled_up = iceberg::RolledUpCount{"count", 24};
  ASSERT_TRUE(table.Replace("c1", r).ok());
  // A second replace whose rewritten ranges go beyond what was committed.
  iceberg::ReplaceFiles bad;
  bad.remove = {table.Uri(files[2])};
  bad.add = {table.WriteDataFile("compacted2", {4, 4, 1})};
  bad.rewritten_kafka_ranges[{"wiki", 0}] = {{20, 30}};
  ASSERT_TRUE(table.Replace("c2", bad).ok());
  const TableAuditReport report = Audit(table, c);
  EXPECT_THAT(report.discrepancies,
              Contains(HasSubstr("snapshot 1005 (replace): sluice.rewritten.kafka.wiki.0 lists "
                                 "[20, 30), beyond what earlier snapshots committed")));
}

}  // namespace
}  // namespace sluice::audit
