#include "tools/produce/wiki_producer.h"

#include "absl/time/clock.h"
#include "tools/produce/wiki_rows.h"
#include "common/kafka/test_consumer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/devbroker/dev_broker.h"

namespace sluice {
namespace produce {
namespace {

using ::testing::HasSubstr;

class WikiProducerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    devbroker::DevBrokerOptions options;
    options.topics = {{"wiki", 3}};
    auto broker = devbroker::DevBroker::Create(options);
    ASSERT_TRUE(broker.ok()) << broker.status();
    broker_ = *std::move(broker);
  }

  ProduceOptions Options(int64_t records) {
    ProduceOptions options;
    options.properties = {{"bootstrap.servers", broker_->bootstrap_servers()}};
    options.topic = "wiki";
    options.records = records;
    options.rows.seed = 7;
    return options;
  }

  std::unique_ptr<devbroker::DevBroker> broker_;
};

TEST_F(WikiProducerTest, RoundRobinWithExactCountsAndTheSameRecordsReadBack) {
  ProduceOptions options = Options(3001);
  options.rows.malformed_fraction = 0.02;
  std::vector<ProduceProgress> progress;
  options.on_progress = [&](const ProduceProgress& p) { progress.push_back(p); };
  auto result = ProduceWikiRecords(options);
  ASSERT_TRUE(result.ok()) << result.status();

  bench::WikiRowGenerator reference(options.rows);
  std::vector<std::string> expected;
  for (int i = 0; i < 3001; ++i) expected.push_back(reference.Next());
  EXPECT_EQ(result->records, 3001);
  EXPECT_EQ(result->malformed, static_cast<int64_t>(reference.malformed()));
  EXPECT_GT(result->malformed, 0);
  ASSERT_EQ(result->partitions.size(), 3u);
  EXPECT_EQ(result->partitions[0].records, 1001);
  EXPECT_EQ(result->partitions[1].records, 1000);
  EXPECT_EQ(result->partitions[2].records, 1000);
  int64_t malformed = 0;
  for (const auto& [p, count] : result->partitions) {
    EXPECT_EQ(count.start_offset, 0) << p;
    EXPECT_EQ(count.end_offset, count.records) << p;
    malformed += count.malformed;
  }
  EXPECT_EQ(malformed, result->malformed);
  ASSERT_FALSE(progress.empty());
  EXPECT_EQ(progress.back().produced, 3001);
  EXPECT_EQ(progress.back().delivered, 3001);

  // Record i is in partition i % 3 at offset i / 3, byte for byte.
  auto read =
      kafka::ReadRecords({{"bootstrap.servers", broker_->bootstrap_servers()}}, "wiki",
                         {{0, {0, 1001}}, {1, {0, 1000}}, {2, {0, 1000}}}, absl::Seconds(30));
  ASSERT_TRUE(read.ok()) << read.status();
  for (int i = 0; i < 3001; ++i) {
    const auto& records = (*read)[i % 3];
    ASSERT_LT(static_cast<size_t>(i / 3), records.size());
    ASSERT_EQ(records[i / 3].value, expected[i]) << "record " << i;
  }
  EXPECT_THAT(result->ToString(), HasSubstr("partition 0: 1001 records (" +
                                            std::to_string(result->partitions[0].malformed) +
                                            " malformed), offsets [0, 1001)"));
  EXPECT_THAT(result->ToJson(), HasSubstr("\"records\":3001"));
  EXPECT_THAT(result->ToJson(), HasSubstr("\"2\":{\"records\":1000,\"malformed\":" +
                                          std::to_string(result->partitions[2].malformed) +
                                          ",\"start_offset\":0,\"end_offset\":1000}"));
}

TEST_F(WikiProducerTest, ASecondRunStartsWhereThePartitionsEnd) {
  ASSERT_TRUE(ProduceWikiRecords(Options(30)).ok());
  auto second = ProduceWikiRecords(Options(6));
  ASSERT_TRUE(second.ok()) << second.status();
  for (const auto& [p, count] : second->partitions) {
    EXPECT_EQ(count.records, 2);
    EXPECT_EQ(count.start_offset, 10);
    EXPECT_EQ(count.end_offset, 12);
  }
}

TEST_F(WikiProducerTest, NeverFasterThanTheRate) {
  ProduceOptions options = Options(300);
  options.rate = 1000;
  auto result = ProduceWikiRecords(options);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->records, 300);
  // Record 299 is not due before 0.299 s.
  EXPECT_GE(result->elapsed, absl::Milliseconds(299));
}

TEST_F(WikiProducerTest, StopsAfterTheDurationOrWhenAsked) {
  ProduceOptions options = Options(0);
  options.rate = 200;
  options.duration = absl::Milliseconds(500);
  auto result = ProduceWikiRecords(options);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_GT(result->records, 0);
  EXPECT_LE(result->records, 101);  // 200/s for 0.5 s, record 0 due at once.

  options = Options(1000000);
  int calls = 0;
  options.should_stop = [&calls] { return ++calls > 50; };
  result = ProduceWikiRecords(options);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->records, 50);
}

TEST_F(WikiProducerTest, BadOptionsAndUnknownTopics) {
  ProduceOptions options = Options(10);
  options.properties.clear();
  EXPECT_EQ(ProduceWikiRecords(options).status().code(), absl::StatusCode::kInvalidArgument);
  options = Options(0);
  EXPECT_EQ(ProduceWikiRecords(options).status().code(), absl::StatusCode::kInvalidArgument);
  options = Options(10);
  options.rows.malformed_fraction = 2;
  EXPECT_EQ(ProduceWikiRecords(options).status().code(), absl::StatusCode::kInvalidArgument);
  // (An unknown topic cannot be tested here: the dev broker, like
  // librdkafka's mock, creates any topic a Metadata request names.)
  options = Options(10);
  options.properties["bootstrap.servers"] = "127.0.0.1:1";  // nothing listens
  options.metadata_timeout = absl::Seconds(2);
  absl::StatusOr<ProduceResult> result = ProduceWikiRecords(options);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kUnavailable) << result.status();
  options = Options(10);
  options.properties["linger.ms"] = "not a number";
  EXPECT_EQ(ProduceWikiRecords(options).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ParsePropertiesTest, PairsAndErrors) {
  auto props = ParseProperties("linger.ms=5, compression.type = lz4");
  ASSERT_TRUE(props.ok()) << props.status();
  EXPECT_EQ(props->size(), 2u);
  EXPECT_EQ((*props)["linger.ms"], "5");
  EXPECT_EQ((*props)["compression.type"], "lz4");
  EXPECT_TRUE(ParseProperties("")->empty());
  EXPECT_EQ(ParseProperties("linger.ms").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseProperties("=5").status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace produce
}  // namespace sluice
