#include "tools/devbroker/control_loop.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"

namespace sluice {
namespace devbroker {
namespace {

// Longest accepted command line; longer input is answered with an error and
// skipped up to the next newline.
constexpr size_t kMaxLine = 4096;

// Buffered line reader over one fd.
struct LineSource {
  int fd = -1;
  std::string name;
  std::string buffer;
  bool discarding = false;  // Inside an over-long line.
};

void WriteAll(int fd, const std::string& text) {
  if (fd < 0) return;
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      LOG(WARNING) << "[devbroker] cannot write a control reply: " << strerror(errno);
      return;
    }
    done += static_cast<size_t>(n);
  }
}

// Executes the complete lines in `source.buffer`; true when `quit` was seen.
bool ExecuteLines(DevBroker& broker, LineSource& source, int reply_fd) {
  size_t start = 0;
  while (true) {
    const size_t newline = source.buffer.find('\n', start);
    if (newline == std::string::npos) break;
    if (source.discarding) {
      source.discarding = false;
      start = newline + 1;
      continue;
    }
    const std::string line = source.buffer.substr(start, newline - start);
    start = newline + 1;
    LOG(INFO) << "[devbroker] " << source.name << ": " << line;
    const DevBroker::Reply reply = broker.Execute(line);
    if (!reply.line.empty()) {
      LOG(INFO) << "[devbroker] -> " << reply.line;
      WriteAll(reply_fd, reply.line + "\n");
    }
    if (reply.quit) return true;
  }
  source.buffer.erase(0, start);
  if (source.buffer.size() > kMaxLine) {
    source.buffer.clear();
    if (!source.discarding) {
      WriteAll(reply_fd, absl::StrCat("error line longer than ", kMaxLine, " bytes\n"));
    }
    source.discarding = true;
  }
  return false;
}

}  // namespace

absl::StatusOr<int> OpenControlFifo(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) == 0) {
    if (!S_ISFIFO(st.st_mode)) {
      return absl::FailedPreconditionError(
          absl::StrCat("control FIFO ", path, " exists and is not a FIFO"));
    }
  } else if (mkfifo(path.c_str(), 0600) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot create control FIFO ", path, ": ", strerror(errno)));
  }
  // O_RDWR keeps a writer open ourselves, so the FIFO never reports end of
  // file when external writers close it (Linux allows this for FIFOs).
  const int fd = open(path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot open control FIFO ", path, ": ", strerror(errno)));
  }
  return fd;
}

namespace {

std::string StopReason(int stop_fd) {
  signalfd_siginfo info;
  const ssize_t n = read(stop_fd, &info, sizeof(info));
  if (n == static_cast<ssize_t>(sizeof(info))) {
    const char* name = sigabbrev_np(static_cast<int>(info.ssi_signo));
    return absl::StrCat("signal SIG", name != nullptr ? name : "?");
  }
  return "stop requested";
}

}  // namespace

absl::StatusOr<std::string> RunControlLoop(DevBroker& broker, const ControlLoopOptions& options) {
  std::vector<LineSource> sources;
  if (options.input_fd >= 0) sources.push_back(LineSource{options.input_fd, "stdin"});
  if (options.fifo_fd >= 0) sources.push_back(LineSource{options.fifo_fd, "fifo"});
  std::string why;
  char chunk[4096];
  while (why.empty()) {
    std::vector<pollfd> fds;
    for (const LineSource& s : sources) {
      if (s.fd >= 0) fds.push_back(pollfd{s.fd, POLLIN, 0});
    }
    const size_t stop_index = fds.size();
    if (options.stop_fd >= 0) fds.push_back(pollfd{options.stop_fd, POLLIN, 0});
    if (fds.empty()) {
      // Nothing to wait for: nothing could ever stop us either.
      why = "no command source and no stop fd";
      break;
    }
    const int ready = poll(fds.data(), fds.size(), -1);
    if (ready < 0) {
      if (errno == EINTR) continue;
      return absl::InternalError(absl::StrCat("poll: ", strerror(errno)));
    }
    if (options.stop_fd >= 0 && fds[stop_index].revents != 0) {
      why = StopReason(options.stop_fd);
      break;
    }
    size_t polled = 0;
    for (LineSource& source : sources) {
      if (source.fd < 0) continue;
      const short revents = fds[polled++].revents;
      if (revents == 0) continue;
      const ssize_t n = read(source.fd, chunk, sizeof(chunk));
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (n <= 0) {
        // End of input (or a read error): execute a last unterminated line.
        if (!source.buffer.empty()) source.buffer.push_back('\n');
        if (ExecuteLines(broker, source, options.reply_fd)) why = "quit command";
        LOG(INFO) << "[devbroker] " << source.name << " closed; still serving";
        source.fd = -1;
        continue;
      }
      source.buffer.append(chunk, static_cast<size_t>(n));
      if (ExecuteLines(broker, source, options.reply_fd)) {
        why = "quit command";
        break;
      }
    }
  }
  return why;
}

}  // namespace devbroker
}  // namespace sluice
