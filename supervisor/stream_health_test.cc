#include "supervisor/stream_health.h"

#include <gtest/gtest.h>

namespace sluice::supervisor {
namespace {

TEST(StreamHealth, OnlyUnreachableErrorsMeanUnreachable) {
  EXPECT_TRUE(IsUnreachable(absl::UnavailableError("all brokers down")));
  EXPECT_TRUE(IsUnreachable(absl::DeadlineExceededError("timed out")));
  EXPECT_FALSE(IsUnreachable(absl::NotFoundError("unknown topic")));
  EXPECT_FALSE(IsUnreachable(absl::InvalidArgumentError("bad property")));
  EXPECT_FALSE(IsUnreachable(absl::OkStatus()));
}

TEST(StreamHealth, StoredOffsetsWithinTheWatermarksAreFine) {
  const std::map<int32_t, PartitionWatermarks> marks = {{0, {10, 100}}, {1, {0, 50}}};
  EXPECT_EQ(CheckStoredOffsets({{0, 10}, {1, 50}}, marks, {0, 1}, false).problem,
            StreamProblem::kNone);
  // A partition Kafka did not describe is not judged.
  EXPECT_EQ(CheckStoredOffsets({{7, 1000}}, marks, {7}, false).problem, StreamProblem::kNone);
}

TEST(StreamHealth, BelowTheEarliestIsUnavailableWhereANewGroupWouldStart) {
  const std::map<int32_t, PartitionWatermarks> marks = {{0, {10, 100}}, {1, {0, 50}}};
  const StreamVerdict v = CheckStoredOffsets({{0, 5}, {1, 20}}, marks, {0}, false);
  EXPECT_EQ(v.problem, StreamProblem::kStoredOffsetsUnavailable);
  EXPECT_NE(v.message.find("0: stored 5 < earliest 10"), std::string::npos) << v.message;
  // A group reading the partition already got past it; automatic reset fixes it.
  EXPECT_EQ(CheckStoredOffsets({{0, 5}}, marks, {}, false).problem, StreamProblem::kNone);
  EXPECT_EQ(CheckStoredOffsets({{0, 5}}, marks, {0}, true).problem, StreamProblem::kNone);
}

TEST(StreamHealth, AboveTheLatestIsPastTheEndWhateverReadsIt) {
  const std::map<int32_t, PartitionWatermarks> marks = {{0, {10, 100}}, {1, {0, 50}}};
  const StreamVerdict v = CheckStoredOffsets({{0, 5}, {1, 80}}, marks, {0, 1}, false);
  EXPECT_EQ(v.problem, StreamProblem::kStoredOffsetsPastEnd);
  EXPECT_NE(v.message.find("1: stored 80 > latest 50"), std::string::npos) << v.message;
  EXPECT_EQ(CheckStoredOffsets({{1, 80}}, marks, {}, true).problem,
            StreamProblem::kStoredOffsetsPastEnd);
}

}  // namespace
}  // namespace sluice::supervisor
