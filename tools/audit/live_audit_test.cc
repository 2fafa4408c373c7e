#include "tools/audit/live_audit.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "common/kafka/producer.h"
#include "tools/cli/fake_supervisor.h"
#include "tools/devbroker/dev_broker.h"

namespace sluice::audit {
namespace {

constexpr int64_t kBaseTimeMs = 1700000000000;  // 2023-11-14T22:13:20Z

// RunLiveAudit against the fake supervisor (spec, commit log, segments) and
// the dev broker (the records of the committed range).
class LiveAuditTest : public ::testing::Test {
 protected:
  void SetUp() override {
    devbroker::DevBrokerOptions options;
    options.topics = {{"wiki", 1}};
    auto broker = devbroker::DevBroker::Create(options);
    ASSERT_TRUE(broker.ok()) << broker.status();
    broker_ = *std::move(broker);
    auto fake = sluicectl::FakeSupervisor::Start();
    ASSERT_TRUE(fake.ok()) << fake.status();
    fake_ = *std::move(fake);
    stub_ = v1::SupervisorService::NewStub(
        grpc::CreateChannel(fake_->address(), grpc::InsecureChannelCredentials()));
  }

  void Produce(const std::vector<kafka::OutgoingRecord>& records) {
    auto producer = kafka::Producer::Create({{"bootstrap.servers", broker_->bootstrap_servers()}});
    ASSERT_TRUE(producer.ok()) << producer.status();
    for (const kafka::OutgoingRecord& r : records) {
      ASSERT_TRUE((*producer)->ProduceRecord("wiki", 0, r).ok());
    }
    ASSERT_TRUE((*producer)->Flush(absl::Seconds(30)).ok());
  }

  // One committed sequence over partition 0 [0, end) whose publish claimed
  // `unparseable` and `thrown_away` records and no segment (the test has no
  // segment files: the records that became rows are claimed thrown away,
  // which the audit checks only for the sum; the unparseable claim is
  // checked against re-parsing).
  void CommitRange(int64_t end, int64_t unparseable, int64_t thrown_away) {
    v1::GetCommitLogResponse log;
    log.set_datasource("wiki");
    log.set_topic("wiki");
    (*log.mutable_initial_offsets())[0] = 0;
    (*log.mutable_committed_offsets())[0] = end;
    v1::CommittedSequence* seq = log.add_sequences();
    seq->set_sequence_name("wiki_abc_0");
    seq->set_task_id("wiki_abc");
    (*seq->mutable_start_offsets())[0] = 0;
    (*seq->mutable_end_offsets())[0] = end;
    v1::PartitionRange* stats = seq->add_partition_stats();
    stats->set_partition(0);
    stats->set_start_offset(0);
    stats->set_end_offset(end);
    stats->set_unparseable(unparseable);
    stats->set_thrown_away(thrown_away);
    fake_->SetResponse("GetCommitLog", log);
    fake_->SetResponse("ListSegments", v1::ListSegmentsResponse());
  }

  absl::StatusOr<LiveAuditResult> Audit() {
    LiveAuditOptions options;
    options.datasource = "wiki";
    options.kafka_cluster = kafka::ClusterKind::kDevBroker;
    options.kafka_idle_timeout = absl::Seconds(20);
    return RunLiveAudit(*stub_, options);
  }

  std::unique_ptr<devbroker::DevBroker> broker_;
  std::unique_ptr<sluicectl::FakeSupervisor> fake_;
  std::unique_ptr<v1::SupervisorService::Stub> stub_;
};

// The kafka input format with the row time from kafka.timestamp and a header
// filter: the audit re-parses each record as the task did (envelope columns
// beside the value, the filter first), not the value alone as plain JSON,
// which has no time and made every record "unparseable".
TEST_F(LiveAuditTest, KafkaInputFormatRecordsAreReparsedWithTheirEnvelope) {
  std::vector<kafka::OutgoingRecord> records(5);
  const std::vector<std::string> values = {
      R"({"page":"a","added":1})",  // env prod: a row
      R"({"page":"b","added":2})",  // env dev: thrown away by the header filter
      R"({"page":"c","added":3})",  // env prod, source not UTF-8: BAD_HEADER
      "not json",                   // env prod: unparseable value
      R"({"page":"e","added":5})",  // env prod, null key: a row
  };
  for (size_t i = 0; i < records.size(); ++i) {
    records[i].value = values[i];
    records[i].key = absl::string_view("user");
    records[i].timestamp_ms = kBaseTimeMs + 1000 * static_cast<int64_t>(i);
    records[i].headers = {{"source", std::string("web")}, {"env", std::string("prod")}};
  }
  records[1].headers[1].second = "dev";
  records[2].headers[0].second = "\xff";
  records[4].key = std::nullopt;
  ASSERT_NO_FATAL_FAILURE(Produce(records));

  v1::GetSupervisorResponse got;
  v1::SupervisorSpec* spec = got.mutable_spec();
  spec->set_datasource("wiki");
  spec->mutable_io_config()->set_topic("wiki");
  (*spec->mutable_io_config()->mutable_consumer_properties())["bootstrap.servers"] =
      broker_->bootstrap_servers();
  spec->mutable_io_config()->mutable_input_format()->set_type("kafka");
  v1::DimFilter* filter =
      spec->mutable_io_config()->mutable_header_based_filter_config()->mutable_filter();
  filter->set_type("selector");
  filter->set_dimension("env");
  filter->set_value("prod");
  spec->mutable_data_schema()->mutable_timestamp_spec()->set_column("kafka.timestamp");
  spec->mutable_data_schema()->mutable_timestamp_spec()->set_format("millis");
  spec->mutable_data_schema()->mutable_granularity_spec()->set_segment_granularity("HOUR");
  fake_->SetResponse("GetSupervisor", got);

  // What the task counts: 2 rows, 1 thrown away, 2 unparseable.
  CommitRange(5, /*unparseable=*/2, /*thrown_away=*/3);
  absl::StatusOr<LiveAuditResult> result = Audit();
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->report.ok()) << result->ToString();
  EXPECT_EQ(result->report.records_in_kafka, 5);
  EXPECT_EQ(result->report.unparseable, 2);
  EXPECT_EQ(result->records_read, 5);

  // A publish that claims fewer unparseable records is still caught.
  CommitRange(5, /*unparseable=*/1, /*thrown_away=*/4);
  result = Audit();
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->report.discrepancies.size(), 1u) << result->ToString();
  EXPECT_NE(result->report.discrepancies[0].find(
                "the publish claims 1 unparseable records, re-parsing them with the spec finds 2"),
            std::string::npos)
      << result->report.discrepancies[0];

  // Without the header filter the dev record parses (a row): 2 unparseable
  // still (the bad header is decoded for its column).
  spec->mutable_io_config()->clear_header_based_filter_config();
  fake_->SetResponse("GetSupervisor", got);
  CommitRange(5, /*unparseable=*/2, /*thrown_away=*/3);
  result = Audit();
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->report.ok()) << result->ToString();
}

// A datasource whose status names an Iceberg table has the table audited
// too, and the overall result includes it; without a table (or a status),
// nothing more is audited.
TEST_F(LiveAuditTest, AnIcebergTableInTheStatusIsAuditedAndCounts) {
  std::vector<kafka::OutgoingRecord> records(2);
  for (kafka::OutgoingRecord& r : records) r.value = "x";
  ASSERT_NO_FATAL_FAILURE(Produce(records));
  v1::GetSupervisorResponse got;
  got.mutable_spec()->set_datasource("wiki");
  (*got.mutable_spec()->mutable_io_config()->mutable_consumer_properties())["bootstrap.servers"] =
      broker_->bootstrap_servers();
  fake_->SetResponse("GetSupervisor", got);
  CommitRange(2, /*unparseable=*/2, /*thrown_away=*/0);

  absl::StatusOr<LiveAuditResult> result = Audit();
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->report.ok()) << result->ToString();
  EXPECT_FALSE(result->table.has_value());

  v1::GetSupervisorStatusResponse status;
  v1::IcebergTableStatus* table = status.mutable_status()->mutable_iceberg_table();
  table->set_table_namespace("sluice");
  table->set_table_name("wiki");
  fake_->SetResponse("GetSupervisorStatus", status);
  result = Audit();
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_FALSE(result->table.has_value()) << "no commit yet: no metadata_location";

  table->set_metadata_location("file:///nonexistent/wiki/metadata/00001-x.metadata.json");
  fake_->SetResponse("GetSupervisorStatus", status);
  result = Audit();
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_TRUE(result->table.has_value());
  EXPECT_FALSE(result->table->ok());
  EXPECT_FALSE(result->report.ok());
  const std::string text = result->ToString();
  EXPECT_NE(text.find("FAIL: table metadata file:///nonexistent/wiki/metadata/00001-x.metadata.json "
                      "cannot be read"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("the Iceberg table sluice.wiki fails its audit (1 discrepancies"),
            std::string::npos)
      << text;
  EXPECT_NE(text.rfind("FAIL (1 discrepancies)"), std::string::npos) << text;
}

}  // namespace
}  // namespace sluice::audit
