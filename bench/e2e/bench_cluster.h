// The processes of the benchmark: tools/cluster's ProcessCluster (the dev
// broker, a supervisor and N task workers on loopback), each sluice process
// with a Prometheus endpoint, plus what a run reads from them: stubs, scrapes,
// each worker's peak RSS. The broker (and the topics pre-loaded into it) lives
// for the whole benchmark; RestartWorkers() gives every run fresh worker
// processes, so that a worker's VmHWM belongs to one run.
//
//   SLUICE_ASSIGN_OR_RETURN(auto bench, BenchCluster::Start(options));
//   ... preload bench->bootstrap_servers() ...
//   SLUICE_RETURN_IF_ERROR(bench->RestartWorkers());
//   auto stub = bench->SupervisorStub();
//   SLUICE_ASSIGN_OR_RETURN(std::string text, bench->ScrapeWorker(0));
//
// Call Start and RestartWorkers from the main thread (children die with the
// thread that started them). Not thread-safe otherwise.
#ifndef SLUICE_BENCH_E2E_BENCH_CLUSTER_H_
#define SLUICE_BENCH_E2E_BENCH_CLUSTER_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tools/cluster/process_cluster.h"

namespace sluice {
namespace bench {

struct BenchClusterOptions {
  // Everything of the benchmark goes under here (see ProcessCluster).
  std::string root_dir;
  int workers = 2;
  // "NAME:PARTITIONS" (dev broker only).
  std::vector<std::string> topics;
  // Kafka outside the cluster (real Kafka, --broker=real): its bootstrap
  // servers and its process (for the broker's CPU per record).
  std::string external_bootstrap_servers;
  pid_t external_broker_pid = -1;
  // Every checkpoint round pauses the replicas (the supervisor's
  // --pauseless_checkpoints=false, the workers' --early_checkpoint_fraction=0).
  bool classic_checkpoints = false;
  // Extra flags of every worker (e.g. --capacity, --ingestion_memory_bytes).
  std::vector<std::string> worker_flags;
  // The supervisor and task worker binaries; empty: the ones in the runfiles
  // (ProcessClusterOptions). The librdkafka comparison starts a second set.
  std::string supervisor_binary;
  std::string task_binary;
};

class BenchCluster {
 public:
  // Starts every process and waits until all are healthy.
  static absl::StatusOr<std::unique_ptr<BenchCluster>> Start(BenchClusterOptions options);
  BenchCluster(const BenchCluster&) = delete;
  BenchCluster& operator=(const BenchCluster&) = delete;

  // Restarts every worker (same address and data directory) and waits until
  // they are registered again.
  absl::Status RestartWorkers();
  // SIGTERM to everything; an unclean exit is an error.
  absl::Status Stop() { return cluster_->StopAll(); }

  std::string bootstrap_servers() const { return cluster_->bootstrap_servers(); }
  std::unique_ptr<v1::SupervisorService::Stub> SupervisorStub() {
    return cluster_->SupervisorStub();
  }
  std::unique_ptr<v1::TaskService::Stub> WorkerStub(int i) { return cluster_->WorkerStub(i); }
  int worker_count() const { return static_cast<int>(worker_metrics_ports_.size()); }
  // The worker's --worker_id.
  std::string WorkerId(int i) const { return cluster::WorkerName(i); }
  pid_t WorkerPid(int i) const { return cluster_->pid(cluster::WorkerName(i)); }
  pid_t BrokerPid() const {
    return external_broker_pid_ > 0 ? external_broker_pid_ : cluster_->pid(cluster::kBroker);
  }
  std::string SupervisorLog() const { return cluster_->log_path(cluster::kSupervisor); }

  // The body of GET /metrics.
  absl::StatusOr<std::string> ScrapeSupervisor() const;
  absl::StatusOr<std::string> ScrapeWorker(int i) const;

 private:
  BenchCluster() = default;

  std::unique_ptr<cluster::ProcessCluster> cluster_;
  int supervisor_metrics_port_ = 0;
  std::vector<int> worker_metrics_ports_;
  pid_t external_broker_pid_ = -1;
};

// Peak resident set size (VmHWM) of a live process, in bytes.
absl::StatusOr<int64_t> PeakRssBytes(pid_t pid);

}  // namespace bench
}  // namespace sluice

#endif  // SLUICE_BENCH_E2E_BENCH_CLUSTER_H_
