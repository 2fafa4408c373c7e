#include "task/kafka_consumer.h"

#include <gtest/gtest.h>

#include <librdkafka/rdkafka_mock.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "glog/logging.h"
#include "tests/task_mock_kafka.h"

namespace sluice::task {
namespace {

class KafkaConsumerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto kafka = testing::MockKafka::Start();
    ASSERT_TRUE(kafka.ok()) << kafka.status();
    kafka_ = std::move(*kafka);
    ASSERT_TRUE(kafka_->CreateTopic("events", 2).ok());
    for (int32_t p = 0; p < 2; ++p) {
      std::vector<std::string> values;
      for (int i = 0; i < 100; ++i) values.push_back(absl::StrCat("p", p, "-", i));
      auto first = kafka_->Produce("events", p, values);
      ASSERT_TRUE(first.ok()) << first.status();
      ASSERT_EQ(*first, 0);
    }
  }

  std::unique_ptr<KafkaConsumer> NewConsumer() {
    KafkaConsumerOptions options;
    options.topic = "events";
    options.properties = {{"bootstrap.servers", kafka_->bootstrap()}};
    options.client_id = "test-task";
    options.cluster_kind = kafka::ClusterKind::kDevBroker;
    auto consumer = KafkaConsumer::Create(options);
    EXPECT_TRUE(consumer.ok()) << consumer.status();
    return consumer.ok() ? std::move(*consumer) : nullptr;
  }

  // Polls until `want` records arrived or `wait` passed.
  std::vector<std::pair<int32_t, int64_t>> ReadN(KafkaConsumer* consumer, size_t want,
                                                 std::vector<std::string>* values,
                                                 std::vector<OffsetOutOfRange>* oor,
                                                 absl::Duration wait = absl::Seconds(20)) {
    std::vector<std::pair<int32_t, int64_t>> seen;
    const absl::Time deadline = absl::Now() + wait;
    KafkaBatch batch;
    while (seen.size() < want && absl::Now() < deadline && (oor == nullptr || oor->empty())) {
      std::vector<OffsetOutOfRange> out;
      EXPECT_TRUE(consumer->Poll(absl::Milliseconds(100), 7, &batch, &out).ok());
      if (oor != nullptr) oor->insert(oor->end(), out.begin(), out.end());
      EXPECT_LE(batch.size(), 7u);
      for (size_t i = 0; i < batch.size(); ++i) {
        seen.emplace_back(batch[i].partition, batch[i].offset);
        if (values != nullptr) values->emplace_back(batch[i].value);
      }
    }
    return seen;
  }

  std::unique_ptr<testing::MockKafka> kafka_;
};

TEST_F(KafkaConsumerTest, ReadsFromExplicitOffsetsInOrderPerPartition) {
  auto consumer = NewConsumer();
  ASSERT_NE(consumer, nullptr);
  ASSERT_TRUE(consumer->Assign({{0, 10}, {1, 95}}).ok());
  std::vector<std::string> values;
  auto seen = ReadN(consumer.get(), 95, &values, nullptr);
  ASSERT_EQ(seen.size(), 95u);
  int64_t next[2] = {10, 95};
  for (size_t i = 0; i < seen.size(); ++i) {
    const auto [p, o] = seen[i];
    ASSERT_EQ(o, next[p]) << "partition " << p;
    EXPECT_EQ(values[i], absl::StrCat("p", p, "-", o));
    ++next[p];
  }
  EXPECT_EQ(next[0], 100);
  EXPECT_EQ(next[1], 100);
  // Nothing more is there.
  EXPECT_TRUE(ReadN(consumer.get(), 1, nullptr, nullptr, absl::Milliseconds(300)).empty());

  // New records arrive on the live assignment.
  ASSERT_TRUE(kafka_->Produce("events", 1, {"late"}).ok());
  values.clear();
  seen = ReadN(consumer.get(), 1, &values, nullptr);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0], std::make_pair(1, int64_t{100}));
  EXPECT_EQ(values[0], "late");
}

TEST_F(KafkaConsumerTest, ReassignStartsOverAtTheNewOffsets) {
  auto consumer = NewConsumer();
  ASSERT_NE(consumer, nullptr);
  ASSERT_TRUE(consumer->Assign({{0, 0}}).ok());
  auto first = ReadN(consumer.get(), 5, nullptr, nullptr);
  ASSERT_GE(first.size(), 5u);
  ASSERT_TRUE(consumer->Assign({{1, 50}}).ok());
  auto seen = ReadN(consumer.get(), 50, nullptr, nullptr);
  ASSERT_EQ(seen.size(), 50u);
  for (size_t i = 0; i < seen.size(); ++i) {
    EXPECT_EQ(seen[i], std::make_pair(1, static_cast<int64_t>(50 + i)));
  }
}

TEST_F(KafkaConsumerTest, OffsetPastTheEndIsReportedAsOutOfRange) {
  auto consumer = NewConsumer();
  ASSERT_NE(consumer, nullptr);
  ASSERT_TRUE(consumer->Assign({{0, 500}, {1, 98}}).ok());
  std::vector<OffsetOutOfRange> oor;
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  std::vector<std::pair<int32_t, int64_t>> seen;
  KafkaBatch batch;
  while (oor.empty() && absl::Now() < deadline) {
    ASSERT_TRUE(consumer->Poll(absl::Milliseconds(100), 100, &batch, &oor).ok());
    for (size_t i = 0; i < batch.size(); ++i)
      seen.emplace_back(batch[i].partition, batch[i].offset);
  }
  ASSERT_EQ(oor.size(), 1u);
  EXPECT_EQ(oor[0].partition, 0);
  EXPECT_EQ(oor[0].offset, 500);
  // The other partition is unaffected.
  while (seen.size() < 2 && absl::Now() < deadline) {
    ASSERT_TRUE(consumer->Poll(absl::Milliseconds(100), 100, &batch, &oor).ok());
    for (size_t i = 0; i < batch.size(); ++i)
      seen.emplace_back(batch[i].partition, batch[i].offset);
  }
  EXPECT_EQ(seen, (std::vector<std::pair<int32_t, int64_t>>{{1, 98}, {1, 99}}));
  auto marks = consumer->Watermarks(0, absl::Seconds(5));
  ASSERT_TRUE(marks.ok()) << marks.status();
  EXPECT_EQ(*marks, std::make_pair(int64_t{0}, int64_t{100}));
}

TEST_F(KafkaConsumerTest, WakeCutsAWaitingPollShort) {
  std::unique_ptr<KafkaConsumer> consumer = NewConsumer();
  ASSERT_NE(consumer, nullptr);
  // Past the last record: a Poll waits its whole timeout for the next one.
  ASSERT_TRUE(consumer->Assign({{0, 100}, {1, 100}}).ok());
  KafkaBatch batch;
  std::vector<OffsetOutOfRange> oor;
  absl::Time started = absl::Now();
  ASSERT_TRUE(consumer->Poll(absl::Milliseconds(300), 10, &batch, &oor).ok());
  EXPECT_GE(absl::Now() - started, absl::Milliseconds(250));
  EXPECT_EQ(batch.size(), 0u);

  std::thread waker([&] {
    absl::SleepFor(absl::Milliseconds(100));
    consumer->Wake();
  });
  started = absl::Now();
  ASSERT_TRUE(consumer->Poll(absl::Seconds(10), 10, &batch, &oor).ok());
  const absl::Duration waited = absl::Now() - started;
  waker.join();
  EXPECT_EQ(batch.size(), 0u);
  EXPECT_LT(waited, absl::Seconds(5)) << "Wake did not cut the Poll short";

  // Records are still read after a wake.
  ASSERT_TRUE(consumer->Assign({{0, 0}}).ok());
  EXPECT_EQ(ReadN(consumer.get(), 100, nullptr, nullptr).size(), 100u);
}

TEST_F(KafkaConsumerTest, MissingBootstrapOrBadPropertyIsInvalidArgument) {
  KafkaConsumerOptions options;
  options.topic = "events";
  EXPECT_EQ(KafkaConsumer::Create(options).status().code(), absl::StatusCode::kInvalidArgument);
  options.properties = {{"bootstrap.servers", kafka_->bootstrap()}, {"no.such.setting", "1"}};
  auto bad = KafkaConsumer::Create(options);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("no.such.setting"), std::string::npos);
}


TEST_F(KafkaConsumerTest, ReadsKeysHeadersTimestampsAndTheTopic) {
  std::vector<kafka::OutgoingRecord> records(3);
  records[0].value = "with-everything";
  records[0].key = absl::string_view("user-1");
  records[0].headers = {{"source", std::string("web")}, {"trace", std::nullopt},
                        {"source", std::string("app")}};
  records[0].timestamp_ms = 1796004944123;
  records[1].value = "empty-key";
  records[1].key = absl::string_view();
  records[2].value = "null-key";
  auto first = kafka_->ProduceRecords("events", 1, records);
  ASSERT_TRUE(first.ok()) << first.status();
  auto consumer = NewConsumer();
  ASSERT_NE(consumer, nullptr);
  ASSERT_TRUE(consumer->Assign({{1, *first}}).ok());
  KafkaBatch batch;
  KafkaEnvelope meta;
  std::vector<std::string> seen;
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (seen.size() < 3 && absl::Now() < deadline) {
    std::vector<OffsetOutOfRange> oor;
    ASSERT_TRUE(consumer->Poll(absl::Milliseconds(100), 10, &batch, &oor).ok());
    for (size_t i = 0; i < batch.size(); ++i) {
      batch.ReadEnvelope(i, &meta);
      EXPECT_EQ(meta.topic, "events");
      const std::string value(batch[i].value);
      seen.push_back(value);
      if (value == "with-everything") {
        EXPECT_TRUE(meta.has_key);
        EXPECT_EQ(meta.key, "user-1");
        EXPECT_EQ(meta.timestamp_ms, 1796004944123);
        ASSERT_EQ(meta.headers.size(), 3u);
        EXPECT_EQ(meta.headers[0].name, "source");
        EXPECT_EQ(meta.headers[0].value, "web");
        EXPECT_EQ(meta.headers[1].name, "trace");
        EXPECT_FALSE(meta.headers[1].has_value);
        EXPECT_EQ(meta.headers[2].value, "app");
      } else if (value == "empty-key") {
        EXPECT_TRUE(meta.has_key);
        EXPECT_EQ(meta.key, "");
        EXPECT_TRUE(meta.headers.empty());
        EXPECT_GT(meta.timestamp_ms, 0);  // produced "now"
      } else {
        EXPECT_FALSE(meta.has_key);
        EXPECT_TRUE(meta.headers.empty());
      }
    }
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"with-everything", "empty-key", "null-key"}));
}

// The prefetch queue counts against the task's memory: a bound sets its
// payload kbytes and message count where the spec's properties leave them
// out, and never raises librdkafka's (or the recommended) values.
TEST(KafkaConsumerPropertiesTest, APrefetchBoundSetsTheQueueLimitsTheSpecLeavesOut) {
  KafkaConsumerOptions options;
  options.topic = "wiki";
  options.properties = {{"bootstrap.servers", "127.0.0.1:9092"}};
  options.cluster_kind = kafka::ClusterKind::kDevBroker;
  auto unbounded = KafkaConsumer::Properties(options);
  ASSERT_TRUE(unbounded.ok()) << unbounded.status();
  EXPECT_EQ(unbounded->at("queued.max.messages.kbytes"), "65536");
  EXPECT_EQ(unbounded->at("queued.min.messages"), "100000");

  options.max_prefetch_bytes = 32 << 20;
  auto bounded = KafkaConsumer::Properties(options);
  ASSERT_TRUE(bounded.ok()) << bounded.status();
  EXPECT_EQ(bounded->at("queued.max.messages.kbytes"), "32768");
  EXPECT_EQ(bounded->at("queued.min.messages"), "32768");
  EXPECT_EQ(bounded->at("auto.offset.reset"), "error");

  options.max_prefetch_bytes = 1 << 20;  // floors: 1 MiB, 10,000 messages
  auto small = KafkaConsumer::Properties(options);
  ASSERT_TRUE(small.ok()) << small.status();
  EXPECT_EQ(small->at("queued.max.messages.kbytes"), "1024");
  EXPECT_EQ(small->at("queued.min.messages"), "10000");

  options.properties["queued.min.messages"] = "500000";
  options.properties["queued.max.messages.kbytes"] = "200000";
  auto spec = KafkaConsumer::Properties(options);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->at("queued.max.messages.kbytes"), "200000");
  EXPECT_EQ(spec->at("queued.min.messages"), "500000");
}

// client.rack from the spec reaches the consumer: with Kafka's
// replica.selector.class set to the rack-aware selector, brokers then let it
// fetch from a follower in its rack (KIP-392).
TEST(KafkaConsumerPropertiesTest, ClientRackPassesThrough) {
  KafkaConsumerOptions options;
  options.topic = "wiki";
  options.properties = {{"bootstrap.servers", "127.0.0.1:9092"}, {"client.rack", "eu-west-1a"}};
  auto props = KafkaConsumer::Properties(options);
  ASSERT_TRUE(props.ok()) << props.status();
  EXPECT_EQ(props->at("client.rack"), "eu-west-1a");
  auto consumer = KafkaConsumer::Create(options);
  ASSERT_TRUE(consumer.ok()) << consumer.status();
}

// The worker checks a secret reference's binding again before it creates a
// consumer: a stored spec (or one from a supervisor with another policy)
// pointing the reference elsewhere resolves nothing.
TEST(KafkaConsumerPropertiesTest, ASecretReferenceResolvesOnlyTowardsItsBoundServers) {
  setenv("SLUICE_SECRET_CONSUMER_TEST", "s3cr3t", 1);
  KafkaConsumerOptions options;
  options.topic = "wiki";
  options.cluster_kind = kafka::ClusterKind::kDevBroker;
  options.properties = {{"bootstrap.servers", "attacker.example:9092"},
                        {"security.protocol", "SASL_PLAINTEXT"},
                        {"sasl.mechanisms", "PLAIN"},
                        {"sasl.username", "u"},
                        {"sasl.password", "${env:SLUICE_SECRET_CONSUMER_TEST}"}};
  auto unbound = KafkaConsumer::Properties(options);
  EXPECT_EQ(unbound.status().code(), absl::StatusCode::kInvalidArgument) << unbound.status();
  auto destinations = kafka::SecretDestinations::Parse(
      "${env:SLUICE_SECRET_CONSUMER_TEST} 127.0.0.1:9092\n", "test");
  ASSERT_TRUE(destinations.ok()) << destinations.status();
  options.policy.secret_destinations =
      std::make_shared<const kafka::SecretDestinations>(*std::move(destinations));
  auto elsewhere = KafkaConsumer::Properties(options);
  EXPECT_EQ(elsewhere.status().code(), absl::StatusCode::kInvalidArgument) << elsewhere.status();
  EXPECT_EQ(elsewhere.status().message().find("s3cr3t"), std::string::npos);
  options.properties["bootstrap.servers"] = "127.0.0.1:9092";
  auto bound = KafkaConsumer::Properties(options);
  ASSERT_TRUE(bound.ok()) << bound.status();
  EXPECT_EQ(bound->at("sasl.password"), "s3cr3t");
}

// A consumer slower than the broker fills librdkafka's local queue; librdkafka
// 2.0.2 then stopped fetching and, unless something woke its broker thread,
// looked again only after up to a second, while the reader starved; 2.12
// postpones the next fetch by fetch.queue.backoff.ms (1 s unless sluice's
// consumer defaults lower it), and no wake-up is needed (nor sent).
TEST(KafkaConsumerFetchTest, ASlowReaderIsNotStarvedAfterTheQueueFills) {
  auto kafka = testing::MockKafka::Start();
  ASSERT_TRUE(kafka.ok()) << kafka.status();
  ASSERT_TRUE((*kafka)->CreateTopic("events", 1).ok());
  constexpr int kRecords = 20000;  // 4 MB: under the mock's 5 MiB retention cap
  // In batches the size a producer would make (the dev broker returns one
  // batch per partition per Fetch).
  for (int i = 0; i < kRecords; i += 1000) {
    std::vector<std::string> values;
    for (int j = 0; j < 1000; ++j) values.push_back(std::string(200, 'a' + (i + j) % 26));
    ASSERT_TRUE((*kafka)->Produce("events", 0, values).ok());
  }

  KafkaConsumerOptions options;
  options.topic = "events";
  options.properties = {{"bootstrap.servers", (*kafka)->bootstrap()},
                        {"queued.min.messages", "2000"}};
  options.client_id = "slow-reader";
  options.cluster_kind = kafka::ClusterKind::kDevBroker;
  auto consumer = KafkaConsumer::Create(options);
  ASSERT_TRUE(consumer.ok()) << consumer.status();
  ASSERT_TRUE((*consumer)->Assign({{0, 0}}).ok());
  KafkaBatch batch;
  int64_t read = 0;
  absl::Duration longest_wait;
  const absl::Time started = absl::Now();
  while (read < kRecords && absl::Now() - started < absl::Seconds(60)) {
    std::vector<OffsetOutOfRange> oor;
    const absl::Time before = absl::Now();
    ASSERT_TRUE((*consumer)->Poll(absl::Seconds(5), 500, &batch, &oor).ok());
    ASSERT_TRUE(oor.empty()) << oor[0].message;
    longest_wait = std::max(longest_wait, absl::Now() - before);
    read += static_cast<int64_t>(batch.size());
    // ~2 us per record: slower than the in-process broker.
    absl::SleepFor(absl::Microseconds(2) * static_cast<int64_t>(batch.size()));
  }
  const absl::Duration took = absl::Now() - started;
  EXPECT_EQ(read, kRecords);
  LOG(INFO) << "read " << read << " in " << took << ", longest poll " << longest_wait << ", "
            << (*consumer)->fetch_wakeups() << " fetch wake-ups";
  // librdkafka 2.0.2 without the wake-up: 5 s in all, polls waiting 994 ms;
  // 2.12 with librdkafka's own 1 s backoff: 6 s, polls waiting 997 ms.
  EXPECT_LT(longest_wait, absl::Milliseconds(500));
  EXPECT_EQ((*consumer)->fetch_wakeups(), 0);
}

// Follower fetching (KIP-392). Three mock brokers in racks rack-1..rack-3;
// the partition's leader is broker 1. With Kafka's RackAwareReplicaSelector a
// leader names, in its Fetch response, a follower in the client's rack as the
// preferred read replica, and the client fetches from it from then on.
// librdkafka's mock cluster does not look at the rack the client sends: it
// names the follower set with rd_kafka_mock_partition_set_follower to every
// client. So each test sets up what a rack-aware broker answers for its
// consumer (a follower in rack-3 for client.rack=rack-3, none for a consumer
// without a rack), and the mock's request tracking shows which broker served
// the task consumer's Fetch requests.
class FollowerFetchTest : public ::testing::Test {
 protected:
  static constexpr int kRecords = 100;

  void SetUp() override {
    auto kafka = testing::MockKafka::Start(3);
    ASSERT_TRUE(kafka.ok()) << kafka.status();
    kafka_ = std::move(*kafka);
    rd_kafka_mock_cluster_t* mock = kafka_->cluster().get();
    for (int32_t broker = 1; broker <= 3; ++broker) {
      ASSERT_EQ(rd_kafka_mock_broker_set_rack(mock, broker, absl::StrCat("rack-", broker).c_str()),
                RD_KAFKA_RESP_ERR_NO_ERROR);
    }
    ASSERT_TRUE(kafka_->CreateTopic("events", 1).ok());
    ASSERT_EQ(rd_kafka_mock_partition_set_leader(mock, "events", 0, 1), RD_KAFKA_RESP_ERR_NO_ERROR);
    std::vector<std::string> values;
    for (int i = 0; i < kRecords; ++i) values.push_back(absl::StrCat("r", i));
    auto first = kafka_->Produce("events", 0, values);
    ASSERT_TRUE(first.ok()) << first.status();
    ASSERT_EQ(*first, 0);
  }

  // Reads the whole partition with the task's consumer, whose spec
  // properties are `properties` (bootstrap.servers added), and returns the
  // Fetch requests each broker received meanwhile.
  std::map<int32_t, int> ReadAllAndCountFetches(kafka::KafkaProperties properties) {
    rd_kafka_mock_cluster_t* mock = kafka_->cluster().get();
    rd_kafka_mock_start_request_tracking(mock);
    KafkaConsumerOptions options;
    options.topic = "events";
    properties["bootstrap.servers"] = kafka_->bootstrap();
    options.properties = properties;
    options.client_id = "follower-test";
    options.cluster_kind = kafka::ClusterKind::kDevBroker;
    auto consumer = KafkaConsumer::Create(options);
    EXPECT_TRUE(consumer.ok()) << consumer.status();
    if (!consumer.ok()) return {};
    EXPECT_TRUE((*consumer)->Assign({{0, 0}}).ok());
    int64_t next = 0;
    KafkaBatch batch;
    const absl::Time deadline = absl::Now() + absl::Seconds(20);
    while (next < kRecords && absl::Now() < deadline) {
      std::vector<OffsetOutOfRange> oor;
      EXPECT_TRUE((*consumer)->Poll(absl::Milliseconds(100), 50, &batch, &oor).ok());
      EXPECT_TRUE(oor.empty()) << oor[0].message;
      for (size_t i = 0; i < batch.size(); ++i) {
        EXPECT_EQ(batch[i].offset, next);
        EXPECT_EQ(batch[i].value, absl::StrCat("r", next));
        ++next;
      }
    }
    EXPECT_EQ(next, kRecords);
    batch.Clear();  // its messages hold the consumer's partitions
    consumer->reset();
    size_t count = 0;
    rd_kafka_mock_request_t** requests = rd_kafka_mock_get_requests(mock, &count);
    std::map<int32_t, int> fetches;
    for (size_t i = 0; i < count; ++i) {
      if (rd_kafka_mock_request_api_key(requests[i]) == 1 /* Fetch */) {
        ++fetches[rd_kafka_mock_request_id(requests[i])];
      }
    }
    rd_kafka_mock_request_destroy_array(requests, count);
    rd_kafka_mock_stop_request_tracking(mock);
    return fetches;
  }

  std::unique_ptr<testing::MockKafka> kafka_;
};

TEST_F(FollowerFetchTest, AConsumerWithClientRackFetchesFromTheFollowerInItsRack) {
  ASSERT_EQ(rd_kafka_mock_partition_set_follower(kafka_->cluster().get(), "events", 0, 3),
            RD_KAFKA_RESP_ERR_NO_ERROR);
  const std::map<int32_t, int> fetches = ReadAllAndCountFetches({{"client.rack", "rack-3"}});
  // The leader's first answer names the follower (and carries no records);
  // every record then came from broker 3.
  EXPECT_GT(fetches.count(3) ? fetches.at(3) : 0, 0) << "no Fetch reached the follower";
  EXPECT_EQ(fetches.count(2), 0u);
  EXPECT_LE(fetches.count(1) ? fetches.at(1) : 0, 2) << "the leader kept serving Fetches";
}

TEST_F(FollowerFetchTest, AConsumerWithoutClientRackFetchesFromTheLeader) {
  const std::map<int32_t, int> fetches = ReadAllAndCountFetches({});
  EXPECT_GT(fetches.count(1) ? fetches.at(1) : 0, 0) << "no Fetch reached the leader";
  EXPECT_EQ(fetches.count(2), 0u);
  EXPECT_EQ(fetches.count(3), 0u);
}

}  // namespace
}  // namespace sluice::task
