#include "tools/audit/kafka_record_counter.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/kafka/producer.h"
#include "gtest/gtest.h"
#include "task/kafka_consumer.h"
#include "tools/devbroker/dev_broker.h"

namespace sluice::audit {
namespace {

class KafkaRecordCounterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    devbroker::DevBrokerOptions options;
    options.topics = {{"edits", 2}};
    auto broker = devbroker::DevBroker::Create(options);
    ASSERT_TRUE(broker.ok()) << broker.status();
    broker_ = *std::move(broker);
    auto producer = kafka::Producer::Create(
        {{"bootstrap.servers", broker_->bootstrap_servers()}, {"linger.ms", "5"}});
    ASSERT_TRUE(producer.ok()) << producer.status();
    for (int i = 0; i < 25000; ++i) {
      ASSERT_TRUE((*producer)->Produce("edits", 0, absl::StrCat("{\"n\":", i, "}")).ok());
    }
    for (int i = 0; i < 10; ++i) ASSERT_TRUE((*producer)->Produce("edits", 1, "x").ok());
    ASSERT_TRUE((*producer)->Flush(absl::Seconds(30)).ok());
  }

  std::unique_ptr<KafkaRecordCounter> Counter(absl::Duration idle = absl::Seconds(20)) {
    auto counter = KafkaRecordCounter::Create(
        {.properties = {{"bootstrap.servers", broker_->bootstrap_servers()}},
         .cluster = kafka::ClusterKind::kDevBroker,
         .idle_timeout = idle,
         .batch_size = 1000});
    EXPECT_TRUE(counter.ok()) << counter.status();
    return counter.ok() ? *std::move(counter) : nullptr;
  }

  std::unique_ptr<devbroker::DevBroker> broker_;
};

TEST_F(KafkaRecordCounterTest, CountsRangesByReadingThem) {
  auto counter = Counter();
  ASSERT_NE(counter, nullptr);
  EXPECT_EQ(*counter->CountRecords("edits", 0, 0, 25000), 25000);
  EXPECT_EQ(*counter->CountRecords("edits", 0, 100, 20000), 19900);
  EXPECT_EQ(*counter->CountRecords("edits", 0, 5, 5), 0);
  // Consecutive ranges of one partition, interleaved with another partition,
  // on the same consumer: nothing counted twice or skipped.
  EXPECT_EQ(*counter->CountRecords("edits", 0, 0, 10000), 10000);
  EXPECT_EQ(*counter->CountRecords("edits", 1, 0, 4), 4);
  EXPECT_EQ(*counter->CountRecords("edits", 0, 10000, 25000), 15000);
  EXPECT_EQ(*counter->CountRecords("edits", 1, 4, 10), 6);
  EXPECT_EQ(*counter->CountRecords("edits", 0, 24990, 25000), 10);
  EXPECT_EQ(counter->records_read(), 25000 + 19900 + 10000 + 4 + 15000 + 6 + 10);
  // Nothing deleted: every committed range from 0 on can be read again.
  absl::StatusOr<int64_t> earliest = counter->EarliestOffset("edits", 0);
  ASSERT_TRUE(earliest.ok()) << earliest.status();
  EXPECT_EQ(*earliest, 0);
}

TEST_F(KafkaRecordCounterTest, ARangePastThePartitionsEndIsDataLossNotAShortCount) {
  auto counter = Counter();
  ASSERT_NE(counter, nullptr);
  absl::StatusOr<int64_t> count = counter->CountRecords("edits", 1, 0, 15);
  EXPECT_EQ(count.status().code(), absl::StatusCode::kDataLoss) << count.status();
  EXPECT_NE(count.status().message().find("ends at offset 10"), std::string::npos)
      << count.status();
  // The consumer is still usable afterwards.
  EXPECT_EQ(*counter->CountRecords("edits", 1, 2, 10), 8);
}

TEST_F(KafkaRecordCounterTest, ParsesGetsTheRecordAndItsEnvelopeWhenAsked) {
  auto producer = kafka::Producer::Create({{"bootstrap.servers", broker_->bootstrap_servers()}});
  ASSERT_TRUE(producer.ok()) << producer.status();
  kafka::OutgoingRecord record;
  record.value = "v";
  record.key = absl::string_view("k");
  record.headers = {{"env", std::string("prod")}, {"none", std::nullopt}};
  record.timestamp_ms = 1700000000123;
  ASSERT_TRUE((*producer)->ProduceRecord("edits", 1, record).ok());  // offset 10
  ASSERT_TRUE((*producer)->Flush(absl::Seconds(30)).ok());

  struct Seen {
    std::string value, key, topic, headers;
    int64_t offset = -1, timestamp_ms = -2;
    int32_t partition = -1;
    bool has_key = false;
  };
  for (const bool read_envelope : {true, false}) {
    SCOPED_TRACE(read_envelope);
    std::vector<Seen> seen;
    auto counter = KafkaRecordCounter::Create(
        {.properties = {{"bootstrap.servers", broker_->bootstrap_servers()}},
         .cluster = kafka::ClusterKind::kDevBroker,
         .idle_timeout = absl::Seconds(20),
         .parses =
             [&seen](const task::KafkaRecord& r, const task::KafkaEnvelope& e) {
               Seen s{std::string(r.value), std::string(e.key), std::string(e.topic), ""};
               for (const task::KafkaHeader& h : e.headers) {
                 absl::StrAppend(&s.headers, h.name, "=", h.has_value ? h.value : "<null>", ";");
               }
               s.offset = r.offset;
               s.timestamp_ms = e.timestamp_ms;
               s.partition = e.partition;
               s.has_key = e.has_key;
               seen.push_back(s);
               return r.offset != 9;  // the one "x" before it does not parse
             },
         .read_envelope = read_envelope});
    ASSERT_TRUE(counter.ok()) << counter.status();
    absl::StatusOr<RangeCount> range = (*counter)->CountRange("edits", 1, 9, 11);
    ASSERT_TRUE(range.ok()) << range.status();
    EXPECT_EQ(range->records, 2);
    EXPECT_EQ(range->unparseable, 1);
    ASSERT_EQ(seen.size(), 2u);
    EXPECT_EQ(seen[1].value, "v");
    EXPECT_EQ(seen[1].offset, 10);
    if (read_envelope) {
      EXPECT_TRUE(seen[1].has_key);
      EXPECT_EQ(seen[1].key, "k");
      EXPECT_EQ(seen[1].timestamp_ms, 1700000000123);
      EXPECT_EQ(seen[1].topic, "edits");
      EXPECT_EQ(seen[1].partition, 1);
      EXPECT_EQ(seen[1].headers, "env=prod;none=<null>;");
      EXPECT_FALSE(seen[0].has_key);  // Produce() without a key
    } else {
      // Not read: an empty envelope.
      EXPECT_FALSE(seen[1].has_key);
      EXPECT_EQ(seen[1].timestamp_ms, -1);
      EXPECT_EQ(seen[1].headers, "");
    }
  }
}

TEST_F(KafkaRecordCounterTest, BadRangesAndPartitions) {
  auto counter = Counter(absl::Seconds(3));
  ASSERT_NE(counter, nullptr);
  EXPECT_EQ(counter->CountRecords("edits", 0, 10, 5).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(counter->CountRecords("edits", 0, -1, 5).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(counter->CountRecords("edits", 7, 0, 5).ok());
  EXPECT_EQ(KafkaRecordCounter::Create({}).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace sluice::audit
