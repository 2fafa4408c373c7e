#include "bench/e2e/sluice_processes.h"

#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/file_util.h"
#include "common/metrics/http_get.h"
#include "common/status_macros.h"
#include "sluice/v1/supervisor_service.grpc.pb.h"

namespace sluice {
namespace bench {
namespace {

constexpr absl::Duration kStartTimeout = absl::Seconds(30);

absl::StatusOr<std::string> Scrape(int port) {
  SLUICE_ASSIGN_OR_RETURN(metrics::HttpGetResponse response, metrics::HttpGet(port, "/metrics"));
  if (response.status != 200) {
    return absl::UnavailableError(
        absl::StrCat("GET /metrics on port ", port, ": HTTP ", response.status));
  }
  return std::move(response.body);
}

std::shared_ptr<grpc::Channel> Dial(int port) {
  return grpc::CreateChannel(absl::StrCat("127.0.0.1:", port), grpc::InsecureChannelCredentials());
}

}  // namespace

absl::StatusOr<std::unique_ptr<SluiceProcesses>> SluiceProcesses::Start(
    SluiceProcessesOptions options) {
  std::unique_ptr<SluiceProcesses> p(new SluiceProcesses());
  const std::string logs = absl::StrCat(options.dir, "/logs");
  const std::string deep = absl::StrCat("file://", options.dir, "/deep");
  SLUICE_RETURN_IF_ERROR(MakeDirs(logs));

  SLUICE_ASSIGN_OR_RETURN(const int supervisor_port, testing::PickFreePort());
  SLUICE_ASSIGN_OR_RETURN(p->supervisor_metrics_port_, testing::PickFreePort());
  testing::SubprocessOptions sopts;
  sopts.binary = options.supervisor_binary;
  sopts.name = "supervisor";
  sopts.args = {absl::StrCat("--listen=127.0.0.1:", supervisor_port),
                absl::StrCat("--data_dir=", options.dir, "/supervisor"),
                absl::StrCat("--deep_storage=", deep),
                absl::StrCat("--metrics_listen=127.0.0.1:", p->supervisor_metrics_port_)};
  sopts.args.insert(sopts.args.end(), options.supervisor_args.begin(),
                    options.supervisor_args.end());
  p->supervisor_log_ = absl::StrCat(logs, "/supervisor.log");
  sopts.stderr_path = p->supervisor_log_;
  sopts.stdout_path = absl::StrCat(logs, "/supervisor.stdout");
  SLUICE_ASSIGN_OR_RETURN(p->supervisor_, testing::Subprocess::Start(sopts));
  SLUICE_RETURN_IF_ERROR(
      testing::WaitForPort(supervisor_port, kStartTimeout, p->supervisor_.get()));
  SLUICE_RETURN_IF_ERROR(
      testing::WaitForPort(p->supervisor_metrics_port_, kStartTimeout, p->supervisor_.get()));
  p->supervisor_channel_ = Dial(supervisor_port);

  for (int i = 0; i < options.workers; ++i) {
    Process worker;
    worker.id = absl::StrCat("bench-worker-", i);
    SLUICE_ASSIGN_OR_RETURN(const int port, testing::PickFreePort());
    SLUICE_ASSIGN_OR_RETURN(worker.metrics_port, testing::PickFreePort());
    testing::SubprocessOptions wopts;
    wopts.binary = options.worker_binary;
    wopts.name = worker.id;
    wopts.args = {absl::StrCat("--listen=127.0.0.1:", port),
                  absl::StrCat("--data_dir=", options.dir, "/", worker.id),
                  absl::StrCat("--supervisor=127.0.0.1:", supervisor_port),
                  absl::StrCat("--deep_storage=", deep),
                  absl::StrCat("--worker_id=", worker.id),
                  absl::StrCat("--metrics_listen=127.0.0.1:", worker.metrics_port)};
    wopts.args.insert(wopts.args.end(), options.worker_args.begin(), options.worker_args.end());
    if (!options.worker_wrapper.empty()) {
      std::vector<std::string> args(options.worker_wrapper.begin() + 1,
                                    options.worker_wrapper.end());
      args.push_back(wopts.binary);
      args.insert(args.end(), wopts.args.begin(), wopts.args.end());
      wopts.binary = options.worker_wrapper.front();
      wopts.args = std::move(args);
    }
    wopts.stderr_path = absl::StrCat(logs, "/", worker.id, ".log");
    wopts.stdout_path = absl::StrCat(logs, "/", worker.id, ".stdout");
    SLUICE_ASSIGN_OR_RETURN(worker.process, testing::Subprocess::Start(wopts));
    SLUICE_RETURN_IF_ERROR(testing::WaitForPort(port, kStartTimeout, worker.process.get()));
    worker.channel = Dial(port);
    p->workers_.push_back(std::move(worker));
  }

  // Every worker registered: a spec submitted now can place all replicas.
  auto stub = v1::SupervisorService::NewStub(p->supervisor_channel_);
  const absl::Time deadline = absl::Now() + kStartTimeout;
  while (true) {
    grpc::ClientContext ctx;
    ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
    v1::ListWorkersResponse response;
    const grpc::Status status = stub->ListWorkers(&ctx, v1::ListWorkersRequest(), &response);
    int alive = 0;
    if (status.ok()) {
      for (const v1::WorkerInfo& w : response.workers()) alive += w.alive() ? 1 : 0;
    }
    if (alive >= options.workers) break;
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat(alive, " of ", options.workers, " workers registered within ",
                       absl::FormatDuration(kStartTimeout), "; logs in ", logs));
    }
    absl::SleepFor(absl::Milliseconds(50));
  }
  return p;
}

SluiceProcesses::~SluiceProcesses() { Stop(absl::Seconds(20)).IgnoreError(); }

absl::Status SluiceProcesses::Stop(absl::Duration grace) {
  absl::Status first;
  auto stop = [&](testing::Subprocess* process) {
    if (process == nullptr || process->exit_status() != nullptr) return;
    absl::StatusOr<testing::ExitStatus> exit = process->Stop(grace);
    if (!exit.ok()) {
      first.Update(exit.status());
    } else if (!exit->success()) {
      first.Update(absl::InternalError(absl::StrCat(
          process->name(), " ended with ", exit->ToString(), "; log ", process->stderr_path())));
    }
  };
  for (Process& w : workers_) stop(w.process.get());
  stop(supervisor_.get());
  return first;
}

absl::StatusOr<std::string> SluiceProcesses::ScrapeSupervisor() const {
  return Scrape(supervisor_metrics_port_);
}

absl::StatusOr<std::string> SluiceProcesses::ScrapeWorker(int i) const {
  return Scrape(workers_[i].metrics_port);
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
