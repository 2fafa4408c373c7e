// Bad data: unparseable records are counted and sampled, rows outside the
// message time window are thrown away and counted, a sequence with no row is
// still committed (its offsets move), and past maxParseExceptions the task
// fails with a clear reason.
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "common/spec.h"
#include "tests/task_cluster.h"

namespace sluice::testing {
namespace {

using ::sluice::OffsetMap;

class TaskParseErrorsTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(c_.Start(/*auto_checkpoint=*/false).ok()); }
  TaskCluster c_;
};

TEST_F(TaskParseErrorsTest, BadRecordsAreCountedSampledAndCommittedWithTheirAccounting) {
  const std::string id = std::string(kTestBase) + "_0000dddd";
  SpecOptions spec = c_.Spec(id);
  spec.max_parse_exceptions = 10;
  spec.max_saved_parse_exceptions = 3;
  // Keep the first hour only: records with odd n fall in the second hour.
  spec.minimum_message_time_ms = kBaseTimeMs;
  spec.maximum_message_time_ms = kBaseTimeMs + 3600 * 1000 - 1;
  c_.supervisor->AddTask(0, id);

  // Sequence 0: partition 0 gets only unparseable records.
  ASSERT_TRUE(c_.ProduceValues(0, {"not json", R"({"key":"p0-x"})", "{\"timestamp\":\"soon\"}",
                                   std::string("\xff\xfe{", 3)})
                  .ok());
  ASSERT_TRUE(c_.client->RunTask(MakeSpec(spec)).ok());
  ASSERT_TRUE(c_.WaitUntilRead(id, {{0, 4}, {1, 0}}).ok());
  ASSERT_TRUE(c_.client->Pause(id).ok());
  ASSERT_TRUE(c_.client->SetEndOffsets(id, {{0, 4}, {1, 0}}, false).ok());
  ASSERT_TRUE(WaitFor([&] { return c_.supervisor->CommitLog().size() == 1; }, absl::Seconds(20)));
  const v1::CommittedSequence empty = c_.supervisor->CommitLog()[0];
  EXPECT_EQ(empty.segment_ids_size(), 0);
  EXPECT_EQ(FromProto(empty.end_offsets()), (OffsetMap{{0, 4}, {1, 0}}));
  ASSERT_EQ(empty.partition_stats_size(), 2);
  EXPECT_EQ(empty.partition_stats(0).unparseable(), 4);
  EXPECT_EQ(empty.partition_stats(0).rows(), 0);

  // Sequence 1: good records (half of them outside the window), one bad.
  ASSERT_TRUE(c_.Produce(0, 20).ok());  // n = 4..23 (n counts the values of the partition)
  ASSERT_TRUE(c_.ProduceValues(1, {R"({"timestamp":1,"added":"lots","key":"p1-bad"})"}).ok());
  ASSERT_TRUE(c_.Produce(1, 10).ok());
  ASSERT_TRUE(c_.WaitUntilRead(id, {{0, 24}, {1, 11}}).ok());

  auto status = c_.client->Status(id);
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(status->state(), v1::TASK_STATE_READING);
  EXPECT_EQ(status->row_stats().unparseable(), 5);
  EXPECT_EQ(status->row_stats().thrown_away(), 10 + 5);  // odd n: second hour
  EXPECT_EQ(status->row_stats().processed(), 10 + 5);
  // The last three samples, oldest first.
  ASSERT_EQ(status->recent_parse_errors_size(), 3);
  EXPECT_EQ(status->recent_parse_errors(0).partition(), 0);
  EXPECT_EQ(status->recent_parse_errors(0).offset(), 2);
  EXPECT_EQ(status->recent_parse_errors(0).kind(), "BAD_TIMESTAMP");
  EXPECT_EQ(status->recent_parse_errors(1).kind(), "NOT_JSON");
  EXPECT_EQ(status->recent_parse_errors(1).snippet(), "??{");  // not UTF-8: replaced
  EXPECT_EQ(status->recent_parse_errors(2).partition(), 1);
  EXPECT_EQ(status->recent_parse_errors(2).offset(), 0);
  EXPECT_EQ(status->recent_parse_errors(2).kind(), "BAD_NUMBER");

  ASSERT_TRUE(c_.supervisor->Finish(0, absl::Seconds(20)).ok());
  auto final_status = c_.WaitUntilFinal(id);
  ASSERT_TRUE(final_status.ok()) << final_status.status();
  ASSERT_EQ(final_status->state(), v1::TASK_STATE_SUCCESS) << final_status->error();
  const absl::Status verified = VerifyExactlyOnce(
      *c_.supervisor, c_.deep.get(), kTestBase, c_.produced, {{0, 0}, {1, 0}}, {{0, 24}, {1, 11}},
      spec.minimum_message_time_ms, spec.maximum_message_time_ms);
  EXPECT_TRUE(verified.ok()) << verified;
  const auto log = c_.supervisor->CommitLog();
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[1].partition_stats(1).unparseable(), 1);
  EXPECT_EQ(log[1].partition_stats(1).thrown_away(), 5);
  EXPECT_EQ(log[1].partition_stats(0).thrown_away(), 10);
}

TEST_F(TaskParseErrorsTest, MoreThanMaxParseExceptionsFailsTheTask) {
  const std::string id = std::string(kTestBase) + "_0000eeee";
  SpecOptions spec = c_.Spec(id);
  spec.max_parse_exceptions = 2;
  c_.supervisor->AddTask(0, id);
  ASSERT_TRUE(c_.Produce(0, 5).ok());
  ASSERT_TRUE(c_.ProduceValues(0, {"bad 1", "bad 2"}).ok());
  ASSERT_TRUE(c_.client->RunTask(MakeSpec(spec)).ok());
  ASSERT_TRUE(c_.WaitUntilRead(id, {{0, 7}, {1, 0}}).ok());
  // Two are tolerated.
  auto status = c_.client->Status(id);
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(status->state(), v1::TASK_STATE_READING);
  EXPECT_EQ(status->row_stats().unparseable(), 2);
  // One more fails the task.
  ASSERT_TRUE(c_.ProduceValues(0, {"bad 3"}).ok());
  auto final_status = c_.WaitUntilFinal(id);
  ASSERT_TRUE(final_status.ok()) << final_status.status();
  EXPECT_EQ(final_status->state(), v1::TASK_STATE_FAILED);
  EXPECT_NE(final_status->error().find("maxParseExceptions = 2"), std::string::npos)
      << final_status->error();
  EXPECT_NE(final_status->error().find("offset 7"), std::string::npos) << final_status->error();
  EXPECT_TRUE(c_.supervisor->CommitLog().empty());
  EXPECT_TRUE(WaitFor(
      [&] {
        auto reported = c_.supervisor->LastStatus(id);
        return reported.ok() && reported->state() == v1::TASK_STATE_FAILED;
      },
      absl::Seconds(5)));
}

// Values past the segment format's limits, in the same hour as valid rows:
// the records are VALUE_TOO_LARGE parse errors, and every valid row is
// committed in a segment that reads back (before the limits were shared,
// such a record made the whole segment unreadable after commit).
TEST_F(TaskParseErrorsTest, ValuesPastTheFormatLimitsAreParseErrorsAndTheRestIsCommitted) {
  const std::string id = std::string(kTestBase) + "_0000ffff";
  SpecOptions spec = c_.Spec(id);
  spec.max_parse_exceptions = 10;
  c_.supervisor->AddTask(0, id);
  std::string list = "[";
  for (int i = 0; i < 10000; ++i) list += i == 0 ? "\"a\"" : ",\"a\"";
  list += "]";
  const int64_t first_hour = kBaseTimeMs + 1500;
  ASSERT_TRUE(c_.Produce(0, 6).ok());
  ASSERT_TRUE(c_.ProduceValues(
                    0, {absl::StrCat(R"({"timestamp":)", first_hour, R"(,"page":")",
                                     std::string(3 << 20, 'H'), R"("})"),
                        absl::StrCat(R"({"timestamp":)", first_hour, R"(,"channel":)", list, "}")})
                  .ok());
  ASSERT_TRUE(c_.Produce(0, 6).ok());  // n = 8..13: the same two hours
  ASSERT_TRUE(c_.Produce(1, 4).ok());
  ASSERT_TRUE(c_.client->RunTask(MakeSpec(spec)).ok());
  ASSERT_TRUE(c_.WaitUntilRead(id, {{0, 14}, {1, 4}}).ok());
  auto status = c_.client->Status(id);
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(status->row_stats().unparseable(), 2);
  EXPECT_EQ(status->row_stats().processed(), 6 + 6 + 4);
  ASSERT_EQ(status->recent_parse_errors_size(), 2);
  EXPECT_EQ(status->recent_parse_errors(0).kind(), "VALUE_TOO_LARGE");
  EXPECT_EQ(status->recent_parse_errors(0).offset(), 6);
  EXPECT_NE(status->recent_parse_errors(0).message().find("\"page\""), std::string::npos)
      << status->recent_parse_errors(0).message();
  EXPECT_EQ(status->recent_parse_errors(1).kind(), "VALUE_TOO_LARGE");
  EXPECT_EQ(status->recent_parse_errors(1).offset(), 7);

  ASSERT_TRUE(c_.supervisor->Finish(0, absl::Seconds(20)).ok());
  auto final_status = c_.WaitUntilFinal(id);
  ASSERT_TRUE(final_status.ok()) << final_status.status();
  ASSERT_EQ(final_status->state(), v1::TASK_STATE_SUCCESS) << final_status->error();
  // Every committed segment reads back, and holds exactly the valid rows.
  const absl::Status verified = VerifyExactlyOnce(*c_.supervisor, c_.deep.get(), kTestBase,
                                                  c_.produced, {{0, 0}, {1, 0}}, {{0, 14}, {1, 4}});
  EXPECT_TRUE(verified.ok()) << verified;
  const auto log = c_.supervisor->CommitLog();
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0].partition_stats(0).unparseable(), 2);
  EXPECT_EQ(log[0].partition_stats(0).rows(), 12);
}

// The good records of the batch that holds the failing one are counted, and
// a task that ended holds nothing in memory.
TEST_F(TaskParseErrorsTest, AFailedTaskReportsExactRowStats) {
  const std::string id = std::string(kTestBase) + "_0000abab";
  SpecOptions spec = c_.Spec(id);
  spec.max_parse_exceptions = 0;
  c_.supervisor->AddTask(0, id);
  // One produce call, before the task starts: one Kafka batch holds all four.
  ASSERT_TRUE(c_.ProduceValues(0, {Record(0, 0), Record(0, 1), Record(0, 2), "bad"}).ok());
  ASSERT_TRUE(c_.client->RunTask(MakeSpec(spec)).ok());
  auto final_status = c_.WaitUntilFinal(id);
  ASSERT_TRUE(final_status.ok()) << final_status.status();
  EXPECT_EQ(final_status->state(), v1::TASK_STATE_FAILED);
  EXPECT_EQ(final_status->row_stats().processed(), 3);
  EXPECT_EQ(final_status->row_stats().unparseable(), 1);
  EXPECT_EQ(final_status->row_stats().rows_in_memory(), 0);
  EXPECT_EQ(final_status->row_stats().bytes_in_memory(), 0);
  // The same through the status call and what the supervisor was told.
  auto status = c_.client->Status(id);
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(status->row_stats().processed(), 3);
  EXPECT_EQ(status->row_stats().rows_in_memory(), 0);
  EXPECT_EQ(status->row_stats().bytes_in_memory(), 0);
  EXPECT_TRUE(WaitFor(
      [&] {
        auto reported = c_.supervisor->LastStatus(id);
        return reported.ok() && reported->state() == v1::TASK_STATE_FAILED &&
               reported->row_stats().processed() == 3 &&
               reported->row_stats().bytes_in_memory() == 0;
      },
      absl::Seconds(5)));
}

// A task stopped gracefully holds nothing in memory either.
TEST_F(TaskParseErrorsTest, AStoppedTaskHoldsNothingInMemory) {
  const std::string id = std::string(kTestBase) + "_0000acac";
  c_.supervisor->AddTask(0, id);
  ASSERT_TRUE(c_.Produce(0, 5).ok());
  ASSERT_TRUE(c_.client->RunTask(MakeSpec(c_.Spec(id))).ok());
  ASSERT_TRUE(c_.WaitUntilRead(id, {{0, 5}, {1, 0}}).ok());
  ASSERT_TRUE(c_.client->Stop(id, v1::STOP_MODE_GRACEFUL).ok());
  auto final_status = c_.WaitUntilFinal(id);
  ASSERT_TRUE(final_status.ok()) << final_status.status();
  EXPECT_EQ(final_status->row_stats().processed(), 5);
  EXPECT_EQ(final_status->row_stats().rows_in_memory(), 0);
  EXPECT_EQ(final_status->row_stats().bytes_in_memory(), 0);
}

}  // namespace
}  // namespace sluice::testing
