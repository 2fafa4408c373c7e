#include "common/kafka/config.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sluice {
namespace kafka {
namespace {

using ::testing::HasSubstr;

std::string Get(rd_kafka_conf_t* conf, const char* name) {
  char value[512];
  size_t size = sizeof(value);
  if (rd_kafka_conf_get(conf, name, value, &size) != RD_KAFKA_CONF_OK) return "<unset>";
  return value;
}

TEST(BuildConfTest, SetsEveryProperty) {
  auto conf = BuildConf({{"bootstrap.servers", "127.0.0.1:1"}, {"fetch.wait.max.ms", "10"}});
  ASSERT_TRUE(conf.ok()) << conf.status();
  EXPECT_EQ(Get(conf->get(), "bootstrap.servers"), "127.0.0.1:1");
  EXPECT_EQ(Get(conf->get(), "fetch.wait.max.ms"), "10");
  EXPECT_EQ(Get(conf->get(), "client.id"), "sluice-client");
}

TEST(BuildConfTest, KeepsTheCallersClientId) {
  auto conf = BuildConf({{"client.id", "mine"}}, "ignored");
  ASSERT_TRUE(conf.ok()) << conf.status();
  EXPECT_EQ(Get(conf->get(), "client.id"), "mine");
}

TEST(BuildConfTest, UnknownPropertyIsInvalidArgumentNamingIt) {
  auto conf = BuildConf({{"bootstrap.servers", "x:1"}, {"fetch.wait.max.sm", "10"}});
  ASSERT_EQ(conf.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(conf.status().message(), HasSubstr("unknown Kafka property \"fetch.wait.max.sm\""));
  // librdkafka's own explanation follows.
  EXPECT_THAT(conf.status().message(), HasSubstr("No such configuration property"));
}

TEST(BuildConfTest, BadValueIsInvalidArgumentNamingIt) {
  auto conf = BuildConf({{"fetch.wait.max.ms", "soon"}});
  ASSERT_EQ(conf.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(conf.status().message(),
              HasSubstr("invalid Kafka property \"fetch.wait.max.ms\"=\"soon\""));
}

TEST(NewHandleTest, CreatesAConsumerWithoutContactingAnyBroker) {
  auto conf = BuildConf({{"bootstrap.servers", "127.0.0.1:1"}});
  ASSERT_TRUE(conf.ok());
  auto rk = NewHandle(RD_KAFKA_CONSUMER, *std::move(conf));
  ASSERT_TRUE(rk.ok()) << rk.status();
  EXPECT_EQ(rd_kafka_type(rk->get()), RD_KAFKA_CONSUMER);
  rd_kafka_consumer_close(rk->get());
}

TEST(NewHandleTest, ConflictingPropertiesAreInvalidArgument) {
  // Idempotence needs acks=all; librdkafka refuses at rd_kafka_new.
  auto conf = BuildConf({{"enable.idempotence", "true"}, {"acks", "1"}});
  ASSERT_TRUE(conf.ok()) << conf.status();
  auto rk = NewHandle(RD_KAFKA_PRODUCER, *std::move(conf));
  ASSERT_EQ(rk.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(rk.status().message(), HasSubstr("cannot create Kafka producer"));
  EXPECT_THAT(rk.status().message(), HasSubstr("acks"));
}

TEST(PropertyOrTest, ReturnsValueOrFallback) {
  const KafkaProperties props = {{"a", "1"}};
  EXPECT_EQ(PropertyOr(props, "a", "x"), "1");
  EXPECT_EQ(PropertyOr(props, "b", "x"), "x");
}

}  // namespace
}  // namespace kafka
}  // namespace sluice
