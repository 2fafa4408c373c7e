// The sluice processes of one benchmark run: a supervisor and N task
// workers as real subprocesses on loopback, each with its own data
// directory, log file and Prometheus endpoint, against an existing Kafka
// (the dev broker). A fresh set per run, so that every worker's peak RSS
// (VmHWM) belongs to that run alone.
//
//   SLUICE_ASSIGN_OR_RETURN(auto processes, SluiceProcesses::Start(options));
//   auto stub = v1::SupervisorService::NewStub(processes->SupervisorChannel());
//   SLUICE_ASSIGN_OR_RETURN(std::string text, processes->ScrapeWorker(0));
//
// Not thread-safe. The destructor stops the workers, then the supervisor.
#ifndef SLUICE_BENCH_E2E_SLUICE_PROCESSES_H_
#define SLUICE_BENCH_E2E_SLUICE_PROCESSES_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "tests/testing/subprocess.h"

namespace sluice {
namespace bench {

struct SluiceProcessesOptions {
  std::string supervisor_binary;
  std::string worker_binary;
  // Everything of the run goes under here: supervisor/, worker-<i>/, deep/,
  // logs/<process>.log (glog output).
  std::string dir;
  int workers = 1;
  std::vector<std::string> supervisor_args;
  std::vector<std::string> worker_args;
  // Profiling: run each worker under this command (e.g. {"/usr/bin/valgrind",
  // "--tool=callgrind"}); empty: directly.
  std::vector<std::string> worker_wrapper;
};

class SluiceProcesses {
 public:
  // Starts the supervisor, then the workers, and waits until every worker
  // has registered with the supervisor.
  static absl::StatusOr<std::unique_ptr<SluiceProcesses>> Start(SluiceProcessesOptions options);
  ~SluiceProcesses();
  SluiceProcesses(const SluiceProcesses&) = delete;
  SluiceProcesses& operator=(const SluiceProcesses&) = delete;

  std::shared_ptr<grpc::Channel> SupervisorChannel() const { return supervisor_channel_; }
  std::shared_ptr<grpc::Channel> WorkerChannel(int i) const { return workers_[i].channel; }
  const std::string& WorkerId(int i) const { return workers_[i].id; }
  int worker_count() const { return static_cast<int>(workers_.size()); }
  pid_t WorkerPid(int i) const { return workers_[i].process->pid(); }
  const std::string& SupervisorLog() const { return supervisor_log_; }

  // The body of GET /metrics.
  absl::StatusOr<std::string> ScrapeSupervisor() const;
  absl::StatusOr<std::string> ScrapeWorker(int i) const;

  // SIGTERM every process (workers first) and wait; an unclean exit is an
  // error naming the process.
  absl::Status Stop(absl::Duration grace);

 private:
  struct Process {
    std::string id;
    std::unique_ptr<testing::Subprocess> process;
    int metrics_port = 0;
    std::shared_ptr<grpc::Channel> channel;
  };
  SluiceProcesses() = default;

  std::unique_ptr<testing::Subprocess> supervisor_;
  int supervisor_metrics_port_ = 0;
  std::string supervisor_log_;
  std::shared_ptr<grpc::Channel> supervisor_channel_;
  std::vector<Process> workers_;
};

// Peak resident set size (VmHWM) of a live process, in bytes.
absl::StatusOr<int64_t> PeakRssBytes(pid_t pid);

}  // namespace bench
}  // namespace sluice

#endif  // SLUICE_BENCH_E2E_SLUICE_PROCESSES_H_
