#include "bench/e2e/process_cpu.h"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace sluice {
namespace bench {

absl::StatusOr<int64_t> ParseStatCpuTicks(absl::string_view stat) {
  const size_t close = stat.rfind(')');
  if (close == absl::string_view::npos || stat.find('(') == absl::string_view::npos) {
    return absl::InvalidArgumentError("not a /proc/<pid>/stat line: no \"(comm)\"");
  }
  // After ") ": state (field 3), ppid, pgrp, session, tty_nr, tpgid, flags,
  // minflt, cminflt, majflt, cmajflt, utime (14), stime (15).
  const std::vector<absl::string_view> fields =
      absl::StrSplit(stat.substr(close + 1), ' ', absl::SkipEmpty());
  constexpr size_t kUtime = 14 - 3;
  constexpr size_t kStime = 15 - 3;
  if (fields.size() <= kStime) {
    return absl::InvalidArgumentError(
        absl::StrCat("a /proc/<pid>/stat line with ", fields.size() + 2, " fields; need 15"));
  }
  int64_t utime = 0;
  int64_t stime = 0;
  if (!absl::SimpleAtoi(fields[kUtime], &utime) || !absl::SimpleAtoi(fields[kStime], &stime) ||
      utime < 0 || stime < 0) {
    return absl::InvalidArgumentError(absl::StrCat("utime \"", fields[kUtime], "\" / stime \"",
                                                   fields[kStime], "\" are not tick counts"));
  }
  return utime + stime;
}

absl::StatusOr<absl::Duration> ProcessCpu(pid_t pid) {
  const std::string path = absl::StrCat("/proc/", pid, "/stat");
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("no ", path, ": is process ", pid, " gone?"));
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<int64_t> ticks = ParseStatCpuTicks(text.str());
  if (!ticks.ok()) {
    return absl::Status(ticks.status().code(), absl::StrCat(path, ": ", ticks.status().message()));
  }
  static const long kTicksPerSecond = sysconf(_SC_CLK_TCK);
  return absl::Seconds(static_cast<double>(*ticks) / static_cast<double>(kTicksPerSecond));
}

}  // namespace bench
}  // namespace sluice
