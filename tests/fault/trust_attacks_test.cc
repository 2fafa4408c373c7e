// Process level, authentication on (the cluster's fresh bearer tokens): the
// attacks of a caller on the same machine, each refused with the right code
// while the datasource ingests, nothing moved by any of them, and the
// exactly-once audit passing at the end. Among them, a worker's token trying
// to redirect the supervisor's calls or replay what it was sent. Also: a spec
// cannot make the supervisor run a command or load code, nor send a secret
// reference to a broker it is not bound to, a secret never shows in an answer
// or a log line, and what the processes write is private to their user.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/auth/grpc_auth.h"
#include "common/auth/worker_token.h"
#include "common/file_util.h"
#include "common/offsets.h"
#include "sluice/v1/task_service.grpc.pb.h"
#include "tests/fault/fault_scenario.h"
#include "tests/fault/scenario_test_util.h"
#include "tools/cluster/wiki_datasource.h"

namespace sluice::fault {
namespace {

using Stub = v1::SupervisorService::Stub;

class TrustAttacksTest : public ::testing::Test {
 protected:
  // A supervisor stub presenting `principal`'s token ("" for none).
  std::unique_ptr<Stub> As(const std::string& principal) {
    auth::ClientAuth credentials;
    if (!principal.empty()) {
      auto token = auth::ReadTokenFile(s_->cluster().token_file(principal));
      EXPECT_TRUE(token.ok()) << token.status();
      credentials.bearer_token = token.value_or("");
    }
    return v1::SupervisorService::NewStub(auth::NewChannel(s_->cluster().supervisor_address(),
                                          grpc::InsecureChannelCredentials(), credentials));
  }

  template <typename Request, typename Response>
  static grpc::Status Call(Stub& stub,
                           grpc::Status (Stub::*method)(grpc::ClientContext*, const Request&,
                                                        Response*),
                           const Request& request, Response* response) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    return (stub.*method)(&context, request, response);
  }

  OffsetMap Committed() {
    auto log = s_->CommitLog();
    EXPECT_TRUE(log.ok()) << log.status();
    return log.ok() ? FromProto(log->committed_offsets()) : OffsetMap{};
  }

  std::unique_ptr<FaultScenario> s_;
};

TEST_F(TrustAttacksTest, ForgedTaskCallsAreRefusedAndMoveNothing) {
  s_ = StartScenario("trust_forged_task_calls", 41);
  ASSERT_NE(s_, nullptr);
  s_->StartProducing(kRecords, kProduceFor);
  ASSERT_OK(s_->WaitUntilCommittedSequences(1));
  ASSERT_OK(s_->Suspend());  // nothing moves on its own while the attacks run
  ASSERT_OK(s_->WaitUntil("no task is running", absl::Minutes(2), [&]() -> absl::StatusOr<bool> {
    auto tasks = s_->Tasks();
    if (!tasks.ok()) return tasks.status();
    return tasks->tasks().empty();
  }));
  auto all = s_->Tasks(/*include_finished=*/true);
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_FALSE(all->tasks().empty());
  const v1::SupervisorTaskRecord task = all->tasks(0);
  const std::string other_worker =
      task.worker_id() == cluster::WorkerName(0) ? cluster::WorkerName(1) : cluster::WorkerName(0);
  const OffsetMap before = Committed();
  ASSERT_FALSE(before.empty());

  // A publish that claims 500 unparseable records past the stored offsets.
  v1::PublishSegmentsRequest publish;
  publish.set_datasource(kDatasource);
  publish.set_task_id(task.task_id());
  publish.set_sequence_name(task.base_sequence_name() + "_99");
  for (const auto& [p, offset] : before) {
    (*publish.mutable_start_offsets())[p] = offset;
    (*publish.mutable_end_offsets())[p] = offset + 500;
    v1::PartitionRange* range = publish.add_partition_stats();
    range->set_partition(p);
    range->set_start_offset(offset);
    range->set_end_offset(offset + 500);
    range->set_unparseable(500);
  }
  v1::PublishSegmentsResponse published;
  EXPECT_EQ(Call(*As(""), &Stub::PublishSegments, publish, &published).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(Call(*As("admin"), &Stub::PublishSegments, publish, &published).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(Call(*As(other_worker), &Stub::PublishSegments, publish, &published).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);

  // Made-up earliest offsets, from another worker.
  v1::ReportOffsetOutOfRangeRequest out_of_range;
  out_of_range.set_datasource(kDatasource);
  out_of_range.set_task_id(task.task_id());
  for (const auto& [p, offset] : before) {
    (*out_of_range.mutable_offsets())[p] = offset;
    (*out_of_range.mutable_earliest_offsets())[p] = offset + 700;
  }
  v1::ReportOffsetOutOfRangeResponse reset;
  EXPECT_EQ(Call(*As(other_worker), &Stub::ReportOffsetOutOfRange, out_of_range, &reset)
                .error_code(),
            grpc::StatusCode::PERMISSION_DENIED);

  // A checkpoint with invented offsets for a real task, from another worker.
  v1::CheckpointDataSourceMetadataRequest checkpoint;
  checkpoint.set_datasource(kDatasource);
  checkpoint.set_task_id(task.task_id());
  checkpoint.set_group_id(task.group_id());
  checkpoint.set_base_sequence_name(task.base_sequence_name());
  for (const auto& [p, offset] : before) (*checkpoint.mutable_start_offsets())[p] = offset + 3;
  v1::CheckpointDataSourceMetadataResponse answer;
  EXPECT_EQ(Call(*As(other_worker), &Stub::CheckpointDataSourceMetadata, checkpoint, &answer)
                .error_code(),
            grpc::StatusCode::PERMISSION_DENIED);

  // SUCCESS claimed for the task by a worker it does not run on, and by a
  // worker token speaking as another worker.
  v1::ReportTaskStatusRequest report;
  report.set_worker_id(other_worker);
  report.mutable_status()->set_task_id(task.task_id());
  report.mutable_status()->set_datasource(kDatasource);
  report.mutable_status()->set_state(v1::TASK_STATE_SUCCESS);
  v1::ReportTaskStatusResponse none;
  EXPECT_EQ(Call(*As(other_worker), &Stub::ReportTaskStatus, report, &none).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  report.set_worker_id(task.worker_id());
  EXPECT_EQ(Call(*As(other_worker), &Stub::ReportTaskStatus, report, &none).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);

  // A reader cannot administer; a worker cannot read the admin surface.
  v1::ResetSupervisorRequest ref;
  ref.set_datasource(kDatasource);
  v1::ResetSupervisorResponse summary;
  EXPECT_EQ(Call(*As("reader"), &Stub::ResetSupervisor, ref, &summary).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  v1::ListSupervisorsResponse list;
  EXPECT_EQ(Call(*As(other_worker), &Stub::ListSupervisors, v1::ListSupervisorsRequest(), &list)
                .error_code(),
            grpc::StatusCode::PERMISSION_DENIED);

  EXPECT_EQ(Committed(), before) << "a refused call moved the stored offsets";
  auto after = s_->Tasks(/*include_finished=*/true);
  ASSERT_TRUE(after.ok());
  for (const v1::SupervisorTaskRecord& t : after->tasks()) {
    if (t.task_id() == task.task_id()) {
      EXPECT_EQ(t.state(), task.state()) << t.task_id();
    }
  }
  ASSERT_OK(s_->Resume());
  ASSERT_OK(s_->Finish());
}

TEST_F(TrustAttacksTest, AWorkerCannotRedirectNorReplayTheSupervisorsCalls) {
  s_ = StartScenario("trust_worker_redirect", 43);
  ASSERT_NE(s_, nullptr);
  s_->StartProducing(kRecords, kProduceFor);
  ASSERT_OK(s_->WaitUntilCommittedSequences(1));
  absl::StatusOr<int> victim_index = s_->WaitForWorkerWithTasks();
  ASSERT_TRUE(victim_index.ok()) << victim_index.status();
  const std::string victim = cluster::WorkerName(*victim_index);
  const std::string attacker = cluster::WorkerName(1 - *victim_index);
  const std::string victim_address = s_->cluster().worker_address(*victim_index);
  auto tasks = s_->Tasks();
  ASSERT_TRUE(tasks.ok()) << tasks.status();
  std::string victim_task;
  for (const v1::SupervisorTaskRecord& t : tasks->tasks()) {
    if (t.worker_id() == victim) victim_task = t.task_id();
  }
  ASSERT_FALSE(victim_task.empty());

  // The attacker's worker token re-registers it elsewhere: at a listener of
  // its own, or at the victim's address. The supervisor would then send its
  // calls (and new tasks) there.
  for (const std::string& address : {std::string("127.0.0.1:1"), victim_address}) {
    v1::RegisterWorkerRequest request;
    request.mutable_worker()->set_worker_id(attacker);
    request.mutable_worker()->set_address(address);
    request.mutable_worker()->set_capacity(4);
    v1::RegisterWorkerResponse registered;
    grpc::Status status = Call(*As(attacker), &Stub::RegisterWorker, request, &registered);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED)
        << address << ": " << status.error_message();
  }

  // What the supervisor presents to the attacker's worker, replayed against
  // the victim's: refused. So is the supervisor's key itself.
  auto key = auth::ReadTokenFile(s_->cluster().token_file("supervisor"));
  ASSERT_TRUE(key.ok()) << key.status();
  for (const std::string& token : {auth::SupervisorTokenForWorker(*key, attacker), *key}) {
    auto stub = v1::TaskService::NewStub(
        auth::NewChannel(victim_address, grpc::InsecureChannelCredentials(), {token}));
    v1::StopTaskRequest stop;
    stop.set_task_id(victim_task);
    stop.set_mode(v1::STOP_MODE_KILL);
    v1::StopTaskResponse stopped;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    grpc::Status status = stub->StopTask(&context, stop, &stopped);
    EXPECT_TRUE(status.error_code() == grpc::StatusCode::PERMISSION_DENIED ||
                status.error_code() == grpc::StatusCode::UNAUTHENTICATED)
        << status.error_code() << " " << status.error_message();
  }

  // The victim's task kept running, and everything lands exactly once.
  auto after = s_->Tasks();
  ASSERT_TRUE(after.ok()) << after.status();
  bool running = false;
  for (const v1::SupervisorTaskRecord& t : after->tasks()) running |= t.task_id() == victim_task;
  EXPECT_TRUE(running) << victim_task << " was stopped by a replayed token";
  ASSERT_OK(s_->Finish());
}

// An out-of-range report from the task's own worker (its real token), for
// offsets Kafka still holds, with made-up earliest offsets: with
// resetOffsetAutomatically on, a believed report would move the stored
// offsets (skipping 700 records, or re-reading a committed range). The
// supervisor asks Kafka instead: nothing is reset and the audit passes.
TEST_F(TrustAttacksTest, AnOutOfRangeReportForOffsetsKafkaHoldsMovesNothing) {
  s_ = StartScenario("trust_out_of_range", 47);
  ASSERT_NE(s_, nullptr);
  s_->StartProducing(kRecords, kProduceFor);
  ASSERT_OK(s_->WaitUntilCommittedSequences(1));
  ASSERT_OK(s_->ChangeSpec(
      [](v1::SupervisorSpec* spec) { spec->mutable_tuning_config()->set_reset_offset_automatically(true); }));
  ASSERT_OK(s_->WaitUntilCommittedSequences(2));
  absl::StatusOr<int> worker_index = s_->WaitForWorkerWithTasks();
  ASSERT_TRUE(worker_index.ok()) << worker_index.status();
  const std::string worker = cluster::WorkerName(*worker_index);
  auto tasks = s_->Tasks();
  ASSERT_TRUE(tasks.ok()) << tasks.status();
  const v1::SupervisorTaskRecord* task = nullptr;
  for (const v1::SupervisorTaskRecord& t : tasks->tasks()) {
    if (t.worker_id() == worker && t.state() == v1::TASK_STATE_READING) task = &t;
  }
  ASSERT_NE(task, nullptr);
  const OffsetMap before = Committed();
  v1::ReportOffsetOutOfRangeRequest report;
  report.set_datasource(kDatasource);
  report.set_task_id(task->task_id());
  for (const auto& [p, offset] : before) {
    if (p % 2 != task->group_id()) continue;  // the group's partitions (taskCount 2)
    (*report.mutable_offsets())[p] = offset;
    (*report.mutable_earliest_offsets())[p] = offset + 700;
  }
  ASSERT_GT(report.offsets_size(), 0);
  v1::ReportOffsetOutOfRangeResponse answer;
  grpc::Status status = Call(*As(worker), &Stub::ReportOffsetOutOfRange, report, &answer);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_FALSE(answer.reset()) << answer.message();
  auto log = s_->CommitLog();
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_EQ(log->resets_size(), 0) << "a report contradicting Kafka reset the offsets";
  for (const auto& [p, offset] : Committed()) {
    EXPECT_GE(offset, before.at(p)) << "partition " << p << " moved backwards";
  }
  ASSERT_OK(s_->Finish());
}

TEST_F(TrustAttacksTest, SpecsAreDataAndSecretsAreWriteOnly) {
  s_ = StartScenario("trust_specs_and_secrets", 42);
  ASSERT_NE(s_, nullptr);
  const std::string pwned = s_->root_dir() + "/pwned";
  cluster::WikiSpecOptions wiki;
  wiki.datasource = "attack";
  wiki.bootstrap_servers = s_->cluster().bootstrap_servers();
  const std::vector<std::pair<std::string, std::map<std::string, std::string>>> attacks = {
      {"sasl.kerberos.kinit.cmd",
       {{"security.protocol", "SASL_PLAINTEXT"},
        {"sasl.mechanisms", "GSSAPI"},
        {"sasl.kerberos.kinit.cmd", "touch " + pwned}}},
      {"sasl.mechanisms", {{"security.protocol", "SASL_PLAINTEXT"}, {"sasl.mechanisms", "GSSAPI"}}},
      {"plugin.library.paths", {{"plugin.library.paths", s_->root_dir() + "/evil"}}},
      {"ssl.ca.location", {{"security.protocol", "SSL"}, {"ssl.ca.location", "/etc/shadow"}}},
      {"fetch.wait.max.msx", {{"fetch.wait.max.msx", "10"}}},
      // A secret reference the operator did not bind to this broker (no
      // --kafka_secret_destinations_file): resolved nowhere.
      {"sasl.password",
       {{"security.protocol", "SASL_PLAINTEXT"},
        {"sasl.mechanisms", "PLAIN"},
        {"sasl.username", "sluice"},
        {"sasl.password", "${env:SLUICE_SECRET_KAFKA_PASSWORD}"}}},
  };
  auto admin = As("admin");
  for (const auto& [property, properties] : attacks) {
    v1::SubmitSupervisorRequest submit;
    *submit.mutable_spec() = cluster::WikiSpec(wiki);
    for (const auto& [k, v] : properties) {
      (*submit.mutable_spec()->mutable_io_config()->mutable_consumer_properties())[k] = v;
    }
    v1::SubmitSupervisorResponse response;
    grpc::Status status = Call(*admin, &Stub::SubmitSupervisor, submit, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << property;
    EXPECT_TRUE(absl::StrContains(status.error_message(), property)) << status.error_message();
  }
  absl::SleepFor(absl::Seconds(2));
  EXPECT_FALSE(PathExists(pwned)) << "a spec property ran a command";

  // A secret: shown as *** everywhere, kept when resubmitted as ***.
  const std::string secret = "hunter2-never-shown";
  v1::SubmitSupervisorRequest submit;
  wiki.datasource = "secret";
  *submit.mutable_spec() = cluster::WikiSpec(wiki);
  submit.mutable_spec()->set_suspended(true);
  auto* props = submit.mutable_spec()->mutable_io_config()->mutable_consumer_properties();
  (*props)["sasl.username"] = "sluice";
  (*props)["sasl.password"] = secret;
  v1::SubmitSupervisorResponse submitted;
  ASSERT_TRUE(Call(*admin, &Stub::SubmitSupervisor, submit, &submitted).ok());
  EXPECT_EQ(submitted.spec().io_config().consumer_properties().at("sasl.password"), "***");
  v1::GetSupervisorRequest ref;
  ref.set_datasource("secret");
  v1::GetSupervisorResponse got;
  ASSERT_TRUE(Call(*As("reader"), &Stub::GetSupervisor, ref, &got).ok());
  EXPECT_EQ(got.spec().io_config().consumer_properties().at("sasl.password"), "***");
  v1::GetSupervisorHistoryRequest history_request;
  history_request.set_datasource("secret");
  v1::GetSupervisorHistoryResponse history;
  ASSERT_TRUE(Call(*As("reader"), &Stub::GetSupervisorHistory, history_request, &history).ok());
  EXPECT_EQ(history.DebugString().find(secret), std::string::npos);
  // Pasting back what GetSupervisor shows changes nothing (the stored secret is kept).
  v1::SubmitSupervisorRequest again;
  *again.mutable_spec() = got.spec();
  v1::SubmitSupervisorResponse resubmitted;
  ASSERT_TRUE(Call(*admin, &Stub::SubmitSupervisor, again, &resubmitted).ok());
  EXPECT_TRUE(resubmitted.unchanged());
  v1::TerminateSupervisorRequest terminate;
  terminate.set_datasource("secret");
  v1::TerminateSupervisorResponse terminated;
  ASSERT_TRUE(Call(*admin, &Stub::TerminateSupervisor, terminate, &terminated).ok());

  s_->StartProducing(2000, absl::Seconds(2));
  ASSERT_OK(s_->Finish());

  // No log line of any process carries the secret; what they wrote is theirs only.
  for (const auto& entry : std::filesystem::recursive_directory_iterator(s_->root_dir())) {
    if (!entry.is_regular_file() || !absl::EndsWith(entry.path().string(), ".log")) continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_EQ(text.str().find(secret), std::string::npos) << entry.path();
  }
  struct stat st;
  const std::string data = s_->cluster().data_dir(cluster::kSupervisor);
  ASSERT_EQ(::stat(data.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u) << data;
  ASSERT_EQ(::stat((data + "/metadata.db").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  int segments = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(
           s_->cluster().root_dir())) {
    if (!entry.is_regular_file() || !absl::EndsWith(entry.path().string(), ".sluice")) continue;
    ASSERT_EQ(::stat(entry.path().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u) << entry.path();
    ++segments;
  }
  EXPECT_GT(segments, 0);
}

}  // namespace
}  // namespace sluice::fault
