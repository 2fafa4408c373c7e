// sluice-devbroker: a Kafka broker for development and tests, on librdkafka's
// mock cluster. See tools/devbroker/dev_broker.h and control_command.h.
//
//   sluice-devbroker --brokers=1 --topic=wiki:4 --bootstrap_file=/tmp/bootstrap
//   kcat -b $(cat /tmp/bootstrap) -P -t wiki < rows.json
//
// Prints the bootstrap list as the first line of stdout (and writes it to
// --bootstrap_file once every topic exists), then answers control commands
// from stdin and/or --control_fifo, one reply line each on stdout. Stops on
// `quit`, SIGTERM or SIGINT (removing the bootstrap file). Exit codes: 0 clean
// stop, 1 cannot start, 2 bad flags.
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "common/file_util.h"
#include "absl/strings/str_cat.h"
#include "gflags/gflags.h"
#include "glog/logging.h"
#include "tools/devbroker/control_loop.h"
#include "tools/devbroker/dev_broker.h"
#include "tools/devbroker/repeated_flag.h"

DEFINE_int32(brokers, 1, "Number of mock brokers (1..32). Use 1 for throughput, 3 for failover.");
DEFINE_string(topic, "",
              "Topic to create as NAME:PARTITIONS; repeatable, or comma-separated "
              "(e.g. --topic=wiki:4 --topic=logs:1).");
DEFINE_int32(base_port, 0,
             "Broker i listens on base_port + i - 1 (the ports must be free); 0 picks free "
             "ephemeral ports.");
DEFINE_string(bootstrap_file, "",
              "Write the bootstrap list here (atomically) once the topics exist; removed on "
              "clean stop.");
DEFINE_string(control_fifo, "", "Also read control commands from this FIFO (created if missing).");
DEFINE_bool(control_stdin, true, "Read control commands from stdin.");
DEFINE_bool(allow_retention_cap, false,
            "Run even if librdkafka's 5 MiB / 100000-batch per-partition retention cap cannot be "
            "lifted (older data is then silently dropped).");

namespace {

int Run(int argc, char** argv) {
  using sluice::devbroker::DevBroker;
  using sluice::devbroker::DevBrokerOptions;

  // --topic is repeatable: collect it before gflags keeps only the last one.
  std::vector<std::string> args(argv, argv + argc);
  absl::StatusOr<std::vector<std::string>> topic_flags =
      sluice::devbroker::ExtractRepeatedFlag(args, "topic");
  if (!topic_flags.ok()) {
    fprintf(stderr, "sluice-devbroker: %s\n", std::string(topic_flags.status().message()).c_str());
    return 2;
  }
  std::vector<char*> gflags_argv;
  for (std::string& arg : args) gflags_argv.push_back(arg.data());
  int gflags_argc = static_cast<int>(gflags_argv.size());
  char** gflags_argv_ptr = gflags_argv.data();
  gflags::SetUsageMessage("sluice-devbroker --topic=NAME:PARTITIONS [--brokers=N] ...");
  FLAGS_logtostderr = true;  // Default; --logtostderr=false still works.
  gflags::ParseCommandLineFlags(&gflags_argc, &gflags_argv_ptr, /*remove_flags=*/true);
  google::InitGoogleLogging(argv[0]);
  if (gflags_argc > 1) {
    fprintf(stderr, "sluice-devbroker: unexpected argument \"%s\"\n", gflags_argv_ptr[1]);
    return 2;
  }

  DevBrokerOptions options;
  options.brokers = FLAGS_brokers;
  options.base_port = FLAGS_base_port;
  options.allow_retention_cap = FLAGS_allow_retention_cap;
  for (const std::string& text : *topic_flags) {
    absl::StatusOr<sluice::devbroker::TopicSpec> topic = sluice::devbroker::ParseTopicSpec(text);
    if (!topic.ok()) {
      fprintf(stderr, "sluice-devbroker: --topic: %s\n",
              std::string(topic.status().message()).c_str());
      return 2;
    }
    options.topics.push_back(*topic);
  }

  // SIGTERM/SIGINT are taken through a signalfd by the control loop. Block
  // them before librdkafka starts threads, so every thread inherits the mask.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);
  const int signal_fd = signalfd(-1, &stop_signals, SFD_CLOEXEC);
  PCHECK(signal_fd >= 0) << "signalfd";

  absl::StatusOr<std::unique_ptr<DevBroker>> broker = DevBroker::Create(options);
  if (!broker.ok()) {
    LOG(ERROR) << "[devbroker] cannot start: " << broker.status();
    fprintf(stderr, "sluice-devbroker: cannot start: %s\n", broker.status().ToString().c_str());
    return 1;
  }
  // The FIFO exists before readiness is announced (bootstrap file, first
  // stdout line), so whoever waits for those can write to it at once.
  int fifo_fd = -1;
  if (!FLAGS_control_fifo.empty()) {
    absl::StatusOr<int> fd = sluice::devbroker::OpenControlFifo(FLAGS_control_fifo);
    if (!fd.ok()) {
      LOG(ERROR) << "[devbroker] " << fd.status();
      fprintf(stderr, "sluice-devbroker: %s\n", fd.status().ToString().c_str());
      return 1;
    }
    fifo_fd = *fd;
  }
  const std::string bootstrap = (*broker)->bootstrap_servers();
  if (!FLAGS_bootstrap_file.empty()) {
    absl::Status written =
        sluice::WriteFileAtomically(FLAGS_bootstrap_file, bootstrap + "\n");
    if (!written.ok()) {
      LOG(ERROR) << "[devbroker] " << written;
      return 1;
    }
  }
  const std::string first_line = bootstrap + "\n";
  if (write(STDOUT_FILENO, first_line.data(), first_line.size()) < 0) {
    PLOG(WARNING) << "[devbroker] cannot print the bootstrap list";
  }
  LOG(INFO) << "[devbroker] ready: " << (*broker)->StatusLine();

  sluice::devbroker::ControlLoopOptions loop;
  loop.input_fd = FLAGS_control_stdin ? STDIN_FILENO : -1;
  loop.fifo_fd = fifo_fd;
  loop.stop_fd = signal_fd;
  loop.reply_fd = STDOUT_FILENO;
  absl::StatusOr<std::string> why = sluice::devbroker::RunControlLoop(**broker, loop);
  int exit_code = 0;
  if (why.ok()) {
    LOG(INFO) << "[devbroker] stopping: " << *why;
  } else {
    LOG(ERROR) << "[devbroker] control loop failed: " << why.status();
    exit_code = 1;
  }
  if (!FLAGS_bootstrap_file.empty()) unlink(FLAGS_bootstrap_file.c_str());
  if (fifo_fd >= 0) close(fifo_fd);
  broker->reset();
  close(signal_fd);
  LOG(INFO) << "[devbroker] stopped";
  return exit_code;
}

}  // namespace

int main(int argc, char** argv) { return Run(argc, argv); }
