// The Kafka StreamMetadata against librdkafka's mock cluster (real protocol).
#include <gtest/gtest.h>

#include "common/kafka/mock_cluster.h"
#include "common/kafka/producer.h"
#include "supervisor/shared_kafka_clients.h"
#include "supervisor/stream_metadata.h"

namespace sluice::supervisor {
namespace {

TEST(KafkaStreamMetadataTest, ListsPartitionsAndWatermarks) {
  auto cluster = kafka::MockCluster::Create(1);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  ASSERT_TRUE((*cluster)->CreateTopic("events", 3).ok());
  v1::SupervisorSpec spec;
  spec.mutable_io_config()->set_topic("events");
  (*spec.mutable_io_config()->mutable_consumer_properties())["bootstrap.servers"] =
      (*cluster)->bootstrap_servers();
  auto metadata = KafkaStreamMetadataFactory()(spec);
  ASSERT_TRUE(metadata.ok()) << metadata.status();
  auto partitions = (*metadata)->ListPartitions(absl::Seconds(10));
  ASSERT_TRUE(partitions.ok()) << partitions.status();
  EXPECT_EQ(*partitions, (std::vector<int32_t>{0, 1, 2}));
  auto marks = (*metadata)->QueryWatermarks(*partitions, absl::Seconds(10));
  ASSERT_TRUE(marks.ok()) << marks.status();
  EXPECT_EQ(marks->size(), 3u);
  EXPECT_EQ(marks->at(1).earliest, 0);
  EXPECT_EQ(marks->at(1).latest, 0);
}

// ioConfig.topicPattern: every matching topic's partitions, under ids given
// in discovery order; a topic created later gets the next ids, and the
// watermarks of each id are its own topic's.
TEST(KafkaStreamMetadataTest, ATopicPatternListsEveryMatchingTopicUnderStableIds) {
  auto cluster = kafka::MockCluster::Create(1);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  ASSERT_TRUE((*cluster)->CreateTopic("metrics-b", 1).ok());
  ASSERT_TRUE((*cluster)->CreateTopic("metrics-a", 2).ok());
  ASSERT_TRUE((*cluster)->CreateTopic("logs", 1).ok());
  v1::SupervisorSpec spec;
  spec.mutable_io_config()->set_topic_pattern("metrics-.*");
  (*spec.mutable_io_config()->mutable_consumer_properties())["bootstrap.servers"] =
      (*cluster)->bootstrap_servers();
  auto metadata = KafkaStreamMetadataFactory()(spec);
  ASSERT_TRUE(metadata.ok()) << metadata.status();
  StreamPartitionIds* ids = (*metadata)->stream_partition_ids();
  ASSERT_NE(ids, nullptr);
  auto partitions = (*metadata)->ListPartitions(absl::Seconds(10));
  ASSERT_TRUE(partitions.ok()) << partitions.status();
  EXPECT_EQ(*partitions, (std::vector<int32_t>{0, 1, 2}));
  EXPECT_EQ(ids->Find(0)->topic, "metrics-a");
  EXPECT_EQ(ids->Find(1)->partition, 1);
  EXPECT_EQ(ids->Find(2)->topic, "metrics-b");

  auto producer = kafka::Producer::Create({{"bootstrap.servers", (*cluster)->bootstrap_servers()}});
  ASSERT_TRUE(producer.ok()) << producer.status();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE((*producer)->Produce("metrics-b", 0, "x").ok());
  ASSERT_TRUE((*producer)->Flush(absl::Seconds(10)).ok());
  ASSERT_TRUE((*cluster)->CreateTopic("metrics-0", 1).ok());
  partitions = (*metadata)->ListPartitions(absl::Seconds(10));
  ASSERT_TRUE(partitions.ok()) << partitions.status();
  EXPECT_EQ(*partitions, (std::vector<int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(ids->Find(3)->topic, "metrics-0") << "a later topic gets the next id, ids never move";
  auto marks = (*metadata)->QueryWatermarks(*partitions, absl::Seconds(10));
  ASSERT_TRUE(marks.ok()) << marks.status();
  ASSERT_EQ(marks->size(), 4u);
  EXPECT_EQ(marks->at(2).latest, 3);
  EXPECT_EQ(marks->at(0).latest, 0);
  EXPECT_EQ(marks->at(3).latest, 0);
  EXPECT_EQ((*metadata)->QueryWatermarks({7}, absl::Seconds(1)).status().code(),
            absl::StatusCode::kNotFound);

  spec.mutable_io_config()->set_topic_pattern("nothing-.*");
  auto none = KafkaStreamMetadataFactory()(spec);
  ASSERT_TRUE(none.ok());
  absl::Status status = (*none)->ListPartitions(absl::Seconds(10)).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound) << status;
  EXPECT_NE(status.message().find("nothing-.*"), std::string::npos) << status;
}

// Many datasources on one cluster: one librdkafka handle, not one each; a
// spec with other properties gets its own; the last stream closes it.
TEST(KafkaStreamMetadataTest, StreamsWithTheSamePropertiesShareOneClient) {
  auto cluster = kafka::MockCluster::Create(1);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  ASSERT_TRUE((*cluster)->CreateTopic("events", 2).ok());
  ASSERT_TRUE((*cluster)->CreateTopic("clicks", 1).ok());
  auto clients = std::make_shared<SharedKafkaClients>();
  StreamMetadataFactory factory = KafkaStreamMetadataFactory({}, clients);
  auto spec = [&](const std::string& topic) {
    v1::SupervisorSpec s;
    s.mutable_io_config()->set_topic(topic);
    (*s.mutable_io_config()->mutable_consumer_properties())["bootstrap.servers"] =
        (*cluster)->bootstrap_servers();
    return s;
  };
  std::vector<std::unique_ptr<StreamMetadata>> streams;
  for (int i = 0; i < 50; ++i) {
    auto stream = factory(spec(i % 2 == 0 ? "events" : "clicks"));
    ASSERT_TRUE(stream.ok()) << stream.status();
    streams.push_back(std::move(*stream));
  }
  EXPECT_EQ(clients->live(), 1);
  // Each still asks about its own topic.
  auto events = streams[0]->ListPartitions(absl::Seconds(10));
  ASSERT_TRUE(events.ok()) << events.status();
  EXPECT_EQ(events->size(), 2u);
  auto clicks = streams[1]->ListPartitions(absl::Seconds(10));
  ASSERT_TRUE(clicks.ok()) << clicks.status();
  EXPECT_EQ(clicks->size(), 1u);

  v1::SupervisorSpec other = spec("events");
  (*other.mutable_io_config()->mutable_consumer_properties())["client.id"] = "other";
  auto own = factory(other);
  ASSERT_TRUE(own.ok()) << own.status();
  EXPECT_EQ(clients->live(), 2);
  own->reset();
  EXPECT_EQ(clients->live(), 1);
  streams.clear();
  EXPECT_EQ(clients->live(), 0);
}

}  // namespace
}  // namespace sluice::supervisor
