// sluice end to end on a real Apache Kafka broker, each scenario ending with
// the exactly-once audit: the main job (replicas 2, checkpoints, roll-over),
// partitions added to a live topic, SASL_SSL with the password given as a
// secret reference (and a wrong one first), and the broker SIGSTOPped, then
// killed with kill -9 and restarted, while records are ingested.
#include <signal.h>
#include <stdlib.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iostream>
#include <iterator>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tests/fault/scenario_test_util.h"
#include "tests/real_kafka/real_kafka_scenario.h"
#include "tests/testing/subprocess.h"

namespace sluice::real_kafka {
namespace {

using fault::FaultScenario;
using fault::ScenarioOptions;

std::string BaseName(const std::string& sequence_name) {
  return sequence_name.substr(0, sequence_name.rfind('_'));
}

// The main job: 4 partitions, taskCount 2, replicas 2, small segments so
// that several checkpoints happen, and a task duration short enough that
// every group rolls over while records arrive.
TEST(RealKafkaIngest, ReplicasCheckpointsAndRollOver) {
  ScenarioOptions options;
  options.seed = 101;
  options.task_duration = "PT5S";
  std::unique_ptr<FaultScenario> s = StartRealKafkaScenario(options);
  ASSERT_NE(s, nullptr);
  s->StartProducing(fault::kRecords, absl::Seconds(10));
  ASSERT_OK(s->Finish());
  absl::StatusOr<v1::GetCommitLogResponse> log = s->CommitLog();
  ASSERT_TRUE(log.ok()) << log.status();
  std::set<std::string> generations;
  for (const v1::CommittedSequence& seq : log->sequences()) {
    generations.insert(BaseName(seq.sequence_name()));
  }
  EXPECT_GE(log->sequences_size(), 6) << "several checkpoints\n" << s->Context();
  EXPECT_GE(generations.size(), 4u) << "two groups, each rolled over\n" << s->Context();
  absl::StatusOr<v1::SupervisorStatus> status = s->Status();
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_EQ(status->aggregate_lag(), 0) << s->Context();
}

// CreatePartitions on the live topic: the supervisor discovers the new
// partitions, reads them from the earliest offset and groups them by
// p % taskCount.
TEST(RealKafkaIngest, PartitionsAddedToALiveTopic) {
  kafka::RealKafka* kafka = RealKafkaEnv();
  ASSERT_NE(kafka, nullptr);
  ScenarioOptions options;
  options.seed = 102;
  options.partitions = 2;
  std::unique_ptr<FaultScenario> s = StartRealKafkaScenario(options);
  ASSERT_NE(s, nullptr);
  ASSERT_OK(s->Produce(4000));
  ASSERT_OK(s->WaitUntilAllCommitted());
  ASSERT_OK(kafka->CreatePartitions(s->options().topic, 4));
  // The new partitions get records before the supervisor sees them, so
  // reading from the earliest offset is what makes these count.
  ASSERT_OK(s->Produce(6000));
  ASSERT_OK(s->WaitUntil("4 partitions known to the supervisor", absl::Seconds(60),
                         [&]() -> absl::StatusOr<bool> {
                           absl::StatusOr<v1::SupervisorStatus> st = s->Status();
                           if (!st.ok()) return st.status();
                           return st->partitions() == 4;
                         }));
  ASSERT_OK(s->Finish());
  absl::StatusOr<v1::GetCommitLogResponse> log = s->CommitLog();
  ASSERT_TRUE(log.ok()) << log.status();
  // Partitions 2 and 3 were first read from offset 0, by the groups p % 2.
  for (int32_t p : {2, 3}) {
    bool from_zero = false;
    for (const v1::CommittedSequence& seq : log->sequences()) {
      auto it = seq.start_offsets().find(p);
      if (it != seq.start_offsets().end() && it->second == 0) from_zero = true;
    }
    EXPECT_TRUE(from_zero) << "partition " << p << " not read from 0\n" << s->Context();
  }
  absl::StatusOr<v1::SupervisorStatus> status = s->Status();
  ASSERT_TRUE(status.ok()) << status.status();
  for (const v1::TaskGroupStatus& g : status->active_groups()) {
    for (const v1::TaskSummary& t : g.tasks()) {
      for (const auto& [p, offset] : t.current_offsets()) {
        EXPECT_EQ(p % 2, g.group_id()) << "partition " << p << " in group " << g.group_id();
      }
    }
  }
}

// `sluicectl reset-offsets --to_time` on real Kafka: records produced in two
// batches a couple of seconds apart, all ingested; reset to a time
// between the batches, which Kafka's offsetsForTimes maps to the first
// record of the second batch in each partition. The status shows those
// offsets committed, and the second batch is ingested again from there,
// exactly once more (the audit accepts the declared reset).
TEST(RealKafkaIngest, ResetOffsetsToATimeReadsAgainFromThere) {
  ScenarioOptions options;
  options.seed = 107;
  options.task_duration = "PT6S";
  std::unique_ptr<FaultScenario> s = StartRealKafkaScenario(options);
  ASSERT_NE(s, nullptr);
  ASSERT_OK(s->Produce(fault::kRecords / 4));
  const fault::PartitionOffsets first_batch_end = s->produced().end_offsets;
  absl::SleepFor(absl::Seconds(2));
  const int64_t between = absl::ToUnixMillis(absl::Now());
  absl::SleepFor(absl::Seconds(2));
  ASSERT_OK(s->Produce(fault::kRecords / 4));
  const fault::PartitionOffsets second_batch_end = s->produced().end_offsets;
  ASSERT_OK(s->WaitUntilAllCommitted());
  // Reset while the groups read (idle at the end): they are restarted from
  // the new offsets. (Under a suspended supervisor the next groups would
  // start where the last ones ended, not at the reset offsets.)
  absl::StatusOr<std::string> binary = testing::FindRunfile("tools/sluicectl");
  ASSERT_TRUE(binary.ok()) << binary.status();
  testing::SubprocessOptions o;
  o.binary = *binary;
  o.args = {"--supervisor=" + s->cluster().supervisor_address(),
            "--auth_token_file=" + s->cluster().token_file("admin"),
            "--timeout=60s",
            "--kafka_cluster=kafka",
            absl::StrCat("--to_time=", between),
            "--yes",
            "reset-offsets",
            fault::kDatasource};
  o.name = "sluicectl-reset-to-time";
  o.stdout_path = testing::TestTmpDir() + "/sluicectl-reset-to-time.stdout";
  absl::StatusOr<std::unique_ptr<testing::Subprocess>> p = testing::Subprocess::Start(o);
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<testing::ExitStatus> exit = (*p)->Wait(absl::Minutes(2));
  ASSERT_TRUE(exit.ok()) << exit.status();
  std::ifstream in(o.stdout_path);
  const std::string shown((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_TRUE(exit->exited && exit->code == 0) << shown << (*p)->StderrTail();
  for (const auto& [partition, offset] : first_batch_end) {
    const int64_t again = second_batch_end.at(partition) - offset;
    if (again > 0) {
      EXPECT_THAT(shown, ::testing::ContainsRegex(absl::StrCat(
                             "\n +", partition, " +", second_batch_end.at(partition), " +",
                             offset, " +reads ", again, " again")))
          << shown;
    }
  }
  // The status shows the new committed offsets until the restarted groups
  // publish what they read again (a checkpoint later).
  bool shown_committed = false;
  fault::PartitionOffsets committed;
  for (const absl::Time deadline = absl::Now() + absl::Seconds(30);
       !shown_committed && absl::Now() < deadline; absl::SleepFor(absl::Milliseconds(20))) {
    absl::StatusOr<v1::SupervisorStatus> status = s->Status();
    ASSERT_TRUE(status.ok()) << status.status();
    committed = fault::PartitionOffsets(status->committed_offsets().begin(),
                                        status->committed_offsets().end());
    shown_committed = committed == first_batch_end;
  }
  EXPECT_TRUE(shown_committed) << "last committed shown " << fault::FormatPartitionOffsets(committed)
                               << "\n" << s->Context();
  ASSERT_OK(s->Finish(first_batch_end));
}

// A spec reading through the broker's SASL_SSL listener: security.protocol,
// sasl.mechanism PLAIN (security_test covers the other mechanisms), sasl.username, the password as a secret reference, and the
// broker's CA from the operator's --kafka_files_dir. First with a wrong
// password (a ${file:} reference): the supervisor's status says the login
// failed, nothing is read. Then the right one (an ${env:SLUICE_SECRET_*}
// reference, in the environment of the supervisor and the workers only):
// everything is ingested, audited through the plain listener. Both references
// are bound to the listener's servers (--kafka_secret_destinations_file).
TEST(RealKafkaIngest, SaslSslWithSecretReferencesAndAWrongPasswordFirst) {
  kafka::RealKafka* kafka = RealKafkaEnv();
  ASSERT_NE(kafka, nullptr);
  const std::string files_dir = testing::TestTmpDir() + "/kafka-files";
  ASSERT_EQ(system(absl::StrCat("mkdir -p ", files_dir, " && cp ", kafka->ca_file(), " ",
                                files_dir, "/ca.pem")
                       .c_str()),
            0);
  std::ofstream(files_dir + "/wrong-password") << "not-the-password\n";
  // Inherited by the processes the scenario starts.
  ASSERT_EQ(setenv("SLUICE_SECRET_KAFKA_PASSWORD", SaslPassword().c_str(), 1), 0);

  ScenarioOptions options;
  options.seed = 104;
  options.task_duration = "PT6S";
  options.spec_bootstrap_servers = kafka->sasl_ssl_bootstrap_servers();
  options.spec_only_consumer_properties = {
      {"security.protocol", "SASL_SSL"},
      {"sasl.mechanism", "PLAIN"},
      {"sasl.username", kSaslUser},
      {"sasl.password", absl::StrCat("${file:", files_dir, "/wrong-password}")},
      {"ssl.ca.location", files_dir + "/ca.pem"}};
  // Both references are bound to the SASL_SSL listener: they resolve only
  // for a spec whose every bootstrap server is one of its addresses.
  const std::string destinations = testing::TestTmpDir() + "/secret-destinations";
  std::ofstream(destinations) << "${file:" << files_dir << "/wrong-password} "
                              << kafka->sasl_ssl_bootstrap_servers() << "\n"
                              << "${env:SLUICE_SECRET_KAFKA_PASSWORD} "
                              << kafka->sasl_ssl_bootstrap_servers() << "\n";
  for (const char* process : {"supervisor", "worker"}) {
    options.extra_flags[process] = {"--kafka_files_dir=" + files_dir,
                                    "--kafka_secret_destinations_file=" + destinations};
  }
  std::unique_ptr<FaultScenario> s = StartRealKafkaScenario(options);
  ASSERT_NE(s, nullptr);
  ASSERT_OK(s->Produce(3000));
  std::string error;
  ASSERT_OK(s->WaitUntil("the status says the login failed", absl::Seconds(60),
                         [&]() -> absl::StatusOr<bool> {
                           absl::StatusOr<v1::SupervisorStatus> st = s->Status();
                           if (!st.ok()) return st.status();
                           for (const v1::ErrorEvent& e : st->recent_errors()) {
                             if (absl::StrContains(e.message(), "Authentication failed")) {
                               error = e.message();
                               return true;
                             }
                           }
                           return false;
                         }));
  std::cerr << "[real_kafka] wrong password, supervisor status: " << error << std::endl;
  EXPECT_TRUE(absl::StrContains(error, "PERMISSION_DENIED")) << error;
  EXPECT_FALSE(absl::StrContains(error, "not-the-password")) << error;
  absl::StatusOr<v1::SupervisorStatus> refused = s->Status();
  ASSERT_TRUE(refused.ok()) << refused.status();
  // Refused credentials keep the datasource from Kafka: unable to connect,
  // naming the mechanism (security_test checks every mode).
  EXPECT_EQ(refused->detailed_state(), "UNABLE_TO_CONNECT_TO_STREAM");
  EXPECT_TRUE(absl::StrContains(error, "Kafka authentication failed (SASL PLAIN over SASL_SSL)"))
      << error;
  absl::StatusOr<v1::GetCommitLogResponse> none = s->CommitLog();
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(none->sequences_size(), 0);

  ASSERT_OK(s->ChangeSpec([](v1::SupervisorSpec* spec) {
    (*spec->mutable_io_config()->mutable_consumer_properties())["sasl.password"] =
        "${env:SLUICE_SECRET_KAFKA_PASSWORD}";
  }));
  s->StartProducing(6000, absl::Seconds(6));
  ASSERT_OK(s->Finish());
  absl::StatusOr<v1::GetCommitLogResponse> log = s->CommitLog();
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_GE(log->sequences_size(), 2) << s->Context();
}

// The broker stops answering (SIGSTOP) for a few seconds, then is killed
// with kill -9 and restarted on the same data, while records come.
TEST(RealKafkaIngest, BrokerPausedThenKilledAndRestarted) {
  kafka::RealKafka* kafka = RealKafkaEnv();
  ASSERT_NE(kafka, nullptr);
  ScenarioOptions options;
  options.seed = 103;
  std::unique_ptr<FaultScenario> s = StartRealKafkaScenario(options);
  ASSERT_NE(s, nullptr);
  s->StartProducing(fault::kRecords, absl::Seconds(16));
  ASSERT_OK(s->WaitUntilCommittedSequences(2));
  ASSERT_OK(kafka->Pause());
  absl::SleepFor(absl::Seconds(4));  // the outage
  ASSERT_OK(kafka->Resume());
  absl::StatusOr<v1::GetCommitLogResponse> log = s->CommitLog();
  ASSERT_TRUE(log.ok()) << log.status();
  ASSERT_OK(s->WaitUntilCommittedSequences(log->sequences_size() + 2));
  ASSERT_OK(kafka->Kill());
  absl::SleepFor(absl::Seconds(2));  // the outage
  ASSERT_OK(kafka->Restart());
  ASSERT_OK(s->Finish());
}

}  // namespace
}  // namespace sluice::real_kafka
