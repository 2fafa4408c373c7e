#include "tests/testing/subprocess.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

extern char** environ;

namespace sluice {
namespace testing {
namespace {

std::string Errno(absl::string_view what) { return absl::StrCat(what, ": ", strerror(errno)); }

std::string BaseName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool IsExecutableFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

void CloseFd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

// Sleeps a little longer each round, up to 50 ms.
void Backoff(int round) { usleep(std::min(50000, 2000 * (round + 1))); }

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

}  // namespace

std::string ExitStatus::ToString() const {
  if (exited) return absl::StrCat("exit code ", code);
  const char* name = sigabbrev_np(signal);
  return absl::StrCat("killed by signal ", signal, " (", name != nullptr ? name : "?", ")");
}

absl::StatusOr<std::unique_ptr<Subprocess>> Subprocess::Start(SubprocessOptions options) {
  if (!IsExecutableFile(options.binary)) {
    return absl::InvalidArgumentError(
        absl::StrCat("not an executable file: \"", options.binary, "\""));
  }
  static std::atomic<int> counter{0};
  std::unique_ptr<Subprocess> process(new Subprocess());
  process->name_ = options.name.empty()
                       ? absl::StrCat(BaseName(options.binary), "-", counter.fetch_add(1))
                       : options.name;
  process->stderr_path_ = options.stderr_path.empty()
                              ? absl::StrCat(LogDir(), "/", process->name_, ".stderr")
                              : options.stderr_path;

  // Everything the child needs is prepared before fork(): between fork and
  // exec only async-signal-safe calls are allowed (the test is multithreaded).
  std::vector<std::string> argv_storage = {options.binary};
  argv_storage.insert(argv_storage.end(), options.args.begin(), options.args.end());
  std::vector<char*> argv;
  for (std::string& arg : argv_storage) argv.push_back(arg.data());
  argv.push_back(nullptr);
  std::map<std::string, std::string> env_map;
  for (char** e = environ; *e != nullptr; ++e) {
    std::pair<std::string, std::string> kv = absl::StrSplit(*e, absl::MaxSplits('=', 1));
    env_map[kv.first] = kv.second;
  }
  for (const auto& [key, value] : options.env) env_map[key] = value;
  std::vector<std::string> env_storage;
  for (const auto& [key, value] : env_map) env_storage.push_back(absl::StrCat(key, "=", value));
  std::vector<char*> envp;
  for (std::string& kv : env_storage) envp.push_back(kv.data());
  envp.push_back(nullptr);

  // Child-side fds (closed in the parent after fork) and parent-side ends.
  int child_stdin = -1, child_stdout = -1, child_stderr = -1;
  auto close_child_fds = [&] {
    CloseFd(child_stdin);
    CloseFd(child_stdout);
    CloseFd(child_stderr);
  };
  if (options.pipe_stdin) {
    // A socketpair rather than a pipe: writes use MSG_NOSIGNAL, so a child
    // that closed its stdin cannot SIGPIPE the test.
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
      return absl::InternalError(Errno("socketpair"));
    }
    child_stdin = sv[0];
    process->stdin_fd_ = sv[1];
  } else {
    child_stdin = open("/dev/null", O_RDONLY | O_CLOEXEC);
  }
  if (options.pipe_stdout) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
      close_child_fds();
      return absl::InternalError(Errno("pipe"));
    }
    process->stdout_fd_ = fds[0];
    child_stdout = fds[1];
  } else {
    process->stdout_path_ = options.stdout_path.empty()
                                ? absl::StrCat(LogDir(), "/", process->name_, ".stdout")
                                : options.stdout_path;
    child_stdout =
        open(process->stdout_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  }
  child_stderr =
      open(process->stderr_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (child_stdin < 0 || child_stdout < 0 || child_stderr < 0) {
    const std::string error = Errno("open the child's stdin/stdout/stderr");
    close_child_fds();
    return absl::InternalError(error);
  }
  const char* working_dir = options.working_dir.empty() ? nullptr : options.working_dir.c_str();
  const bool die_with_parent = options.die_with_parent;
  const pid_t parent = getpid();
  static const char kExecFailed[] = "subprocess: exec failed: ";

  const pid_t pid = fork();
  if (pid < 0) {
    const std::string error = Errno("fork");
    close_child_fds();
    return absl::InternalError(error);
  }
  if (pid == 0) {
    // Child: async-signal-safe calls only.
    setpgid(0, 0);
    if (die_with_parent) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(126);
    }
    struct sigaction dfl;
    memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; ++sig) sigaction(sig, &dfl, nullptr);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    if (dup2(child_stdin, 0) < 0 || dup2(child_stdout, 1) < 0 || dup2(child_stderr, 2) < 0) {
      _exit(126);
    }
    syscall(SYS_close_range, 3u, ~0u, 0u);  // Best effort; the rest is O_CLOEXEC.
    if (working_dir != nullptr && chdir(working_dir) != 0) _exit(126);
    execve(argv[0], argv.data(), envp.data());
    const int err = errno;
    ssize_t ignored = write(2, kExecFailed, sizeof(kExecFailed) - 1);
    const char* reason = strerror(err);  // Not strictly async-signal-safe; we are exiting.
    ignored = write(2, reason, strlen(reason));
    ignored = write(2, "\n", 1);
    (void)ignored;
    _exit(127);
  }
  process->pid_ = pid;
  close_child_fds();
  return process;
}

Subprocess::~Subprocess() {
  if (pid_ > 0 && !done_) {
    kill(-pid_, SIGKILL);  // The whole process group.
    kill(pid_, SIGKILL);
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  CloseFd(stdin_fd_);
  CloseFd(stdout_fd_);
}

void Subprocess::Reap(int wait_status) {
  done_ = true;
  if (WIFEXITED(wait_status)) {
    exit_.exited = true;
    exit_.code = WEXITSTATUS(wait_status);
  } else if (WIFSIGNALED(wait_status)) {
    exit_.exited = false;
    exit_.signal = WTERMSIG(wait_status);
  }
}

std::string Subprocess::Describe() const {
  std::string tail = StderrTail();
  return absl::StrCat(name_, " (pid ", pid_, ")",
                      done_ ? absl::StrCat(", ", exit_.ToString()) : std::string(),
                      tail.empty() ? "" : absl::StrCat("; stderr tail:\n", tail));
}

bool Subprocess::Running() {
  if (done_) return false;
  int status = 0;
  const pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    Reap(status);
    return false;
  }
  return true;
}

absl::Status Subprocess::Signal(int signal) {
  if (!Running()) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot signal ", name_, ": it already ended with ", exit_.ToString()));
  }
  if (kill(pid_, signal) != 0) return absl::InternalError(Errno("kill"));
  return absl::OkStatus();
}

absl::StatusOr<ExitStatus> Subprocess::Wait(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  for (int round = 0; Running(); ++round) {
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat(Describe(), "\nstill running after ", absl::FormatDuration(timeout)));
    }
    Backoff(round);
  }
  return exit_;
}

absl::StatusOr<ExitStatus> Subprocess::Stop(absl::Duration grace) {
  if (Running()) {
    if (absl::Status s = Signal(SIGTERM); !s.ok() && Running()) return s;
    absl::StatusOr<ExitStatus> status = Wait(grace);
    if (status.ok()) return status;
  }
  if (done_) return exit_;
  return Kill();
}

absl::StatusOr<ExitStatus> Subprocess::Kill() {
  if (Running()) {
    kill(-pid_, SIGKILL);  // The whole process group, grandchildren included.
    kill(pid_, SIGKILL);   // In case it left its group.
  }
  if (!done_) {
    int status = 0;
    pid_t r;
    while ((r = waitpid(pid_, &status, 0)) < 0 && errno == EINTR) {
    }
    if (r != pid_) return absl::InternalError(Errno("waitpid"));
    Reap(status);
  }
  return exit_;
}

absl::Status Subprocess::WriteStdin(absl::string_view data) {
  if (stdin_fd_ < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(name_, ": stdin is not a pipe (set pipe_stdin) or was closed"));
  }
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = send(stdin_fd_, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::UnavailableError(absl::StrCat(Errno("write to stdin"), "; ", Describe()));
    }
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

void Subprocess::CloseStdin() {
  if (stdin_fd_ >= 0) shutdown(stdin_fd_, SHUT_WR);
  CloseFd(stdin_fd_);
}

absl::StatusOr<std::string> Subprocess::ReadStdoutLine(absl::Duration timeout) {
  if (stdout_fd_ < 0 && stdout_buffer_.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat(name_, ": stdout is not a pipe (set pipe_stdout)"));
  }
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    const size_t newline = stdout_buffer_.find('\n');
    if (newline != std::string::npos) {
      std::string line = stdout_buffer_.substr(0, newline);
      stdout_buffer_.erase(0, newline + 1);
      return line;
    }
    if (stdout_fd_ < 0) {
      return absl::OutOfRangeError(
          absl::StrCat(name_, ": end of stdout; partial line \"", stdout_buffer_, "\""));
    }
    const int64_t left_ms = absl::ToInt64Milliseconds(deadline - absl::Now());
    if (left_ms <= 0) {
      return absl::DeadlineExceededError(absl::StrCat("no stdout line from ", Describe(),
                                                      "\nwithin ", absl::FormatDuration(timeout),
                                                      "; partial line \"", stdout_buffer_, "\""));
    }
    pollfd p{stdout_fd_, POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(std::min<int64_t>(left_ms, 100)));
    if (ready < 0 && errno != EINTR) return absl::InternalError(Errno("poll stdout"));
    if (ready <= 0) continue;
    char chunk[4096];
    const ssize_t n = read(stdout_fd_, chunk, sizeof(chunk));
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return absl::InternalError(Errno("read stdout"));
    }
    if (n == 0) {
      CloseFd(stdout_fd_);
      continue;
    }
    stdout_buffer_.append(chunk, static_cast<size_t>(n));
  }
}

std::string Subprocess::StderrTail(size_t max_bytes) const {
  std::string all = ReadWholeFile(stderr_path_);
  if (all.size() > max_bytes) all = "..." + all.substr(all.size() - max_bytes);
  return all;
}

std::string TestTmpDir() {
  const char* dir = getenv("TEST_TMPDIR");
  return dir != nullptr && *dir != '\0' ? dir : "/tmp";
}

std::string LogDir() {
  const char* dir = getenv("TEST_UNDECLARED_OUTPUTS_DIR");
  return dir != nullptr && *dir != '\0' ? dir : TestTmpDir();
}

absl::StatusOr<std::string> MakeTempDir(absl::string_view prefix) {
  std::string pattern = absl::StrCat(TestTmpDir(), "/", prefix, ".XXXXXX");
  if (mkdtemp(pattern.data()) == nullptr) return absl::InternalError(Errno("mkdtemp"));
  return pattern;
}

absl::StatusOr<std::string> FindRunfile(absl::string_view workspace_relative_path) {
  std::vector<std::string> candidates;
  const char* srcdir = getenv("TEST_SRCDIR");
  const char* workspace = getenv("TEST_WORKSPACE");
  const char* runfiles = getenv("RUNFILES_DIR");
  const std::string ws = workspace != nullptr ? workspace : "sluice";
  if (srcdir != nullptr)
    candidates.push_back(absl::StrCat(srcdir, "/", ws, "/", workspace_relative_path));
  if (runfiles != nullptr)
    candidates.push_back(absl::StrCat(runfiles, "/", ws, "/", workspace_relative_path));
  candidates.push_back(std::string(workspace_relative_path));  // Tests run in the runfiles tree.
  candidates.push_back(absl::StrCat("bazel-bin/", workspace_relative_path));
  for (const std::string& path : candidates) {
    if (access(path.c_str(), F_OK) == 0) return path;
  }
  return absl::NotFoundError(absl::StrCat("runfile ", workspace_relative_path,
                                          " not found (is it a `data` dependency of the test?)"));
}

absl::StatusOr<std::string> FindInPath(absl::string_view name) {
  std::string path = getenv("PATH") != nullptr ? getenv("PATH") : "";
  absl::StrAppend(&path, ":/usr/bin:/bin");
  for (absl::string_view dir : absl::StrSplit(path, ':', absl::SkipEmpty())) {
    const std::string candidate = absl::StrCat(dir, "/", name);
    if (IsExecutableFile(candidate)) return candidate;
  }
  return absl::NotFoundError(absl::StrCat(name, " is not installed (not in PATH)"));
}

absl::StatusOr<std::string> WaitForFile(const std::string& path, absl::Duration timeout,
                                        Subprocess* process) {
  const absl::Time deadline = absl::Now() + timeout;
  for (int round = 0;; ++round) {
    const std::string content = ReadWholeFile(path);
    if (!content.empty() && content.back() == '\n') return content;
    if (process != nullptr && !process->Running()) {
      return absl::AbortedError(
          absl::StrCat(process->name(), " ended (", process->exit_status()->ToString(),
                       ") before writing ", path, "; stderr tail:\n", process->StderrTail()));
    }
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat(path, " not written within ", absl::FormatDuration(timeout),
                       process != nullptr ? "; stderr tail:\n" + process->StderrTail() : ""));
    }
    Backoff(round);
  }
}

absl::Status WaitForPort(int port, absl::Duration timeout, Subprocess* process) {
  const absl::Time deadline = absl::Now() + timeout;
  for (int round = 0;; ++round) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return absl::InternalError(Errno("socket"));
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sin.sin_port = htons(static_cast<uint16_t>(port));
    const int rc = connect(fd, reinterpret_cast<sockaddr*>(&sin), sizeof(sin));
    close(fd);
    if (rc == 0) return absl::OkStatus();
    if (process != nullptr && !process->Running()) {
      return absl::AbortedError(absl::StrCat(
          process->name(), " ended (", process->exit_status()->ToString(),
          ") before listening on port ", port, "; stderr tail:\n", process->StderrTail()));
    }
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          "nothing listens on 127.0.0.1:", port, " after ", absl::FormatDuration(timeout),
          process != nullptr ? "; stderr tail:\n" + process->StderrTail() : ""));
    }
    Backoff(round);
  }
}

absl::StatusOr<int> PickFreePortRange(int count) {
  if (count < 1) return absl::InvalidArgumentError("count must be >= 1");
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::vector<int> fds;
    auto close_all = [&] {
      for (int fd : fds) close(fd);
    };
    int first = 0;
    bool ok = true;
    for (int i = 0; i < count && ok; ++i) {
      const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (fd < 0) {
        close_all();
        return absl::InternalError(Errno("socket"));
      }
      fds.push_back(fd);
      sockaddr_in sin{};
      sin.sin_family = AF_INET;
      sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      sin.sin_port = htons(static_cast<uint16_t>(i == 0 ? 0 : first + i));
      socklen_t len = sizeof(sin);
      if (i == 0 && first + count - 1 > 65535) ok = false;
      if (!ok || bind(fd, reinterpret_cast<sockaddr*>(&sin), sizeof(sin)) != 0) {
        ok = false;
        break;
      }
      if (i == 0) {
        if (getsockname(fd, reinterpret_cast<sockaddr*>(&sin), &len) != 0) {
          close_all();
          return absl::InternalError(Errno("getsockname"));
        }
        first = ntohs(sin.sin_port);
        if (first + count - 1 > 65535) ok = false;
      }
    }
    close_all();
    if (ok) return first;
  }
  return absl::UnavailableError(absl::StrCat("no run of ", count, " free ports found"));
}

absl::StatusOr<int> PickFreePort() { return PickFreePortRange(1); }

std::string CapturedRun::Describe() const {
  return absl::StrCat("exit ", exit_code, "\n--- stdout:\n", out, "\n--- stderr:\n", err);
}

CapturedRun RunToCompletion(SubprocessOptions options, absl::Duration timeout,
                            absl::string_view stdin_data) {
  static std::atomic<int> runs{0};
  const int run = runs.fetch_add(1) + 1;
  const std::string base = absl::StrCat(TestTmpDir(), "/run-", getpid(), "-", run);
  if (options.stdout_path.empty()) options.stdout_path = base + ".out";
  if (options.stderr_path.empty()) options.stderr_path = base + ".err";
  CapturedRun result;
  auto process = Subprocess::Start(options);
  if (!process.ok()) {
    result.err = process.status().ToString();
    return result;
  }
  if (options.pipe_stdin) {
    if (!stdin_data.empty()) (void)(*process)->WriteStdin(stdin_data);
    (*process)->CloseStdin();
  }
  auto exit = (*process)->Wait(timeout);
  if (!exit.ok()) (void)(*process)->Kill();
  result.out = ReadWholeFile(options.stdout_path);
  result.err = ReadWholeFile(options.stderr_path);
  if (!exit.ok()) {
    absl::StrAppend(&result.err, "\n[test] ", exit.status().ToString());
  } else if (exit->exited) {
    result.exit_code = exit->code;
  } else {
    absl::StrAppend(&result.err, "\n[test] ", exit->ToString());
  }
  return result;
}

}  // namespace testing
}  // namespace sluice
