#include "supervisor/naming.h"

#include <gtest/gtest.h>

#include "common/names.h"

namespace sluice::supervisor {
namespace {

TEST(NamingTest, BaseSequenceNameDependsOnlyOnItsInputs) {
  v1::DataSchema schema;
  schema.mutable_granularity_spec()->set_segment_granularity("HOUR");
  v1::TuningConfig tuning;
  tuning.set_max_rows_per_segment(1000);
  const std::string a = BaseSequenceName("wiki", schema, tuning, {{0, 5}, {2, 7}}, 0, 100);
  EXPECT_EQ(a, BaseSequenceName("wiki", schema, tuning, {{2, 7}, {0, 5}}, 0, 100));
  EXPECT_EQ(a.size(), std::string("wiki_").size() + 16);
  EXPECT_EQ(a.rfind("wiki_", 0), 0u);
  EXPECT_NE(a, BaseSequenceName("wiki", schema, tuning, {{0, 6}, {2, 7}}, 0, 100));
  EXPECT_NE(a, BaseSequenceName("wiki", schema, tuning, {{0, 5}, {2, 7}}, 1, 100));
  tuning.set_max_rows_per_segment(1001);
  EXPECT_NE(a, BaseSequenceName("wiki", schema, tuning, {{0, 5}, {2, 7}}, 0, 100));
}

TEST(NamingTest, OffsetResetsOfTheGroupsPartitionsChangeTheBaseName) {
  v1::DataSchema schema;
  v1::TuningConfig tuning;
  const OffsetMap start = {{0, 0}, {2, 0}};
  const std::string never = BaseSequenceName("wiki", schema, tuning, start, 0, 0);
  // No resets, or resets of other partitions only: the name is as before.
  EXPECT_EQ(never, BaseSequenceName("wiki", schema, tuning, start, 0, 0, {}));
  EXPECT_EQ(never, BaseSequenceName("wiki", schema, tuning, start, 0, 0, {{1, 3}, {2, 0}}));
  const std::string once = BaseSequenceName("wiki", schema, tuning, start, 0, 0, {{2, 1}});
  EXPECT_NE(never, once);
  EXPECT_NE(once, BaseSequenceName("wiki", schema, tuning, start, 0, 0, {{2, 2}}));
  EXPECT_NE(once, BaseSequenceName("wiki", schema, tuning, start, 0, 0, {{0, 1}}));
  EXPECT_EQ(once, BaseSequenceName("wiki", schema, tuning, start, 0, 0, {{1, 9}, {2, 1}}));
}

TEST(NamingTest, TheInputFormatAndHeaderFilterChangeTheBaseNameWhenSet) {
  v1::DataSchema schema;
  v1::TuningConfig tuning;
  v1::IoConfig io;
  EXPECT_EQ(InputParsingBytes(io), "");
  const std::string plain = BaseSequenceName("wiki", schema, tuning, {{0, 5}}, 0, 0);
  EXPECT_EQ(plain, BaseSequenceName("wiki", schema, tuning, {{0, 5}}, 0, 0, {}, InputParsingBytes(io)));
  io.mutable_input_format()->set_type("kafka");
  const std::string kafka =
      BaseSequenceName("wiki", schema, tuning, {{0, 5}}, 0, 0, {}, InputParsingBytes(io));
  EXPECT_NE(kafka, plain);
  io.mutable_header_based_filter_config()->mutable_filter()->set_type("selector");
  EXPECT_NE(BaseSequenceName("wiki", schema, tuning, {{0, 5}}, 0, 0, {}, InputParsingBytes(io)),
            kafka);
}

TEST(NamingTest, TaskIdsAreValidUniqueAndCarryTheBaseName) {
  const std::string base = "wiki_0123456789abcdef";
  const std::string a = NewTaskId(base);
  EXPECT_NE(a, NewTaskId(base));
  EXPECT_EQ(a.size(), base.size() + 9);
  EXPECT_EQ(a.rfind(base + "_", 0), 0u);
  EXPECT_TRUE(ValidateTaskId(a).ok());
  EXPECT_EQ(SequenceName(base, 3), base + "_3");
}

TEST(NamingTest, SequenceNamesHaveOneCanonicalForm) {
  for (int32_t id : {0, 7, 10, 2147483647}) {
    auto parsed = ParseSequenceName("wiki_b", SequenceName("wiki_b", id));
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed, id);
  }
  for (const char* alias : {"wiki_b_007", "wiki_b_00", "wiki_b_+7", "wiki_b_-7", "wiki_b_ 7",
                            "wiki_b_7 ", "wiki_b_", "wiki_b_0x7", "wiki_b_2147483648",
                            "wiki_b_99999999999999999999"}) {
    auto parsed = ParseSequenceName("wiki_b", alias);
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument) << alias;
    EXPECT_NE(parsed.status().message().find(alias), absl::string_view::npos)
        << parsed.status();
  }
  // Another group's sequence, or no sequence at all.
  for (const char* other : {"wiki_c_7", "wiki_b7", "wiki_bb_7", "wiki"}) {
    EXPECT_EQ(ParseSequenceName("wiki_b", other).status().code(), absl::StatusCode::kNotFound)
        << other;
  }
}

TEST(NamingTest, SegmentIdFormat) {
  EXPECT_EQ(SegmentId("wiki", 1796004000000, 1796007600000, "2026-12-01T00:00:00.000Z", 2),
            "wiki_2026-11-30T02:00:00.000Z_2026-11-30T03:00:00.000Z_2026-12-01T00:00:00.000Z_2");
}

}  // namespace
}  // namespace sluice::supervisor
