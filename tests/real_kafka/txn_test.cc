// Transactions on a real Apache Kafka broker (the dev broker never writes a
// marker): committed and aborted transactions of librdkafka's transactional
// producer interleaved on 3 partitions while sluice ingests them with
// replicas, checkpoints and roll-overs. The task reads read_committed
// (librdkafka's default; sluice does not override it): aborted records are
// never rows, and commit/abort markers take offsets that hold no record.
// Sequences and task ends land right after markers (every transaction ends
// with one, and the partitions end with one), so a task must know it is done
// with offsets that returned nothing, or it never finishes and lag never
// reaches 0. Then an open transaction holds the last stable offset back:
// nothing past it is committed until it commits. Each part ends with the
// exactly-once audit, which counts committed data records per range.
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tests/fault/scenario_test_util.h"
#include "tests/real_kafka/real_kafka_scenario.h"
#include "tests/real_kafka/txn_producer.h"

namespace sluice::real_kafka {
namespace {

using fault::FaultScenario;
using fault::Produced;
using fault::ScenarioOptions;

constexpr int kPartitions = 3;

// What the scenario must find committed: the producer's committed records
// and every partition through its high watermark (past the last marker).
absl::Status CountCommitted(kafka::RealKafka* kafka, const std::string& topic,
                            const TxnProducer& producer, int64_t records_before,
                            int64_t malformed_before, FaultScenario* s) {
  Produced more;
  more.records = producer.committed() - records_before;
  more.malformed = producer.committed_malformed() - malformed_before;
  for (int32_t p = 0; p < kPartitions; ++p) {
    absl::StatusOr<std::pair<int64_t, int64_t>> w = kafka->Watermarks(topic, p);
    if (!w.ok()) return w.status();
    more.end_offsets[p] = w->second;
  }
  s->AddProduced(more);
  return absl::OkStatus();
}

absl::Status ExpectNoLag(FaultScenario* s) {
  return s->WaitUntil("lag 0 on every partition", absl::Seconds(30),
                      [&]() -> absl::StatusOr<bool> {
                        absl::StatusOr<v1::SupervisorStatus> st = s->Status();
                        if (!st.ok()) return st.status();
                        if (st->lag_size() != kPartitions) return false;
                        for (const auto& [p, lag] : st->lag()) {
                          if (lag != 0) return false;
                        }
                        return true;
                      });
}

TEST(RealKafkaTransactions, CommittedAndAbortedInterleavedThenAnOpenTransaction) {
  kafka::RealKafka* kafka = RealKafkaEnv();
  ASSERT_NE(kafka, nullptr);
  ScenarioOptions options;
  options.seed = 201;
  options.partitions = kPartitions;
  options.task_duration = "PT6S";  // roll-overs: final ends after markers
  std::unique_ptr<FaultScenario> s = StartRealKafkaScenario(options);
  ASSERT_NE(s, nullptr);
  const std::string topic = s->options().topic;

  bench::WikiRowOptions rows;
  rows.seed = 201;
  rows.mean_step_ms = 200;
  rows.malformed_fraction = 0.01;
  auto producer = TxnProducer::Create(kafka->bootstrap_servers(), topic, topic + "-txn", rows);
  ASSERT_TRUE(producer.ok()) << producer.status();
  TxnProducer& txn = **producer;

  // 45 transactions of 40 records per partition, every third aborted, over
  // about 9 s; the last one commits.
  for (int t = 0; t < 45; ++t) {
    ASSERT_OK(txn.Begin());
    for (int i = 0; i < 40; ++i) {
      for (int32_t p = 0; p < kPartitions; ++p) ASSERT_OK(txn.Send(p));
    }
    ASSERT_OK(t % 3 == 1 ? txn.Abort() : txn.Commit());
    absl::SleepFor(absl::Milliseconds(150));
  }
  EXPECT_EQ(txn.committed(), 30 * 40 * kPartitions);
  EXPECT_EQ(txn.aborted(), 15 * 40 * kPartitions);
  for (int32_t p = 0; p < kPartitions; ++p) {
    absl::StatusOr<int64_t> latest = WaitForLatest(kafka, topic, p, true, 45 * 41);
    ASSERT_TRUE(latest.ok()) << latest.status();
    EXPECT_EQ(*latest, 45 * 41) << "40 records and a marker per transaction";
  }
  ASSERT_OK(CountCommitted(kafka, topic, txn, 0, 0, s.get()));
  // Committed exactly through the high watermark: the last offset of each
  // partition is a commit marker, which no reader ever gets.
  ASSERT_OK(s->Finish());
  ASSERT_OK(ExpectNoLag(s.get()));

  // An open transaction: its records are written but not committed, so the
  // last stable offset stays at the old end while the high watermark moves.
  absl::StatusOr<v1::GetCommitLogResponse> before = s->CommitLog();
  ASSERT_TRUE(before.ok()) << before.status();
  const int64_t committed_before = txn.committed();
  const int64_t malformed_before = txn.committed_malformed();
  ASSERT_OK(txn.Begin());
  for (int i = 0; i < 100; ++i) {
    for (int32_t p = 0; p < kPartitions; ++p) ASSERT_OK(txn.Send(p));
  }
  ASSERT_OK(txn.Flush());
  absl::SleepFor(absl::Seconds(5));  // several checkpoint periods (PT2S)
  absl::StatusOr<v1::GetCommitLogResponse> during = s->CommitLog();
  ASSERT_TRUE(during.ok()) << during.status();
  for (int32_t p = 0; p < kPartitions; ++p) {
    EXPECT_EQ(during->committed_offsets().at(p), before->committed_offsets().at(p))
        << "partition " << p << " committed past the last stable offset\n" << s->Context();
  }
  // The high watermark moved past the open transaction's records, the last
  // stable offset did not; the supervisor's latest offsets (and so its lag)
  // are the last stable offsets, what a read_committed reader can reach: the
  // open transaction's records are not lag until they commit (as for
  // Druid, whose consumer's end offsets are the LSO under read_committed).
  absl::StatusOr<v1::SupervisorStatus> status = s->Status();
  ASSERT_TRUE(status.ok()) << status.status();
  for (int32_t p = 0; p < kPartitions; ++p) {
    absl::StatusOr<std::pair<int64_t, int64_t>> hw = kafka->Watermarks(topic, p, false);
    absl::StatusOr<std::pair<int64_t, int64_t>> lso = kafka->Watermarks(topic, p, true);
    ASSERT_TRUE(hw.ok() && lso.ok()) << hw.status() << lso.status();
    EXPECT_EQ(hw->second, before->committed_offsets().at(p) + 100) << "partition " << p;
    EXPECT_EQ(lso->second, before->committed_offsets().at(p)) << "partition " << p;
    EXPECT_EQ(status->latest_offsets().at(p), lso->second) << "partition " << p;
  }
  EXPECT_EQ(status->aggregate_lag(), 0) << s->Context();
  ASSERT_OK(txn.Commit());
  ASSERT_OK(CountCommitted(kafka, topic, txn, committed_before, malformed_before, s.get()));
  ASSERT_OK(s->Finish());
  ASSERT_OK(ExpectNoLag(s.get()));
}

// isolation.level=read_uncommitted in the spec: aborted records are
// ingested too (as in Druid), markers still hold no record; the audit reads
// with the same setting, so every record of every transaction is a row.
TEST(RealKafkaTransactions, ReadUncommittedIngestsAbortedRecords) {
  kafka::RealKafka* kafka = RealKafkaEnv();
  ASSERT_NE(kafka, nullptr);
  ScenarioOptions options;
  options.seed = 202;
  options.partitions = kPartitions;
  options.consumer_properties = {{"isolation.level", "read_uncommitted"}};
  std::unique_ptr<FaultScenario> s = StartRealKafkaScenario(options);
  ASSERT_NE(s, nullptr);
  const std::string topic = s->options().topic;
  bench::WikiRowOptions rows;
  rows.seed = 202;
  rows.mean_step_ms = 200;
  rows.malformed_fraction = 0;
  auto producer = TxnProducer::Create(kafka->bootstrap_servers(), topic, topic + "-txn", rows);
  ASSERT_TRUE(producer.ok()) << producer.status();
  TxnProducer& txn = **producer;
  for (int t = 0; t < 12; ++t) {
    ASSERT_OK(txn.Begin());
    for (int i = 0; i < 50; ++i) {
      for (int32_t p = 0; p < kPartitions; ++p) ASSERT_OK(txn.Send(p));
    }
    ASSERT_OK(t % 2 == 1 ? txn.Abort() : txn.Commit());
  }
  Produced all;
  all.records = txn.committed() + txn.aborted();
  for (int32_t p = 0; p < kPartitions; ++p) {
    absl::StatusOr<int64_t> latest = WaitForLatest(kafka, topic, p, false, 12 * 51);
    ASSERT_TRUE(latest.ok()) << latest.status();
    EXPECT_EQ(*latest, 12 * 51);
    all.end_offsets[p] = *latest;
  }
  s->AddProduced(all);
  ASSERT_OK(s->Finish());  // rows = committed + aborted records
  ASSERT_OK(ExpectNoLag(s.get()));
}

}  // namespace
}  // namespace sluice::real_kafka
