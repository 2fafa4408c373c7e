#include "supervisor/stream_health.h"

#include <gtest/gtest.h>

#include "common/kafka/auth_failure.h"

namespace sluice::supervisor {
namespace {

TEST(StreamHealth, OnlyUnreachableErrorsMeanUnreachable) {
  EXPECT_TRUE(IsUnreachable(absl::UnavailableError("all brokers down")));
  EXPECT_TRUE(IsUnreachable(absl::DeadlineExceededError("timed out")));
  EXPECT_FALSE(IsUnreachable(absl::NotFoundError("unknown topic")));
  EXPECT_FALSE(IsUnreachable(absl::InvalidArgumentError("bad property")));
  EXPECT_FALSE(IsUnreachable(absl::OkStatus()));
  // Refused credentials keep the datasource from Kafka just as well.
  EXPECT_TRUE(IsUnreachable(kafka::AuthFailureStatus(
      RD_KAFKA_RESP_ERR__AUTHENTICATION, "list partitions", "Authentication failed",
      {{"security.protocol", "SASL_SSL"}, {"sasl.mechanism", "PLAIN"}})));
  EXPECT_FALSE(IsUnreachable(absl::PermissionDeniedError("not allowed")));
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

TEST(StreamHealth, AnOutOfRangeReportIsJudgedByKafkaAndTheCommittedOffset) {
  const std::map<int32_t, PartitionWatermarks> marks = {{0, {50, 100}}};
  // Kafka holds the offset: false, never reset.
  OutOfRangeJudgement j = JudgeOutOfRangeReport("t", {{0, 70}}, {{0, 60}}, marks);
  EXPECT_TRUE(j.reset.empty());
  EXPECT_TRUE(j.task_suspect);
  // Before a committed offset Kafka holds: not reset (was: back to 50).
  j = JudgeOutOfRangeReport("t", {{0, 10}}, {{0, 60}}, marks);
  EXPECT_TRUE(j.reset.empty());
  EXPECT_TRUE(j.task_suspect);
  // Past the latest with the committed offset held: waits.
  j = JudgeOutOfRangeReport("t", {{0, 120}}, {{0, 60}}, marks);
  EXPECT_TRUE(j.reset.empty());
  EXPECT_FALSE(j.task_suspect);
  // Committed and wanted below earliest: forward, the gap is lost.
  j = JudgeOutOfRangeReport("t", {{0, 30}}, {{0, 20}}, marks);
  EXPECT_EQ(j.reset, (OffsetMap{{0, 50}}));
  EXPECT_EQ(j.lost, (OffsetMap{{0, 30}}));
  EXPECT_FALSE(j.task_suspect);
  // Committed past the latest: nothing lost, never reset back.
  j = JudgeOutOfRangeReport("t", {{0, 150}}, {{0, 150}}, marks);
  EXPECT_TRUE(j.reset.empty());
  ASSERT_EQ(j.findings.size(), 1u);
  EXPECT_NE(j.findings[0].find("no committed record was lost"), std::string::npos);
  // Unknown partition: not reset.
  j = JudgeOutOfRangeReport("t", {{3, 0}}, {}, marks);
  EXPECT_TRUE(j.reset.empty());
}

}  // namespace
}  // namespace sluice::supervisor
