#include "tests/task_worker_process.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/file_util.h"

namespace sluice::testing {

std::string SluiceTaskBinary() {
  const char* srcdir = getenv("TEST_SRCDIR");
  const std::string in_runfiles =
      absl::StrCat(srcdir != nullptr ? srcdir : ".", "/sluice/task/sluice-task");
  if (PathExists(in_runfiles)) return in_runfiles;
  return "task/sluice-task";
}

WorkerProcess::~WorkerProcess() { Kill(); }

absl::StatusOr<std::string> WorkerProcess::Start(const std::string& binary,
                                                 std::vector<std::string> args,
                                                 const std::string& log_path) {
  Kill();
  static int counter = 0;
  port_file_ = absl::StrCat(log_path, ".port", ++counter);
  RemoveAll(port_file_).IgnoreError();
  args.insert(args.begin(), binary);
  args.push_back(absl::StrCat("--port_file=", port_file_));
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const int log_fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (log_fd < 0) return ErrnoStatus(errno, "open", log_path);
  const pid_t pid = fork();
  if (pid < 0) {
    close(log_fd);
    return ErrnoStatus(errno, "fork", binary);
  }
  if (pid == 0) {
    dup2(log_fd, 1);
    dup2(log_fd, 2);
    // The test process blocks SIGTERM in some threads; start clean.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(log_fd);
  pid_ = pid;
  exit_code_ = 0;
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (absl::Now() < deadline) {
    if (!Running()) {
      return absl::InternalError(
          absl::StrCat(binary, " exited with ", exit_code_, " at start:\n", Tail(log_path)));
    }
    absl::StatusOr<std::string> address = ReadFile(port_file_);
    if (address.ok() && !address->empty()) return *address;
    absl::SleepFor(absl::Milliseconds(20));
  }
  Kill();
  return absl::DeadlineExceededError(absl::StrCat(binary, " did not start:\n", Tail(log_path)));
}

bool WorkerProcess::Running() {
  if (pid_ < 0) return false;
  int status = 0;
  const pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == 0) return true;
  if (r == pid_) {
    exit_code_ =
        WIFEXITED(status) ? WEXITSTATUS(status) : (WIFSIGNALED(status) ? -WTERMSIG(status) : -1);
  }
  pid_ = -1;
  return false;
}

void WorkerProcess::Kill() {
  if (pid_ < 0) return;
  kill(pid_, SIGKILL);
  int status = 0;
  if (waitpid(pid_, &status, 0) == pid_) {
    exit_code_ =
        WIFEXITED(status) ? WEXITSTATUS(status) : (WIFSIGNALED(status) ? -WTERMSIG(status) : -1);
  }
  pid_ = -1;
}

bool WorkerProcess::WaitExit(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (Running()) {
    if (absl::Now() >= deadline) return false;
    absl::SleepFor(absl::Milliseconds(20));
  }
  return true;
}

std::string Tail(const std::string& path, size_t bytes) {
  absl::StatusOr<std::string> data = ReadFile(path);
  if (!data.ok()) return "(no log)";
  return data->size() <= bytes ? *data : data->substr(data->size() - bytes);
}

}  // namespace sluice::testing
