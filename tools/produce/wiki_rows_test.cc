#include "tools/produce/wiki_rows.h"

#include <gtest/gtest.h>

#include <set>

#include "common/segment/row_parser.h"

namespace sluice {
namespace bench {
namespace {

TEST(WikiRows, SeededShapeAndSize) {
  const std::vector<std::string> a = WikiRecords(5000, {});
  const std::vector<std::string> b = WikiRecords(5000, {});
  EXPECT_EQ(a, b);  // same seed, same records
  WikiRowOptions other;
  other.seed = 2;
  EXPECT_NE(WikiRecords(10, other), std::vector<std::string>(a.begin(), a.begin() + 10));
  size_t bytes = 0;
  for (const std::string& r : a) bytes += r.size();
  const double mean = static_cast<double>(bytes) / a.size();
  EXPECT_GT(mean, 190);
  EXPECT_LT(mean, 240);

  auto parser = segment::RowParser::Create(WikiSchema(true));
  ASSERT_TRUE(parser.ok());
  segment::InputRow row;
  std::set<std::string> pages, channels;
  int64_t previous = 0;
  for (const std::string& r : a) {
    segment::ParseError e = (*parser)->Parse(r, &row);
    ASSERT_TRUE(e.ok()) << r << ": " << e.message;
    EXPECT_GE(row.timestamp_ms, previous);
    previous = row.timestamp_ms;
    for (const auto& d : row.dims) ASSERT_TRUE(d.present);
    channels.emplace(row.dims[0].text);
    pages.emplace(row.dims[1].text);
    EXPECT_TRUE(row.metrics[1].present && row.metrics[3].present);
  }
  EXPECT_LE(channels.size(), 20u);
  EXPECT_GT(pages.size(), 1000u);  // high cardinality
}

TEST(WikiRows, MalformedRecordsAreCountedAndFailToParse) {
  WikiRowOptions options;
  options.malformed_fraction = 0.1;
  WikiRowGenerator gen(options);
  auto parser = segment::RowParser::Create(WikiSchema(false));
  ASSERT_TRUE(parser.ok());
  segment::InputRow row;
  uint64_t failed = 0;
  for (int i = 0; i < 2000; ++i) failed += !(*parser)->Parse(gen.Next(), &row).ok();
  EXPECT_EQ(failed, gen.malformed());
  EXPECT_GT(failed, 100u);
  EXPECT_LT(failed, 320u);
}

TEST(WikiRows, LiveClockStampsEachRecordWhenGenerated) {
  WikiRowOptions options;
  int64_t now_ms = 1800000000000;
  options.live_clock_ms = [&now_ms] { return now_ms; };
  WikiRowGenerator gen(options);
  auto parser = segment::RowParser::Create(WikiSchema(false));
  ASSERT_TRUE(parser.ok());
  segment::InputRow row;
  ASSERT_TRUE((*parser)->Parse(gen.Next(), &row).ok());
  EXPECT_EQ(row.timestamp_ms, 1800000000000);
  now_ms += 1234;
  ASSERT_TRUE((*parser)->Parse(gen.Next(), &row).ok());
  EXPECT_EQ(row.timestamp_ms, 1800000001234);
  EXPECT_EQ(gen.last_time_ms(), 1800000001234);
}

}  // namespace
}  // namespace bench
}  // namespace sluice
