// A whole sluice deployment as real processes on 127.0.0.1: the dev Kafka
// broker (sluice-devbroker), one or more supervisors (sluice-supervisor) and
// N task workers (sluice-task), for process-level tests, the demo and the
// benchmark.
//
//   ProcessClusterOptions options;
//   options.root_dir = dir;               // everything lives under it
//   options.workers = 2;
//   options.topics = {"wiki:4"};
//   SLUICE_ASSIGN_OR_RETURN(auto cluster, ProcessCluster::Create(options));
//   SLUICE_RETURN_IF_ERROR(cluster->Start());
//   SLUICE_RETURN_IF_ERROR(cluster->WaitHealthy(absl::Seconds(30)));
//   ... cluster->bootstrap_servers(), cluster->SupervisorStub() ...
//   SLUICE_RETURN_IF_ERROR(cluster->Kill(WorkerName(1), SIGKILL));
//   SLUICE_RETURN_IF_ERROR(cluster->Restart(WorkerName(1)));  // same port, same data dir
//   SLUICE_RETURN_IF_ERROR(cluster->BrokerCommand("broker down 1").status());
//   SLUICE_RETURN_IF_ERROR(cluster->StopAll());
//
// Processes are named kBroker ("broker"), SupervisorName(i) ("supervisor",
// "supervisor-1", ...; kSupervisor is SupervisorName(0)) and WorkerName(i)
// ("worker-0", ...; also the worker's --worker_id). Layout:
//   <root>/broker/        bootstrap file, control FIFO, the broker's stdout
//   <root>/supervisor/    the metadata store (SQLite, unless --metadata_store)
//   <root>/supervisor-<i>/ the data dir of each further supervisor
//   <root>/worker-<i>/    the worker's task state
//   <root>/deep-storage/  segment files (file://), shared by all, unless
//                         options.deep_storage_uri names another (s3://)
//   <root>/logs/<name>.log, <name>.restart-<k>.log   stderr of each start
// Every port is chosen once, in Create(), below the kernel's ephemeral range
// (free_ports.h), so a restarted process comes back at the same address. The
// dev broker keeps its topics in memory: restarting it loses their records.
//
// Several supervisors (options.supervisors > 1): they elect a leader over a
// shared metadata store, which the caller must give every one of them
// (extra_flags["supervisor"] = {"--metadata_store=postgresql://..."}); each
// also gets --leader_election, --advertise_address=<its address> and
// --supervisor_id=<its name>, and every worker gets --supervisor=<all their
// addresses, comma-separated>. The leader is the one whose gRPC health of
// service "sluice.v1.SupervisorService" is SERVING (LeaderSupervisor);
// standbys answer SupervisorService calls UNAVAILABLE. SupervisorStub() then
// talks to the leader of the moment. With one supervisor (the default) none
// of these flags is passed and everything is as it always was.
//
// Children are killed with the process that started them
// (PR_SET_PDEATHSIG, tied to the *thread* that started them): call Start and
// Restart from the main thread. Methods are thread-safe (one mutex), but a
// call that waits (WaitHealthy, StopAll) holds it while it waits.
// Destroying the cluster SIGKILLs whatever still runs.
#ifndef SLUICE_TOOLS_CLUSTER_PROCESS_CLUSTER_H_
#define SLUICE_TOOLS_CLUSTER_PROCESS_CLUSTER_H_

#include <grpcpp/grpcpp.h>
#include <sys/types.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "sluice/v1/supervisor_service.grpc.pb.h"
#include "sluice/v1/task_service.grpc.pb.h"
#include "tests/testing/subprocess.h"
#include "tools/cluster/cluster_credentials.h"

namespace sluice {
namespace cluster {

inline constexpr char kBroker[] = "broker";
inline constexpr char kSupervisor[] = "supervisor";
// The gRPC service whose health (grpc.health.v1) is SERVING only on the
// leading supervisor.
inline constexpr char kSupervisorServiceName[] = "sluice.v1.SupervisorService";
// "worker-<index>".
std::string WorkerName(int index);
// kSupervisor for index 0, "supervisor-<index>" after it.
std::string SupervisorName(int index);

struct ProcessClusterOptions {
  // Required: the directory everything lives under (created if missing).
  std::string root_dir;
  // Supervisors: more than one elect a leader (see above; they need a
  // shared --metadata_store in extra_flags["supervisor"]).
  int supervisors = 1;
  // Task workers and their task slots.
  int workers = 2;
  int worker_capacity = 4;
  // Mock brokers in the dev broker (1 for throughput, 3 for failover).
  int brokers = 1;
  // Topics the dev broker creates at start, "NAME:PARTITIONS" (retention cap
  // lifted, see tools/README.md).
  std::vector<std::string> topics;
  // A Kafka cluster that runs outside this one (e.g. a real Apache Kafka
  // broker a test target shares, tools/kafka): "host:port,...". Then no dev
  // broker is started (`brokers` and `topics` are ignored, the topics must
  // exist), kBroker is never running (Kill/Restart/BrokerCommand on it fail
  // with FAILED_PRECONDITION) and the workers use the consumer settings for
  // real Kafka (--kafka_cluster=kafka) instead of the dev broker's.
  std::string external_bootstrap_servers;
  // Binaries; empty: FindSluiceBinary (binaries.h).
  std::string devbroker_binary;
  std::string supervisor_binary;
  std::string task_binary;
  // The deep storage of the supervisors and workers (--deep_storage); empty:
  // file://<root_dir>/deep-storage. For s3:// pass --s3_endpoint etc. in
  // extra_flags and the credentials in `env`.
  std::string deep_storage_uri;
  // Environment variables added to every child's (e.g. AWS_ACCESS_KEY_ID).
  // Never logged.
  std::map<std::string, std::string> env;
  // Flags added after the defaults (gflags keeps the last occurrence, so they
  // override), by process name; the key "worker" applies to every worker and
  // "supervisor" to every supervisor (then each one's own name, e.g.
  // "supervisor-1"), e.g. {{"worker-1", {"--fault_points=task.after_push=crash"}}}.
  std::map<std::string, std::vector<std::string>> extra_flags;
  // Timing of the defaults: short, so that tests and the demo notice
  // liveness and handoff quickly.
  int heartbeat_interval_ms = 500;        // supervisor -> workers
  int min_worker_lost_timeout_ms = 3000;  // supervisor
  int handoff_period_ms = 500;            // supervisor
  int handoff_poll_ms = 250;              // workers
  // How long StopAll / Kill(SIGTERM) wait before SIGKILL. Generous: a
  // supervisor finishes its current run before it exits, and a run takes up
  // to ~20 s while Kafka is unreachable (two 10 s metadata timeouts).
  absl::Duration stop_grace = absl::Seconds(30);
  // --shutdown_grace_seconds of the supervisor and the workers: how long
  // calls in flight get to finish once they are told to stop.
  int shutdown_grace_seconds = 5;
  // Kill the children when the starting thread dies (see above).
  bool die_with_parent = true;
  // Every server requires a bearer token (fresh random tokens for an admin,
  // a reader, the supervisor and each worker, under <root_dir>/auth); false:
  // --insecure_no_auth.
  bool authentication = true;
};

class ProcessCluster {
 public:
  // Validates the options, finds the binaries, creates the directories and
  // picks every port. Starts nothing. INVALID_ARGUMENT for bad options,
  // NOT_FOUND for a missing binary, UNAVAILABLE if no ports are free.
  static absl::StatusOr<std::unique_ptr<ProcessCluster>> Create(ProcessClusterOptions options);

  ~ProcessCluster();
  ProcessCluster(const ProcessCluster&) = delete;
  ProcessCluster& operator=(const ProcessCluster&) = delete;

  // Starts the broker (and waits for its bootstrap file, so the topics
  // exist), then the supervisor and every worker. Does not wait for them to
  // serve: see WaitHealthy.
  absl::Status Start() ABSL_LOCKS_EXCLUDED(mu_);

  // Waits until every process that should run does: the broker has written
  // its bootstrap file, every supervisor and each worker answer the gRPC
  // health check with SERVING, and the supervisor lists each worker as alive,
  // registered by its current incarnation (WorkerInfo.start_time_ms not older
  // than its last start). With several supervisors also: exactly one of them
  // leads (LeaderSupervisor), and it is the one that lists the workers.
  // ABORTED (with the log tail) as soon as one of them exits;
  // DEADLINE_EXCEEDED says what is still missing.
  absl::Status WaitHealthy(absl::Duration timeout) ABSL_LOCKS_EXCLUDED(mu_);

  // SIGKILL (the process group, reaped at once) or SIGTERM (then SIGKILL
  // after stop_grace); any other signal is only sent (e.g. SIGSTOP/SIGCONT).
  // The process is then "stopped on purpose": it does not count as an
  // unexpected exit. NOT_FOUND for an unknown name; FAILED_PRECONDITION if
  // it is not running.
  absl::Status Kill(absl::string_view name, int signal) ABSL_LOCKS_EXCLUDED(mu_);

  // Waits until the process ends by itself (e.g. a deposed leader exiting)
  // and returns how it ended; it then counts as stopped on purpose (no
  // unexpected death for CheckAlive). DEADLINE_EXCEEDED if it still runs
  // after `timeout`; NOT_FOUND for an unknown name; FAILED_PRECONDITION if
  // it was never started.
  absl::StatusOr<testing::ExitStatus> WaitForExit(absl::string_view name, absl::Duration timeout)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Starts the process again with the same flags, port and data dir (after
  // SIGTERM + grace if it still runs). Its stderr goes to a new log file.
  // Does not wait for it to serve (WaitHealthy does).
  absl::Status Restart(absl::string_view name) ABSL_LOCKS_EXCLUDED(mu_);

  // SIGTERM to every running process (the supervisors first, then the
  // workers, then the broker), SIGKILL to any still running after stop_grace. OK only
  // if every process that was running exited with code 0; otherwise the
  // error lists each one and how it ended.
  // A gRPC server (1.51) that gets SIGTERM waits, up to its grace period,
  // for connected clients to hang up, even idle ones: StopAll first drops
  // the cluster's own channels, so release the stubs you got from it too.
  absl::Status StopAll() ABSL_LOCKS_EXCLUDED(mu_);

  // OK while every process runs that was not stopped on purpose; otherwise
  // ABORTED naming those that died, how, and the tail of their logs.
  absl::Status CheckAlive() ABSL_LOCKS_EXCLUDED(mu_);

  bool Running(absl::string_view name) ABSL_LOCKS_EXCLUDED(mu_);
  // The pid of the process's current incarnation (-1: never started or
  // unknown name), e.g. to signal it behind the cluster's back in a test.
  pid_t pid(absl::string_view name) const ABSL_LOCKS_EXCLUDED(mu_);
  // Names of every process: broker, supervisor, supervisor-1, ...,
  // worker-0, ...
  std::vector<std::string> names() const;
  int supervisors() const { return options_.supervisors; }

  // Addresses (host:port). The bootstrap list is known once the broker ran.
  std::string bootstrap_servers() const ABSL_LOCKS_EXCLUDED(mu_);
  // The first supervisor's (kSupervisor); every supervisor's, by index.
  std::string supervisor_address() const { return supervisor_addresses_[0]; }
  const std::vector<std::string>& supervisor_addresses() const { return supervisor_addresses_; }
  std::string worker_address(int index) const;
  // URI of the shared deep storage (file://, or options.deep_storage_uri),
  // and directories.
  std::string deep_storage_uri() const;
  const std::string& root_dir() const { return options_.root_dir; }
  std::string data_dir(absl::string_view name) const;
  std::string broker_control_fifo() const;
  // The current log file of a process ("" for an unknown name).
  std::string log_path(absl::string_view name) const ABSL_LOCKS_EXCLUDED(mu_);
  // The last `bytes` of the current log of a process (for error messages).
  std::string LogTail(absl::string_view name, size_t bytes = 4000) const ABSL_LOCKS_EXCLUDED(mu_);

  // The cluster's credentials (empty paths without authentication); the
  // cluster's own stubs present the admin token.
  const ClusterCredentials& credentials() const { return credentials_; }
  // The token file of "admin", "reader", "supervisor" or a worker ("" if none).
  std::string token_file(const std::string& principal) const;

  // The name of the leading supervisor: the one whose health of
  // kSupervisorServiceName is SERVING (polls until exactly one is). With one
  // supervisor: kSupervisor once its health ("") is SERVING.
  // DEADLINE_EXCEEDED says what each supervisor answered.
  absl::StatusOr<std::string> LeaderSupervisor(absl::Duration timeout) ABSL_LOCKS_EXCLUDED(mu_);
  // One look: `name` is a supervisor that answers as the leader now (its
  // health of kSupervisorServiceName, or of "" with one supervisor, is
  // SERVING).
  bool Leads(absl::string_view name);

  // New stubs on channels made once per address (kept until StopAll).
  // SupervisorStub(): the supervisor's; with several, the current leader's
  // (waiting up to 30 s for one; if none leads by then, the first
  // supervisor's, whose calls then fail). SupervisorStub(name): that one's
  // (an unknown name: the first supervisor's).
  std::unique_ptr<v1::SupervisorService::Stub> SupervisorStub() ABSL_LOCKS_EXCLUDED(mu_);
  std::unique_ptr<v1::SupervisorService::Stub> SupervisorStub(absl::string_view name);
  std::unique_ptr<v1::TaskService::Stub> WorkerStub(int index);

  // Sends one control command to the dev broker through its FIFO (e.g.
  // "broker down 1", "create logs 2") and returns its reply line ("ok ...").
  // FAILED_PRECONDITION when the broker answers "error ..." (the reply is the
  // message); DEADLINE_EXCEEDED without a reply.
  absl::StatusOr<std::string> BrokerCommand(absl::string_view command,
                                            absl::Duration timeout = absl::Seconds(10))
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Process {
    std::string name;
    // Its gRPC address (empty for the broker).
    std::string address;
    bool supervisor = false;
    std::string binary;
    std::vector<std::string> args;
    int starts = 0;
    std::string log_path;
    absl::Time last_start;
    // False once stopped or killed through this class.
    bool should_run = false;
    std::unique_ptr<testing::Subprocess> subprocess;
  };

  explicit ProcessCluster(ProcessClusterOptions options) : options_(std::move(options)) {}

  absl::Status StartLocked(Process& process) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status WaitForBrokerLocked(Process& broker, absl::Time deadline)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // OK when `process` is ready (see WaitHealthy); otherwise why not.
  absl::Status ProbeLocked(Process& process, const v1::ListWorkersResponse* workers)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status StopLocked(Process& process, absl::Duration grace, std::string* how)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Process* Find(absl::string_view name) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  const Process* Find(absl::string_view name) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::string DiedMessage(Process& process) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::shared_ptr<grpc::Channel> Channel(const std::string& address);

  const ProcessClusterOptions options_;
  int broker_base_port_ = 0;
  std::vector<std::string> supervisor_addresses_;
  ClusterCredentials credentials_;
  std::vector<std::string> worker_addresses_;

  mutable absl::Mutex mu_;
  // broker, supervisors, workers in this order.
  std::vector<Process> processes_ ABSL_GUARDED_BY(mu_);
  std::string bootstrap_servers_ ABSL_GUARDED_BY(mu_);

  absl::Mutex channels_mu_;
  std::map<std::string, std::shared_ptr<grpc::Channel>> channels_ ABSL_GUARDED_BY(channels_mu_);
};

}  // namespace cluster
}  // namespace sluice

#endif  // SLUICE_TOOLS_CLUSTER_PROCESS_CLUSTER_H_
