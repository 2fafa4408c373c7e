#include "supervisor/task_client.h"

#include <algorithm>

#include "common/spec.h"

namespace sluice::supervisor {

ChatOptions ChatOptionsFromTuning(const v1::TuningConfig& tuning) {
  ChatOptions options;
  auto timings = ParseTuningTimings(tuning);
  if (timings.ok()) options.timeout = timings->chat_timeout;
  if (tuning.chat_retries() > 0) options.attempts = tuning.chat_retries();
  options.max_backoff = std::min(options.max_backoff, options.timeout);
  return options;
}

}  // namespace sluice::supervisor
