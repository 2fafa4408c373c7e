// The two baselines the end-to-end benchmark compares sluice against, both
// reading the whole pre-loaded topic once:
// - kcat, exactly as a user would type it:
//     kcat -C -b BOOTSTRAP -t TOPIC -e -o beginning -q > /dev/null
// - a raw librdkafka consumer (C API, assign() at the start offsets,
//   rd_kafka_consume_batch_queue), with the dev broker fetch tuning sluice's
//   tasks also use (kafka::WithConsumerDefaults, ClusterKind::kDevBroker):
//   the fastest a single client reads this broker, with no work per record
//   beyond touching its payload.
#ifndef SLUICE_BENCH_E2E_CONSUME_BASELINES_H_
#define SLUICE_BENCH_E2E_CONSUME_BASELINES_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/kafka/config.h"

namespace sluice {
namespace bench {

struct ConsumeResult {
  int64_t records = 0;
  int64_t bytes = 0;
  // From starting the client (process or handle) to the last record.
  absl::Duration elapsed;
  // User + system CPU of the client (kcat: of its process).
  absl::Duration cpu;

  double RecordsPerSecond() const;
};

// Runs kcat (`kcat_path`, with `extra_args` appended, e.g. "-X" "k=v") to
// /dev/null. `expected_records` is what the topic holds; kcat prints no count
// with -q, so the result reports it as read when kcat exits 0 (with -e it
// exits only after reaching the end of every partition). Fails if kcat fails.
absl::StatusOr<ConsumeResult> RunKcat(const std::string& kcat_path, const std::string& bootstrap,
                                      const std::string& topic,
                                      const std::vector<std::string>& extra_args,
                                      int64_t expected_records);

// Reads every partition of `topic` from `start` to `end` (partition ->
// offset) and counts records and payload bytes; `overrides` replace
// recommended consumer properties. Fails on any consumer error,
// or if not everything arrived within `timeout`.
absl::StatusOr<ConsumeResult> ConsumeRaw(const std::string& bootstrap, const std::string& topic,
                                         const std::map<int32_t, int64_t>& start,
                                         const std::map<int32_t, int64_t>& end,
                                         absl::Duration timeout,
                                         const kafka::KafkaProperties& overrides = {});

// Runs the raw consumer of ConsumeRaw in its own process, `binary` being
// //bench/e2e:raw_consume (or a copy of it linked with another librdkafka,
// bench/e2e/run.sh --compare_librdkafka): elapsed time and CPU are the
// process's, as for kcat. Fails if it fails (it exits non-zero unless it read
// every record from `start` to `end`).
absl::StatusOr<ConsumeResult> RunRawConsumeBinary(const std::string& binary,
                                                  const std::string& bootstrap,
                                                  const std::string& topic,
                                                  const std::map<int32_t, int64_t>& start,
                                                  const std::map<int32_t, int64_t>& end);

}  // namespace bench
}  // namespace sluice

#endif  // SLUICE_BENCH_E2E_CONSUME_BASELINES_H_
