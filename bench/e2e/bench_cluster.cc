#include "bench/e2e/bench_cluster.h"

#include <fstream>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/auth/grpc_auth.h"
#include "common/metrics/http_get.h"
#include "common/status_macros.h"
#include "tools/cluster/free_ports.h"

namespace sluice {
namespace bench {
namespace {

constexpr absl::Duration kStartTimeout = absl::Seconds(60);

// With authentication on, the endpoint needs a reader's bearer token.
absl::StatusOr<std::string> Scrape(int port, const cluster::ProcessCluster& cluster) {
  std::string token;
  if (const std::string file = cluster.token_file("reader"); !file.empty()) {
    SLUICE_ASSIGN_OR_RETURN(token, auth::ReadTokenFile(file));
  }
  SLUICE_ASSIGN_OR_RETURN(metrics::HttpGetResponse response,
                          metrics::HttpGet(port, "/metrics", token));
  if (response.status != 200) {
    return absl::UnavailableError(
        absl::StrCat("GET /metrics on port ", port, ": HTTP ", response.status));
  }
  return std::move(response.body);
}

}  // namespace

absl::StatusOr<std::unique_ptr<BenchCluster>> BenchCluster::Start(BenchClusterOptions options) {
  std::unique_ptr<BenchCluster> bench(new BenchCluster());
  SLUICE_ASSIGN_OR_RETURN(std::vector<int> ports, cluster::PickStablePorts(1 + options.workers));
  bench->supervisor_metrics_port_ = ports[0];
  cluster::ProcessClusterOptions o;
  o.root_dir = options.root_dir;
  o.workers = options.workers;
  o.topics = options.topics;
  o.external_bootstrap_servers = options.external_bootstrap_servers;
  o.supervisor_binary = options.supervisor_binary;
  o.task_binary = options.task_binary;
  bench->external_broker_pid_ = options.external_broker_pid;
  // Quick handoff: the tasks (and the run) end soon after the last publish.
  o.handoff_period_ms = 200;
  o.handoff_poll_ms = 100;
  o.extra_flags[cluster::kSupervisor] = {absl::StrCat("--metrics_listen=127.0.0.1:", ports[0])};
  if (options.classic_checkpoints) {
    o.extra_flags[cluster::kSupervisor].push_back("--pauseless_checkpoints=false");
  }
  for (int i = 0; i < options.workers; ++i) {
    bench->worker_metrics_ports_.push_back(ports[1 + i]);
    o.extra_flags[cluster::WorkerName(i)] = {
        absl::StrCat("--metrics_listen=127.0.0.1:", ports[1 + i])};
    if (options.classic_checkpoints) {
      o.extra_flags[cluster::WorkerName(i)].push_back("--early_checkpoint_fraction=0");
    }
    for (const std::string& flag : options.worker_flags) {
      o.extra_flags[cluster::WorkerName(i)].push_back(flag);
    }
  }
  SLUICE_ASSIGN_OR_RETURN(bench->cluster_, cluster::ProcessCluster::Create(std::move(o)));
  SLUICE_RETURN_IF_ERROR(bench->cluster_->Start());
  SLUICE_RETURN_IF_ERROR(bench->cluster_->WaitHealthy(kStartTimeout));
  return bench;
}

absl::Status BenchCluster::RestartWorkers() {
  for (int i = 0; i < worker_count(); ++i) {
    SLUICE_RETURN_IF_ERROR(cluster_->Restart(cluster::WorkerName(i)));
  }
  return cluster_->WaitHealthy(kStartTimeout);
}

absl::StatusOr<std::string> BenchCluster::ScrapeSupervisor() const {
  return Scrape(supervisor_metrics_port_, *cluster_);
}

absl::StatusOr<std::string> BenchCluster::ScrapeWorker(int i) const {
  return Scrape(worker_metrics_ports_[i], *cluster_);
}

absl::StatusOr<int64_t> PeakRssBytes(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  if (!in) return absl::NotFoundError(absl::StrCat("no /proc/", pid, "/status"));
  std::string line;
  while (std::getline(in, line)) {
    absl::string_view rest = line;
    if (!absl::ConsumePrefix(&rest, "VmHWM:")) continue;
    rest = absl::StripAsciiWhitespace(rest);
    absl::ConsumeSuffix(&rest, "kB");
    int64_t kb = 0;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(rest), &kb)) break;
    return kb * 1024;
  }
  return absl::InternalError(absl::StrCat("no VmHWM line in /proc/", pid, "/status"));
}

}  // namespace bench
}  // namespace sluice
