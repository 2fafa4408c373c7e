// How much a task's read loop costs on top of consuming from Kafka.
//
// Both benchmarks read the same pre-produced records from the dev broker
// (librdkafka's mock cluster, retention cap lifted), in the same run:
// - BM_RawConsume: the baseline, task::KafkaConsumer alone (assign at 0,
//   batch polls until every record arrived, values touched, nothing else);
// - BM_TaskReadLoop: a whole TaskRunner from Start until its current offsets
//   reach the end: routing, parsing (common/segment row parser), rollup into
//   the incremental index, intermediate persists at the default
//   maxRowsInMemory (150k), segment allocation over gRPC to a fake
//   supervisor. No checkpoint fires (default limits), so nothing is published.
// Compare items_per_second of the two; the absolute numbers depend on the
// machine and on what else runs on it.
//
//   bazel run -c opt //bench:task_read_loop_bench -- --records=1000000
#include <benchmark/benchmark.h>
#include <gflags/gflags.h>
#include <glog/logging.h>
#include <stdlib.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/deep_storage.h"
#include "common/open_deep_storage.h"
#include "common/file_util.h"
#include "common/kafka/producer.h"
#include "task/columnar_engine.h"
#include "task/kafka_consumer.h"
#include "task/grpc_supervisor_client.h"
#include "task/task_runner.h"
#include "tests/task_fake_supervisor.h"
#include "tests/task_test_util.h"
#include "tools/devbroker/dev_broker.h"

DEFINE_int64(records, 1000000, "records to produce (split over 2 partitions)");

namespace sluice {
namespace {

constexpr char kTopic[] = "bench";
constexpr char kBase[] = "bench_0011223344556677";

struct Fixture {
  std::unique_ptr<devbroker::DevBroker> broker;
  std::string dir;
  std::unique_ptr<DeepStorage> deep;
  ::sluice::OffsetMap end;
  int64_t bytes = 0;
};

Fixture* GetFixture() {
  static Fixture* fixture = [] {
    auto* f = new Fixture();
    devbroker::DevBrokerOptions options;
    options.brokers = 1;
    options.topics = {{kTopic, 2}};
    auto broker = devbroker::DevBroker::Create(options);
    CHECK(broker.ok()) << broker.status();
    f->broker = std::move(*broker);
    auto producer = kafka::Producer::Create({{"bootstrap.servers", f->broker->bootstrap_servers()},
                                             {"linger.ms", "20"},
                                             {"batch.size", "1000000"}});
    CHECK(producer.ok()) << producer.status();
    for (int64_t n = 0; n < FLAGS_records; ++n) {
      const int32_t p = static_cast<int32_t>(n % 2);
      const std::string value = testing::Record(p, n / 2);
      f->bytes += static_cast<int64_t>(value.size());
      CHECK((*producer)->Produce(kTopic, p, value).ok());
    }
    CHECK((*producer)->Flush(absl::Minutes(5)).ok());
    for (const auto& [key, end] : (*producer)->delivered_end_offsets()) f->end[key.second] = end;
    f->dir = testing::MakeTempDir("task_bench");
    auto deep = OpenDeepStorage("file://" + f->dir + "/deep");
    CHECK(deep.ok());
    f->deep = std::move(*deep);
    return f;
  }();
  return fixture;
}

void BM_RawConsume(benchmark::State& state) {
  Fixture* f = GetFixture();
  for (auto _ : state) {
    task::KafkaConsumerOptions options;
    options.topic = kTopic;
    options.properties = {{"bootstrap.servers", f->broker->bootstrap_servers()}};
    options.cluster_kind = kafka::ClusterKind::kDevBroker;
    options.client_id = "bench-raw";
    auto consumer = task::KafkaConsumer::Create(options);
    CHECK(consumer.ok()) << consumer.status();
    CHECK((*consumer)->Assign({{0, 0}, {1, 0}}).ok());
    task::KafkaBatch batch;
    std::vector<task::OffsetOutOfRange> oor;
    int64_t records = 0;
    uint64_t checksum = 0;
    while (records < FLAGS_records) {
      CHECK((*consumer)->Poll(absl::Milliseconds(100), 10000, &batch, &oor).ok());
      for (size_t i = 0; i < batch.size(); ++i) {
        const task::KafkaRecord r = batch[i];
        checksum += r.value.size() + static_cast<uint64_t>(r.offset);
      }
      records += static_cast<int64_t>(batch.size());
    }
    benchmark::DoNotOptimize(checksum);
  }
  state.SetItemsProcessed(state.iterations() * FLAGS_records);
  state.SetBytesProcessed(state.iterations() * f->bytes);
}
BENCHMARK(BM_RawConsume)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);

void BM_TaskReadLoop(benchmark::State& state) {
  Fixture* f = GetFixture();
  testing::FakeSupervisorOptions fake;
  fake.datasource = "wiki";
  auto supervisor = testing::FakeSupervisor::Start(fake);
  CHECK(supervisor.ok());
  task::GrpcSupervisorClientOptions client_options;
  client_options.address = (*supervisor)->address();
  auto client = task::NewGrpcSupervisorClient(client_options);
  int run = 0;
  for (auto _ : state) {
    state.PauseTiming();
    testing::SpecOptions spec;
    spec.task_id = absl::StrCat(kBase, "_bench", ++run);
    spec.base_sequence_name = kBase;
    spec.topic = kTopic;
    spec.bootstrap = f->broker->bootstrap_servers();
    spec.start = {{0, 0}, {1, 0}};
    spec.max_rows_in_memory = 150000;
    task::TaskRunnerOptions options;
    options.spec = testing::MakeSpec(spec);
    options.spec.mutable_tuning_config()->clear_max_bytes_in_memory();
    options.task_dir = absl::StrCat(f->dir, "/tasks/", spec.task_id);
    options.worker_id = "bench";
    options.supervisor = client.get();
    options.deep_storage = f->deep.get();
    auto engine = task::NewColumnarEngine(options.spec.data_schema());
    CHECK(engine.ok()) << engine.status();
    options.engine = std::move(*engine);
    options.tuning.kafka_cluster = kafka::ClusterKind::kDevBroker;
    auto runner = task::TaskRunner::Create(std::move(options));
    CHECK(runner.ok()) << runner.status();
    state.ResumeTiming();
    (*runner)->Start();
    while ((*runner)->CurrentOffsets() != f->end) absl::SleepFor(absl::Milliseconds(1));
    state.PauseTiming();
    const v1::TaskStatus status = (*runner)->Status();
    CHECK_EQ(status.row_stats().processed(), FLAGS_records) << status.DebugString();
    state.counters["persists"] = static_cast<double>(status.row_stats().persists());
    (*runner)->Shutdown();
    runner->reset();
    CHECK(RemoveAll(absl::StrCat(f->dir, "/tasks")).ok());
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * FLAGS_records);
  state.SetBytesProcessed(state.iterations() * f->bytes);
}
BENCHMARK(BM_TaskReadLoop)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
