// Serving control commands to a DevBroker from stdin and/or a FIFO until a
// `quit` command or a stop signal.
#ifndef SLUICE_TOOLS_DEVBROKER_CONTROL_LOOP_H_
#define SLUICE_TOOLS_DEVBROKER_CONTROL_LOOP_H_

#include <string>

#include "absl/status/statusor.h"
#include "tools/devbroker/dev_broker.h"

namespace sluice {
namespace devbroker {

struct ControlLoopOptions {
  // Commands are read from this fd (e.g. STDIN_FILENO); -1: none. End of
  // input only stops reading it, not the loop.
  int input_fd = -1;
  // Also read commands from this FIFO (created if missing; an existing path
  // that is not a FIFO is an error). Writers may come and go.
  std::string fifo_path;
  // The loop stops when this fd becomes readable (a signalfd for SIGTERM and
  // SIGINT in the binary; a pipe in tests). -1: none.
  int stop_fd = -1;
  // Each reply is written here as one line; -1: replies are dropped.
  int reply_fd = -1;
};

// Runs until `quit`, the stop fd, or an I/O error. Returns why it stopped
// ("quit command", "signal SIGTERM", "stop requested"). INVALID_ARGUMENT /
// FAILED_PRECONDITION for a bad FIFO path; INTERNAL for poll/read errors.
absl::StatusOr<std::string> RunControlLoop(DevBroker& broker, const ControlLoopOptions& options);

}  // namespace devbroker
}  // namespace sluice

#endif  // SLUICE_TOOLS_DEVBROKER_CONTROL_LOOP_H_
