#include "tools/segment/inspect.h"

#include <sys/stat.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>

#include "absl/strings/str_split.h"
#include "tools/segment/segment_fixture.h"

namespace sluice {
namespace tools {
namespace {

TEST(Json, StringsAndDoubles) {
  EXPECT_EQ(JsonString("plain"), "\"plain\"");
  EXPECT_EQ(JsonString("q\"b\\n\n\x01"), "\"q\\\"b\\\\n\\n\\u0001\"");
  EXPECT_EQ(JsonString("Café 日本 🎉"), "\"Café 日本 🎉\"");
  EXPECT_EQ(JsonString("bad\xff\xc3"), "\"bad\\u00ff\\u00c3\"");
  EXPECT_EQ(JsonDouble(0.1), "0.1");
  EXPECT_EQ(JsonDouble(-4), "-4");
  EXPECT_EQ(JsonDouble(1e-320), "1e-320");
  EXPECT_EQ(JsonDouble(0.30000000000000004), "0.30000000000000004");
  EXPECT_EQ(JsonDouble(std::numeric_limits<double>::quiet_NaN()), "\"NaN\"");
  EXPECT_EQ(JsonDouble(-std::numeric_limits<double>::infinity()), "\"-Infinity\"");
}

class Inspect : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/" +
                            ::testing::UnitTest::GetInstance()->current_test_info()->name();
    mkdir(dir.c_str(), 0755);
    fixture_ = MakeFixture(dir);
  }
  Fixture fixture_;
};

TEST_F(Inspect, DumpPrintsOneJsonObjectPerRow) {
  auto reader = segment::SegmentReader::Open(fixture_.segment);
  ASSERT_TRUE(reader.ok()) << reader.status();
  std::ostringstream out;
  ASSERT_TRUE(DumpJsonLines(reader->get(), {}, out).ok());
  EXPECT_EQ(out.str(),
            "{\"__time\":\"2026-11-30T02:15:00.000Z\",\"channel\":\"#en\",\"page\":\"Café "
            "\\\"Zürich\\\"\",\"count\":2,\"added\":15,\"delta\":1.75}\n"
            "{\"__time\":\"2026-11-30T02:16:00.000Z\",\"channel\":\"#de\",\"page\":\"Berlin\","
            "\"count\":1,\"added\":-4,\"delta\":-4}\n"
            "{\"__time\":\"2026-11-30T02:17:00.000Z\",\"channel\":null,\"page\":\"line\\nbreak\","
            "\"count\":1,\"added\":0,\"delta\":0.1}\n"
            "{\"__time\":\"2026-11-30T02:17:00.000Z\",\"channel\":\"#de\",\"page\":null,"
            "\"count\":1,\"added\":1,\"delta\":1e-320}\n");
  std::ostringstream limited;
  ASSERT_TRUE(DumpJsonLines(reader->get(), {.limit = 1}, limited).ok());
  const std::string one = limited.str();
  EXPECT_EQ(std::count(one.begin(), one.end(), '\n'), 1);
}

TEST_F(Inspect, DumpOfASpillShowsPartitionAndOffset) {
  auto reader = segment::SegmentReader::Open(fixture_.spill);
  ASSERT_TRUE(reader.ok()) << reader.status();
  std::ostringstream out;
  ASSERT_TRUE(DumpJsonLines(reader->get(), {}, out).ok());
  const std::vector<std::string> lines = absl::StrSplit(out.str(), '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_NE(lines[0].find("\"__partition\":0,\"__offset\":0}"), std::string::npos) << lines[0];
}

TEST_F(Inspect, StatsShowMetadataColumnsAndProvenance) {
  auto reader = segment::SegmentReader::Open(fixture_.segment);
  ASSERT_TRUE(reader.ok());
  std::ostringstream out;
  PrintStats(fixture_.segment, reader->get(), out);
  const std::string s = out.str();
  for (const char* expected :
       {"kind:        segment (format v1)", "crc32c:", "datasource:  wiki, version 2026-11-30T02:00:05.000Z",
        "interval:    2026-11-30T02:00:00.000Z/2026-11-30T03:00:00.000Z",
        "rows:        4 (from 5 input records)", "query granularity MINUTE, rollup on",
        "partition 0: offsets [0, 5), 5 rows", "partition 1: offsets [40, 40), 0 rows",
        "channel", "cardinality 2", "bitmaps", "doubleSum of \"delta\""}) {
    EXPECT_NE(s.find(expected), std::string::npos) << "missing \"" << expected << "\" in\n" << s;
  }
  auto spill = segment::SegmentReader::Open(fixture_.spill);
  ASSERT_TRUE(spill.ok());
  std::ostringstream spill_out;
  PrintStats(fixture_.spill, spill->get(), spill_out);
  EXPECT_NE(spill_out.str().find("partition 0: 5 records, offsets 0..4"), std::string::npos)
      << spill_out.str();
  EXPECT_NE(spill_out.str().find("{\\\"next\\\""), std::string::npos) << spill_out.str();
}

TEST_F(Inspect, VerifyReportsOkOrTheReason) {
  std::ostringstream out;
  ASSERT_TRUE(VerifyFile(fixture_.segment, out).ok());
  EXPECT_NE(out.str().find("OK "), std::string::npos);
  EXPECT_NE(out.str().find("4 rows"), std::string::npos);
  const absl::Status missing = VerifyFile(fixture_.segment + ".nope", out);
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace tools
}  // namespace sluice
