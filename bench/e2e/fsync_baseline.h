// The latency floor of anything durable on the benchmark's disk: write 4 KiB
// and fsync, `samples` times, in `dir`. A checkpoint round is at least two
// such writes in sequence (the supervisor's SQLite commit of the checkpoint,
// then each replica's sequence file before it answers SetEndOffsets), so the
// round latency is read against this baseline, measured in the same run.
#ifndef SLUICE_BENCH_E2E_FSYNC_BASELINE_H_
#define SLUICE_BENCH_E2E_FSYNC_BASELINE_H_

#include <string>

#include "absl/status/statusor.h"

namespace sluice {
namespace bench {

struct FsyncLatency {
  int samples = 0;
  double p50_seconds = 0;
  double p99_seconds = 0;
  double mean_seconds = 0;
};

absl::StatusOr<FsyncLatency> MeasureFsync(const std::string& dir, int samples);

}  // namespace bench
}  // namespace sluice

#endif  // SLUICE_BENCH_E2E_FSYNC_BASELINE_H_
