#include "tools/cli/commands.h"

#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/message_differencer.h>
#include <grpcpp/grpcpp.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "common/kafka/mock_cluster.h"
#include "common/kafka/producer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/cli/fake_supervisor.h"

namespace sluice {
namespace sluicectl {
namespace {

using ::google::protobuf::util::MessageDifferencer;
using ::testing::ContainsRegex;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

struct Result {
  int code;
  std::string out;
  std::string err;
};

class CommandsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto fake = FakeSupervisor::Start();
    ASSERT_TRUE(fake.ok()) << fake.status();
    fake_ = *std::move(fake);
    stub_ = v1::SupervisorService::NewStub(
        grpc::CreateChannel(fake_->address(), grpc::InsecureChannelCredentials()));
    options_.timeout = absl::Seconds(10);
  }

  Result Run(std::vector<std::string> args) {
    std::ostringstream out, err;
    const int code = RunCommand(args, options_, *stub_, out, err);
    return {code, out.str(), err.str()};
  }

  std::string WriteFile(const std::string& name, const std::string& content) {
    const std::string path = absl::StrCat(getenv("TEST_TMPDIR"), "/", name);
    std::ofstream(path) << content;
    return path;
  }

  // The answer of suspend, resume, reset, reset-offsets and terminate. Their
  // response types all hold the summary as field 1 (the fake answers with
  // bytes), so one of them stands for all.
  v1::SuspendSupervisorResponse Summary(const std::string& datasource,
                                        v1::SupervisorState state) {
    v1::SuspendSupervisorResponse r;
    v1::SupervisorSummary* s = r.mutable_supervisor();
    s->set_datasource(datasource);
    s->set_state(state);
    s->set_healthy(true);
    s->set_spec_version(4);
    return r;
  }

  std::unique_ptr<FakeSupervisor> fake_;
  std::unique_ptr<v1::SupervisorService::Stub> stub_;
  CliOptions options_;
};

TEST_F(CommandsTest, UsageErrorsSendNothing) {
  Result r = Run({});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, StartsWith("usage: sluicectl"));
  r = Run({"frobnicate"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("unknown command \"frobnicate\""));
  r = Run({"status"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("usage: sluicectl status DATASOURCE"));
  r = Run({"status", "a", "b"});
  EXPECT_EQ(r.code, kExitUsage);
  r = Run({"status", "../etc"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("datasource"));
  r = Run({"reset-offsets", "wiki", "0:12"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("\"0:12\" is not PARTITION=OFFSET"));
  r = Run({"reset-offsets", "wiki", "0=12", "0=13"});
  EXPECT_THAT(r.err, HasSubstr("partition 0 given twice"));
  EXPECT_THAT(fake_->Calls(), IsEmpty());
}

TEST_F(CommandsTest, HelpListsEveryCommand) {
  Result r = Run({"help"});
  EXPECT_EQ(r.code, kExitOk);
  for (const char* command : {"submit", "get", "list", "history", "status", "suspend", "resume",
                              "reset ", "reset-offsets", "terminate", "segments", "tasks",
                              "workers", "mark-loaded", "commit-log", "handoff"}) {
    EXPECT_THAT(r.out, HasSubstr(absl::StrCat("  ", command))) << command;
  }
  EXPECT_THAT(r.out, HasSubstr("exit codes: 0 ok, 1 the RPC failed"));
}

TEST_F(CommandsTest, SubmitSendsTheParsedSpec) {
  const std::string path = WriteFile("wiki.json", R"({
    "datasource": "wiki",
    "ioConfig": {"topic": "wiki-edits", "taskCount": 2,
                 "consumerProperties": {"bootstrap.servers": "127.0.0.1:9092"}}
  })");
  v1::SubmitSupervisorResponse response;
  response.mutable_spec()->set_datasource("wiki");
  response.set_version(1);
  fake_->SetResponse("SubmitSupervisor", response);
  Result r = Run({"submit", path});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(r.out, "wiki: stored spec version 1 (new supervisor)\n");
  auto requests = fake_->Requests<v1::SubmitSupervisorRequest>("SubmitSupervisor");
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].spec().io_config().topic(), "wiki-edits");
  EXPECT_EQ(requests[0].spec().io_config().task_count(), 2);
  EXPECT_EQ(requests[0].spec().io_config().consumer_properties().at("bootstrap.servers"),
            "127.0.0.1:9092");
}

TEST_F(CommandsTest, SubmitWithABadSpecFileSendsNothing) {
  const std::string path =
      WriteFile("bad.json", "{\n  \"datasource\": \"wiki\",\n  \"ioConfg\": {}\n}");
  Result r = Run({"submit", path});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr(path + ":3:3: unknown field \"ioConfg\""));
  r = Run({"submit", "/no/such/file.json"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("cannot read spec file /no/such/file.json"));
  EXPECT_THAT(fake_->Calls(), IsEmpty());
}

constexpr char kDruidSpec[] = R"({"type": "kafka", "spec": {
  "dataSchema": {"dataSource": "wikipedia", "timestampSpec": {"column": "time", "format": "auto"},
                 "dimensionsSpec": {"dimensions": ["page", {"name": "added", "type": "long"}]},
                 "granularitySpec": {"type": "uniform", "segmentGranularity": "DAY"}},
  "ioConfig": {"topic": "wikipedia", "inputFormat": {"type": "json"},
               "consumerProperties": {"bootstrap.servers": "localhost:9092"}},
  "tuningConfig": {"type": "kafka", "maxPendingPersists": 0}}})";

TEST_F(CommandsTest, SubmitDruidSendsTheFileAsItIsAndPrintsTheWarnings) {
  const std::string path = WriteFile("druid.json", kDruidSpec);
  options_.druid = true;
  // Refused before anything is sent: maxPendingPersists is not supported.
  Result r = Run({"submit", path});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("spec.tuningConfig.maxPendingPersists is not supported by sluice"));
  EXPECT_THAT(fake_->Calls(), IsEmpty());

  options_.allow_unsupported = true;
  v1::SubmitSupervisorResponse response;
  response.mutable_spec()->set_datasource("wikipedia");
  response.set_version(1);
  response.add_warnings("spec.tuningConfig.maxPendingPersists is not supported by sluice; ignored");
  fake_->SetResponse("SubmitSupervisor", response);
  r = Run({"submit", path});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(r.out, "wikipedia: stored spec version 1 (new supervisor)\n");
  EXPECT_EQ(r.err,
            "sluicectl: warning: spec.tuningConfig.maxPendingPersists is not supported by sluice; "
            "ignored\n");
  auto requests = fake_->Requests<v1::SubmitSupervisorRequest>("SubmitSupervisor");
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].druid_spec_json(), kDruidSpec);
  EXPECT_TRUE(requests[0].allow_unsupported());
  EXPECT_FALSE(requests[0].has_spec());

  options_.druid = false;
  r = Run({"submit", path});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("--allow_unsupported applies to Druid specs only"));
}

TEST_F(CommandsTest, GetDruidPrintsTheSpecInDruidsShape) {
  v1::SubmitSupervisorResponse response;
  v1::SupervisorSpec* spec = response.mutable_spec();
  spec->set_datasource("wikipedia");
  spec->mutable_io_config()->set_topic("wikipedia");
  (*spec->mutable_io_config()->mutable_consumer_properties())["bootstrap.servers"] = "k:9092";
  spec->mutable_io_config()->set_task_duration("PT1H");
  spec->mutable_data_schema()->mutable_granularity_spec()->set_segment_granularity("DAY");
  response.set_version(3);
  fake_->SetResponse("GetSupervisor", response);
  options_.druid = true;
  Result r = Run({"get", "wikipedia"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, StartsWith("{\n  \"spec\": {\n    \"dataSchema\": {\n"));
  EXPECT_THAT(r.out, HasSubstr("\"dataSource\": \"wikipedia\""));
  EXPECT_THAT(r.out, HasSubstr("\"taskDuration\": \"PT1H\""));
  EXPECT_THAT(r.out, HasSubstr("\"type\": \"kafka\""));
  // What it prints is a Druid spec again.
  const std::string path = WriteFile("back.json", r.out);
  options_.druid = true;
  v1::SubmitSupervisorResponse submitted;
  submitted.mutable_spec()->set_datasource("wikipedia");
  fake_->SetResponse("SubmitSupervisor", submitted);
  r = Run({"submit", path});
  ASSERT_EQ(r.code, kExitOk) << r.err;
}

TEST_F(CommandsTest, RpcErrorsPrintTheCodeAndExitOne) {
  const std::string path = WriteFile("zero.json", R"({"datasource": "wiki"})");
  fake_->SetError("SubmitSupervisor",
                  grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "ioConfig.topic is required"));
  Result r = Run({"submit", path});
  EXPECT_EQ(r.code, kExitRpcError);
  EXPECT_EQ(r.err, "sluicectl: submit wiki failed: INVALID_ARGUMENT: ioConfig.topic is required\n");
  EXPECT_THAT(r.out, IsEmpty());

  fake_->SetError("GetSupervisorStatus",
                  grpc::Status(grpc::StatusCode::NOT_FOUND, "no supervisor for datasource nope"));
  r = Run({"status", "nope"});
  EXPECT_EQ(r.code, kExitRpcError);
  EXPECT_EQ(r.err, "sluicectl: status nope failed: NOT_FOUND: no supervisor for datasource nope\n");

  // Nothing configured: the fake answers UNIMPLEMENTED.
  r = Run({"workers"});
  EXPECT_EQ(r.code, kExitRpcError);
  EXPECT_THAT(r.err, HasSubstr("workers failed: UNIMPLEMENTED"));
}

TEST_F(CommandsTest, UnreachableSupervisorIsAnRpcError) {
  auto stub = v1::SupervisorService::NewStub(
      grpc::CreateChannel("127.0.0.1:1", grpc::InsecureChannelCredentials()));
  options_.timeout = absl::Seconds(5);
  std::ostringstream out, err;
  EXPECT_EQ(RunCommand({"list"}, options_, *stub, out, err), kExitRpcError);
  EXPECT_THAT(err.str(), HasSubstr("list failed: UNAVAILABLE"));
}

TEST_F(CommandsTest, StatusReadableAndJson) {
  v1::SupervisorStatus status;
  status.set_datasource("wiki");
  status.set_state(v1::SUPERVISOR_STATE_RUNNING);
  status.set_topic("wiki-edits");
  (*status.mutable_lag())[0] = 7;
  (*status.mutable_latest_offsets())[0] = 107;
  v1::GetSupervisorStatusResponse response;
  *response.mutable_status() = status;
  fake_->SetResponse("GetSupervisorStatus", response);
  Result r = Run({"status", "wiki"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("state:         RUNNING\n"));
  EXPECT_THAT(r.out, HasSubstr("        0          -        -     107    7            -\n"));
  EXPECT_EQ(fake_->Requests<v1::GetSupervisorStatusRequest>("GetSupervisorStatus")[0].datasource(), "wiki");

  options_.json = true;
  r = Run({"status", "wiki"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  // --json prints the whole answer, as grpcurl does, with full enum names.
  v1::GetSupervisorStatusResponse parsed;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &parsed).ok()) << r.out;
  EXPECT_TRUE(MessageDifferencer::Equals(parsed, response));
  EXPECT_THAT(r.out, HasSubstr("\"latestOffsets\""));
  EXPECT_THAT(r.out, HasSubstr("\"SUPERVISOR_STATE_RUNNING\""));
}

TEST_F(CommandsTest, LifecycleCommandsCallTheirRpc) {
  const struct {
    const char* command;
    const char* method;
    v1::SupervisorState state;
    const char* short_name;
  } cases[] = {
      {"suspend", "SuspendSupervisor", v1::SUPERVISOR_STATE_SUSPENDED, "SUSPENDED"},
      {"resume", "ResumeSupervisor", v1::SUPERVISOR_STATE_RUNNING, "RUNNING"},
      {"reset", "ResetSupervisor", v1::SUPERVISOR_STATE_RUNNING, "RUNNING"},
      {"terminate", "TerminateSupervisor", v1::SUPERVISOR_STATE_STOPPING, "STOPPING"},
  };
  for (const auto& c : cases) {
    fake_->SetResponse(c.method, Summary("wiki", c.state));
    Result r = Run({c.command, "wiki"});
    ASSERT_EQ(r.code, kExitOk) << c.command << ": " << r.err;
    EXPECT_EQ(r.out, absl::StrCat("wiki: ", c.short_name,
                                  ", healthy, not suspended, spec version 4\n"));
    // Each RPC has its own request type; all hold the datasource as field 1.
    auto requests = fake_->Requests<v1::SuspendSupervisorRequest>(c.method);
    ASSERT_EQ(requests.size(), 1u) << c.command;
    EXPECT_EQ(requests[0].datasource(), "wiki");
  }
  EXPECT_THAT(fake_->Calls(), ElementsAre("SuspendSupervisor", "ResumeSupervisor",
                                          "ResetSupervisor", "TerminateSupervisor"));
}

TEST_F(CommandsTest, ResetOffsetsSendsThePairs) {
  fake_->SetResponse("ResetOffsets", Summary("wiki", v1::SUPERVISOR_STATE_RUNNING));
  Result r = Run({"reset-offsets", "wiki", "3=0", "0=1200"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  auto requests = fake_->Requests<v1::ResetOffsetsRequest>("ResetOffsets");
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].datasource(), "wiki");
  EXPECT_EQ(requests[0].offsets().size(), 2u);
  EXPECT_EQ(requests[0].offsets().at(0), 1200);
  EXPECT_EQ(requests[0].offsets().at(3), 0);
}

// reset-offsets --to_time against a real Kafka protocol (librdkafka's mock
// cluster): the topic and committed offsets from the supervisor, the lookup
// in Kafka with the spec's properties, the preview, the confirmation, the
// request. The mock cannot look offsets up by time (a real broker's answers
// are in tests/real_kafka), so the time here is past the end of every
// partition, and an earlier one must be refused, not reset to the end.
class ResetToTimeTest : public CommandsTest {
 protected:
  void SetUp() override {
    CommandsTest::SetUp();
    auto cluster = kafka::MockCluster::Create(1);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
    ASSERT_TRUE(cluster_->CreateTopic("edits", 2).ok());
    auto producer = kafka::Producer::Create({{"bootstrap.servers", cluster_->bootstrap_servers()}});
    ASSERT_TRUE(producer.ok()) << producer.status();
    for (int i = 0; i < 5; ++i) ASSERT_TRUE((*producer)->Produce("edits", 0, "v").ok());
    ASSERT_TRUE((*producer)->Flush(absl::Seconds(30)).ok());

    v1::GetSupervisorStatusResponse status;
    status.mutable_status()->set_datasource("wiki");
    status.mutable_status()->set_topic("edits");
    (*status.mutable_status()->mutable_committed_offsets())[0] = 2;
    fake_->SetResponse("GetSupervisorStatus", status);
    v1::GetSupervisorResponse spec;
    spec.mutable_spec()->set_datasource("wiki");
    (*spec.mutable_spec()->mutable_io_config()->mutable_consumer_properties())
        ["bootstrap.servers"] = cluster_->bootstrap_servers();
    fake_->SetResponse("GetSupervisor", spec);
    fake_->SetResponse("ResetOffsets", Summary("wiki", v1::SUPERVISOR_STATE_RUNNING));
    options_.kafka_cluster = "dev";
    options_.to_time = std::to_string(absl::ToUnixMillis(absl::Now() + absl::Hours(1)));
  }

  std::unique_ptr<kafka::MockCluster> cluster_;
};

TEST_F(ResetToTimeTest, ShowsThePlanAndSendsItOnceConfirmed) {
  std::istringstream yes("y\n");
  options_.confirm_in = &yes;
  Result r = Run({"reset-offsets", "wiki"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("topic edits"));
  EXPECT_THAT(r.out, ContainsRegex("0 +2 +5 +skips 3 +no record that new: latest offset\n"));
  EXPECT_THAT(r.out, ContainsRegex("1 +- +0 +starts there +no record that new: latest offset\n"));
  EXPECT_THAT(r.err, HasSubstr("reset 2 partition(s) of wiki to these offsets"));
  auto requests = fake_->Requests<v1::ResetOffsetsRequest>("ResetOffsets");
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].datasource(), "wiki");
  EXPECT_EQ(requests[0].offsets().size(), 2u);
  EXPECT_EQ(requests[0].offsets().at(0), 5);
  EXPECT_EQ(requests[0].offsets().at(1), 0);
}

TEST_F(ResetToTimeTest, NotConfirmedOrNoWayToAskSendsNothing) {
  std::istringstream no("n\n");
  options_.confirm_in = &no;
  Result r = Run({"reset-offsets", "wiki"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("not confirmed, nothing changed"));
  std::istringstream empty;
  options_.confirm_in = &empty;
  EXPECT_EQ(Run({"reset-offsets", "wiki"}).code, kExitUsage);
  options_.confirm_in = nullptr;
  r = Run({"reset-offsets", "wiki"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("add --yes"));
  EXPECT_TRUE(fake_->Requests<v1::ResetOffsetsRequest>("ResetOffsets").empty());

  options_.yes = true;
  r = Run({"reset-offsets", "wiki"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(fake_->Requests<v1::ResetOffsetsRequest>("ResetOffsets").size(), 1u);
}

TEST_F(ResetToTimeTest, ABrokerThatCannotLookUpByTimeIsRefused) {
  options_.yes = true;
  options_.to_time = "2020-01-01T00:00:00Z";  // before every record
  Result r = Run({"reset-offsets", "wiki"});
  EXPECT_EQ(r.code, kExitRpcError);
  EXPECT_THAT(r.err, HasSubstr("FAILED_PRECONDITION"));
  EXPECT_THAT(r.err, HasSubstr("does not look offsets up by time"));
  EXPECT_TRUE(fake_->Requests<v1::ResetOffsetsRequest>("ResetOffsets").empty());
}

TEST_F(ResetToTimeTest, BadArgumentsSendNothing) {
  options_.yes = true;
  Result r = Run({"reset-offsets", "wiki", "0=5"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("either P=OFFSET pairs or --to_time"));
  options_.to_time = "last tuesday";
  r = Run({"reset-offsets", "wiki"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("neither an ISO-8601 time"));
  options_.to_time.clear();
  r = Run({"reset-offsets", "wiki"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("P=OFFSET"));
  EXPECT_THAT(fake_->Calls(), IsEmpty());

  // A topic pattern has no single partition numbering to reset.
  v1::GetSupervisorStatusResponse status;
  status.mutable_status()->set_topic_pattern("edits-.*");
  fake_->SetResponse("GetSupervisorStatus", status);
  options_.to_time = "0";
  r = Run({"reset-offsets", "wiki"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("one topic"));
  EXPECT_TRUE(fake_->Requests<v1::ResetOffsetsRequest>("ResetOffsets").empty());
}

TEST_F(CommandsTest, HandoffSendsTheGroupsAndShowsWhatWasSkipped) {
  v1::HandoffTaskGroupsResponse response;
  response.add_group_ids(0);
  response.add_group_ids(2);
  response.add_skipped("group 1: nothing read since its last checkpoint");
  fake_->SetResponse("HandoffTaskGroups", response);
  Result r = Run({"handoff", "wiki", "2", "0", "1"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  auto requests = fake_->Requests<v1::HandoffTaskGroupsRequest>("HandoffTaskGroups");
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].datasource(), "wiki");
  EXPECT_THAT(requests[0].group_ids(), ElementsAre(2, 0, 1));
  EXPECT_EQ(r.out,
            "wiki: handing off groups 0, 2 (sequence closed; it publishes while the group reads "
            "on)\nskipped group 1: nothing read since its last checkpoint\n");
  r = Run({"handoff", "wiki"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_TRUE(fake_->Requests<v1::HandoffTaskGroupsRequest>("HandoffTaskGroups")[1]
                  .group_ids()
                  .empty());
  r = Run({"handoff", "wiki", "x"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("not a group id: \"x\""));
}

TEST_F(CommandsTest, CompactSendsTheIntervalAndShowsWhatWasQueued) {
  v1::CompactDataSourceResponse response;
  v1::Interval* queued = response.add_queued();
  queued->set_start_ms(0);
  queued->set_end_ms(3600000);
  v1::PendingCompaction* skipped = response.add_skipped();
  skipped->mutable_interval()->set_start_ms(3600000);
  skipped->mutable_interval()->set_end_ms(7200000);
  skipped->set_reason("waiting for handoff of 2 segments");
  fake_->SetResponse("CompactDataSource", response);
  Result r = Run({"compact", "wiki", "1970-01-01T00:00:00Z/1970-01-01T02:00:00Z"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  auto requests = fake_->Requests<v1::CompactDataSourceRequest>("CompactDataSource");
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].datasource(), "wiki");
  EXPECT_EQ(requests[0].interval().start_ms(), 0);
  EXPECT_EQ(requests[0].interval().end_ms(), 7200000);
  EXPECT_EQ(r.out,
            "wiki: compacting 1 interval(s) in the background (sluicectl status shows progress)\n"
            "queued 1970-01-01T00:00:00.000Z/1970-01-01T01:00:00.000Z\n"
            "skipped 1970-01-01T01:00:00.000Z/1970-01-01T02:00:00.000Z: waiting for handoff of "
            "2 segments\n");
  r = Run({"compact", "wiki"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_FALSE(fake_->Requests<v1::CompactDataSourceRequest>("CompactDataSource")[1]
                   .has_interval());
  r = Run({"compact", "wiki", "yesterday"});
  EXPECT_EQ(r.code, kExitUsage);
}

TEST_F(CommandsTest, SubmitSaysWhichPathItTook) {
  v1::SubmitSupervisorResponse response;
  response.mutable_spec()->set_datasource("wiki");
  response.set_version(3);
  response.set_update(v1::SPEC_UPDATE_APPLIED_LIVE);
  response.add_changed_fields("ioConfig.taskCount");
  fake_->SetResponse("SubmitSupervisor", response);
  const std::string path = WriteFile("live.json", R"({"datasource": "wiki"})");
  Result r = Run({"submit", path});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(r.out,
            "wiki: stored spec version 3 (applied live: running tasks keep reading)\n"
            "changed: ioConfig.taskCount\n");
}

TEST_F(CommandsTest, SegmentsPassTheirOptions) {
  v1::ListSegmentsResponse response;
  auto* s = response.add_segments();
  s->set_id("wiki_seg_0");
  s->set_num_rows(3);
  fake_->SetResponse("ListSegments", response);
  options_.include_unused = true;
  options_.limit = 50;
  options_.interval = "2026-11-30T00:00:00Z/2026-12-01T00:00:00Z";
  Result r = Run({"segments", "wiki"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("wiki_seg_0"));
  auto requests = fake_->Requests<v1::ListSegmentsRequest>("ListSegments");
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_TRUE(requests[0].include_unused());
  EXPECT_EQ(requests[0].limit(), 50);
  EXPECT_EQ(requests[0].interval().start_ms(), 1795996800000);
  EXPECT_EQ(requests[0].interval().end_ms(), 1796083200000);

  options_.interval = "2026-12-01T00:00:00Z/2026-11-30T00:00:00Z";
  r = Run({"segments", "wiki"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("ends before it starts"));
  options_.interval = "yesterday";
  EXPECT_EQ(Run({"segments", "wiki"}).code, kExitUsage);
}

TEST_F(CommandsTest, TasksFilterByDatasourceAndState) {
  fake_->SetResponse("ListTasks", v1::SupervisorServiceListTasksResponse());
  Result r = Run({"tasks"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(r.out, "no tasks\n");
  options_.states = "reading,PAUSED";
  options_.include_finished = true;
  r = Run({"tasks", "wiki"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  auto requests = fake_->Requests<v1::SupervisorServiceListTasksRequest>("ListTasks");
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].datasource(), "");
  EXPECT_EQ(requests[1].datasource(), "wiki");
  EXPECT_TRUE(requests[1].include_finished());
  EXPECT_THAT(requests[1].states(), ElementsAre(v1::TASK_STATE_READING, v1::TASK_STATE_PAUSED));
  options_.states = "SLEEPING";
  r = Run({"tasks"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("unknown task state \"SLEEPING\""));
}

TEST_F(CommandsTest, WorkersMarkLoadedCommitLogListGetHistory) {
  v1::ListWorkersResponse workers;
  auto* w = workers.add_workers();
  w->set_worker_id("worker-0");
  w->set_last_heartbeat_ms(1000);
  fake_->SetResponse("ListWorkers", workers);
  options_.now_ms = [] { return int64_t{61000}; };
  Result r = Run({"workers"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("1m ago"));

  v1::MarkSegmentsLoadedResponse marked;
  marked.set_marked(2);
  fake_->SetResponse("MarkSegmentsLoaded", marked);
  options_.loader = "historical-1";
  r = Run({"mark-loaded", "wiki", "seg_a", "seg_b"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(r.out, "wiki: marked 2 of 2 segment(s) loaded\n");
  auto mark = fake_->Requests<v1::MarkSegmentsLoadedRequest>("MarkSegmentsLoaded");
  ASSERT_EQ(mark.size(), 1u);
  EXPECT_THAT(mark[0].segment_ids(), ElementsAre("seg_a", "seg_b"));
  EXPECT_EQ(mark[0].loader(), "historical-1");
  EXPECT_EQ(Run({"mark-loaded", "wiki"}).code, kExitUsage);

  v1::GetCommitLogResponse log;
  log.set_datasource("wiki");
  fake_->SetResponse("GetCommitLog", log);
  r = Run({"commit-log", "wiki"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("sequences:     0\n"));

  v1::ListSupervisorsResponse list;
  list.add_supervisors()->set_datasource("wiki");
  fake_->SetResponse("ListSupervisors", list);
  r = Run({"list"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("wiki"));

  v1::GetSupervisorResponse spec;
  spec.mutable_spec()->set_datasource("wiki");
  spec.set_version(3);
  fake_->SetResponse("GetSupervisor", spec);
  r = Run({"get", "wiki"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(r.out, "# wiki, spec version 3\n{\n \"datasource\": \"wiki\"\n}\n");

  fake_->SetResponse("GetSupervisorHistory", v1::GetSupervisorHistoryResponse());
  r = Run({"history", "wiki"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(r.out, "wiki: no spec history\n");
  EXPECT_EQ(fake_->Requests<v1::GetSupervisorHistoryRequest>("GetSupervisorHistory")[0].datasource(), "wiki");
}

TEST(ParsePartitionOffsetsTest, Pairs) {
  auto offsets = ParsePartitionOffsets({"1=5", "0=0"});
  ASSERT_TRUE(offsets.ok());
  EXPECT_EQ(offsets->size(), 2u);
  EXPECT_EQ(offsets->at(1), 5);
  EXPECT_FALSE(ParsePartitionOffsets({"-1=5"}).ok());
  EXPECT_FALSE(ParsePartitionOffsets({"1=-5"}).ok());
  EXPECT_FALSE(ParsePartitionOffsets({"1=5=6"}).ok());
  EXPECT_FALSE(ParsePartitionOffsets({"x=5"}).ok());
}

}  // namespace
}  // namespace sluicectl
}  // namespace sluice
