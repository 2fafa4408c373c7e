#include "common/kafka/metadata_client.h"

#include <librdkafka/rdkafka_mock.h>

#include <string>
#include <vector>

#include "common/kafka/mock_cluster.h"
#include "common/kafka/producer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sluice {
namespace kafka {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class MetadataClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cluster = MockCluster::Create(1);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
    ASSERT_TRUE(cluster_->CreateTopic("wiki", 3).ok());
    auto client = MetadataClient::Create({{"bootstrap.servers", cluster_->bootstrap_servers()}});
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = *std::move(client);
  }

  void Produce(int32_t partition, int count, size_t value_size = 16) {
    auto producer = Producer::Create({{"bootstrap.servers", cluster_->bootstrap_servers()}});
    ASSERT_TRUE(producer.ok()) << producer.status();
    const std::string value(value_size, 'x');
    for (int i = 0; i < count; ++i) {
      ASSERT_TRUE((*producer)->Produce("wiki", partition, value).ok());
    }
    ASSERT_TRUE((*producer)->Flush(absl::Seconds(30)).ok());
  }

  std::unique_ptr<MockCluster> cluster_;
  std::unique_ptr<MetadataClient> client_;
};

TEST_F(MetadataClientTest, ListsPartitions) {
  auto partitions = client_->ListPartitions("wiki", absl::Seconds(10));
  ASSERT_TRUE(partitions.ok()) << partitions.status();
  EXPECT_THAT(*partitions, ElementsAre(0, 1, 2));
}

TEST_F(MetadataClientTest, UnknownTopicAnswerIsNotFound) {
  // librdkafka's mock only speaks Metadata v0-v2, which auto-creates unknown
  // topics; a real broker answers UNKNOWN_TOPIC_OR_PART. Make the mock answer
  // that way for this topic.
  rd_kafka_mock_topic_set_error(cluster_->get(), "gone", RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART);
  auto partitions = client_->ListPartitions("gone", absl::Seconds(10));
  ASSERT_EQ(partitions.status().code(), absl::StatusCode::kNotFound) << partitions.status();
  EXPECT_THAT(partitions.status().message(), HasSubstr("\"gone\""));
}

TEST_F(MetadataClientTest, LeaderNotAvailableIsUnavailable) {
  rd_kafka_mock_topic_set_error(cluster_->get(), "wiki", RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE);
  auto partitions = client_->ListPartitions("wiki", absl::Seconds(10));
  EXPECT_EQ(partitions.status().code(), absl::StatusCode::kUnavailable) << partitions.status();
}

TEST_F(MetadataClientTest, EmptyTopicNameIsInvalidArgument) {
  EXPECT_EQ(client_->ListPartitions("", absl::Seconds(1)).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(MetadataClientTest, WatermarksFollowProducedRecords) {
  auto empty = client_->QueryAllWatermarks("wiki", absl::Seconds(10));
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->size(), 3u);
  for (const auto& [partition, marks] : *empty) EXPECT_EQ(marks, (Watermarks{0, 0}));

  Produce(0, 5);
  Produce(2, 2);
  auto marks = client_->QueryWatermarks("wiki", {0, 1, 2}, absl::Seconds(10));
  ASSERT_TRUE(marks.ok()) << marks.status();
  EXPECT_EQ(marks->at(0), (Watermarks{0, 5}));
  EXPECT_EQ(marks->at(1), (Watermarks{0, 0}));
  EXPECT_EQ(marks->at(2), (Watermarks{0, 2}));
}

// Time lag needs the newest record's timestamp: the record just below the
// latest offset, read with the client's own handle.
TEST_F(MetadataClientTest, NewestTimestampsAreThoseOfTheLastRecords) {
  const int64_t before = absl::ToUnixMillis(absl::Now());
  Produce(0, 5);
  Produce(2, 1);
  const int64_t after = absl::ToUnixMillis(absl::Now());
  auto marks = client_->QueryWatermarks("wiki", {0, 1, 2}, absl::Seconds(10));
  ASSERT_TRUE(marks.ok()) << marks.status();
  std::map<int32_t, int64_t> latest;
  for (const auto& [p, m] : *marks) latest[p] = m.latest;
  for (int round = 0; round < 2; ++round) {  // the handle is reusable
    auto newest = client_->NewestTimestamps("wiki", latest, absl::Seconds(10));
    ASSERT_TRUE(newest.ok()) << newest.status();
    EXPECT_EQ(newest->size(), 2u) << "partition 1 is empty";
    for (int32_t p : {0, 2}) {
      ASSERT_TRUE(newest->count(p)) << p;
      EXPECT_GE(newest->at(p), before - 1) << p;  // CreateTime, set by the producer
      EXPECT_LE(newest->at(p), after + 1) << p;
    }
  }
  // Watermarks and listings still work on the same handle afterwards.
  EXPECT_TRUE(client_->QueryWatermarks("wiki", {0}, absl::Seconds(10)).ok());
  EXPECT_TRUE(client_->NewestTimestamps("wiki", {{1, 0}}, absl::Seconds(1))->empty());
}

// librdkafka's mock answers every by-time lookup with "no record": the
// client must not take that for "past the end" while records that new exist
// (a real broker's answers are checked in tests/real_kafka:broker_test).
TEST_F(MetadataClientTest, OffsetsForTimeRefusesABrokerThatCannotLookUpByTime) {
  Produce(0, 3);
  auto offsets = client_->OffsetsForTime("wiki", {0}, /*time_ms=*/1, absl::Seconds(10));
  ASSERT_EQ(offsets.status().code(), absl::StatusCode::kFailedPrecondition) << offsets.status();
  EXPECT_THAT(offsets.status().message(), HasSubstr("does not look offsets up by time"));
}

// A time newer than every record (and an empty partition): the latest offset.
TEST_F(MetadataClientTest, OffsetsForTimePastTheEndIsTheLatestOffset) {
  Produce(0, 3);
  const int64_t future = absl::ToUnixMillis(absl::Now() + absl::Hours(1));
  auto offsets = client_->OffsetsForTime("wiki", {0, 1}, future, absl::Seconds(10));
  ASSERT_TRUE(offsets.ok()) << offsets.status();
  EXPECT_EQ(offsets->at(0).offset, 3);
  EXPECT_EQ(offsets->at(0).source, OffsetForTimeSource::kPastEnd);
  EXPECT_EQ(offsets->at(1).offset, 0);
  EXPECT_EQ(offsets->at(1).source, OffsetForTimeSource::kPastEnd);
}

TEST_F(MetadataClientTest, OffsetsForTimeOfAnUnknownPartitionIsNotFound) {
  auto offsets = client_->OffsetsForTime("wiki", {7}, 1, absl::Seconds(10));
  EXPECT_EQ(offsets.status().code(), absl::StatusCode::kNotFound) << offsets.status();
  EXPECT_EQ(client_->OffsetsForTime("wiki", {0}, -5, absl::Seconds(1)).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(MetadataClientTest, EarliestMovesWhenTheBrokerDropsOldData) {
  // librdkafka's mock keeps only the last 5 MiB of a partition (the cap the
  // dev broker lifts); 6 MiB in 1 KiB records moves the earliest offset.
  Produce(1, 6 * 1024, 1024);
  auto marks = client_->QueryWatermarks("wiki", {1}, absl::Seconds(10));
  ASSERT_TRUE(marks.ok()) << marks.status();
  EXPECT_GT(marks->at(1).earliest, 0);
  EXPECT_EQ(marks->at(1).latest, 6 * 1024);
}

TEST_F(MetadataClientTest, UnknownPartitionIsNotFound) {
  auto marks = client_->QueryWatermarks("wiki", {0, 7}, absl::Seconds(10));
  ASSERT_EQ(marks.status().code(), absl::StatusCode::kNotFound) << marks.status();
  EXPECT_THAT(marks.status().message(), HasSubstr("wiki[7]"));
}

// Also a regression test: with a connection established before the broker
// went away, librdkafka 2.0.2's rd_kafka_query_watermark_offsets() ignored its
// timeout and blocked for minutes.
TEST_F(MetadataClientTest, BrokerDownIsUnavailableWithinTheTimeout) {
  ASSERT_TRUE(client_->QueryWatermarks("wiki", {0, 1, 2}, absl::Seconds(10)).ok());
  rd_kafka_mock_broker_set_down(cluster_->get(), 1);
  const absl::Time start = absl::Now();
  auto marks = client_->QueryWatermarks("wiki", {0, 1, 2}, absl::Milliseconds(500));
  EXPECT_EQ(marks.status().code(), absl::StatusCode::kUnavailable) << marks.status();
  EXPECT_THAT(marks.status().message(), HasSubstr("query watermarks of wiki"));
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));

  rd_kafka_mock_broker_set_up(cluster_->get(), 1);
  auto again = client_->QueryWatermarks("wiki", {0}, absl::Seconds(15));
  EXPECT_TRUE(again.ok()) << again.status();
}

TEST(MetadataClientNoClusterTest, UnreachableBootstrapIsUnavailable) {
  // Port 1 on loopback: nothing listens there.
  auto client = MetadataClient::Create({{"bootstrap.servers", "127.0.0.1:1"}});
  ASSERT_TRUE(client.ok()) << client.status();
  auto partitions = (*client)->ListPartitions("wiki", absl::Milliseconds(300));
  EXPECT_EQ(partitions.status().code(), absl::StatusCode::kUnavailable) << partitions.status();
}

TEST(MetadataClientNoClusterTest, BadPropertyIsInvalidArgument) {
  auto client = MetadataClient::Create({{"bootstrap.servers", "x:1"}, {"no.such", "1"}});
  EXPECT_EQ(client.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace kafka
}  // namespace sluice
