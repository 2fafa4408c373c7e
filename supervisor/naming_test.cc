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

TEST(NamingTest, TaskIdsAreValidUniqueAndCarryTheBaseName) {
  const std::string base = "wiki_0123456789abcdef";
  const std::string a = NewTaskId(base);
  EXPECT_NE(a, NewTaskId(base));
  EXPECT_EQ(a.size(), base.size() + 9);
  EXPECT_EQ(a.rfind(base + "_", 0), 0u);
  EXPECT_TRUE(ValidateTaskId(a).ok());
  EXPECT_EQ(SequenceName(base, 3), base + "_3");
}

TEST(NamingTest, SegmentIdFormat) {
  EXPECT_EQ(SegmentId("wiki", 1796004000000, 1796007600000, "2026-12-01T00:00:00.000Z", 2),
            "wiki_2026-11-30T02:00:00.000Z_2026-11-30T03:00:00.000Z_2026-12-01T00:00:00.000Z_2");
}

}  // namespace
}  // namespace sluice::supervisor
