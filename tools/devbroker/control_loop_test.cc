#include "tools/devbroker/control_loop.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sluice {
namespace devbroker {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

struct Pipe {
  Pipe() { EXPECT_EQ(pipe2(fds, O_CLOEXEC), 0); }
  ~Pipe() {
    CloseRead();
    CloseWrite();
  }
  void CloseRead() {
    if (fds[0] >= 0) close(fds[0]);
    fds[0] = -1;
  }
  void CloseWrite() {
    if (fds[1] >= 0) close(fds[1]);
    fds[1] = -1;
  }
  int fds[2] = {-1, -1};
};

void Write(int fd, const std::string& text) {
  ASSERT_EQ(write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
}

// Reads one reply line (up to 10 s).
std::string ReadLine(int fd) {
  std::string line;
  char c;
  while (true) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 10000) != 1) return line + "<timeout>";
    if (read(fd, &c, 1) != 1) return line + "<eof>";
    if (c == '\n') return line;
    line.push_back(c);
  }
}

class ControlLoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    DevBrokerOptions options;
    options.topics = {{"wiki", 1}};
    auto broker = DevBroker::Create(options);
    ASSERT_TRUE(broker.ok()) << broker.status();
    broker_ = *std::move(broker);
  }

  void Start(ControlLoopOptions options) {
    options.reply_fd = replies_.fds[1];
    options.stop_fd = stop_.fds[0];
    thread_ = std::thread([this, options] { result_ = RunControlLoop(*broker_, options); });
  }

  absl::StatusOr<std::string> Join() {
    thread_.join();
    return result_;
  }

  std::unique_ptr<DevBroker> broker_;
  Pipe input_;
  Pipe replies_;
  Pipe stop_;
  std::thread thread_;
  absl::StatusOr<std::string> result_;
};

TEST_F(ControlLoopTest, AnswersEachLineAndQuits) {
  ControlLoopOptions options;
  options.input_fd = input_.fds[0];
  Start(options);
  Write(input_.fds[1], "status\n# a comment\n\nbogus\nbroker do");
  EXPECT_THAT(ReadLine(replies_.fds[0]), StartsWith("ok bootstrap="));
  EXPECT_THAT(ReadLine(replies_.fds[0]), StartsWith("error unknown command \"bogus\""));
  // A line split across writes is executed once complete.
  Write(input_.fds[1], "wn 1\n");
  EXPECT_EQ(ReadLine(replies_.fds[0]), "ok broker 1 down");
  Write(input_.fds[1], "quit\nstatus\n");
  EXPECT_EQ(ReadLine(replies_.fds[0]), "ok quitting");
  auto why = Join();
  ASSERT_TRUE(why.ok()) << why.status();
  EXPECT_EQ(*why, "quit command");
}

TEST_F(ControlLoopTest, EndOfInputKeepsServingUntilStopped) {
  ControlLoopOptions options;
  options.input_fd = input_.fds[0];
  Start(options);
  Write(input_.fds[1], "help");  // No newline: executed at end of input.
  input_.CloseWrite();
  EXPECT_THAT(ReadLine(replies_.fds[0]), StartsWith("ok commands:"));
  Write(stop_.fds[1], "x");
  auto why = Join();
  ASSERT_TRUE(why.ok()) << why.status();
  EXPECT_EQ(*why, "stop requested");
}

TEST_F(ControlLoopTest, OverlongLinesAreRejected) {
  ControlLoopOptions options;
  options.input_fd = input_.fds[0];
  Start(options);
  Write(input_.fds[1], std::string(10000, 'x'));
  EXPECT_THAT(ReadLine(replies_.fds[0]), HasSubstr("longer than"));
  Write(input_.fds[1], "yyy\nstatus\n");
  EXPECT_THAT(ReadLine(replies_.fds[0]), StartsWith("ok bootstrap="));
  Write(stop_.fds[1], "x");
  EXPECT_TRUE(Join().ok());
}

TEST_F(ControlLoopTest, ServesAFifoAcrossWriters) {
  const std::string fifo = absl::StrCat(getenv("TEST_TMPDIR"), "/control.fifo");
  auto fifo_fd = OpenControlFifo(fifo);
  ASSERT_TRUE(fifo_fd.ok()) << fifo_fd.status();
  // Created by the open, before any loop runs.
  struct stat st;
  ASSERT_EQ(stat(fifo.c_str(), &st), 0);
  ASSERT_TRUE(S_ISFIFO(st.st_mode));
  ControlLoopOptions options;
  options.fifo_fd = *fifo_fd;
  Start(options);
  for (int writer = 0; writer < 2; ++writer) {
    const int fd = open(fifo.c_str(), O_WRONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    Write(fd, "rtt 1 3\n");
    close(fd);
    EXPECT_EQ(ReadLine(replies_.fds[0]), "ok broker 1 rtt 3ms");
  }
  const int fd = open(fifo.c_str(), O_WRONLY | O_CLOEXEC);
  Write(fd, "quit\n");
  close(fd);
  EXPECT_EQ(ReadLine(replies_.fds[0]), "ok quitting");
  EXPECT_EQ(*Join(), "quit command");
  close(*fifo_fd);
}

TEST_F(ControlLoopTest, APathThatIsNotAFifoIsRefused) {
  const std::string path = absl::StrCat(getenv("TEST_TMPDIR"), "/plain-file");
  close(open(path.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
  auto fd = OpenControlFifo(path);
  EXPECT_EQ(fd.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(fd.status().message(), HasSubstr("not a FIFO"));
}

}  // namespace
}  // namespace devbroker
}  // namespace sluice
