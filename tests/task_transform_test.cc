// A transformSpec end to end: a real task reads a dev-broker topic, derives
// dimensions with expressions, throws away the rows its filter rejects
// (counted, offsets advancing to the end), and the exactly-once audit still
// balances (rows + unparseable + thrown_away = records).
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/segment/segment_reader.h"
#include "google/protobuf/util/json_util.h"
#include "tests/task_cluster.h"

namespace sluice::testing {
namespace {

using ::sluice::OffsetMap;

class TaskTransformTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(c_.Start(/*auto_checkpoint=*/false).ok()); }
  TaskCluster c_;
};

// Derived: page_lower = lower(page), day = the row's date; thrown away: rows
// whose "kind" is bot or test, and rows whose page lower-cases to "drop_me"
// (a filter on a transform's output). The thrown-away records carry no "key",
// which is how the audit below tells rows from the rest.
constexpr char kTransformSpec[] = R"json({
  "transforms": [
    {"type": "expression", "name": "page_lower", "expression": "lower(page)"},
    {"type": "expression", "name": "day",
     "expression": "timestamp_format(__time, 'yyyy-MM-dd HH', '+05:30')"}
  ],
  "filter": {"type": "and", "fields": [
    {"type": "not", "field": {"type": "in", "dimension": "kind", "values": ["bot", "test"]}},
    {"type": "not", "field": {"type": "selector", "dimension": "page_lower", "value": "drop_me"}}
  ]}
})json";

TEST_F(TaskTransformTest, DerivedDimensionsAreIngestedAndFilteredRowsThrownAway) {
  const std::string id = std::string(kTestBase) + "_0000f1f1";
  SpecOptions options = c_.Spec(id);
  options.max_parse_exceptions = 10;
  c_.supervisor->AddTask(0, id);
  v1::TaskSpec spec = MakeSpec(options);
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(
                  kTransformSpec, spec.mutable_data_schema()->mutable_transform_spec())
                  .ok());

  const int64_t t = kBaseTimeMs + 1000;
  ASSERT_TRUE(c_.Produce(0, 6).ok());
  ASSERT_TRUE(c_.ProduceValues(0, {absl::StrCat(R"({"timestamp":)", t, R"(,"kind":"bot"})"),
                                   absl::StrCat(R"({"timestamp":)", t, R"(,"page":"DROP_me"})"),
                                   "not json"})
                  .ok());
  ASSERT_TRUE(c_.Produce(0, 4).ok());
  ASSERT_TRUE(c_.ProduceValues(1, {absl::StrCat(R"({"timestamp":)", t, R"(,"kind":"test"})")})
                  .ok());
  ASSERT_TRUE(c_.Produce(1, 5).ok());
  ASSERT_TRUE(c_.client->RunTask(spec).ok());
  const OffsetMap end = {{0, 13}, {1, 6}};
  ASSERT_TRUE(c_.WaitUntilRead(id, end).ok());

  auto status = c_.client->Status(id);
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_EQ(status->state(), v1::TASK_STATE_READING);
  EXPECT_EQ(status->row_stats().thrown_away(), 3);
  EXPECT_EQ(status->row_stats().unparseable(), 1);
  EXPECT_EQ(status->row_stats().processed(), 10 + 5);

  ASSERT_TRUE(c_.supervisor->Finish(0, absl::Seconds(20)).ok());
  auto final_status = c_.WaitUntilFinal(id);
  ASSERT_TRUE(final_status.ok()) << final_status.status();
  ASSERT_EQ(final_status->state(), v1::TASK_STATE_SUCCESS) << final_status->error();
  const absl::Status verified = VerifyExactlyOnce(*c_.supervisor, c_.deep.get(), kTestBase,
                                                  c_.produced, {{0, 0}, {1, 0}}, end);
  EXPECT_TRUE(verified.ok()) << verified;
  const auto log = c_.supervisor->CommitLog();
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(FromProto(log[0].end_offsets()), end);
  ASSERT_EQ(log[0].partition_stats_size(), 2);
  EXPECT_EQ(log[0].partition_stats(0).thrown_away(), 2);
  EXPECT_EQ(log[0].partition_stats(0).unparseable(), 1);
  EXPECT_EQ(log[0].partition_stats(0).rows(), 10);
  EXPECT_EQ(log[0].partition_stats(1).thrown_away(), 1);
  EXPECT_EQ(log[0].partition_stats(1).rows(), 5);

  // The derived dimensions are in the segments, with the values they should have.
  std::map<std::string, std::string> page_lower_by_key;
  std::set<std::string> days;
  for (const v1::SegmentDescriptor& d : c_.supervisor->Segments()) {
    auto path = c_.deep->LocalPathForRead(d.path(), "/tmp");
    ASSERT_TRUE(path.ok()) << path.status();
    auto reader = segment::SegmentReader::Open(*path);
    ASSERT_TRUE(reader.ok()) << reader.status();
    const int key = (*reader)->DimensionIndex("key");
    const int page_lower = (*reader)->DimensionIndex("page_lower");
    const int day = (*reader)->DimensionIndex("day");
    ASSERT_GE(key, 0);
    ASSERT_GE(page_lower, 0);
    ASSERT_GE(day, 0);
    EXPECT_LT((*reader)->DimensionIndex("kind"), 0) << "every row with a kind was thrown away";
    segment::RowCursor cursor(reader->get());
    while (true) {
      absl::StatusOr<bool> more = cursor.Next();
      ASSERT_TRUE(more.ok()) << more.status();
      if (!*more) break;
      ASSERT_TRUE(cursor.dimension(key).has_value());
      ASSERT_TRUE(cursor.dimension(page_lower).has_value());
      ASSERT_TRUE(cursor.dimension(day).has_value());
      page_lower_by_key[std::string(*cursor.dimension(key))] =
          std::string(*cursor.dimension(page_lower));
      days.insert(std::string(*cursor.dimension(day)));
    }
  }
  ASSERT_EQ(page_lower_by_key.size(), 15u);
  // Record(p, n) has page "Page_<n % 7>"; n counts the values of the partition.
  EXPECT_EQ(page_lower_by_key["p0-0"], "page_0");
  EXPECT_EQ(page_lower_by_key["p0-12"], "page_5");
  EXPECT_EQ(page_lower_by_key["p1-4"], "page_4");
  // Even n: 2026-11-30T00:xx UTC, odd n: 01:xx; in +05:30, 05 and 06.
  EXPECT_EQ(days, (std::set<std::string>{"2026-11-30 05", "2026-11-30 06"}));
}

}  // namespace
}  // namespace sluice::testing
