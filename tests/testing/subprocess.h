// Test helper: run a binary as a child process, talk to it, stop or kill it,
// and wait for the files and ports it creates. Used by the process-level
// tests (tests/*_test.cc) that start sluice binaries for real.
//
//   SubprocessOptions options;
//   options.binary = *FindRunfile("tools/sluice-devbroker");
//   options.args = {"--topic=wiki:4", "--bootstrap_file=" + dir + "/bootstrap"};
//   options.pipe_stdin = true;
//   options.pipe_stdout = true;
//   ASSERT_OK_AND_ASSIGN(auto broker, Subprocess::Start(options));
//   ASSERT_OK_AND_ASSIGN(std::string bootstrap,
//                        WaitForFile(dir + "/bootstrap", absl::Seconds(10), broker.get()));
//   ASSERT_OK(broker->WriteStdin("broker down 1\n"));
//   ASSERT_OK_AND_ASSIGN(std::string reply, broker->ReadStdoutLine(absl::Seconds(5)));
//   ASSERT_OK_AND_ASSIGN(ExitStatus exit, broker->Stop(absl::Seconds(10)));  // SIGTERM
//
// The child runs in its own process group with default signal dispositions
// and an empty signal mask, stderr captured to a file (stderr_path(); its tail
// is in every error message), and (by default) is killed if the thread that
// started it exits (PR_SET_PDEATHSIG): start children from the test's main
// thread. The destructor SIGKILLs (the process group) and reaps a child that
// is still running.
// Not thread-safe: use one Subprocess from one thread. Not copyable.
#ifndef SLUICE_TESTS_TESTING_SUBPROCESS_H_
#define SLUICE_TESTS_TESTING_SUBPROCESS_H_

#include <sys/types.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace sluice {
namespace testing {

struct SubprocessOptions {
  // Path of the executable (not searched in PATH; see FindInPath).
  std::string binary;
  // Arguments after argv[0] (argv[0] is the binary path).
  std::vector<std::string> args;
  // Extra environment variables (the rest is inherited).
  std::map<std::string, std::string> env;
  // Working directory; empty: the test's.
  std::string working_dir;
  // stdin: a pipe the test writes with WriteStdin(); otherwise /dev/null.
  bool pipe_stdin = false;
  // stdout: a pipe the test reads with ReadStdoutLine(); otherwise written to
  // stdout_path (empty: <LogDir>/<name>.stdout).
  bool pipe_stdout = false;
  std::string stdout_path;
  // stderr is always a file: this path, or <LogDir>/<name>.stderr.
  std::string stderr_path;
  // Name for files and messages; empty: the binary's base name + a counter.
  std::string name;
  // SIGKILL the child when the starting thread dies.
  bool die_with_parent = true;
};

// How a child ended.
struct ExitStatus {
  bool exited = false;  // Exited normally (code valid); else killed by `signal`.
  int code = 0;
  int signal = 0;

  bool success() const { return exited && code == 0; }
  // "exit code 0", "exit code 2", "killed by signal 9 (KILL)".
  std::string ToString() const;
};

class Subprocess {
 public:
  // Starts the child. INVALID_ARGUMENT if the binary is not an executable
  // file; INTERNAL for fork/pipe/file errors. A failing exec shows up as exit
  // code 127 with the reason in stderr.
  static absl::StatusOr<std::unique_ptr<Subprocess>> Start(SubprocessOptions options);

  ~Subprocess();
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  pid_t pid() const { return pid_; }
  const std::string& name() const { return name_; }
  const std::string& stderr_path() const { return stderr_path_; }
  const std::string& stdout_path() const { return stdout_path_; }

  // True while the child has not exited (reaps it if it has).
  bool Running();
  // The exit status once the child ended (Wait/Stop/Kill/Running reaped it).
  const ExitStatus* exit_status() const { return done_ ? &exit_ : nullptr; }

  // Sends `signal` to the child. FAILED_PRECONDITION if it already ended.
  absl::Status Signal(int signal);
  // Waits for the child to end. DEADLINE_EXCEEDED (with the stderr tail) if
  // it is still running after `timeout`.
  absl::StatusOr<ExitStatus> Wait(absl::Duration timeout);
  // SIGTERM, wait up to `grace`, then SIGKILL and wait. Returns how it ended
  // (a clean stop is exit code 0; signal 9 means it ignored SIGTERM).
  absl::StatusOr<ExitStatus> Stop(absl::Duration grace);
  // SIGKILL (kill -9) to the child's process group (its own children too),
  // and reap.
  absl::StatusOr<ExitStatus> Kill();

  // Writes to the child's stdin (pipe_stdin). UNAVAILABLE if the child closed it.
  absl::Status WriteStdin(absl::string_view data);
  void CloseStdin();
  // One line of the child's stdout without the newline (pipe_stdout).
  // DEADLINE_EXCEEDED after `timeout`; OUT_OF_RANGE at end of output.
  absl::StatusOr<std::string> ReadStdoutLine(absl::Duration timeout);

  // The last `max_bytes` of the stderr file (empty if unreadable).
  std::string StderrTail(size_t max_bytes = 4000) const;

 private:
  Subprocess() = default;
  void Reap(int wait_status);
  std::string Describe() const;

  pid_t pid_ = -1;
  std::string name_;
  std::string stderr_path_;
  std::string stdout_path_;
  int stdin_fd_ = -1;
  int stdout_fd_ = -1;
  std::string stdout_buffer_;
  bool done_ = false;
  ExitStatus exit_;
};

// A program run to completion with its output captured (RunToCompletion).
struct CapturedRun {
  int exit_code = -1;  // -1: killed by a signal or timed out
  std::string out;
  std::string err;
  bool ok() const { return exit_code == 0; }
  // "exit N", then stdout and stderr, for failure messages.
  std::string Describe() const;
};

// Starts `options` (stdout and stderr go to fresh files under TestTmpDir()
// unless paths are given), writes `stdin_data` and closes stdin when
// options.pipe_stdin, waits up to `timeout` (then kills it) and returns the
// exit code and both outputs. A failure to start is reported in `err`.
CapturedRun RunToCompletion(SubprocessOptions options, absl::Duration timeout,
                            absl::string_view stdin_data = "");

// The directory for a test's files: $TEST_TMPDIR, else /tmp.
std::string TestTmpDir();

// Where captured stdout/stderr files go by default: Bazel's
// $TEST_UNDECLARED_OUTPUTS_DIR (kept after the test, in
// bazel-testlogs/<test>/test.outputs), else TestTmpDir().
std::string LogDir();

// A new empty directory under TestTmpDir() named <prefix>.XXXXXX.
absl::StatusOr<std::string> MakeTempDir(absl::string_view prefix);

// The path of a Bazel runfile (e.g. "tools/sluice-devbroker" for a `data`
// dependency on //tools:sluice-devbroker). NOT_FOUND when it is not there.
absl::StatusOr<std::string> FindRunfile(absl::string_view workspace_relative_path);

// The path of an executable found in $PATH (then /usr/bin, /bin).
// NOT_FOUND if there is none.
absl::StatusOr<std::string> FindInPath(absl::string_view name);

// Waits until `path` exists and holds a complete line (content ending in
// '\n'), and returns its content. With `process`, fails early (ABORTED, with
// the stderr tail) if the process ends first. DEADLINE_EXCEEDED after
// `timeout`.
absl::StatusOr<std::string> WaitForFile(const std::string& path, absl::Duration timeout,
                                        Subprocess* process = nullptr);

// Waits until a TCP connection to 127.0.0.1:`port` succeeds. Same early
// failure and timeout as WaitForFile.
absl::Status WaitForPort(int port, absl::Duration timeout, Subprocess* process = nullptr);

// A TCP port on 127.0.0.1 that was free when asked (the kernel's choice).
absl::StatusOr<int> PickFreePort();
// The first of `count` consecutive ports that were all free when asked.
absl::StatusOr<int> PickFreePortRange(int count);

}  // namespace testing
}  // namespace sluice

#endif  // SLUICE_TESTS_TESTING_SUBPROCESS_H_
