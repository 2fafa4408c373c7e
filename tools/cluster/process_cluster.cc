#include "tools/cluster/process_cluster.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "common/auth/grpc_auth.h"
#include "common/file_util.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "tools/cluster/binaries.h"
#include "tools/cluster/free_ports.h"

namespace sluice {
namespace cluster {
namespace {

constexpr absl::Duration kProbeTimeout = absl::Seconds(1);
constexpr absl::Duration kBrokerStartTimeout = absl::Seconds(30);
constexpr absl::Duration kPollInterval = absl::Milliseconds(50);
// How long SupervisorStub() waits for a leader among several supervisors.
constexpr absl::Duration kLeaderWait = absl::Seconds(30);

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::string Tail(const std::string& path, size_t bytes) {
  std::string all = ReadWholeFile(path);
  if (all.size() > bytes) all = "..." + all.substr(all.size() - bytes);
  return all;
}

// grpc.health.v1.Health/Check of `service` ("": the whole server).
absl::Status CheckServing(const std::shared_ptr<grpc::Channel>& channel,
                          const std::string& service = "") {
  auto stub = grpc::health::v1::Health::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + kProbeTimeout));
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(service);
  grpc::health::v1::HealthCheckResponse response;
  const grpc::Status status = stub->Check(&context, request, &response);
  if (!status.ok()) {
    return absl::UnavailableError(absl::StrCat("health check: ", status.error_message()));
  }
  if (response.status() != grpc::health::v1::HealthCheckResponse::SERVING) {
    return absl::UnavailableError(absl::StrCat(
        "health: ", grpc::health::v1::HealthCheckResponse::ServingStatus_Name(response.status())));
  }
  return absl::OkStatus();
}

}  // namespace

std::string WorkerName(int index) { return absl::StrCat("worker-", index); }

std::string SupervisorName(int index) {
  return index == 0 ? std::string(kSupervisor) : absl::StrCat(kSupervisor, "-", index);
}

absl::StatusOr<std::unique_ptr<ProcessCluster>> ProcessCluster::Create(
    ProcessClusterOptions options) {
  if (options.root_dir.empty() || options.root_dir[0] != '/') {
    return absl::InvalidArgumentError(
        absl::StrCat("root_dir must be an absolute path, not \"", options.root_dir, "\""));
  }
  while (options.root_dir.size() > 1 && options.root_dir.back() == '/') {
    options.root_dir.pop_back();
  }
  if (options.workers < 0 || options.workers > 64) {
    return absl::InvalidArgumentError(
        absl::StrCat("workers must be in [0, 64], not ", options.workers));
  }
  if (options.supervisors < 1 || options.supervisors > 9) {
    return absl::InvalidArgumentError(
        absl::StrCat("supervisors must be in [1, 9], not ", options.supervisors));
  }
  if (options.brokers < 1 || options.brokers > 32) {
    return absl::InvalidArgumentError(
        absl::StrCat("brokers must be in [1, 32], not ", options.brokers));
  }
  if (options.worker_capacity < 1) {
    return absl::InvalidArgumentError("worker_capacity must be >= 1");
  }
  const bool external = !options.external_bootstrap_servers.empty();
  for (auto [binary, path] : {std::pair{&options.devbroker_binary, kDevBrokerBinary},
                              std::pair{&options.supervisor_binary, kSupervisorBinary},
                              std::pair{&options.task_binary, kTaskBinary}}) {
    if (!binary->empty()) continue;
    if (external && path == kDevBrokerBinary) continue;
    absl::StatusOr<std::string> found = FindSluiceBinary(path);
    if (!found.ok()) return found.status();
    *binary = *found;
  }

  std::unique_ptr<ProcessCluster> cluster(new ProcessCluster(std::move(options)));
  const ProcessClusterOptions& o = cluster->options_;
  for (const std::string& dir :
       {o.root_dir + "/logs", o.root_dir + "/deep-storage", cluster->data_dir(kBroker)}) {
    if (absl::Status s = MakeDirs(dir); !s.ok()) return s;
  }
  for (int i = 0; i < o.supervisors; ++i) {
    if (absl::Status s = MakeDirs(cluster->data_dir(SupervisorName(i))); !s.ok()) return s;
  }
  for (int i = 0; i < o.workers; ++i) {
    if (absl::Status s = MakeDirs(cluster->data_dir(WorkerName(i))); !s.ok()) return s;
  }

  absl::StatusOr<int> broker_port = PickStablePortRun(o.brokers);
  if (!broker_port.ok()) return broker_port.status();
  cluster->broker_base_port_ = *broker_port;
  absl::StatusOr<std::vector<int>> ports = PickStablePorts(o.supervisors + o.workers);
  if (!ports.ok()) return ports.status();
  // A port of the broker run may have been picked again; pick until disjoint.
  for (int& port : *ports) {
    while (port >= *broker_port && port < *broker_port + o.brokers) {
      absl::StatusOr<std::vector<int>> other = PickStablePorts(1);
      if (!other.ok()) return other.status();
      port = (*other)[0];
    }
  }
  for (int i = 0; i < o.supervisors; ++i) {
    cluster->supervisor_addresses_.push_back(absl::StrCat("127.0.0.1:", (*ports)[i]));
  }
  for (int i = 0; i < o.workers; ++i) {
    cluster->worker_addresses_.push_back(
        absl::StrCat("127.0.0.1:", (*ports)[o.supervisors + i]));
  }

  std::vector<std::string> auth_supervisor = {"--insecure_no_auth"};
  std::vector<std::vector<std::string>> auth_workers(o.workers, {"--insecure_no_auth"});
  if (o.authentication) {
    std::vector<std::string> ids;
    for (int i = 0; i < o.workers; ++i) ids.push_back(WorkerName(i));
    absl::StatusOr<ClusterCredentials> creds =
        MakeClusterCredentials(o.root_dir + "/auth", ids, cluster->worker_addresses_);
    if (!creds.ok()) return creds.status();
    cluster->credentials_ = *std::move(creds);
    const ClusterCredentials& c = cluster->credentials_;
    auth_supervisor = {"--auth_tokens_file=" + c.tokens_file,
                       "--auth_policy_file=" + c.policy_file,
                       "--auth_token_file=" + c.token_files.at("supervisor")};
    for (int i = 0; i < o.workers; ++i) {
      auth_workers[i] = {"--auth_tokens_file=" + c.tokens_file,
                         "--auth_policy_file=" + c.policy_file,
                         "--auth_token_file=" + c.token_files.at(WorkerName(i))};
    }
  }

  auto extra = [&o](const std::string& key) {
    auto it = o.extra_flags.find(key);
    return it == o.extra_flags.end() ? std::vector<std::string>() : it->second;
  };
  auto add = [](std::vector<std::string>* args, const std::vector<std::string>& more) {
    args->insert(args->end(), more.begin(), more.end());
  };

  absl::MutexLock lock(&cluster->mu_);
  Process broker;
  broker.name = kBroker;
  broker.binary = o.devbroker_binary;
  broker.args = {absl::StrCat("--brokers=", o.brokers), absl::StrCat("--base_port=", *broker_port),
                 "--bootstrap_file=" + cluster->data_dir(kBroker) + "/bootstrap",
                 "--control_fifo=" + cluster->broker_control_fifo(), "--control_stdin=false"};
  for (const std::string& topic : o.topics) broker.args.push_back("--topic=" + topic);
  add(&broker.args, extra(kBroker));
  cluster->processes_.push_back(std::move(broker));

  for (int i = 0; i < o.supervisors; ++i) {
    Process supervisor;
    supervisor.name = SupervisorName(i);
    supervisor.address = cluster->supervisor_addresses_[i];
    supervisor.supervisor = true;
    supervisor.binary = o.supervisor_binary;
    supervisor.args = {"--listen=" + supervisor.address,
                       "--data_dir=" + cluster->data_dir(supervisor.name),
                       "--deep_storage=" + cluster->deep_storage_uri(),
                       absl::StrCat("--heartbeat_interval_ms=", o.heartbeat_interval_ms),
                       absl::StrCat("--min_worker_lost_timeout_ms=", o.min_worker_lost_timeout_ms),
                       absl::StrCat("--handoff_period_ms=", o.handoff_period_ms),
                       absl::StrCat("--shutdown_grace_seconds=", o.shutdown_grace_seconds)};
    if (o.supervisors > 1) {
      add(&supervisor.args, {"--leader_election", "--advertise_address=" + supervisor.address,
                             "--supervisor_id=" + supervisor.name});
    }
    add(&supervisor.args, auth_supervisor);
    add(&supervisor.args, extra(kSupervisor));
    if (supervisor.name != kSupervisor) add(&supervisor.args, extra(supervisor.name));
    cluster->processes_.push_back(std::move(supervisor));
  }

  for (int i = 0; i < o.workers; ++i) {
    Process worker;
    worker.name = WorkerName(i);
    worker.address = cluster->worker_addresses_[i];
    worker.binary = o.task_binary;
    worker.args = {"--listen=" + worker.address,
                   "--data_dir=" + cluster->data_dir(worker.name),
                   "--supervisor=" + absl::StrJoin(cluster->supervisor_addresses_, ","),
                   "--deep_storage=" + cluster->deep_storage_uri(),
                   "--worker_id=" + worker.name,
                   absl::StrCat("--capacity=", o.worker_capacity),
                   external ? "--kafka_cluster=kafka" : "--kafka_cluster=dev",
                   absl::StrCat("--heartbeat_interval_ms=", o.heartbeat_interval_ms),
                   absl::StrCat("--handoff_poll_ms=", o.handoff_poll_ms),
                   absl::StrCat("--shutdown_grace_seconds=", o.shutdown_grace_seconds)};
    add(&worker.args, auth_workers[i]);
    add(&worker.args, extra("worker"));
    add(&worker.args, extra(worker.name));
    cluster->processes_.push_back(std::move(worker));
  }
  return cluster;
}

ProcessCluster::~ProcessCluster() {
  absl::MutexLock lock(&mu_);
  // Workers first: a supervisor that outlives them only logs lost workers.
  for (auto it = processes_.rbegin(); it != processes_.rend(); ++it) {
    if (it->subprocess != nullptr) (void)it->subprocess->Kill();
  }
}

std::vector<std::string> ProcessCluster::names() const {
  std::vector<std::string> out = {kBroker};
  for (int i = 0; i < options_.supervisors; ++i) out.push_back(SupervisorName(i));
  for (int i = 0; i < options_.workers; ++i) out.push_back(WorkerName(i));
  return out;
}

std::string ProcessCluster::worker_address(int index) const {
  return index >= 0 && index < static_cast<int>(worker_addresses_.size()) ? worker_addresses_[index]
                                                                          : "";
}

std::string ProcessCluster::deep_storage_uri() const {
  if (!options_.deep_storage_uri.empty()) return options_.deep_storage_uri;
  return absl::StrCat("file://", options_.root_dir, "/deep-storage");
}

std::string ProcessCluster::data_dir(absl::string_view name) const {
  return absl::StrCat(options_.root_dir, "/", name);
}

std::string ProcessCluster::broker_control_fifo() const { return data_dir(kBroker) + "/control"; }

std::string ProcessCluster::bootstrap_servers() const {
  absl::MutexLock lock(&mu_);
  return bootstrap_servers_;
}

std::string ProcessCluster::log_path(absl::string_view name) const {
  absl::MutexLock lock(&mu_);
  const Process* p = Find(name);
  return p == nullptr ? "" : p->log_path;
}

std::string ProcessCluster::LogTail(absl::string_view name, size_t bytes) const {
  return Tail(log_path(name), bytes);
}

ProcessCluster::Process* ProcessCluster::Find(absl::string_view name) {
  for (Process& p : processes_) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

const ProcessCluster::Process* ProcessCluster::Find(absl::string_view name) const {
  for (const Process& p : processes_) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

absl::Status ProcessCluster::StartLocked(Process& process) {
  ++process.starts;
  process.log_path = process.starts == 1
                         ? absl::StrCat(options_.root_dir, "/logs/", process.name, ".log")
                         : absl::StrCat(options_.root_dir, "/logs/", process.name, ".restart-",
                                        process.starts - 1, ".log");
  testing::SubprocessOptions sub;
  sub.binary = process.binary;
  sub.args = process.args;
  sub.env = options_.env;
  sub.name = process.name;
  sub.stderr_path = process.log_path;
  sub.die_with_parent = options_.die_with_parent;
  if (process.name == kBroker) {
    // Its stdout carries the bootstrap list and the replies to control
    // commands (BrokerCommand reads them). A stale bootstrap file (left by a
    // killed broker) must not pass for the new one's.
    sub.stdout_path = data_dir(kBroker) + "/stdout";
    unlink((data_dir(kBroker) + "/bootstrap").c_str());
    bootstrap_servers_.clear();
  } else {
    sub.stdout_path = "/dev/null";
  }
  process.subprocess.reset();
  process.last_start = absl::Now();
  absl::StatusOr<std::unique_ptr<testing::Subprocess>> started = testing::Subprocess::Start(sub);
  if (!started.ok()) {
    return absl::Status(started.status().code(), absl::StrCat("cannot start ", process.name, ": ",
                                                              started.status().message()));
  }
  process.subprocess = *std::move(started);
  process.should_run = true;
  return absl::OkStatus();
}

absl::Status ProcessCluster::WaitForBrokerLocked(Process& broker, absl::Time deadline) {
  while (true) {
    if (ProbeLocked(broker, nullptr).ok()) return absl::OkStatus();
    if (!broker.subprocess->Running()) return absl::AbortedError(DiedMessage(broker));
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          "the dev broker wrote no bootstrap file; log tail:\n", Tail(broker.log_path, 4000)));
    }
    absl::SleepFor(kPollInterval);
  }
}

absl::Status ProcessCluster::Start() {
  absl::MutexLock lock(&mu_);
  for (const Process& p : processes_) {
    if (p.starts > 0) return absl::FailedPreconditionError("the cluster was already started");
  }
  Process& broker = processes_[0];
  if (!options_.external_bootstrap_servers.empty()) {
    bootstrap_servers_ = options_.external_bootstrap_servers;
  } else {
    if (absl::Status s = StartLocked(broker); !s.ok()) return s;
    if (absl::Status s = WaitForBrokerLocked(broker, absl::Now() + kBrokerStartTimeout); !s.ok()) {
      return s;
    }
  }
  for (size_t i = 1; i < processes_.size(); ++i) {
    if (absl::Status s = StartLocked(processes_[i]); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status ProcessCluster::ProbeLocked(Process& process, const v1::ListWorkersResponse* workers) {
  if (process.name == kBroker) {
    const std::string content = ReadWholeFile(data_dir(kBroker) + "/bootstrap");
    if (content.empty() || content.back() != '\n') {
      return absl::UnavailableError("no bootstrap file yet");
    }
    bootstrap_servers_ = std::string(absl::StripSuffix(content, "\n"));
    return absl::OkStatus();
  }
  const std::string& address = process.address;
  if (absl::Status s = CheckServing(Channel(address)); !s.ok()) return s;
  if (process.supervisor) return absl::OkStatus();
  if (workers == nullptr) {
    return absl::UnavailableError(options_.supervisors > 1 ? "no leading supervisor answers"
                                                           : "the supervisor does not answer");
  }
  for (const v1::WorkerInfo& w : workers->workers()) {
    if (w.worker_id() != process.name) continue;
    if (!w.alive()) return absl::UnavailableError("registered but not alive");
    if (w.start_time_ms() < absl::ToUnixMillis(process.last_start)) {
      return absl::UnavailableError("not yet registered again since its restart");
    }
    if (w.address() != address) {
      return absl::FailedPreconditionError(
          absl::StrCat("registered with address ", w.address(), ", expected ", address));
    }
    return absl::OkStatus();
  }
  return absl::UnavailableError("not registered with the supervisor");
}

std::string ProcessCluster::DiedMessage(Process& process) {
  const testing::ExitStatus* exit = process.subprocess->exit_status();
  return absl::StrCat(process.name, " (pid ", process.subprocess->pid(), ") ended unexpectedly (",
                      exit != nullptr ? exit->ToString() : "unknown", "); log ", process.log_path,
                      ", tail:\n", Tail(process.log_path, 3000));
}

absl::Status ProcessCluster::WaitHealthy(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    std::vector<std::string> waiting;
    {
      absl::MutexLock lock(&mu_);
      for (Process& p : processes_) {
        if (p.should_run && !p.subprocess->Running()) return absl::AbortedError(DiedMessage(p));
      }
      // The supervisor that lists the workers: the only one, or the leader.
      const Process* lister = nullptr;
      if (options_.supervisors == 1) {
        if (Find(kSupervisor)->should_run) lister = Find(kSupervisor);
      } else {
        std::vector<const Process*> leaders;
        bool any_should_run = false;
        for (const Process& p : processes_) {
          if (!p.supervisor || !p.should_run) continue;
          any_should_run = true;
          if (CheckServing(Channel(p.address), kSupervisorServiceName).ok()) {
            leaders.push_back(&p);
          }
        }
        if (leaders.size() == 1) {
          lister = leaders[0];
        } else if (any_should_run) {
          std::vector<std::string> names;
          for (const Process* p : leaders) names.push_back(p->name);
          waiting.push_back(leaders.empty()
                                ? std::string("a leader (no supervisor leads yet)")
                                : absl::StrCat("exactly one leader (several claim to lead: ",
                                               absl::StrJoin(names, ", "), ")"));
        }
      }
      std::optional<v1::ListWorkersResponse> workers;
      if (lister != nullptr) {
        auto stub = v1::SupervisorService::NewStub(Channel(lister->address));
        grpc::ClientContext context;
        context.set_deadline(absl::ToChronoTime(absl::Now() + kProbeTimeout));
        v1::ListWorkersResponse response;
        if (stub->ListWorkers(&context, v1::ListWorkersRequest(), &response).ok()) {
          workers = std::move(response);
        }
      }
      for (Process& p : processes_) {
        if (!p.should_run) continue;
        absl::Status probe = ProbeLocked(p, workers ? &*workers : nullptr);
        if (!probe.ok()) waiting.push_back(absl::StrCat(p.name, " (", probe.message(), ")"));
      }
    }
    if (waiting.empty()) return absl::OkStatus();
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          "not healthy after ", absl::FormatDuration(timeout), ": ", absl::StrJoin(waiting, "; ")));
    }
    absl::SleepFor(kPollInterval);
  }
}

absl::Status ProcessCluster::StopLocked(Process& process, absl::Duration grace, std::string* how) {
  process.should_run = false;
  if (process.subprocess == nullptr) {
    *how = "never started";
    return absl::OkStatus();
  }
  absl::StatusOr<testing::ExitStatus> exit = process.subprocess->Stop(grace);
  if (!exit.ok()) return exit.status();
  *how = exit->ToString();
  if (!exit->success()) {
    return absl::InternalError(absl::StrCat(process.name, " did not stop cleanly: ", *how));
  }
  return absl::OkStatus();
}

absl::Status ProcessCluster::Kill(absl::string_view name, int signal) {
  absl::MutexLock lock(&mu_);
  Process* p = Find(name);
  if (p == nullptr) return absl::NotFoundError(absl::StrCat("no process named \"", name, "\""));
  if (p->subprocess == nullptr || !p->subprocess->Running()) {
    return absl::FailedPreconditionError(absl::StrCat(name, " is not running"));
  }
  p->should_run = false;
  if (signal == SIGKILL) return p->subprocess->Kill().status();
  if (signal == SIGTERM) return p->subprocess->Stop(options_.stop_grace).status();
  if (signal == SIGCONT) p->should_run = true;
  if (signal == SIGSTOP) p->should_run = true;  // Still alive, only paused.
  return p->subprocess->Signal(signal);
}

absl::StatusOr<testing::ExitStatus> ProcessCluster::WaitForExit(absl::string_view name,
                                                                 absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      Process* p = Find(name);
      if (p == nullptr) return absl::NotFoundError(absl::StrCat("no process named \"", name, "\""));
      if (p->subprocess == nullptr) {
        return absl::FailedPreconditionError(absl::StrCat(name, " was never started"));
      }
      if (!p->subprocess->Running()) {
        p->should_run = false;
        return *p->subprocess->exit_status();
      }
    }
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          name, " still runs after ", absl::FormatDuration(timeout), "; log tail:\n",
          LogTail(name, 2000)));
    }
    absl::SleepFor(kPollInterval);
  }
}

absl::Status ProcessCluster::Restart(absl::string_view name) {
  absl::MutexLock lock(&mu_);
  Process* p = Find(name);
  if (p == nullptr) return absl::NotFoundError(absl::StrCat("no process named \"", name, "\""));
  if (p->name == kBroker && !options_.external_bootstrap_servers.empty()) {
    return absl::FailedPreconditionError("Kafka runs outside this cluster");
  }
  if (p->subprocess != nullptr && p->subprocess->Running()) {
    std::string how;
    (void)StopLocked(*p, options_.stop_grace,
                     &how);  // However it ends, it is replaced.
  }
  return StartLocked(*p);
}

absl::Status ProcessCluster::StopAll() {
  {
    absl::MutexLock lock(&channels_mu_);
    channels_.clear();
  }
  absl::MutexLock lock(&mu_);
  std::vector<std::string> problems;
  // Processes that died on their own before this call.
  for (Process& p : processes_) {
    if (p.should_run && p.subprocess != nullptr && !p.subprocess->Running()) {
      problems.push_back(
          absl::StrCat(p.name, " had already ended: ", p.subprocess->exit_status()->ToString(),
                       " (log ", p.log_path, ")"));
      p.should_run = false;
    }
  }
  // Phases: the supervisor, then every worker at once, then the broker. The
  // supervisor first: once its workers are gone it would spend its shutdown
  // in calls to them (a checkpoint or roll-over round retries a dead worker
  // for chatTimeout x chatRetries); the workers stop quickly either way.
  std::vector<std::vector<Process*>> phases(3);
  for (Process& p : processes_) {
    if (p.subprocess == nullptr || !p.subprocess->Running()) continue;
    phases[p.supervisor ? 0 : (p.name == kBroker ? 2 : 1)].push_back(&p);
  }
  for (const std::vector<Process*>& phase : phases) {
    for (Process* p : phase) (void)p->subprocess->Signal(SIGTERM);
    const absl::Time deadline = absl::Now() + options_.stop_grace;
    for (Process* p : phase) {
      p->should_run = false;
      absl::StatusOr<testing::ExitStatus> exit =
          p->subprocess->Wait(std::max(absl::ZeroDuration(), deadline - absl::Now()));
      if (!exit.ok()) {
        exit = p->subprocess->Kill();
        problems.push_back(absl::StrCat(p->name, " ignored SIGTERM for ",
                                        absl::FormatDuration(options_.stop_grace),
                                        " and was killed (log ", p->log_path, ")"));
        continue;
      }
      if (!exit->success()) {
        problems.push_back(
            absl::StrCat(p->name, " stopped with ", exit->ToString(), " (log ", p->log_path, ")"));
      }
    }
  }
  if (problems.empty()) return absl::OkStatus();
  return absl::InternalError(absl::StrCat("stopping the cluster: ", absl::StrJoin(problems, "; ")));
}

absl::Status ProcessCluster::CheckAlive() {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> dead;
  for (Process& p : processes_) {
    if (p.should_run && p.subprocess != nullptr && !p.subprocess->Running()) {
      dead.push_back(DiedMessage(p));
    }
  }
  if (dead.empty()) return absl::OkStatus();
  return absl::AbortedError(absl::StrJoin(dead, "\n"));
}

bool ProcessCluster::Running(absl::string_view name) {
  absl::MutexLock lock(&mu_);
  Process* p = Find(name);
  return p != nullptr && p->subprocess != nullptr && p->subprocess->Running();
}

pid_t ProcessCluster::pid(absl::string_view name) const {
  absl::MutexLock lock(&mu_);
  const Process* p = Find(name);
  return p != nullptr && p->subprocess != nullptr ? p->subprocess->pid() : -1;
}

std::shared_ptr<grpc::Channel> ProcessCluster::Channel(const std::string& address) {
  absl::MutexLock lock(&channels_mu_);
  std::shared_ptr<grpc::Channel>& channel = channels_[address];
  if (channel == nullptr) {
    // Reconnect soon after a process comes back (the default backoff grows
    // to minutes), so probes of a restarted process see it at once.
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
    args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
    channel = auth::NewChannel(address, grpc::InsecureChannelCredentials(),
                               auth::ClientAuth{credentials_.admin_token}, args);
  }
  return channel;
}

std::string ProcessCluster::token_file(const std::string& principal) const {
  auto it = credentials_.token_files.find(principal);
  return it == credentials_.token_files.end() ? "" : it->second;
}

absl::StatusOr<std::string> ProcessCluster::LeaderSupervisor(absl::Duration timeout) {
  const std::string service = options_.supervisors == 1 ? "" : kSupervisorServiceName;
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    std::vector<std::pair<std::string, std::string>> running;  // name, address
    {
      absl::MutexLock lock(&mu_);
      for (Process& p : processes_) {
        if (p.supervisor && p.subprocess != nullptr && p.subprocess->Running()) {
          running.emplace_back(p.name, p.address);
        }
      }
    }
    std::vector<std::string> leaders;
    std::vector<std::string> answers;
    for (const auto& [name, address] : running) {
      absl::Status serving = CheckServing(Channel(address), service);
      if (serving.ok()) leaders.push_back(name);
      answers.push_back(absl::StrCat(name, ": ", serving.ok() ? "leads" : serving.message()));
    }
    if (leaders.size() == 1) return leaders[0];
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          "no single leading supervisor after ", absl::FormatDuration(timeout), " (",
          running.empty() ? "none runs" : absl::StrJoin(answers, "; "), ")"));
    }
    absl::SleepFor(kPollInterval);
  }
}

bool ProcessCluster::Leads(absl::string_view name) {
  for (int i = 0; i < options_.supervisors; ++i) {
    if (SupervisorName(i) != name) continue;
    return CheckServing(Channel(supervisor_addresses_[i]),
                        options_.supervisors == 1 ? "" : kSupervisorServiceName)
        .ok();
  }
  return false;
}

std::unique_ptr<v1::SupervisorService::Stub> ProcessCluster::SupervisorStub() {
  if (options_.supervisors == 1) {
    return v1::SupervisorService::NewStub(Channel(supervisor_addresses_[0]));
  }
  absl::StatusOr<std::string> leader = LeaderSupervisor(kLeaderWait);
  return SupervisorStub(leader.ok() ? *leader : std::string(kSupervisor));
}

std::unique_ptr<v1::SupervisorService::Stub> ProcessCluster::SupervisorStub(
    absl::string_view name) {
  std::string address = supervisor_addresses_[0];
  for (int i = 0; i < options_.supervisors; ++i) {
    if (SupervisorName(i) == name) address = supervisor_addresses_[i];
  }
  return v1::SupervisorService::NewStub(Channel(address));
}

std::unique_ptr<v1::TaskService::Stub> ProcessCluster::WorkerStub(int index) {
  return v1::TaskService::NewStub(Channel(worker_address(index)));
}

absl::StatusOr<std::string> ProcessCluster::BrokerCommand(absl::string_view command,
                                                          absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  Process& broker = processes_[0];
  if (broker.subprocess == nullptr || !broker.subprocess->Running()) {
    return absl::FailedPreconditionError("the dev broker is not running");
  }
  const absl::Time deadline = absl::Now() + timeout;
  const std::string stdout_path = data_dir(kBroker) + "/stdout";
  // The control loop creates the FIFO after the bootstrap file: wait for it.
  int fd = -1;
  while ((fd = open(broker_control_fifo().c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC)) < 0) {
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          "cannot open the broker's control FIFO ", broker_control_fifo(), ": ", strerror(errno)));
    }
    absl::SleepFor(absl::Milliseconds(10));
  }
  const size_t before = ReadWholeFile(stdout_path).size();
  const std::string line = absl::StrCat(command, "\n");
  const ssize_t written = write(fd, line.data(), line.size());
  const int write_errno = errno;
  close(fd);
  if (written != static_cast<ssize_t>(line.size())) {
    return absl::UnavailableError(
        absl::StrCat("cannot write to the broker's control FIFO: ", strerror(write_errno)));
  }
  while (true) {
    const std::string out = ReadWholeFile(stdout_path);
    const size_t newline = out.size() > before ? out.find('\n', before) : std::string::npos;
    if (newline != std::string::npos) {
      std::string reply = out.substr(before, newline - before);
      if (absl::StartsWith(reply, "error")) {
        return absl::FailedPreconditionError(
            absl::StrCat("dev broker: \"", command, "\": ", reply));
      }
      return reply;
    }
    if (!broker.subprocess->Running()) return absl::AbortedError(DiedMessage(broker));
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat("no reply from the dev broker to \"", command,
                                                      "\" within ", absl::FormatDuration(timeout)));
    }
    absl::SleepFor(absl::Milliseconds(10));
  }
}

}  // namespace cluster
}  // namespace sluice
