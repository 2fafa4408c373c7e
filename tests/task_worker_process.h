// Test helper: a sluice-task worker as a real subprocess (for kill -9 and
// fault-point crashes), its log kept in a file.
#ifndef SLUICE_TESTS_TASK_WORKER_PROCESS_H_
#define SLUICE_TESTS_TASK_WORKER_PROCESS_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace sluice::testing {

// Path of //task:sluice-task in the test's runfiles.
std::string SluiceTaskBinary();

class WorkerProcess {
 public:
  WorkerProcess() = default;
  ~WorkerProcess();
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  // Starts `binary` with `args` plus --port_file, appending its output to
  // `log_path`, and waits until it serves. Returns its host:port.
  absl::StatusOr<std::string> Start(const std::string& binary, std::vector<std::string> args,
                                    const std::string& log_path);
  // False once the process exited (reaps it).
  bool Running();
  // Exit code, or -signal when killed by a signal (valid once not Running).
  int exit_code() const { return exit_code_; }
  // SIGKILL and reap.
  void Kill();
  // Waits up to `timeout` for the process to exit by itself.
  bool WaitExit(absl::Duration timeout);
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int exit_code_ = 0;
  std::string port_file_;
};

// The last `bytes` of a file (for failure messages).
std::string Tail(const std::string& path, size_t bytes = 4000);

}  // namespace sluice::testing

#endif  // SLUICE_TESTS_TASK_WORKER_PROCESS_H_
