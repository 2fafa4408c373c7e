// CPU time (user + system) a process has used so far, from /proc/<pid>/stat:
// how the benchmark charges the worker and the dev broker for a run, to put
// sluice's CPU per record next to kcat's in the same invocation.
#ifndef SLUICE_BENCH_E2E_PROCESS_CPU_H_
#define SLUICE_BENCH_E2E_PROCESS_CPU_H_

#include <sys/types.h>

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace sluice {
namespace bench {

// utime + stime, in clock ticks, from the text of a /proc/<pid>/stat file.
// The command name (field 2) may hold spaces and parentheses, so fields are
// counted after its last ')'. INVALID_ARGUMENT for text that is not a stat
// line.
absl::StatusOr<int64_t> ParseStatCpuTicks(absl::string_view stat);

// The CPU process `pid` has used (all its threads, not its children).
// NOT_FOUND when the process is gone.
absl::StatusOr<absl::Duration> ProcessCpu(pid_t pid);

// Nanoseconds of `cpu` per record; 0 without records.
inline double CpuNanosPerRecord(absl::Duration cpu, int64_t records) {
  return records > 0 ? absl::ToDoubleNanoseconds(cpu) / static_cast<double>(records) : 0.0;
}

}  // namespace bench
}  // namespace sluice

#endif  // SLUICE_BENCH_E2E_PROCESS_CPU_H_
