#include "bench/e2e/fsync_baseline.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace sluice {
namespace bench {

absl::StatusOr<FsyncLatency> MeasureFsync(const std::string& dir, int samples) {
  if (samples <= 0) return absl::InvalidArgumentError("samples must be positive");
  const std::string path = absl::StrCat(dir, "/fsync-baseline");
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return absl::InternalError(absl::StrCat("open ", path, ": ", strerror(errno)));
  const std::string block(4096, 'x');
  std::vector<double> seconds;
  absl::Status failure;
  for (int i = 0; i < samples && failure.ok(); ++i) {
    const absl::Time start = absl::Now();
    if (write(fd, block.data(), block.size()) != static_cast<ssize_t>(block.size()) ||
        fsync(fd) != 0) {
      failure = absl::InternalError(absl::StrCat("write+fsync ", path, ": ", strerror(errno)));
    }
    seconds.push_back(absl::ToDoubleSeconds(absl::Now() - start));
  }
  close(fd);
  unlink(path.c_str());
  if (!failure.ok()) return failure;
  std::sort(seconds.begin(), seconds.end());
  FsyncLatency result;
  result.samples = samples;
  // Nearest rank.
  auto rank = [&](double q) {
    const size_t i = static_cast<size_t>(q * samples + 0.999999) - 1;
    return seconds[std::min(i, seconds.size() - 1)];
  };
  result.p50_seconds = rank(0.5);
  result.p99_seconds = rank(0.99);
  for (double s : seconds) result.mean_seconds += s / samples;
  return result;
}

}  // namespace bench
}  // namespace sluice
