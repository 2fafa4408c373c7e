#include "common/kafka/consumer_settings.h"

#include <utility>

#include "common/kafka/config.h"
#include "gtest/gtest.h"

namespace sluice {
namespace kafka {
namespace {

TEST(ConsumerSettingsTest, DevBrokerGetsTheFetchTuning) {
  const KafkaProperties props = RecommendedConsumerProperties(ClusterKind::kDevBroker);
  EXPECT_EQ(props.at("fetch.wait.max.ms"), "10");
  EXPECT_EQ(props.at("queued.min.messages"), "100000");
  EXPECT_EQ(props.at("queued.max.messages.kbytes"), "65536");
  EXPECT_EQ(props.at("fetch.max.bytes"), "104857600");
  EXPECT_EQ(props.at("max.partition.fetch.bytes"), "10485760");
  EXPECT_EQ(props.at("enable.auto.commit"), "false");
  EXPECT_EQ(props.at("auto.offset.reset"), "error");
  EXPECT_EQ(props.at("group.id"), "sluice");
}

TEST(ConsumerSettingsTest, RealKafkaKeepsLibrdkafkaFetchDefaults) {
  const KafkaProperties props = RecommendedConsumerProperties(ClusterKind::kKafka);
  EXPECT_EQ(props.count("fetch.wait.max.ms"), 0u);
  EXPECT_EQ(props.count("queued.min.messages"), 0u);
  EXPECT_EQ(props.at("enable.auto.commit"), "false");
  EXPECT_EQ(props.at("enable.auto.offset.store"), "false");
  EXPECT_EQ(props.at("auto.offset.reset"), "error");
  // librdkafka's 1 s would starve a reader slower than the broker.
  EXPECT_EQ(props.at("fetch.queue.backoff.ms"), "2");
}

// The same objects linked with an older librdkafka (Debian 12's 2.0.2, as
// the end-to-end benchmark's comparison does) must not set what it lacks:
// rd_kafka_conf_set would refuse the whole configuration.
TEST(ConsumerSettingsTest, OlderLibrariesDoNotGetTheFetchQueueBackoff) {
  for (ClusterKind kind : {ClusterKind::kDevBroker, ClusterKind::kKafka}) {
    EXPECT_EQ(RecommendedConsumerProperties(kind, 0x020002ff).count("fetch.queue.backoff.ms"), 0u);
    EXPECT_EQ(RecommendedConsumerProperties(kind, 0x020100ff).count("fetch.queue.backoff.ms"), 0u);
    EXPECT_EQ(RecommendedConsumerProperties(kind, 0x020200ff).at("fetch.queue.backoff.ms"), "2");
    EXPECT_EQ(RecommendedConsumerProperties(kind, 0x020c01ff).at("fetch.queue.backoff.ms"), "2");
    // Everything else is the same.
    KafkaProperties old = RecommendedConsumerProperties(kind, 0x020002ff);
    KafkaProperties current = RecommendedConsumerProperties(kind);
    current.erase("fetch.queue.backoff.ms");
    EXPECT_EQ(old, current);
  }
}

TEST(ConsumerSettingsTest, UserPropertiesWin) {
  const KafkaProperties merged = WithConsumerDefaults(
      {{"bootstrap.servers", "h:1"}, {"fetch.wait.max.ms", "250"}}, ClusterKind::kDevBroker);
  EXPECT_EQ(merged.at("bootstrap.servers"), "h:1");
  EXPECT_EQ(merged.at("fetch.wait.max.ms"), "250");
  EXPECT_EQ(merged.at("queued.min.messages"), "100000");
}

TEST(ConsumerSettingsTest, RecommendationsAreAcceptedByLibrdkafka) {
  for (ClusterKind kind : {ClusterKind::kDevBroker, ClusterKind::kKafka}) {
    auto conf = BuildConf(WithConsumerDefaults({{"bootstrap.servers", "127.0.0.1:1"}}, kind));
    ASSERT_TRUE(conf.ok()) << conf.status();
    auto rk = NewHandle(RD_KAFKA_CONSUMER, *std::move(conf));
    ASSERT_TRUE(rk.ok()) << ClusterKindName(kind) << ": " << rk.status();
    rd_kafka_consumer_close(rk->get());
  }
}

TEST(ConsumerSettingsTest, ParsesClusterKind) {
  EXPECT_EQ(*ParseClusterKind("dev"), ClusterKind::kDevBroker);
  EXPECT_EQ(*ParseClusterKind("Mock"), ClusterKind::kDevBroker);
  EXPECT_EQ(*ParseClusterKind("kafka"), ClusterKind::kKafka);
  EXPECT_EQ(ParseClusterKind("redpanda").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ClusterKindName(ClusterKind::kDevBroker), "dev");
}

}  // namespace
}  // namespace kafka
}  // namespace sluice
