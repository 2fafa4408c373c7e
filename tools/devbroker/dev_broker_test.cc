#include "tools/devbroker/dev_broker.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/kafka/metadata_client.h"
#include "common/kafka/producer.h"
#include "common/kafka/test_consumer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/subprocess.h"
#include "tools/devbroker/retention.h"

namespace sluice {
namespace devbroker {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::unique_ptr<DevBroker> MustCreate(const DevBrokerOptions& options) {
  auto broker = DevBroker::Create(options);
  EXPECT_TRUE(broker.ok()) << broker.status();
  return broker.ok() ? *std::move(broker) : nullptr;
}

kafka::KafkaProperties Props(const DevBroker& broker) {
  return {{"bootstrap.servers", broker.bootstrap_servers()}};
}

int FreePortRun(int count) {
  auto port = testing::PickFreePortRange(count);
  EXPECT_TRUE(port.ok()) << port.status();
  return port.ok() ? *port : 0;
}

TEST(DevBrokerTest, ServesItsTopicsToRealClients) {
  DevBrokerOptions options;
  options.topics = {{"wiki", 3}, {"logs", 1}};
  auto broker = MustCreate(options);
  ASSERT_NE(broker, nullptr);
  EXPECT_EQ(broker->broker_count(), 1);
  EXPECT_THAT(broker->bootstrap_servers(), StartsWith("127.0.0.1:"));

  auto metadata = kafka::MetadataClient::Create(Props(*broker));
  ASSERT_TRUE(metadata.ok());
  auto partitions = (*metadata)->ListPartitions("wiki", absl::Seconds(10));
  ASSERT_TRUE(partitions.ok()) << partitions.status();
  EXPECT_THAT(*partitions, ElementsAre(0, 1, 2));

  auto producer = kafka::Producer::Create(Props(*broker));
  ASSERT_TRUE(producer.ok());
  for (int i = 0; i < 300; ++i) {
    ASSERT_TRUE((*producer)->Produce("wiki", i % 3, absl::StrCat("row-", i)).ok());
  }
  ASSERT_TRUE((*producer)->Flush(absl::Seconds(30)).ok());
  auto records = kafka::ReadRecords(
      Props(*broker), "wiki", {{0, {0, 100}}, {1, {0, 100}}, {2, {0, 100}}}, absl::Seconds(30));
  ASSERT_TRUE(records.ok()) << records.status();
  for (int p = 0; p < 3; ++p) {
    ASSERT_EQ(records->at(p).size(), 100u);
    for (int j = 0; j < 100; ++j)
      EXPECT_EQ(records->at(p)[j].value, absl::StrCat("row-", 3 * j + p));
  }
  EXPECT_THAT(broker->StatusLine(), HasSubstr("topics=logs:1:uncapped,wiki:3:uncapped"));
}

// More than librdkafka's 5 MiB per-partition cap, read back from offset 0.
TEST(DevBrokerTest, RetentionSizeCapIsLifted) {
  DevBrokerOptions options;
  options.topics = {{"big", 1}};
  auto broker = MustCreate(options);
  ASSERT_NE(broker, nullptr);
  auto producer = kafka::Producer::Create(
      {{"bootstrap.servers", broker->bootstrap_servers()}, {"linger.ms", "20"}});
  ASSERT_TRUE(producer.ok());
  constexpr int kRecords = 7 * 1024;  // 7 MiB of 1 KiB values.
  for (int i = 0; i < kRecords; ++i) {
    std::string value = absl::StrCat(i, ":");
    value.resize(1024, 'x');
    ASSERT_TRUE((*producer)->Produce("big", 0, value).ok());
  }
  ASSERT_TRUE((*producer)->Flush(absl::Seconds(60)).ok());

  auto metadata = kafka::MetadataClient::Create(Props(*broker));
  ASSERT_TRUE(metadata.ok());
  auto marks = (*metadata)->QueryWatermarks("big", {0}, absl::Seconds(10));
  ASSERT_TRUE(marks.ok()) << marks.status();
  EXPECT_EQ(marks->at(0), (kafka::Watermarks{0, kRecords}));

  auto records = kafka::ReadRecords(Props(*broker), "big", {{0, {0, kRecords}}}, absl::Seconds(60));
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->at(0).size(), static_cast<size_t>(kRecords));
  for (int i = 0; i < kRecords; ++i) {
    ASSERT_THAT(records->at(0)[i].value, StartsWith(absl::StrCat(i, ":")));
  }
}

// More than librdkafka's 100,000-batches-per-partition cap (one record per
// batch). Reading 100k batches back takes ~100 s (the mock returns one batch
// per Fetch), so the test checks the earliest offset stayed 0 (the mock moves
// it when it drops a batch) and reads both ends.
TEST(DevBrokerTest, RetentionBatchCountCapIsLifted) {
  DevBrokerOptions options;
  options.topics = {{"many", 1}};
  auto broker = MustCreate(options);
  ASSERT_NE(broker, nullptr);
  auto producer = kafka::Producer::Create({{"bootstrap.servers", broker->bootstrap_servers()},
                                           {"linger.ms", "0"},
                                           {"batch.num.messages", "1"}});
  ASSERT_TRUE(producer.ok());
  constexpr int kRecords = 100200;
  for (int i = 0; i < kRecords; ++i) {
    ASSERT_TRUE((*producer)->Produce("many", 0, absl::StrCat(i)).ok());
  }
  ASSERT_TRUE((*producer)->Flush(absl::Seconds(120)).ok());

  auto metadata = kafka::MetadataClient::Create(Props(*broker));
  ASSERT_TRUE(metadata.ok());
  auto marks = (*metadata)->QueryWatermarks("many", {0}, absl::Seconds(10));
  ASSERT_TRUE(marks.ok()) << marks.status();
  EXPECT_EQ(marks->at(0), (kafka::Watermarks{0, kRecords}));

  for (const kafka::OffsetRange range :
       {kafka::OffsetRange{0, 300}, kafka::OffsetRange{kRecords - 300, kRecords}}) {
    auto records = kafka::ReadRecords(Props(*broker), "many", {{0, range}}, absl::Seconds(60));
    ASSERT_TRUE(records.ok()) << records.status();
    ASSERT_EQ(records->at(0).size(), 300u);
    for (int i = 0; i < 300; ++i) {
      ASSERT_EQ(records->at(0)[i].value, absl::StrCat(range.start + i));
    }
  }
}

TEST(DevBrokerTest, FixedPortsInParallelDoNotCollide) {
  const int first = FreePortRun(2);
  const int second = FreePortRun(2);
  ASSERT_NE(first, 0);
  ASSERT_NE(second, 0);
  if (std::abs(first - second) < 2) GTEST_SKIP() << "the kernel picked overlapping runs";
  std::unique_ptr<DevBroker> a, b;
  std::thread other([&] {
    DevBrokerOptions options;
    options.base_port = second;
    options.brokers = 2;
    a = MustCreate(options);
  });
  DevBrokerOptions options;
  options.base_port = first;
  options.brokers = 2;
  b = MustCreate(options);
  other.join();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_THAT(a->ports(), ElementsAre(second, second + 1));
  EXPECT_THAT(b->ports(), ElementsAre(first, first + 1));
}

TEST(DevBrokerTest, FixedPorts) {
  const int base = FreePortRun(2);
  ASSERT_NE(base, 0);
  DevBrokerOptions options;
  options.brokers = 2;
  options.base_port = base;
  auto broker = MustCreate(options);
  ASSERT_NE(broker, nullptr);
  EXPECT_THAT(broker->ports(), ElementsAre(base, base + 1));
  EXPECT_EQ(broker->bootstrap_servers(), absl::StrCat("127.0.0.1:", base, ",127.0.0.1:", base + 1));
  // Other binds in the process are not rewritten afterwards.
  auto ephemeral = MustCreate(DevBrokerOptions{});
  ASSERT_NE(ephemeral, nullptr);
  EXPECT_NE(ephemeral->ports()[0], base + 2);
}

TEST(DevBrokerTest, FixedPortInUseIsRefusedBeforeLibrdkafkaAborts) {
  const int base = FreePortRun(2);
  ASSERT_NE(base, 0);
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  sin.sin_port = htons(static_cast<uint16_t>(base + 1));
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&sin), sizeof(sin)), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  DevBrokerOptions options;
  options.brokers = 2;
  options.base_port = base;
  auto broker = DevBroker::Create(options);
  close(fd);
  ASSERT_EQ(broker.status().code(), absl::StatusCode::kUnavailable) << broker.status();
  EXPECT_THAT(broker.status().message(), HasSubstr(absl::StrCat("port ", base + 1)));
}

TEST(DevBrokerTest, RejectsBadOptions) {
  DevBrokerOptions options;
  options.brokers = 0;
  EXPECT_EQ(DevBroker::Create(options).status().code(), absl::StatusCode::kInvalidArgument);
  options.brokers = 1;
  options.topics = {{"a", 1}, {"a", 2}};
  EXPECT_THAT(DevBroker::Create(options).status().message(), HasSubstr("given twice"));
  options.topics = {{"a/b", 1}};
  EXPECT_EQ(DevBroker::Create(options).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(DevBrokerTest, ParsesTopicSpecs) {
  auto spec = ParseTopicSpec("wiki.edits:12");
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(spec->name, "wiki.edits");
  EXPECT_EQ(spec->partitions, 12);
  EXPECT_FALSE(ParseTopicSpec("wiki").ok());
  EXPECT_FALSE(ParseTopicSpec("wiki:0").ok());
  EXPECT_FALSE(ParseTopicSpec("wiki:many").ok());
  EXPECT_FALSE(ParseTopicSpec(":3").ok());
}

TEST(DevBrokerTest, RealClusterLayoutIsRecognised) {
  auto broker = MustCreate(DevBrokerOptions{});
  ASSERT_NE(broker, nullptr);
  EXPECT_TRUE(
      VerifyClusterLayout(broker->cluster(), rd_kafka_mock_cluster_handle(broker->cluster()), 1)
          .ok());
  // The wrong broker count is noticed on the real struct too.
  EXPECT_EQ(
      VerifyClusterLayout(broker->cluster(), rd_kafka_mock_cluster_handle(broker->cluster()), 2)
          .code(),
      absl::StatusCode::kFailedPrecondition);
}

TEST(DevBrokerTest, ControlCommands) {
  DevBrokerOptions options;
  options.brokers = 2;
  options.topics = {{"wiki", 2}};
  auto broker = MustCreate(options);
  ASSERT_NE(broker, nullptr);
  auto metadata = kafka::MetadataClient::Create(Props(*broker));
  ASSERT_TRUE(metadata.ok());

  DevBroker::Reply reply = broker->Execute("status");
  EXPECT_THAT(reply.line, StartsWith("ok bootstrap=" + broker->bootstrap_servers()));
  EXPECT_THAT(reply.line, HasSubstr("wiki:2:uncapped"));

  EXPECT_EQ(broker->Execute("create events 3").line, "ok created events with 3 partition(s)");
  auto partitions = (*metadata)->ListPartitions("events", absl::Seconds(10));
  ASSERT_TRUE(partitions.ok()) << partitions.status();
  EXPECT_THAT(*partitions, ElementsAre(0, 1, 2));
  EXPECT_THAT(broker->Execute("create events 3").line, StartsWith("error ALREADY_EXISTS"));

  EXPECT_EQ(broker->Execute("leader wiki 1 2").line, "ok leader of wiki[1] is 2");
  EXPECT_THAT(broker->Execute("leader wiki 5 2").line, StartsWith("error INVALID_ARGUMENT"));
  EXPECT_THAT(broker->Execute("leader nope 0 1").line, StartsWith("error NOT_FOUND"));

  EXPECT_EQ(broker->Execute("error wiki UNKNOWN_TOPIC_OR_PART").line,
            "ok topic wiki error UNKNOWN_TOPIC_OR_PART");
  EXPECT_EQ((*metadata)->ListPartitions("wiki", absl::Seconds(10)).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(broker->Execute("error wiki NO_ERROR").line, "ok topic wiki error NO_ERROR");
  EXPECT_TRUE((*metadata)->ListPartitions("wiki", absl::Seconds(10)).ok());

  EXPECT_EQ(broker->Execute("error Produce TOPIC_AUTHORIZATION_FAILED 1").line,
            "ok next 1 Produce request(s) fail with TOPIC_AUTHORIZATION_FAILED");
  {
    auto producer = kafka::Producer::Create(Props(*broker));
    ASSERT_TRUE(producer.ok());
    ASSERT_TRUE((*producer)->Produce("wiki", 0, "x").ok());
    EXPECT_EQ((*producer)->Flush(absl::Seconds(30)).code(), absl::StatusCode::kPermissionDenied);
  }

  EXPECT_EQ(broker->Execute("rtt 2 5").line, "ok broker 2 rtt 5ms");
  EXPECT_THAT(broker->Execute("broker down 3").line, StartsWith("error INVALID_ARGUMENT"));
  EXPECT_EQ(broker->Execute("broker down 2").line, "ok broker 2 down");
  EXPECT_THAT(broker->Execute("status").line,
              HasSubstr(absl::StrCat("2@", broker->ports()[1], ":down:rtt=5ms")));
  EXPECT_EQ(broker->Execute("broker up 2").line, "ok broker 2 up");

  EXPECT_THAT(broker->Execute("bogus").line, StartsWith("error unknown command"));
  EXPECT_EQ(broker->Execute("").line, "");
  EXPECT_THAT(broker->Execute("help").line, StartsWith("ok commands:"));
  reply = broker->Execute("quit");
  EXPECT_TRUE(reply.quit);
  EXPECT_EQ(reply.line, "ok quitting");
}

TEST(DevBrokerTest, BrokerDownMakesItsPartitionsUnavailableUntilUp) {
  DevBrokerOptions options;
  options.topics = {{"wiki", 1}};
  auto broker = MustCreate(options);
  ASSERT_NE(broker, nullptr);
  auto metadata = kafka::MetadataClient::Create(Props(*broker));
  ASSERT_TRUE(metadata.ok());
  ASSERT_TRUE((*metadata)->QueryWatermarks("wiki", {0}, absl::Seconds(10)).ok());
  ASSERT_EQ(broker->Execute("broker down 1").line, "ok broker 1 down");
  EXPECT_EQ((*metadata)->QueryWatermarks("wiki", {0}, absl::Milliseconds(500)).status().code(),
            absl::StatusCode::kUnavailable);
  ASSERT_EQ(broker->Execute("broker up 1").line, "ok broker 1 up");
  EXPECT_TRUE((*metadata)->QueryWatermarks("wiki", {0}, absl::Seconds(15)).ok());
}

}  // namespace
}  // namespace devbroker
}  // namespace sluice
