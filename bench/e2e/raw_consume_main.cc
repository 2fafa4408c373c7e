// raw_consume: the raw librdkafka consumer baseline (ConsumeRaw) in a process
// of its own, so the end-to-end benchmark can measure it for each librdkafka
// it compares (bench/e2e/run.sh --compare_librdkafka links a copy with
// another library). Reads every range once; exits 0 only if every record
// arrived, and prints the library it ran with and what it read.
//
//   raw_consume --bootstrap=127.0.0.1:9092 --topic=bench --ranges=0:0:500000,1:0:500000
#include <gflags/gflags.h>

#include <cstdio>
#include <map>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "bench/e2e/consume_baselines.h"
#include "common/kafka/library_version.h"

DEFINE_string(bootstrap, "", "bootstrap.servers");
DEFINE_string(topic, "", "topic read");
DEFINE_string(ranges, "", "PARTITION:START:END,... (END exclusive)");
DEFINE_int32(timeout_seconds, 300, "gives up (and fails) after this long");

int main(int argc, char** argv) {
  gflags::SetUsageMessage("raw librdkafka consumer baseline; see bench/e2e/consume_baselines.h");
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  std::map<int32_t, int64_t> start, end;
  for (absl::string_view range : absl::StrSplit(FLAGS_ranges, ',', absl::SkipEmpty())) {
    const std::vector<absl::string_view> parts = absl::StrSplit(range, ':');
    int32_t partition = 0;
    int64_t first = 0, last = 0;
    if (parts.size() != 3 || !absl::SimpleAtoi(parts[0], &partition) ||
        !absl::SimpleAtoi(parts[1], &first) || !absl::SimpleAtoi(parts[2], &last)) {
      fprintf(stderr, "raw_consume: bad range \"%.*s\" (PARTITION:START:END)\n",
              static_cast<int>(range.size()), range.data());
      return 2;
    }
    start[partition] = first;
    end[partition] = last;
  }
  if (FLAGS_bootstrap.empty() || FLAGS_topic.empty() || start.empty()) {
    fprintf(stderr, "raw_consume: --bootstrap, --topic and --ranges are required\n");
    return 2;
  }
  absl::StatusOr<sluice::bench::ConsumeResult> result = sluice::bench::ConsumeRaw(
      FLAGS_bootstrap, FLAGS_topic, start, end, absl::Seconds(FLAGS_timeout_seconds));
  if (!result.ok()) {
    fprintf(stderr, "raw_consume: %s\n", result.status().ToString().c_str());
    return 1;
  }
  fprintf(stderr, "raw_consume: %s read %ld records (%ld bytes) at %.0f records/s\n",
          sluice::kafka::LibrdkafkaDescription().c_str(), static_cast<long>(result->records),
          static_cast<long>(result->bytes), result->RecordsPerSecond());
  return 0;
}
