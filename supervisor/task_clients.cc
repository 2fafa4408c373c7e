// A stream supervisor's chat and RunTask clients (task_clients.h).
#include "supervisor/task_clients.h"

#include <algorithm>

#include "absl/time/time.h"

namespace sluice::supervisor {
namespace {

// The deadline of one RunTask (a single attempt): a healthy worker answers
// in milliseconds; a frozen one must not keep a replacement waiting.
constexpr absl::Duration kRunTaskTimeout = absl::Seconds(2);

}  // namespace

TaskClients::TaskClients(const TaskClientFactory& factory, const v1::TuningConfig& tuning) {
  const ChatOptions chat = ChatOptionsFromTuning(tuning);
  chat_ = factory(chat);
  ChatOptions run = chat;
  run.timeout = std::min(chat.timeout, kRunTaskTimeout);
  run.attempts = 1;
  run_ = factory(run);
}

}  // namespace sluice::supervisor
