// The Kafka StreamMetadata against librdkafka's mock cluster (real protocol).
#include <gtest/gtest.h>

#include "common/kafka/mock_cluster.h"
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

}  // namespace
}  // namespace sluice::supervisor
