#include "common/kafka/producer.h"

#include <librdkafka/rdkafka_mock.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/kafka/mock_cluster.h"
#include "common/kafka/test_consumer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sluice {
namespace kafka {
namespace {

using ::testing::HasSubstr;

class ProducerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cluster = MockCluster::Create(1);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
    ASSERT_TRUE(cluster_->CreateTopic("t", 2).ok());
  }

  KafkaProperties Props() const {
    return {{"bootstrap.servers", cluster_->bootstrap_servers()}, {"linger.ms", "5"}};
  }

  std::unique_ptr<MockCluster> cluster_;
};

TEST_F(ProducerTest, DeliversEveryRecordInOrder) {
  auto producer = Producer::Create(Props());
  ASSERT_TRUE(producer.ok()) << producer.status();
  for (int i = 0; i < 300; ++i) {
    ASSERT_TRUE((*producer)->Produce("t", i % 2, absl::StrCat("v", i), absl::StrCat("k", i)).ok());
  }
  ASSERT_TRUE((*producer)->Flush(absl::Seconds(30)).ok());
  EXPECT_EQ((*producer)->stats().delivered, 300);
  EXPECT_EQ((*producer)->stats().failed, 0);
  const auto ends = (*producer)->delivered_end_offsets();
  EXPECT_EQ(ends.at({"t", 0}), 150);
  EXPECT_EQ(ends.at({"t", 1}), 150);

  auto records = ReadRecords({{"bootstrap.servers", cluster_->bootstrap_servers()}}, "t",
                             {{0, {0, 150}}, {1, {0, 150}}}, absl::Seconds(30));
  ASSERT_TRUE(records.ok()) << records.status();
  for (int32_t partition : {0, 1}) {
    const std::vector<ConsumedRecord>& got = records->at(partition);
    ASSERT_EQ(got.size(), 150u);
    for (int j = 0; j < 150; ++j) {
      EXPECT_EQ(got[j].offset, j);
      EXPECT_EQ(got[j].value, absl::StrCat("v", 2 * j + partition));
      EXPECT_EQ(got[j].key, absl::StrCat("k", 2 * j + partition));
    }
  }
}

TEST_F(ProducerTest, UnknownPartitionIsNotFound) {
  auto producer = Producer::Create(Props());
  ASSERT_TRUE(producer.ok()) << producer.status();
  // Depending on whether librdkafka already knows the partition count the
  // error comes from Produce or from the delivery report.
  absl::Status status = (*producer)->Produce("t", 9, "v");
  if (status.ok()) status = (*producer)->Flush(absl::Seconds(30));
  ASSERT_EQ(status.code(), absl::StatusCode::kNotFound) << status;
  EXPECT_THAT(status.message(), HasSubstr("t[9]"));
}

TEST_F(ProducerTest, DeliveryErrorsAreReportedByFlush) {
  // A non-retriable error on the next Produce requests.
  rd_kafka_mock_push_request_errors(
      cluster_->get(), /*ApiKey=Produce*/ 0, 3, RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED,
      RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED, RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED);
  auto producer = Producer::Create(Props());
  ASSERT_TRUE(producer.ok()) << producer.status();
  ASSERT_TRUE((*producer)->Produce("t", 0, "v").ok());
  const absl::Status status = (*producer)->Flush(absl::Seconds(30));
  ASSERT_EQ(status.code(), absl::StatusCode::kPermissionDenied) << status;
  EXPECT_THAT(status.message(), HasSubstr("delivery to t[0] failed"));
  EXPECT_EQ((*producer)->stats().failed, 1);
  // The error is reported once; the next flush starts clean.
  EXPECT_TRUE((*producer)->Flush(absl::Seconds(1)).ok());
}

TEST_F(ProducerTest, FlushTimeoutIsUnavailable) {
  rd_kafka_mock_broker_set_down(cluster_->get(), 1);
  auto producer = Producer::Create(Props());
  ASSERT_TRUE(producer.ok()) << producer.status();
  ASSERT_TRUE((*producer)->Produce("t", 0, "v").ok());
  const absl::Status status = (*producer)->Flush(absl::Milliseconds(300));
  ASSERT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
  EXPECT_THAT(status.message(), HasSubstr("still in flight"));
  rd_kafka_mock_broker_set_up(cluster_->get(), 1);
  EXPECT_TRUE((*producer)->Flush(absl::Seconds(30)).ok());
  EXPECT_EQ((*producer)->stats().delivered, 1);
}

TEST(ProducerNoClusterTest, BadPropertyIsInvalidArgument) {
  auto producer = Producer::Create({{"linger.ms", "later"}});
  ASSERT_EQ(producer.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(producer.status().message(), HasSubstr("linger.ms"));
}

}  // namespace
}  // namespace kafka
}  // namespace sluice
