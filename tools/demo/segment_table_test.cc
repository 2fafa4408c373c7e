#include "tools/demo/segment_table.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sluice {
namespace demo {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr int64_t kHour = 3600 * 1000;
constexpr int64_t k0200 = 1796004000000;  // 2026-11-30T02:00:00Z

v1::SegmentDescriptor Segment(const std::string& sequence, int32_t partition, int64_t start,
                              int64_t end, int64_t rows, int partition_num) {
  v1::SegmentDescriptor s;
  s.set_id(sequence + "_seg");
  s.set_sequence_name(sequence);
  s.mutable_interval()->set_start_ms(k0200);
  s.mutable_interval()->set_end_ms(k0200 + kHour);
  s.set_partition_num(partition_num);
  s.set_num_rows(rows);
  s.set_size_bytes(rows * 50);
  s.set_handoff_state(v1::HANDOFF_STATE_HANDED_OFF);
  v1::PartitionRange* r = s.mutable_provenance()->add_ranges();
  r->set_partition(partition);
  r->set_start_offset(start);
  r->set_end_offset(end);
  r->set_rows(rows);
  return s;
}

TEST(SegmentTableTest, KafkaOrderRangesAndTotals) {
  std::vector<v1::SegmentDescriptor> segments = {Segment("wiki_b_0", 1, 0, 100, 100, 1),
                                                 Segment("wiki_a_1", 0, 100, 150, 50, 2),
                                                 Segment("wiki_a_0", 0, 0, 100, 99, 0)};
  segments[1].set_handoff_state(v1::HANDOFF_STATE_PENDING);
  const std::string table = FormatSegmentTable(segments);
  EXPECT_THAT(table, HasSubstr("INTERVAL"));
  EXPECT_THAT(table, HasSubstr("2026-11-30T02:00/03:00"));
  EXPECT_THAT(table, HasSubstr("p0[100,150)=50"));
  EXPECT_THAT(table, HasSubstr("pending"));
  EXPECT_THAT(table, HasSubstr("3 segments, 249 rows"));
  // Partition 0 from offset 0, then from 100, then partition 1.
  const size_t a0 = table.find("wiki_a_0");
  const size_t a1 = table.find("wiki_a_1");
  const size_t b0 = table.find("wiki_b_0");
  EXPECT_LT(a0, a1);
  EXPECT_LT(a1, b0);
}

TEST(SegmentTableTest, LongListsShowTheEndsAndCountTheRest) {
  std::vector<v1::SegmentDescriptor> segments;
  for (int i = 0; i < 30; ++i) {
    segments.push_back(Segment("wiki_a_" + std::to_string(i), 0, i * 10, i * 10 + 10, 10, i));
  }
  const std::string table = FormatSegmentTable(segments, 6);
  EXPECT_THAT(table, HasSubstr("wiki_a_0 "));
  EXPECT_THAT(table, HasSubstr("wiki_a_2 "));
  EXPECT_THAT(table, Not(HasSubstr("wiki_a_3 ")));
  EXPECT_THAT(table, HasSubstr("... 24 more"));
  EXPECT_THAT(table, HasSubstr("wiki_a_29"));
  EXPECT_THAT(table, HasSubstr("30 segments, 300 rows"));
  EXPECT_EQ(FormatSegmentTable({}), "no segments\n");
}

}  // namespace
}  // namespace demo
}  // namespace sluice
