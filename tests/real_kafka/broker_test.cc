// The real Apache Kafka broker the tier runs on (tools/kafka), and the Kafka
// facts sluice relies on that the dev broker cannot show: transaction markers
// take offsets, read_committed hides aborted records and markers, and the
// audit's record counter counts committed data records per range (and ends
// promptly when a range's last offset is a marker). Then kill -9, restart and
// SIGSTOP of the broker.
#include <signal.h>

#include <gtest/gtest.h>

#include <fstream>
#include <iostream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "common/kafka/metadata_client.h"
#include "tests/real_kafka/real_kafka_env.h"
#include "tests/real_kafka/txn_producer.h"
#include "common/kafka/producer.h"
#include "task/kafka_consumer.h"
#include "tests/testing/subprocess.h"
#include "tools/audit/kafka_record_counter.h"

#define ASSERT_OK(expr)                              \
  do {                                               \
    const absl::Status _status = (expr);             \
    ASSERT_TRUE(_status.ok()) << _status.ToString(); \
  } while (0)

namespace sluice::real_kafka {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(RealKafkaBroker, KcatListsTheBrokerFromTheBootstrapFile) {
  kafka::RealKafka* kafka = RealKafkaEnv();
  ASSERT_NE(kafka, nullptr);
  const std::string bootstrap = ReadAll(kafka->dir() + "/bootstrap");
  ASSERT_TRUE(absl::EndsWith(bootstrap, "\n")) << bootstrap;
  ASSERT_EQ(bootstrap, kafka->bootstrap_servers() + "\n");
  absl::StatusOr<std::string> kcat = testing::FindInPath("kcat");
  ASSERT_TRUE(kcat.ok()) << kcat.status();
  testing::SubprocessOptions o;
  o.binary = *kcat;
  o.args = {"-b", kafka->bootstrap_servers(), "-L", "-m", "10"};
  o.stdout_path = testing::TestTmpDir() + "/kcat.out";
  auto process = testing::Subprocess::Start(o);
  ASSERT_TRUE(process.ok()) << process.status();
  absl::StatusOr<testing::ExitStatus> exit = (*process)->Wait(absl::Seconds(30));
  ASSERT_TRUE(exit.ok()) << exit.status();
  EXPECT_TRUE(exit->success()) << exit->ToString() << (*process)->StderrTail();
  EXPECT_TRUE(absl::StrContains(ReadAll(o.stdout_path),
                                "broker 1 at " + kafka->bootstrap_servers()))
      << ReadAll(o.stdout_path);
}

// The topic's partitions through a listener with `properties`.
absl::StatusOr<std::vector<int32_t>> PartitionsThrough(const kafka::KafkaProperties& properties,
                                                       const std::string& topic) {
  absl::StatusOr<std::unique_ptr<kafka::MetadataClient>> client =
      kafka::MetadataClient::Create(properties);
  if (!client.ok()) return client.status();
  return (*client)->ListPartitions(topic, absl::Seconds(20));
}

// The security listeners with librdkafka (what sluice's consumers use):
// PLAIN over SASL_PLAINTEXT and SASL_SSL, TLS with the broker's CA; a wrong
// password or an untrusted certificate is a PERMISSION_DENIED that says so
// (not a timeout); SCRAM-SHA-512 fails from librdkafka before 2.6.1 although
// the credentials are right (librdkafka#4895: Kafka 4.x checks the nonce of
// the client-final message, which older librdkafka gets wrong).
TEST(RealKafkaBroker, SecurityListenersWithLibrdkafka) {
  kafka::RealKafka* kafka = RealKafkaEnv();
  ASSERT_NE(kafka, nullptr);
  const std::string topic = UniqueTopic();
  ASSERT_OK(kafka->CreateTopic(topic, 2));
  const kafka::KafkaProperties sasl_plain = {
      {"bootstrap.servers", kafka->sasl_plaintext_bootstrap_servers()},
      {"security.protocol", "SASL_PLAINTEXT"},
      {"sasl.mechanism", "PLAIN"},
      {"sasl.username", kSaslUser},
      {"sasl.password", SaslPassword()}};
  // The SSL listener requires a client certificate.
  const kafka::KafkaProperties ssl = {{"bootstrap.servers", kafka->ssl_bootstrap_servers()},
                                      {"security.protocol", "SSL"},
                                      {"ssl.ca.location", kafka->ca_file()},
                                      {"ssl.certificate.location", kafka->client_cert_file()},
                                      {"ssl.key.location", kafka->client_key_file()},
                                      {"ssl.key.password", std::string(absl::StripTrailingAsciiWhitespace(
                                           ReadAll(kafka->client_key_password_file())))}};
  kafka::KafkaProperties sasl_ssl = sasl_plain;
  sasl_ssl["bootstrap.servers"] = kafka->sasl_ssl_bootstrap_servers();
  sasl_ssl["security.protocol"] = "SASL_SSL";
  sasl_ssl["ssl.ca.location"] = kafka->ca_file();
  for (const kafka::KafkaProperties* props :
       std::vector<const kafka::KafkaProperties*>{&sasl_plain, &ssl, &sasl_ssl}) {
    absl::StatusOr<std::vector<int32_t>> partitions = PartitionsThrough(*props, topic);
    ASSERT_TRUE(partitions.ok()) << props->at("security.protocol") << ": " << partitions.status();
    EXPECT_EQ(partitions->size(), 2u);
  }

  kafka::KafkaProperties wrong = sasl_ssl;
  wrong["sasl.password"] = "not-the-password";
  const absl::Time start = absl::Now();
  absl::StatusOr<std::vector<int32_t>> refused = PartitionsThrough(wrong, topic);
  ASSERT_FALSE(refused.ok());
  std::cerr << "[real_kafka] wrong password: " << refused.status() << std::endl;
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kPermissionDenied) << refused.status();
  EXPECT_TRUE(absl::StrContains(refused.status().message(), "Authentication failed"))
      << refused.status();
  EXPECT_LT(absl::Now() - start, absl::Seconds(10)) << "the refusal waited for the timeout";

  kafka::KafkaProperties untrusted = ssl;
  untrusted.erase("ssl.ca.location");  // the system's CAs do not know the test CA
  absl::StatusOr<std::vector<int32_t>> unverified = PartitionsThrough(untrusted, topic);
  ASSERT_FALSE(unverified.ok());
  std::cerr << "[real_kafka] untrusted certificate: " << unverified.status() << std::endl;
  EXPECT_EQ(unverified.status().code(), absl::StatusCode::kPermissionDenied)
      << unverified.status();
  EXPECT_TRUE(absl::StrContains(unverified.status().message(), "certificate"))
      << unverified.status();

  kafka::KafkaProperties scram = sasl_plain;
  scram["sasl.mechanism"] = "SCRAM-SHA-512";
  absl::StatusOr<std::vector<int32_t>> scram_partitions = PartitionsThrough(scram, topic);
  std::cerr << "[real_kafka] SCRAM-SHA-512 from librdkafka " << rd_kafka_version_str() << ": "
            << scram_partitions.status() << std::endl;
  // librdkafka before 2.6.1 (Debian 12's 2.0.2) failed here with "invalid
  // credentials" (docs/kafka.md row 15); sluice links 2.12.1.
  ASSERT_TRUE(scram_partitions.ok()) << scram_partitions.status();
  EXPECT_EQ(scram_partitions->size(), 2u);
  scram["sasl.mechanism"] = "SCRAM-SHA-256";
  scram_partitions = PartitionsThrough(scram, topic);
  ASSERT_TRUE(scram_partitions.ok()) << scram_partitions.status();
  EXPECT_EQ(scram_partitions->size(), 2u);
}

// 6 transactions of 4 records per partition, the second of every three
// aborted: each transaction ends with a marker, so a partition holds
// 6 x (4 + 1) = 30 offsets of which 4 x 4 = 16 are committed data records.
// What the kafka input format reads (task::KafkaBatch::ReadEnvelope), as
// Apache Kafka stores it: keys (null apart from empty), headers in order with
// repeated names and null values, the producer's create time, the topic.
TEST(RealKafkaBroker, KeysHeadersAndTimestampsReadBackAsProduced) {
  kafka::RealKafka* kafka = RealKafkaEnv();
  ASSERT_NE(kafka, nullptr);
  const std::string topic = UniqueTopic();
  ASSERT_OK(kafka->CreateTopic(topic, 1));
  auto producer = kafka::Producer::Create({{"bootstrap.servers", kafka->bootstrap_servers()}});
  ASSERT_TRUE(producer.ok()) << producer.status();
  std::vector<kafka::OutgoingRecord> records(3);
  records[0].value = "a";
  records[0].key = absl::string_view("k");
  records[0].timestamp_ms = 1796004944123;
  records[0].headers = {{"env", std::string("prod")}, {"none", std::nullopt},
                        {"env", std::string("dev")}, {"bin", std::string("\x00\xff", 2)}};
  records[1].value = "b";
  records[1].key = absl::string_view();
  records[2].value = "c";
  for (const kafka::OutgoingRecord& r : records) ASSERT_OK((*producer)->ProduceRecord(topic, 0, r));
  ASSERT_OK((*producer)->Flush(absl::Seconds(30)));

  task::KafkaConsumerOptions options;
  options.topic = topic;
  options.properties = {{"bootstrap.servers", kafka->bootstrap_servers()}};
  options.client_id = "envelope-test";
  auto consumer = task::KafkaConsumer::Create(options);
  ASSERT_TRUE(consumer.ok()) << consumer.status();
  ASSERT_OK((*consumer)->Assign({{0, 0}}));
  task::KafkaBatch batch;
  task::KafkaEnvelope meta;
  std::vector<std::string> values;
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (values.size() < 3 && absl::Now() < deadline) {
    std::vector<task::OffsetOutOfRange> oor;
    ASSERT_OK((*consumer)->Poll(absl::Milliseconds(200), 10, &batch, &oor));
    for (size_t i = 0; i < batch.size(); ++i) {
      batch.ReadEnvelope(i, &meta);
      values.emplace_back(batch[i].value);
      EXPECT_EQ(meta.topic, topic);
      if (values.back() == "a") {
        EXPECT_TRUE(meta.has_key);
        EXPECT_EQ(meta.key, "k");
        EXPECT_EQ(meta.timestamp_ms, 1796004944123);
        ASSERT_EQ(meta.headers.size(), 4u);
        EXPECT_EQ(meta.headers[0].value, "prod");
        EXPECT_FALSE(meta.headers[1].has_value);
        EXPECT_EQ(meta.headers[2].name, "env");
        EXPECT_EQ(meta.headers[2].value, "dev");
        EXPECT_EQ(meta.headers[3].value, absl::string_view("\x00\xff", 2));
      } else {
        EXPECT_EQ(meta.has_key, values.back() == "b") << values.back();
        EXPECT_EQ(meta.key, "");
        EXPECT_TRUE(meta.headers.empty());
        EXPECT_GT(meta.timestamp_ms, 0);
      }
    }
  }
  EXPECT_EQ(values, (std::vector<std::string>{"a", "b", "c"}));
}

// offsetsForTimes on a real broker (the dev broker cannot look offsets up by
// time): the first record at or after the time, the earliest record for an
// older time, the latest offset for a newer one.
TEST(RealKafkaBroker, OffsetsForTimeFindTheFirstRecordAtOrAfterTheTime) {
  kafka::RealKafka* kafka = RealKafkaEnv();
  ASSERT_NE(kafka, nullptr);
  const std::string topic = UniqueTopic();
  ASSERT_OK(kafka->CreateTopic(topic, 2));
  auto producer = kafka::Producer::Create({{"bootstrap.servers", kafka->bootstrap_servers()}});
  ASSERT_TRUE(producer.ok()) << producer.status();
  // Partition 0: records at base, base+1s, ..., base+9s; partition 1: empty.
  const int64_t base = absl::ToUnixMillis(absl::Now() - absl::Minutes(10));
  for (int i = 0; i < 10; ++i) {
    kafka::OutgoingRecord r;
    r.value = "v";
    r.timestamp_ms = base + i * 1000;
    ASSERT_OK((*producer)->ProduceRecord(topic, 0, r));
  }
  ASSERT_OK((*producer)->Flush(absl::Seconds(30)));
  auto client = kafka::MetadataClient::Create({{"bootstrap.servers", kafka->bootstrap_servers()}});
  ASSERT_TRUE(client.ok()) << client.status();

  auto middle = (*client)->OffsetsForTime(topic, {0, 1}, base + 4500, absl::Seconds(30));
  ASSERT_TRUE(middle.ok()) << middle.status();
  EXPECT_EQ(middle->at(0).offset, 5);
  EXPECT_EQ(middle->at(0).source, kafka::OffsetForTimeSource::kRecordAtOrAfter);
  EXPECT_EQ(middle->at(1).offset, 0);
  EXPECT_EQ(middle->at(1).source, kafka::OffsetForTimeSource::kPastEnd);

  auto exact = (*client)->OffsetsForTime(topic, {0}, base + 3000, absl::Seconds(30));
  ASSERT_TRUE(exact.ok()) << exact.status();
  EXPECT_EQ(exact->at(0).offset, 3);

  auto before = (*client)->OffsetsForTime(topic, {0}, base - 3600 * 1000, absl::Seconds(30));
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_EQ(before->at(0).offset, 0);
  EXPECT_EQ(before->at(0).source, kafka::OffsetForTimeSource::kRecordAtOrAfter);

  auto after = (*client)->OffsetsForTime(topic, {0}, base + 9001, absl::Seconds(30));
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(after->at(0).offset, 10);
  EXPECT_EQ(after->at(0).source, kafka::OffsetForTimeSource::kPastEnd);
}

TEST(RealKafkaBroker, MarkersTakeOffsetsAndTheCounterCountsCommittedRecords) {
  kafka::RealKafka* kafka = RealKafkaEnv();
  ASSERT_NE(kafka, nullptr);
  const std::string topic = UniqueTopic();
  ASSERT_OK(kafka->CreateTopic(topic, 3));
  auto producer = TxnProducer::Create(kafka->bootstrap_servers(), topic, topic + "-txn");
  ASSERT_TRUE(producer.ok()) << producer.status();
  for (int t = 0; t < 6; ++t) {
    ASSERT_OK((*producer)->Begin());
    for (int i = 0; i < 4; ++i) {
      for (int32_t p = 0; p < 3; ++p) ASSERT_OK((*producer)->Send(p));
    }
    ASSERT_OK(t % 3 == 1 ? (*producer)->Abort() : (*producer)->Commit());
  }
  EXPECT_EQ((*producer)->committed(), 48);
  EXPECT_EQ((*producer)->aborted(), 24);
  for (int32_t p = 0; p < 3; ++p) {
    // The last marker lands after Commit() returned: wait for it.
    absl::StatusOr<int64_t> latest = WaitForLatest(kafka, topic, p, false, 30);
    ASSERT_TRUE(latest.ok()) << latest.status();
    EXPECT_EQ(*latest, 30) << "partition " << p << ": 24 records and 6 markers";
    absl::StatusOr<std::pair<int64_t, int64_t>> w = kafka->Watermarks(topic, p);
    ASSERT_TRUE(w.ok()) << w.status();
    EXPECT_EQ(w->first, 0);
  }

  auto counter = audit::KafkaRecordCounter::Create(
      {.properties = {{"bootstrap.servers", kafka->bootstrap_servers()}},
       .cluster = kafka::ClusterKind::kKafka,
       .idle_timeout = absl::Seconds(20)});
  ASSERT_TRUE(counter.ok()) << counter.status();
  struct Range {
    int64_t start, end, committed;
  };
  // Offsets per partition: txn 0 data 0-3, marker 4; txn 1 (aborted) 5-8,
  // marker 9; txn 2 10-13, 14; txn 3 15-18, 19; txn 4 (aborted) 20-23, 24;
  // txn 5 25-28, 29.
  const Range ranges[] = {
      {0, 30, 16},  // the whole partition; its last offset is a marker
      {0, 5, 4},    // ends right after a commit marker
      {0, 4, 4},    // ends before it
      {4, 5, 0},    // only the marker
      {5, 10, 0},   // an aborted transaction and its marker
      {3, 12, 3},   // across an aborted transaction
      {25, 30, 4},  // the last transaction, through the end of the partition
      {29, 30, 0},  // only the last marker, at the end of the partition
  };
  for (int32_t p = 0; p < 3; ++p) {
    for (const Range& r : ranges) {
      const absl::Time start = absl::Now();
      absl::StatusOr<int64_t> n = (*counter)->CountRecords(topic, p, r.start, r.end);
      ASSERT_TRUE(n.ok()) << "[" << r.start << ", " << r.end << ") of " << p << ": " << n.status();
      EXPECT_EQ(*n, r.committed) << "[" << r.start << ", " << r.end << ") of " << p;
      // Not the idle timeout: a range that ends on a marker is known to be
      // complete as soon as the partition's end (or a later record) is seen.
      EXPECT_LT(absl::Now() - start, absl::Seconds(10)) << "[" << r.start << ", " << r.end << ")";
    }
  }
}

TEST(RealKafkaBroker, PausedBrokerStopsAnsweringAndResumes) {
  kafka::RealKafka* kafka = RealKafkaEnv();
  ASSERT_NE(kafka, nullptr);
  const std::string topic = UniqueTopic();
  ASSERT_OK(kafka->CreateTopic(topic, 1));
  ASSERT_OK(kafka->Pause());
  const absl::Time start = absl::Now();
  absl::StatusOr<std::pair<int64_t, int64_t>> w = kafka->Watermarks(topic, 0);
  EXPECT_FALSE(w.ok()) << "a SIGSTOPped broker answered";
  EXPECT_GE(absl::Now() - start, absl::Seconds(5));
  ASSERT_OK(kafka->Resume());
  // After a pause longer than the broker's session with its own controller
  // (combined mode), partitions are briefly without a leader
  // (NOT_LEADER_FOR_PARTITION) until the broker is unfenced: retry.
  const absl::Time resumed = absl::Now();
  do {
    w = kafka->Watermarks(topic, 0);
  } while (!w.ok() && absl::Now() - resumed < absl::Seconds(60) &&
           (absl::SleepFor(absl::Milliseconds(200)), true));
  EXPECT_TRUE(w.ok()) << w.status();
  std::cerr << "[real_kafka] answering again " << absl::FormatDuration(absl::Now() - resumed)
            << " after SIGCONT" << std::endl;
  // Paused for longer than broker.session.timeout.ms (30 s in the launcher), the broker would be
  // fenced by its own controller: new topics are refused until it registers
  // again (CreateTopic retries that).
  ASSERT_OK(kafka->CreateTopic(topic + "_after", 1));
  std::cerr << "[real_kafka] creating topics again " << absl::FormatDuration(absl::Now() - resumed)
            << " after SIGCONT" << std::endl;
}

// Last: the broker's state survives kill -9 (same directory and ports).
TEST(RealKafkaBroker, KillNineAndRestartKeepsTheRecords) {
  kafka::RealKafka* kafka = RealKafkaEnv();
  ASSERT_NE(kafka, nullptr);
  const std::string topic = UniqueTopic();
  ASSERT_OK(kafka->CreateTopic(topic, 2));
  auto producer = TxnProducer::Create(kafka->bootstrap_servers(), topic, topic + "-txn");
  ASSERT_TRUE(producer.ok()) << producer.status();
  ASSERT_OK((*producer)->Begin());
  for (int i = 0; i < 50; ++i) ASSERT_OK((*producer)->Send(i % 2));
  ASSERT_OK((*producer)->Commit());
  producer->reset();
  // The committed records are acknowledged; let the broker checkpoint its high
  // watermarks (every 500 ms in the launcher) as it would have long before a
  // real crash, so the restart starts from them.
  absl::SleepFor(absl::Seconds(2));
  const std::string before = kafka->bootstrap_servers();
  ASSERT_OK(kafka->Kill());
  EXPECT_FALSE(kafka->Running());
  const absl::Time start = absl::Now();
  ASSERT_OK(kafka->Restart());
  std::cerr << "[real_kafka] restart after kill -9 took " << absl::FormatDuration(absl::Now() - start)
            << std::endl;
  EXPECT_EQ(kafka->bootstrap_servers(), before);
  for (int32_t p = 0; p < 2; ++p) {
    absl::StatusOr<std::pair<int64_t, int64_t>> w;
    const absl::Time t0 = absl::Now();
    while (true) {
      w = kafka->Watermarks(topic, p);
      if ((w.ok() && w->second == 26) || absl::Now() - t0 > absl::Seconds(40)) break;
      std::cerr << "[real_kafka] after restart, partition " << p << ": "
                << (w.ok() ? absl::StrCat(w->first, "..", w->second) : w.status().ToString())
                << std::endl;
      absl::SleepFor(absl::Milliseconds(500));
    }
    ASSERT_TRUE(w.ok()) << w.status();
    EXPECT_EQ(w->second, 26) << "25 records and a commit marker on partition " << p;
  }
}

}  // namespace
}  // namespace sluice::real_kafka
