// The kafka input format and the header filter on a real task against the dev
// broker: records produced with keys, headers and Kafka timestamps; the key,
// the headers, the topic and the Kafka timestamp (as the row time) land in
// the segment; records the header filter rejects are thrown away before
// parsing, a header that does not decode is a BAD_HEADER parse error, the
// offsets reach the end, and the exactly-once audit balances.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/segment/segment_reader.h"
#include "tests/task_cluster.h"

namespace sluice::testing {
namespace {

using ::sluice::OffsetMap;

struct Row {
  int64_t time = 0;
  std::map<std::string, std::string> dims;  // non-null values only
};

// Every row of every published segment.
std::vector<Row> PublishedRows(TaskCluster& c) {
  std::vector<Row> rows;
  for (const v1::SegmentDescriptor& d : c.supervisor->Segments()) {
    auto path = c.deep->LocalPathForRead(d.path(), c.dir);
    EXPECT_TRUE(path.ok()) << path.status();
    if (!path.ok()) continue;
    auto reader = segment::SegmentReader::Open(*path);
    EXPECT_TRUE(reader.ok()) << reader.status();
    if (!reader.ok()) continue;
    const segment::FileHeader& header = (*reader)->header();
    segment::RowCursor cursor(reader->get());
    while (true) {
      absl::StatusOr<bool> more = cursor.Next();
      EXPECT_TRUE(more.ok()) << more.status();
      if (!more.ok() || !*more) break;
      Row row;
      row.time = cursor.time();
      for (size_t i = 0; i < header.dimensions.size(); ++i) {
        std::optional<absl::string_view> v = cursor.dimension(i);
        if (v) row.dims[header.dimensions[i]] = std::string(*v);
      }
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

class TaskKafkaEnvelopeTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(c_.Start(/*auto_checkpoint=*/false).ok()); }

  // Produces to partition 0 and remembers the values for the audit.
  void Produce(const std::vector<kafka::OutgoingRecord>& records) {
    auto first = c_.kafka->ProduceRecords("wiki", 0, records);
    ASSERT_TRUE(first.ok()) << first.status();
    ASSERT_EQ(*first, static_cast<int64_t>(c_.produced[0].size()));
    for (const kafka::OutgoingRecord& r : records) c_.produced[0].emplace_back(r.value);
  }

  TaskCluster c_;
};

TEST_F(TaskKafkaEnvelopeTest, EnvelopeColumnsLandInTheSegmentAndTheHeaderFilterThrowsAway) {
  const std::string id = std::string(kTestBase) + "_0000eeee";
  SpecOptions options = c_.Spec(id);
  options.max_parse_exceptions = 10;
  v1::TaskSpec spec = MakeSpec(options);
  // The row time is the Kafka timestamp; the value's "timestamp" field (1)
  // is then just a discovered dimension.
  spec.mutable_data_schema()->mutable_timestamp_spec()->set_column("kafka.timestamp");
  spec.mutable_input_format()->set_type("kafka");
  v1::DimFilter* filter = spec.mutable_header_based_filter_config()->mutable_filter();
  filter->set_type("selector");
  filter->set_dimension("env");
  filter->set_value("prod");
  c_.supervisor->AddTask(0, id);

  // Values: the audit counts those with a "key" field as rows, so the ones
  // the filter (or a bad header) keeps out have none.
  const std::vector<std::string> values = {
      R"({"timestamp":1,"key":"r0","added":1})",  // prod, key user-0
      R"({"timestamp":1,"added":2})",             // dev: filtered
      R"({"timestamp":1,"key":"r2","added":3})",  // prod, null key
      R"({"timestamp":1,"added":4})",             // no env header: filtered
      R"({"timestamp":1,"added":5})",             // prod, bad UTF-8 source: BAD_HEADER
      R"({"timestamp":1,"key":"r5","added":6})",  // dev then prod: the last counts
  };
  std::vector<kafka::OutgoingRecord> records(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    records[i].value = values[i];
    records[i].timestamp_ms = kBaseTimeMs + 1000 * static_cast<int64_t>(i);
    records[i].key = absl::string_view(i == 0 ? "user-0" : "user-x");
    records[i].headers = {{"source", std::string("web")}};
  }
  records[0].headers.push_back({"env", std::string("prod")});
  records[1].headers.push_back({"env", std::string("dev")});
  records[2].key = std::nullopt;
  records[2].headers.push_back({"env", std::string("prod")});
  records[4].headers = {{"env", std::string("prod")}, {"source", std::string("\xff")}};
  records[5].headers.push_back({"env", std::string("dev")});
  records[5].headers.push_back({"env", std::string("prod")});
  ASSERT_NO_FATAL_FAILURE(Produce(records));

  ASSERT_TRUE(c_.client->RunTask(spec).ok());
  const OffsetMap end = {{0, static_cast<int64_t>(values.size())}, {1, 0}};
  ASSERT_TRUE(c_.WaitUntilRead(id, end).ok());
  auto status = c_.client->Status(id);
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_EQ(status->row_stats().processed(), 3);
  EXPECT_EQ(status->row_stats().thrown_away(), 2);
  EXPECT_EQ(status->row_stats().unparseable(), 1);
  ASSERT_EQ(status->recent_parse_errors_size(), 1);
  EXPECT_EQ(status->recent_parse_errors(0).offset(), 4);
  EXPECT_EQ(status->recent_parse_errors(0).kind(), "BAD_HEADER");
  EXPECT_NE(status->recent_parse_errors(0).message().find("kafka.header.source"),
            std::string::npos)
      << status->recent_parse_errors(0).message();

  auto finished = c_.supervisor->Finish(0, absl::Seconds(20));
  ASSERT_TRUE(finished.ok()) << finished.status();
  EXPECT_EQ(*finished, end);
  auto final_status = c_.WaitUntilFinal(id);
  ASSERT_TRUE(final_status.ok()) << final_status.status();
  ASSERT_EQ(final_status->state(), v1::TASK_STATE_SUCCESS) << final_status->error();
  EXPECT_EQ(FromProto(final_status->current_offsets()), end);

  c_.produced[1];  // nothing produced there
  const absl::Status verified = VerifyExactlyOnce(*c_.supervisor, c_.deep.get(), kTestBase,
                                                  c_.produced, {{0, 0}, {1, 0}}, end);
  EXPECT_TRUE(verified.ok()) << verified;
  const auto log = c_.supervisor->CommitLog();
  ASSERT_EQ(log.size(), 1u);
  ASSERT_EQ(log[0].partition_stats_size(), 2);
  EXPECT_EQ(log[0].partition_stats(0).rows(), 3);
  EXPECT_EQ(log[0].partition_stats(0).thrown_away(), 2);
  EXPECT_EQ(log[0].partition_stats(0).unparseable(), 1);

  std::map<std::string, Row> by_key;
  for (Row& row : PublishedRows(c_)) by_key[row.dims["key"]] = std::move(row);
  ASSERT_EQ(by_key.size(), 3u);
  const Row& r0 = by_key["r0"];
  EXPECT_EQ(r0.time, kBaseTimeMs);
  EXPECT_EQ(r0.dims.at("kafka.key"), "user-0");
  EXPECT_EQ(r0.dims.at("kafka.header.env"), "prod");
  EXPECT_EQ(r0.dims.at("kafka.header.source"), "web");
  EXPECT_EQ(r0.dims.at("kafka.topic"), "wiki");
  EXPECT_EQ(r0.dims.at("timestamp"), "1");  // the value's field, now a dimension
  EXPECT_EQ(r0.dims.count("kafka.timestamp"), 0u);  // the row time, not a dimension
  const Row& r2 = by_key["r2"];
  EXPECT_EQ(r2.time, kBaseTimeMs + 2000);
  EXPECT_EQ(r2.dims.count("kafka.key"), 0u);  // a null key is a null dimension
  const Row& r5 = by_key["r5"];
  EXPECT_EQ(r5.time, kBaseTimeMs + 5000);
  EXPECT_EQ(r5.dims.at("kafka.header.env"), "prod");
  EXPECT_EQ(r5.dims.at("kafka.key"), "user-x");
}

}  // namespace
}  // namespace sluice::testing
