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
  // Also read commands from this FIFO, opened with OpenControlFifo; -1: none.
  // Writers may come and go. The caller keeps ownership of the fd.
  int fifo_fd = -1;
  // The loop stops when this fd becomes readable (a signalfd for SIGTERM and
  // SIGINT in the binary; a pipe in tests). -1: none.
  int stop_fd = -1;
  // Each reply is written here as one line; -1: replies are dropped.
  int reply_fd = -1;
};

// Creates the FIFO at `path` if missing and opens it for reading without
// blocking; the fd never reports end of file when writers close. The binary
// calls this before it announces readiness, so a client that saw the
// bootstrap list finds the FIFO in place (a client that opened the path for
// writing first would create a plain file instead). FAILED_PRECONDITION when
// the path exists and is not a FIFO, or cannot be created or opened.
absl::StatusOr<int> OpenControlFifo(const std::string& path);

// Runs until `quit`, the stop fd, or an I/O error. Returns why it stopped
// ("quit command", "signal SIGTERM", "stop requested"); INTERNAL for poll
// errors.
absl::StatusOr<std::string> RunControlLoop(DevBroker& broker, const ControlLoopOptions& options);

}  // namespace devbroker
}  // namespace sluice

#endif  // SLUICE_TOOLS_DEVBROKER_CONTROL_LOOP_H_
