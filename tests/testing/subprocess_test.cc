#include "tests/testing/subprocess.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sluice {
namespace testing {
namespace {

using ::testing::HasSubstr;

std::unique_ptr<Subprocess> Shell(const std::string& script, SubprocessOptions options = {}) {
  options.binary = "/bin/sh";
  options.args = {"-c", script};
  auto process = Subprocess::Start(options);
  EXPECT_TRUE(process.ok()) << process.status();
  return process.ok() ? *std::move(process) : nullptr;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// True while `pid` exists and is not a zombie (a killed grandchild stays a
// zombie until whoever adopted it reaps it).
// Read with read(2): the process may vanish between open and read (ESRCH),
// which istreambuf_iterator turns into an exception.
bool AliveNotZombie(pid_t pid) {
  const int fd = open(absl::StrCat("/proc/", pid, "/stat").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[512];
  const ssize_t n = read(fd, buf, sizeof(buf));
  close(fd);
  if (n <= 0) return false;
  const std::string stat(buf, static_cast<size_t>(n));
  const size_t paren = stat.rfind(')');
  if (stat.empty() || paren == std::string::npos || paren + 2 >= stat.size()) return false;
  return stat[paren + 2] != 'Z';
}

TEST(SubprocessTest, ReportsExitCodeAndCapturesStderr) {
  auto p = Shell("echo oops >&2; echo out; exit 3");
  ASSERT_NE(p, nullptr);
  auto status = p->Wait(absl::Seconds(10));
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_TRUE(status->exited);
  EXPECT_EQ(status->code, 3);
  EXPECT_FALSE(status->success());
  EXPECT_EQ(status->ToString(), "exit code 3");
  EXPECT_EQ(p->StderrTail(), "oops\n");
  EXPECT_EQ(Slurp(p->stdout_path()), "out\n");
  EXPECT_FALSE(p->Running());
  EXPECT_EQ(p->Signal(SIGTERM).code(), absl::StatusCode::kFailedPrecondition);
}

TEST(SubprocessTest, StopIsACleanSigterm) {
  auto p = Shell("trap 'exit 0' TERM; echo ready; while true; do sleep 0.02; done");
  ASSERT_NE(p, nullptr);
  ASSERT_TRUE(WaitForFile(p->stdout_path(), absl::Seconds(10), p.get()).ok());
  auto status = p->Stop(absl::Seconds(10));
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_TRUE(status->success()) << status->ToString();
}

TEST(SubprocessTest, StopKillsAChildThatIgnoresSigterm) {
  auto p = Shell("trap '' TERM; echo ready; while true; do sleep 0.02; done");
  ASSERT_NE(p, nullptr);
  ASSERT_TRUE(WaitForFile(p->stdout_path(), absl::Seconds(10), p.get()).ok());
  auto status = p->Stop(absl::Milliseconds(300));
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_FALSE(status->exited);
  EXPECT_EQ(status->signal, SIGKILL);
  EXPECT_EQ(status->ToString(), "killed by signal 9 (KILL)");
}

TEST(SubprocessTest, KillTakesDownGrandchildren) {
  const std::string pid_file = absl::StrCat(TestTmpDir(), "/grandchild.pid");
  auto p = Shell(absl::StrCat("sleep 30 & echo $! > ", pid_file, "; wait"));
  ASSERT_NE(p, nullptr);
  auto content = WaitForFile(pid_file, absl::Seconds(10), p.get());
  ASSERT_TRUE(content.ok()) << content.status();
  const pid_t grandchild = std::stoi(*content);
  auto status = p->Kill();
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(status->signal, SIGKILL);
  // The grandchild was in the same process group: it dies too.
  for (int i = 0; i < 200 && AliveNotZombie(grandchild); ++i) usleep(10000);
  EXPECT_FALSE(AliveNotZombie(grandchild));
}

TEST(SubprocessTest, WaitTimesOutWithTheStderrTail) {
  auto p = Shell("echo starting >&2; exec sleep 30");
  ASSERT_NE(p, nullptr);
  usleep(100000);
  auto status = p->Wait(absl::Milliseconds(100));
  ASSERT_EQ(status.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(status.status().message(), HasSubstr("still running"));
  EXPECT_THAT(status.status().message(), HasSubstr("starting"));
  EXPECT_TRUE(p->Running());
}

TEST(SubprocessTest, DestructorKillsARunningChild) {
  pid_t pid;
  {
    auto p = Shell("exec sleep 30");
    ASSERT_NE(p, nullptr);
    pid = p->pid();
    EXPECT_TRUE(AliveNotZombie(pid));
  }
  EXPECT_NE(kill(pid, 0), 0);  // Killed and reaped by us: the pid is gone.
}

TEST(SubprocessTest, TalksThroughStdinAndStdout) {
  SubprocessOptions options;
  options.binary = "/bin/cat";
  options.pipe_stdin = true;
  options.pipe_stdout = true;
  auto p = Subprocess::Start(options);
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_TRUE((*p)->WriteStdin("first\nsecond\nthi").ok());
  EXPECT_EQ(*(*p)->ReadStdoutLine(absl::Seconds(10)), "first");
  EXPECT_EQ(*(*p)->ReadStdoutLine(absl::Seconds(10)), "second");
  EXPECT_EQ((*p)->ReadStdoutLine(absl::Milliseconds(100)).status().code(),
            absl::StatusCode::kDeadlineExceeded);
  ASSERT_TRUE((*p)->WriteStdin("rd\n").ok());
  EXPECT_EQ(*(*p)->ReadStdoutLine(absl::Seconds(10)), "third");
  (*p)->CloseStdin();
  EXPECT_EQ((*p)->ReadStdoutLine(absl::Seconds(10)).status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_TRUE((*p)->Wait(absl::Seconds(10))->success());
}

TEST(SubprocessTest, WritingToAChildThatClosedStdinIsAnErrorNotSigpipe) {
  SubprocessOptions options;
  options.binary = "/bin/true";
  options.pipe_stdin = true;
  auto p = Subprocess::Start(options);
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE((*p)->Wait(absl::Seconds(10)).ok());
  absl::Status status;
  for (int i = 0; i < 10 && status.ok(); ++i) status = (*p)->WriteStdin(std::string(1 << 16, 'x'));
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
}

TEST(SubprocessTest, PassesEnvironmentAndWorkingDirectory) {
  auto dir = MakeTempDir("workdir");
  ASSERT_TRUE(dir.ok());
  SubprocessOptions options;
  options.env = {{"SLUICE_TEST_VAR", "hello"}};
  options.working_dir = *dir;
  auto p = Shell("echo \"$SLUICE_TEST_VAR $(pwd)\"", options);
  ASSERT_NE(p, nullptr);
  ASSERT_TRUE(p->Wait(absl::Seconds(10))->success());
  EXPECT_EQ(Slurp(p->stdout_path()), absl::StrCat("hello ", *dir, "\n"));
}

TEST(SubprocessTest, BadBinaries) {
  SubprocessOptions options;
  options.binary = "/no/such/binary";
  EXPECT_EQ(Subprocess::Start(options).status().code(), absl::StatusCode::kInvalidArgument);
  // An executable the kernel cannot run: exit code 127 with the reason.
  const std::string script = absl::StrCat(TestTmpDir(), "/bad-interpreter");
  std::ofstream(script) << "#!/no/such/interpreter\n";
  chmod(script.c_str(), 0755);
  options.binary = script;
  auto p = Subprocess::Start(options);
  ASSERT_TRUE(p.ok()) << p.status();
  auto status = (*p)->Wait(absl::Seconds(10));
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(status->code, 127);
  EXPECT_THAT((*p)->StderrTail(), HasSubstr("exec failed"));
}

TEST(WaitForFileTest, ReturnsTheCompleteContent) {
  const std::string path = absl::StrCat(TestTmpDir(), "/late-file");
  auto p = Shell(absl::StrCat("sleep 0.2; printf 'partial' > ", path, ".tmp; printf 'line\\n' >> ",
                              path, ".tmp; mv ", path, ".tmp ", path, "; exec sleep 30"));
  ASSERT_NE(p, nullptr);
  auto content = WaitForFile(path, absl::Seconds(10), p.get());
  ASSERT_TRUE(content.ok()) << content.status();
  EXPECT_EQ(*content, "partialline\n");
}

TEST(WaitForFileTest, FailsEarlyWhenTheProcessDies) {
  auto p = Shell("echo 'bad flag' >&2; exit 4");
  ASSERT_NE(p, nullptr);
  const absl::Time start = absl::Now();
  auto content = WaitForFile(absl::StrCat(TestTmpDir(), "/never"), absl::Seconds(30), p.get());
  ASSERT_EQ(content.status().code(), absl::StatusCode::kAborted);
  EXPECT_THAT(content.status().message(), HasSubstr("exit code 4"));
  EXPECT_THAT(content.status().message(), HasSubstr("bad flag"));
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
}

TEST(WaitForFileTest, TimesOut) {
  EXPECT_EQ(
      WaitForFile(absl::StrCat(TestTmpDir(), "/never"), absl::Milliseconds(100)).status().code(),
      absl::StatusCode::kDeadlineExceeded);
}

TEST(PortsTest, WaitForPortAndFreePorts) {
  auto first = PickFreePortRange(3);
  ASSERT_TRUE(first.ok()) << first.status();
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  sin.sin_port = htons(static_cast<uint16_t>(*first + 2));
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&sin), sizeof(sin)), 0);  // Was free.
  ASSERT_EQ(listen(fd, 4), 0);
  EXPECT_TRUE(WaitForPort(*first + 2, absl::Seconds(5)).ok());
  EXPECT_EQ(WaitForPort(*first + 1, absl::Milliseconds(200)).code(),
            absl::StatusCode::kDeadlineExceeded);
  close(fd);
  auto one = PickFreePort();
  ASSERT_TRUE(one.ok());
  EXPECT_GT(*one, 0);
}

TEST(FindTest, InPathAndRunfiles) {
  auto sh = FindInPath("sh");
  ASSERT_TRUE(sh.ok()) << sh.status();
  EXPECT_THAT(*sh, HasSubstr("/sh"));
  EXPECT_EQ(FindInPath("no-such-binary-for-sluice").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(FindRunfile("no/such/runfile").status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace testing
}  // namespace sluice
