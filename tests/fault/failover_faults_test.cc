// Process-level failover scenarios: two supervisors elect a leader over one
// PostgreSQL metadata store (a database per scenario, one server for the
// target), three workers that know both supervisors, segments in S3 (the
// target's shared s3s-fs server). Every scenario ends with everything
// produced committed and the exactly-once audit, which reads the segments
// back from S3.
//
//   KillLeaderAndAWorker: kill -9 the leader while ingesting; the standby
//     leads (within 10 s) and checkpoints resume (both times printed as
//     "failover: ..." and recorded as test properties); then kill -9 a
//     worker running tasks; the old leader restarts as a standby.
//   DeposedLeaderCommitsNothing: SIGSTOP the leader until the standby leads,
//     SIGCONT: it exits with code 3 ("lost leadership"), and every sequence
//     in the commit log was published by exactly one supervisor, never by
//     the deposed one after its pause.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <cstdio>
#include <grpcpp/grpcpp.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "common/file_util.h"
#include "tests/fault/fault_scenario.h"
#include "tests/fault/scenario_test_util.h"
#include "tests/s3/s3_server.h"
#include "tests/testing/postgres_server.h"
#include "tools/cluster/process_cluster.h"

namespace sluice::fault {
namespace {

using ::testing::HasSubstr;

// Longer than the other suites' 8 s: records must still be arriving once the
// standby has taken over (a lease of 6 s), so that the new leader has
// checkpoints and publishes of its own to make.
constexpr absl::Duration kHaProduceFor = absl::Seconds(16);

// One PostgreSQL server for the whole target, started on first use from the
// test's main thread (it dies with that thread) and stopped at exit.
sluice::testing::PostgresServer* Postgres() {
  static std::unique_ptr<sluice::testing::PostgresServer> server;
  static absl::Status error;
  static bool started = false;
  if (!started) {
    started = true;
    absl::StatusOr<std::unique_ptr<sluice::testing::PostgresServer>> s =
        sluice::testing::PostgresServer::Start();
    if (s.ok()) {
      server = std::move(*s);
    } else {
      error = s.status();
    }
  }
  EXPECT_TRUE(error.ok()) << "PostgreSQL did not start: " << error;
  return server.get();
}

// Two supervisors on their own PostgreSQL database, S3 deep storage in a
// bucket of their own; nullopt after recording why not.
std::optional<ScenarioOptions> HaOptions(const std::string& name, uint64_t seed) {
  sluice::testing::PostgresServer* postgres = Postgres();
  s3::testing::S3Server* s3 = s3::testing::SharedS3Server();
  if (postgres == nullptr || s3 == nullptr) return std::nullopt;
  absl::StatusOr<std::string> url = postgres->CreateDatabase(name);
  EXPECT_TRUE(url.ok()) << url.status();
  if (!url.ok()) return std::nullopt;
  const std::string bucket = s3::testing::UniqueBucket();
  const absl::Status bucket_made = s3->CreateBucket(bucket);
  EXPECT_TRUE(bucket_made.ok()) << bucket_made;
  if (!bucket_made.ok()) return std::nullopt;
  ScenarioOptions options;
  options.name = name;
  options.seed = seed;
  options.supervisors = 2;
  options.workers = 3;
  options.metadata_store_url = *url;
  options.s3_endpoint = s3->endpoint();
  options.s3_bucket = bucket;
  options.s3_prefix = "deep";
  options.s3_credentials = s3->credentials();
  return options;
}

std::unique_ptr<FaultScenario> StartHaScenario(const std::string& name, uint64_t seed) {
  std::optional<ScenarioOptions> options = HaOptions(name, seed);
  if (!options.has_value()) return nullptr;
  return StartScenario(*options);
}

// The other supervisor of two.
std::string Other(const std::string& supervisor) {
  return supervisor == cluster::SupervisorName(0) ? cluster::SupervisorName(1)
                                                  : cluster::SupervisorName(0);
}

std::string AddressOf(cluster::ProcessCluster& cluster, const std::string& supervisor) {
  for (int i = 0; i < cluster.supervisors(); ++i) {
    if (cluster::SupervisorName(i) == supervisor) return cluster.supervisor_addresses()[i];
  }
  return "";
}

std::string Seconds(absl::Duration d) { return absl::StrFormat("%.1f", absl::ToDoubleSeconds(d)); }

// A standby refuses SupervisorService calls and names the leader.
void ExpectStandbyNaming(FaultScenario& s, const std::string& standby, const std::string& leader) {
  auto stub = s.cluster().SupervisorStub(standby);
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
  v1::ListWorkersResponse response;
  const grpc::Status status = stub->ListWorkers(&context, v1::ListWorkersRequest(), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr("standby"));
  const std::string address = AddressOf(s.cluster(), leader);
  EXPECT_THAT(status.error_message(), HasSubstr(address));
  const auto& trailers = context.GetServerTrailingMetadata();
  auto it = trailers.find("sluice-leader-address");
  ASSERT_NE(it, trailers.end()) << "no sluice-leader-address in the standby's trailers";
  EXPECT_EQ(std::string(it->second.data(), it->second.size()), address);
}

// Kill -9 the leader while the tasks read and publish: the standby takes the
// lease over and adopts the tasks, which publish to it (the workers follow
// the leader). Then a worker is killed for good (its replicas are replaced)
// and the old leader comes back, as a standby.
TEST(FailoverFaults, KillLeaderAndAWorker) {
  std::unique_ptr<FaultScenario> s = StartHaScenario("kill_leader_and_a_worker", 41);
  ASSERT_NE(s, nullptr);
  s->StartProducing(kRecords, kHaProduceFor);
  ASSERT_OK(s->WaitUntilCommittedSequences(2));
  absl::StatusOr<std::string> leader = s->cluster().LeaderSupervisor(absl::Seconds(10));
  ASSERT_TRUE(leader.ok()) << leader.status();

  const absl::Time killed = absl::Now();
  ASSERT_OK(s->cluster().Kill(*leader, SIGKILL));
  const std::string standby = Other(*leader);
  ASSERT_OK(s->WaitUntil(absl::StrCat(standby, " leads after ", *leader, " was killed"),
                         absl::Seconds(60),
                         [&]() -> absl::StatusOr<bool> { return s->cluster().Leads(standby); }));
  const absl::Duration to_lead = absl::Now() - killed;
  // Checkpoints resume: a sequence committed after the kill (the commit log's
  // own time, stamped by the new leader's publish).
  int64_t first_commit_ms = -1;
  ASSERT_OK(s->WaitUntil("a sequence committed after the leader was killed", absl::Seconds(90),
                         [&]() -> absl::StatusOr<bool> {
                           absl::StatusOr<v1::GetCommitLogResponse> log = s->CommitLog();
                           if (!log.ok()) return log.status();
                           for (const v1::CommittedSequence& c : log->sequences()) {
                             if (c.committed_at_ms() <= absl::ToUnixMillis(killed)) continue;
                             if (first_commit_ms < 0 || c.committed_at_ms() < first_commit_ms) {
                               first_commit_ms = c.committed_at_ms();
                             }
                           }
                           return first_commit_ms >= 0;
                         }));
  const absl::Duration to_resume = absl::Milliseconds(first_commit_ms - absl::ToUnixMillis(killed));
  const std::string line = absl::StrCat("failover: standby leading after ", Seconds(to_lead),
                                        " s, checkpoints resumed after ", Seconds(to_resume), " s");
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
  ::testing::Test::RecordProperty("standby_leading_s", Seconds(to_lead));
  ::testing::Test::RecordProperty("checkpoints_resumed_s", Seconds(to_resume));
  EXPECT_LE(to_lead, absl::Seconds(10)) << line;

  // A worker running tasks, for good: its replicas are replaced on the
  // other two by the new leader. Once the new leader has adopted the tasks
  // and they read again (right after the takeover they may all be paused).
  absl::StatusOr<int> worker = s->WaitForWorkerWithTasks();
  ASSERT_TRUE(worker.ok()) << worker.status() << "\n" << s->Context();
  ASSERT_OK(s->cluster().Kill(cluster::WorkerName(*worker), SIGKILL));

  // The old leader comes back on its port and data dir, as a standby.
  ASSERT_OK(s->RestartAndWait(*leader));
  absl::StatusOr<std::string> now = s->cluster().LeaderSupervisor(absl::Seconds(10));
  ASSERT_TRUE(now.ok()) << now.status();
  EXPECT_EQ(*now, standby);
  ExpectStandbyNaming(*s, *leader, standby);

  ASSERT_OK(s->Finish());
}

// Whether `text` holds the publish line of `sequence` (supervisor/publisher.cc
// logs it once a publish's transaction committed, never for a refused one).
bool LogsPublishOf(absl::string_view text, const std::string& sequence) {
  return absl::StrContains(text, absl::StrCat("published sequence ", sequence, " of task "));
}

// SIGSTOP the leader: its lease runs out and the standby takes over. SIGCONT:
// the deposed leader finds its lease gone and exits 3; whatever it was doing
// when it was paused (a publish, a checkpoint) is refused by the epoch
// fence. Checked without relying on timing: every sequence in the final
// commit log has its publish logged by exactly one supervisor, and the
// deposed one logged none after its pause (a commit it made after the
// takeover would be logged by neither, or by it after the pause).
TEST(FailoverFaults, DeposedLeaderCommitsNothing) {
  std::unique_ptr<FaultScenario> s = StartHaScenario("deposed_leader_commits_nothing", 42);
  ASSERT_NE(s, nullptr);
  s->StartProducing(kRecords, kHaProduceFor);
  ASSERT_OK(s->WaitUntilCommittedSequences(2));
  absl::StatusOr<std::string> leader = s->cluster().LeaderSupervisor(absl::Seconds(10));
  ASSERT_TRUE(leader.ok()) << leader.status();
  const std::string old_log_path = s->cluster().log_path(*leader);

  ASSERT_OK(s->cluster().Kill(*leader, SIGSTOP));
  // Everything it logged before the pause (stderr is unbuffered).
  absl::StatusOr<std::string> before_pause = ReadFile(old_log_path);
  ASSERT_TRUE(before_pause.ok()) << before_pause.status();
  const size_t paused_at = before_pause->size();
  const absl::Time paused = absl::Now();
  const std::string standby = Other(*leader);
  ASSERT_OK(s->WaitUntil(absl::StrCat(standby, " leads while ", *leader, " is stopped"),
                         absl::Seconds(60),
                         [&]() -> absl::StatusOr<bool> { return s->cluster().Leads(standby); }));
  const absl::Duration to_lead = absl::Now() - paused;
  ::testing::Test::RecordProperty("standby_leading_s", Seconds(to_lead));

  const absl::Time resumed = absl::Now();
  ASSERT_OK(s->cluster().Kill(*leader, SIGCONT));
  absl::StatusOr<sluice::testing::ExitStatus> exit =
      s->cluster().WaitForExit(*leader, absl::Seconds(30));
  ASSERT_TRUE(exit.ok()) << exit.status() << "\n" << s->Context();
  const absl::Duration to_exit = absl::Now() - resumed;
  EXPECT_TRUE(exit->exited && exit->code == 3) << *leader << " ended with " << exit->ToString();
  EXPECT_LE(to_exit, absl::Seconds(15));
  absl::StatusOr<std::string> old_log = ReadFile(old_log_path);
  ASSERT_TRUE(old_log.ok()) << old_log.status();
  EXPECT_THAT(*old_log, HasSubstr("lost leadership"));
  int fenced = 0;
  for (absl::string_view l : absl::StrSplit(absl::string_view(*old_log).substr(paused_at), '\n')) {
    if (absl::StrContains(l, "fenced")) ++fenced;
  }
  const std::string line =
      absl::StrCat("deposed leader: standby leading after ", Seconds(to_lead),
                   " s of SIGSTOP; exited ", exit->ToString(), " ", Seconds(to_exit),
                   " s after SIGCONT; ", fenced, " fenced log lines after the pause");
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
  ::testing::Test::RecordProperty("deposed_exit_s", Seconds(to_exit));
  ::testing::Test::RecordProperty("fenced_lines", fenced);

  ASSERT_OK(s->Finish());

  absl::StatusOr<v1::GetCommitLogResponse> log = s->CommitLog();
  ASSERT_TRUE(log.ok()) << log.status();
  absl::StatusOr<std::string> new_log = ReadFile(s->cluster().log_path(standby));
  ASSERT_TRUE(new_log.ok()) << new_log.status();
  const absl::string_view old_before = absl::string_view(*old_log).substr(0, paused_at);
  const absl::string_view old_after = absl::string_view(*old_log).substr(paused_at);
  int by_old = 0;
  int by_new = 0;
  for (const v1::CommittedSequence& c : log->sequences()) {
    const bool before = LogsPublishOf(old_before, c.sequence_name());
    const bool after = LogsPublishOf(old_after, c.sequence_name());
    const bool by_standby = LogsPublishOf(*new_log, c.sequence_name());
    EXPECT_FALSE(after) << c.sequence_name() << " was published by the deposed " << *leader
                        << " after its pause";
    EXPECT_EQ(int{before} + int{by_standby}, 1)
        << c.sequence_name() << " (committed at " << c.committed_at_ms()
        << ") was published by " << (before ? 1 : 0) + (by_standby ? 1 : 0)
        << " supervisors before/after the takeover (logs " << old_log_path << ", "
        << s->cluster().log_path(standby) << ")";
    by_old += before ? 1 : 0;
    by_new += by_standby ? 1 : 0;
  }
  // The new leader committed something of its own: the check above covered
  // a real takeover.
  EXPECT_GT(by_new, 0);
  std::printf("commit log: %d sequences published by %s before its pause, %d by %s\n", by_old,
              leader->c_str(), by_new, standby.c_str());
}

}  // namespace
}  // namespace sluice::fault
