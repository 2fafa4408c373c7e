// Druid specs accepted (issue 16, point 4), end to end on the in-process
// cluster: Druid's Kafka tutorial spec (common/druid/testdata/
// tutorial-kafka.json), submitted through SubmitSupervisor's druid_spec_json
// unchanged except that bootstrap.servers names the test's Kafka (the only
// substitution), ingests Wikipedia edits into committed segments; Druid specs
// sluice cannot take are INVALID_ARGUMENT naming the fields.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/time/clock.h"
#include "common/file_util.h"
#include "sluice/v1/supervisor_service.grpc.pb.h"
#include "tests/task_test_util.h"
#include "tests/wiki_cluster_test.h"

namespace sluice {
namespace {

constexpr char kTopic[] = "wikipedia";
constexpr int kRecords = 300;

class ClusterDruidSpecTest : public testing::WikiClusterTest {
 protected:
  void SetUp() override {
    StartWikiCluster(/*partitions=*/1);
    ASSERT_TRUE(kafka_->CreateTopic(kTopic, 2).ok());
  }

  std::string TutorialSpec() {
    absl::StatusOr<std::string> text = ReadFile("common/druid/testdata/tutorial-kafka.json");
    EXPECT_TRUE(text.ok()) << text.status();
    // The one change: Druid's tutorial reads localhost:9092.
    return absl::StrReplaceAll(text.value_or(""), {{"localhost:9092", kafka_->bootstrap()}});
  }

  grpc::Status Submit(const std::string& druid_json, bool allow_unsupported,
                      v1::SubmitSupervisorResponse* response) {
    v1::SubmitSupervisorRequest request;
    request.set_druid_spec_json(druid_json);
    request.set_allow_unsupported(allow_unsupported);
    grpc::ClientContext ctx;
    return stub_->SubmitSupervisor(&ctx, request, response);
  }

  // A Wikipedia edit as in Druid's wikiticker sample, nulls included.
  static std::string Edit(int n) {
    return absl::StrCat(
        R"({"time":"2015-09-12T)", n % 2 == 0 ? "00" : "13", ":", 10 + n % 50, ":00.000Z",
        R"(","channel":"#en.wikipedia","cityName":null,"comment":"edit )", n,
        R"(","countryIsoCode":null,"countryName":null,"isAnonymous":false,"isMinor":)",
        n % 3 == 0 ? "true" : "false",
        R"(,"isNew":false,"isRobot":false,"isUnpatrolled":false,"metroCode":null,"namespace":"Main","page":"Page )",
        n % 17, R"(","regionIsoCode":null,"regionName":null,"user":"user)", n % 5,
        R"(","delta":)", n, R"(,"added":)", n, R"(,"deleted":0})");
  }

  v1::GetCommitLogResponse CommitLog() {
    v1::GetCommitLogRequest ref;
    ref.set_datasource("wikipedia");
    v1::GetCommitLogResponse log;
    grpc::ClientContext ctx;
    stub_->GetCommitLog(&ctx, ref, &log);
    return log;
  }

  int64_t Committed() {
    const v1::GetCommitLogResponse log = CommitLog();
    int64_t total = 0;
    for (const auto& [p, offset] : log.committed_offsets()) total += offset;
    return total;
  }

  int64_t CurrentOffsetsTotal() {
    v1::GetSupervisorStatusRequest ref;
    ref.set_datasource("wikipedia");
    v1::GetSupervisorStatusResponse response;
    grpc::ClientContext ctx;
    if (!stub_->GetSupervisorStatus(&ctx, ref, &response).ok()) return -1;
    int64_t total = 0;
    for (const auto& [p, offset] : response.status().current_offsets()) total += offset;
    return total;
  }
};

TEST_F(ClusterDruidSpecTest, DruidsTutorialSpecSubmitsUnchangedAndIngests) {
  std::vector<std::string> edits[2];
  for (int n = 0; n < kRecords; ++n) edits[n % 2].push_back(Edit(n));
  for (int p = 0; p < 2; ++p) ASSERT_TRUE(kafka_->Produce(kTopic, p, edits[p]).ok());

  v1::SubmitSupervisorResponse submitted;
  const grpc::Status status = Submit(TutorialSpec(), /*allow_unsupported=*/false, &submitted);
  ASSERT_TRUE(status.ok()) << status.error_code() << ": " << status.error_message();
  EXPECT_EQ(submitted.spec().datasource(), "wikipedia");
  EXPECT_EQ(submitted.spec().io_config().replicas(), 2);
  EXPECT_EQ(submitted.spec().io_config().task_duration(), "PT10M");
  EXPECT_EQ(submitted.spec().data_schema().dimensions_spec().dimensions_size(), 19);
  ASSERT_EQ(submitted.warnings_size(), 3);  // added, deleted, delta: long -> string
  EXPECT_NE(submitted.warnings(0).find("\"added\" of type long"), std::string::npos);
  std::printf("[druid spec] tutorial spec submitted, version %lld, %d warnings:\n",
              static_cast<long long>(submitted.version()), submitted.warnings_size());
  for (const std::string& w : submitted.warnings()) std::printf("  %s\n", w.c_str());

  // The tutorial does not set useEarliestOffset: the tasks start at the end
  // of the topic, so the edits that count are those produced once they read.
  const absl::Time start = absl::Now();
  ASSERT_TRUE(testing::WaitFor([&] { return PlacedTasks("wikipedia") == 2; }, absl::Seconds(60)))
      << "tasks placed: " << PlacedTasks("wikipedia");
  ASSERT_TRUE(testing::WaitFor([&] { return CurrentOffsetsTotal() == kRecords; },
                               absl::Seconds(60)))
      << CurrentOffsetsTotal();
  for (int p = 0; p < 2; ++p) ASSERT_TRUE(kafka_->Produce(kTopic, p, edits[p]).ok());
  ASSERT_TRUE(testing::WaitFor([&] { return CurrentOffsetsTotal() == 2 * kRecords; },
                               absl::Seconds(60)))
      << CurrentOffsetsTotal();

  // The tutorial's taskDuration is PT10M; suspending finishes the group now
  // (it publishes what it read).
  v1::SuspendSupervisorRequest ref;
  ref.set_datasource("wikipedia");
  v1::SuspendSupervisorResponse summary;
  grpc::ClientContext suspend_ctx;
  ASSERT_TRUE(stub_->SuspendSupervisor(&suspend_ctx, ref, &summary).ok());
  ASSERT_TRUE(testing::WaitFor([&] { return Committed() == 2 * kRecords; }, absl::Seconds(90)))
      << CommitLog().DebugString();

  v1::ListSegmentsRequest list;
  list.set_datasource("wikipedia");
  v1::ListSegmentsResponse segments;
  grpc::ClientContext list_ctx;
  ASSERT_TRUE(stub_->ListSegments(&list_ctx, list, &segments).ok());
  int64_t rows = 0;
  for (const v1::SegmentDescriptor& s : segments.segments()) {
    rows += s.num_rows();
    EXPECT_EQ(s.interval().end_ms() - s.interval().start_ms(), 86400000) << s.id();  // DAY
  }
  // Rollup off: one row per edit read (the second batch; the first was
  // before the tasks' start offsets).
  EXPECT_EQ(rows, kRecords);
  int64_t parse_errors = 0, thrown_away = 0;
  const v1::GetCommitLogResponse log = CommitLog();
  for (const v1::CommittedSequence& seq : log.sequences()) {
    for (const v1::PartitionRange& r : seq.partition_stats()) {
      parse_errors += r.unparseable();
      thrown_away += r.thrown_away();
    }
  }
  EXPECT_EQ(parse_errors, 0);
  EXPECT_EQ(thrown_away, 0);
  std::printf("[druid spec] %lld offsets committed, %d segments, %lld rows, in %s\n",
              static_cast<long long>(Committed()), segments.segments_size(),
              static_cast<long long>(rows), absl::FormatDuration(absl::Now() - start).c_str());
}

TEST_F(ClusterDruidSpecTest, DruidSpecsSluiceCannotTakeAreInvalidArgumentNamingTheFields) {
  const std::string tutorial = TutorialSpec();
  const std::string with_unsupported = absl::StrReplaceAll(
      tutorial, {{R"("reportParseExceptions": false)",
                  R"("reportParseExceptions": false, "maxPendingPersists": 0, "indexSpec": {})"}});
  v1::SubmitSupervisorResponse response;
  grpc::Status status = Submit(with_unsupported, false, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("spec.tuningConfig.indexSpec is not supported by sluice"),
            std::string::npos)
      << status.error_message();
  EXPECT_NE(status.error_message().find("spec.tuningConfig.maxPendingPersists"), std::string::npos)
      << status.error_message();
  std::printf("[druid spec] refused: %s: %s\n", "INVALID_ARGUMENT", status.error_message().c_str());

  // Nothing was stored.
  v1::GetSupervisorRequest ref;
  ref.set_datasource("wikipedia");
  v1::GetSupervisorResponse got;
  grpc::ClientContext get_ctx;
  EXPECT_EQ(stub_->GetSupervisor(&get_ctx, ref, &got).error_code(), grpc::StatusCode::NOT_FOUND);

  // With allow_unsupported: taken, each ignored field a warning.
  status = Submit(with_unsupported, true, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(response.warnings_size(), 5);
  EXPECT_EQ(response.warnings(3), "spec.tuningConfig.indexSpec is not supported by sluice; ignored");

  status = Submit("{\"type\": \"kafka\", ", false, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("druid_spec_json: the Druid spec is not valid JSON"),
            std::string::npos)
      << status.error_message();

  status = Submit(absl::StrReplaceAll(tutorial, {{R"("type": "json")", R"("type": "csv")"}}), true,
                  &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("spec.ioConfig.inputFormat.type: \"csv\" is not supported"),
            std::string::npos)
      << status.error_message();

  // The request bound: at most 1 MiB of Druid JSON, SubmitSupervisor's
  // bound (limits.proto's method_limits), refused before the handler.
  status = Submit(std::string(1048577, ' '), false, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(status.error_message().find("SubmitSupervisor requests are bounded to 1048576 bytes"),
            std::string::npos)
      << status.error_message();

  // A property that runs a command is refused as in sluice's own form.
  status = Submit(absl::StrReplaceAll(tutorial, {{R"("bootstrap.servers")",
                                                  R"("sasl.kerberos.kinit.cmd": "touch /tmp/x", "bootstrap.servers")"}}),
                  false, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("sasl.kerberos.kinit.cmd"), std::string::npos)
      << status.error_message();
}

}  // namespace
}  // namespace sluice
