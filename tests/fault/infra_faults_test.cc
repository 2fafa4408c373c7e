// Process-level fault scenarios of what sluice depends on: the Kafka broker
// off the network for several seconds, and deep storage refusing every write
// for a while (also past the completion timeout of publishing groups). Every
// scenario ends with everything produced committed and the exactly-once audit.
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "tests/fault/fault_scenario.h"
#include "tests/fault/scenario_test_util.h"

namespace sluice::fault {
namespace {

// The only broker is off the network for 4 s while records are produced and
// read: consumers, the supervisor's metadata and the producer all wait, and
// pick up where they were once it is back (same port).
TEST(InfraFaults, BrokerDownForSecondsThenUp) {
  std::unique_ptr<FaultScenario> s = StartScenario("broker_down_then_up", 31);
  ASSERT_NE(s, nullptr);
  s->StartProducing(kRecords, kProduceFor);
  ASSERT_OK(s->WaitUntilCommittedSequences(2));
  absl::StatusOr<std::string> down = s->cluster().BrokerCommand("broker down 1");
  ASSERT_TRUE(down.ok()) << down.status();
  absl::SleepFor(absl::Seconds(4));  // the outage (nothing is asserted meanwhile)
  absl::StatusOr<std::string> up = s->cluster().BrokerCommand("broker up 1");
  ASSERT_TRUE(up.ok()) << up.status();
  ASSERT_OK(s->Finish());
}

// Three brokers: one goes off the network for 5 s (the partitions it leads
// stall, the others go on), then partition leadership moves while reading.
TEST(InfraFaults, ThreeBrokersOneDownThenLeadersMove) {
  ScenarioOptions options;
  options.name = "three_brokers_failover";
  options.seed = 34;
  options.brokers = 3;
  absl::StatusOr<std::unique_ptr<FaultScenario>> started = FaultScenario::Start(options);
  ASSERT_TRUE(started.ok()) << started.status();
  FaultScenario* s = started->get();
  s->StartProducing(kRecords, absl::Seconds(10));
  ASSERT_OK(s->WaitUntilCommittedSequences(2));
  for (const char* command : {"broker down 2"}) {
    absl::StatusOr<std::string> reply = s->cluster().BrokerCommand(command);
    ASSERT_TRUE(reply.ok()) << command << ": " << reply.status();
  }
  absl::SleepFor(absl::Seconds(5));  // the outage (nothing is asserted meanwhile)
  for (const char* command : {"broker up 2", "leader wiki 0 3", "leader wiki 1 1",
                              "leader wiki 2 2", "leader wiki 3 3"}) {
    absl::StatusOr<std::string> reply = s->cluster().BrokerCommand(command);
    ASSERT_TRUE(reply.ok()) << command << ": " << reply.status();
  }
  ASSERT_OK(s->Finish());
}

// Every push fails (UNAVAILABLE) for a while: closed sequences wait in the
// publishers, reading goes on, and everything is published once writes work
// again. Nothing half-written may be referenced.
TEST(InfraFaults, DeepStorageFailsWritesForAWhile) {
  std::unique_ptr<FaultScenario> s = StartScenario("deep_storage_fails_writes", 32);
  ASSERT_NE(s, nullptr);
  s->StartProducing(kRecords, kProduceFor);
  ASSERT_OK(s->WaitUntilCommittedSequences(1));
  ASSERT_OK(s->SetDeepStorageDown(true));
  // Some worker has run into it.
  ASSERT_OK(s->WaitUntil("a push refused by deep storage", absl::Seconds(60),
                         [&]() -> absl::StatusOr<bool> {
                           for (int i = 0; i < s->options().workers; ++i) {
                             absl::StatusOr<std::string> log =
                                 ReadFile(s->cluster().log_path(cluster::WorkerName(i)));
                             if (log.ok() && absl::StrContains(*log, "[fault] deep_storage.push")) {
                               return true;
                             }
                           }
                           return false;
                         }));
  absl::SleepFor(absl::Seconds(5));  // the outage goes on (nothing is asserted meanwhile)
  ASSERT_OK(s->SetDeepStorageDown(false));
  ASSERT_OK(s->Finish());
}

// Deep storage refuses writes for longer than the completion timeout of the
// groups that rolled over meanwhile: they are killed with the groups that
// started after them, and reading restarts from the stored offsets. Work is
// redone; nothing is lost or published twice.
TEST(InfraFaults, DeepStorageDownLongerThanTheCompletionTimeout) {
  ScenarioOptions options;
  options.name = "deep_storage_down_past_completion_timeout";
  options.seed = 33;
  options.task_duration = "PT4S";
  options.completion_timeout = "PT6S";
  absl::StatusOr<std::unique_ptr<FaultScenario>> started = FaultScenario::Start(options);
  ASSERT_TRUE(started.ok()) << started.status();
  FaultScenario* s = started->get();
  s->StartProducing(kRecords, absl::Seconds(12));
  ASSERT_OK(s->WaitUntilCommittedSequences(1));
  ASSERT_OK(s->SetDeepStorageDown(true));
  ASSERT_OK(s->WaitForLog(cluster::kSupervisor, "no task succeeded within completionTimeout",
                          absl::Seconds(90)));
  ASSERT_OK(s->SetDeepStorageDown(false));
  ASSERT_OK(s->Finish());
}

}  // namespace
}  // namespace sluice::fault
