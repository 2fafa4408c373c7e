// Process-level scenarios of the supervisor's lifecycle operations under
// load: task duration roll-overs while records keep coming, suspend then
// resume, and operator offset resets (rewinding a partition, rewinding a
// whole group to where it started, skipping forward) while reading. Every
// scenario ends with everything produced committed and the exactly-once
// audit; after a reset the audit passes with the reset declared from the
// commit log (the range read again or skipped), as `sluicectl verify` does.
#include <gtest/gtest.h>

#include <set>

#include "absl/strings/str_cat.h"
#include "tests/fault/fault_scenario.h"
#include "tests/fault/scenario_test_util.h"

namespace sluice::fault {
namespace {

std::string BaseName(const std::string& sequence_name) {
  return sequence_name.substr(0, sequence_name.rfind('_'));
}

// Groups roll over every few seconds while records arrive: each generation
// publishes in the background while the next one reads from its end.
TEST(LifecycleFaults, TaskDurationRollOverUnderLoad) {
  ScenarioOptions options;
  options.name = "roll_over_under_load";
  options.seed = 41;
  options.task_duration = "PT4S";
  std::unique_ptr<FaultScenario> s = StartScenario(options);
  ASSERT_NE(s, nullptr);
  s->StartProducing(kRecords, absl::Seconds(12));
  ASSERT_OK(s->Finish());
  absl::StatusOr<v1::GetCommitLogResponse> log = s->CommitLog();
  ASSERT_TRUE(log.ok()) << log.status();
  std::set<std::string> generations;
  for (const v1::CommittedSequence& seq : log->sequences()) {
    generations.insert(BaseName(seq.sequence_name()));
  }
  // Two groups, each rolled over at least once while records came.
  EXPECT_GE(generations.size(), 4u) << s->Context();
}

// Suspended mid-run: the groups finish and publish what they read, nothing
// reads while suspended (records keep coming), and resume starts new groups
// from the stored offsets.
TEST(LifecycleFaults, SuspendThenResume) {
  ScenarioOptions options;
  options.name = "suspend_then_resume";
  options.seed = 42;
  std::unique_ptr<FaultScenario> s = StartScenario(options);
  ASSERT_NE(s, nullptr);
  s->StartProducing(kRecords, kProduceFor);
  ASSERT_OK(s->WaitUntilCommittedSequences(2));
  ASSERT_OK(s->Suspend());
  ASSERT_OK(s->WaitUntil("suspended with no group left", absl::Seconds(90),
                         [&]() -> absl::StatusOr<bool> {
                           absl::StatusOr<v1::SupervisorStatus> status = s->Status();
                           if (!status.ok()) return status.status();
                           return status->state() == v1::SUPERVISOR_STATE_SUSPENDED &&
                                  status->active_groups_size() == 0 &&
                                  status->publishing_groups_size() == 0;
                         }));
  // Nothing is read while suspended: the committed offsets stay put.
  absl::StatusOr<v1::GetCommitLogResponse> before = s->CommitLog();
  ASSERT_TRUE(before.ok()) << before.status();
  ASSERT_OK(s->WaitProduced());
  absl::StatusOr<v1::GetCommitLogResponse> after = s->CommitLog();
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(PartitionOffsets(before->committed_offsets().begin(), before->committed_offsets().end()),
            PartitionOffsets(after->committed_offsets().begin(), after->committed_offsets().end()))
      << s->Context();
  ASSERT_OK(s->Resume());
  ASSERT_OK(s->Finish());
}

// Partition 0 rewound to offset 0 while reading: its group is restarted, the
// records of [0, committed) are ingested a second time, exactly once more.
TEST(LifecycleFaults, ResetOffsetsRewindsAPartition) {
  ScenarioOptions options;
  options.name = "reset_offsets_rewind_partition";
  options.seed = 43;
  std::unique_ptr<FaultScenario> s = StartScenario(options);
  ASSERT_NE(s, nullptr);
  s->StartProducing(kRecords, kProduceFor);
  ASSERT_OK(s->WaitUntilCommittedSequences(3));
  const PartitionOffsets reset = {{0, 0}};
  ASSERT_OK(s->ResetOffsets(reset));
  ASSERT_OK(s->Finish(reset));
}

// A whole group (partitions 0 and 2) rewound to where it started: the new
// group starts from the same offsets as the very first one did.
TEST(LifecycleFaults, ResetOffsetsRewindsAGroupToItsStart) {
  ScenarioOptions options;
  options.name = "reset_offsets_rewind_group";
  options.seed = 44;
  std::unique_ptr<FaultScenario> s = StartScenario(options);
  ASSERT_NE(s, nullptr);
  s->StartProducing(kRecords, kProduceFor);
  ASSERT_OK(s->WaitUntilCommittedSequences(3));
  const PartitionOffsets reset = {{0, 0}, {2, 0}};
  ASSERT_OK(s->ResetOffsets(reset));
  ASSERT_OK(s->Finish(reset));
}

// Partition 1 skipped forward past records nobody read: set to 500 records
// past its current end, so the skipped ones arrive after the reset (the new
// task waits at an offset Kafka does not have yet). They are never ingested;
// everything before and after is, exactly once.
TEST(LifecycleFaults, ResetOffsetsSkipsForward) {
  ScenarioOptions options;
  options.name = "reset_offsets_skip_forward";
  options.seed = 45;
  std::unique_ptr<FaultScenario> s = StartScenario(options);
  ASSERT_NE(s, nullptr);
  ASSERT_OK(s->Produce(kRecords / 2));
  ASSERT_OK(s->WaitUntilCommittedSequences(1));
  const PartitionOffsets reset = {{1, s->produced().end_offsets.at(1) + 500}};
  ASSERT_OK(s->ResetOffsets(reset));
  s->StartProducing(kRecords / 2, absl::Seconds(4));
  ASSERT_OK(s->Finish(reset));
}

}  // namespace
}  // namespace sluice::fault
