// The task worker process minus flag parsing: owns the gRPC server, the
// tasks it runs (TaskManager), the supervisor client and the heartbeater.
// `main` builds the options; tests start it in-process.
//
//   WorkerServerOptions options;
//   options.data_dir = "/var/lib/sluice/worker";
//   options.supervisor_address = "supervisor:7070";
//   SLUICE_ASSIGN_OR_RETURN(auto worker, WorkerServer::Start(options));
//   ...
//   worker->Shutdown(absl::Seconds(20));
#ifndef SLUICE_TASK_WORKER_SERVER_H_
#define SLUICE_TASK_WORKER_SERVER_H_

#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/auth/authorizer.h"
#include "common/deep_storage.h"
#include "common/open_deep_storage.h"
#include "common/grpc_server.h"
#include "common/metrics/registry.h"
#include "common/tls/credentials.h"
#include "task/supervisor_client.h"
#include "task/task_manager.h"
#include "task/task_service.h"
#include "task/worker_heartbeater.h"

namespace sluice::task {

struct WorkerServerOptions {
  // host:port to serve on; port 0 picks a free one.
  std::string listen_address = "127.0.0.1:0";
  // Task state lives in <data_dir>/tasks/<task id>/; created if missing.
  std::string data_dir;
  // host:port of the supervisor.
  std::string supervisor_address;
  // "file:///path" or "s3://bucket/prefix"; empty = <data_dir>/deep-storage.
  std::string deep_storage_uri;
  // How to reach S3 for an s3:// deep_storage_uri (endpoint, region,
  // credentials, retries).
  DeepStorageOptions deep_storage_options;
  // Certificates for the gRPC server and for the calls it makes to the supervisor
  // (tls::MakeChannelCredentials); mutual TLS when ca_path is set. Empty:
  // plaintext.
  tls::TlsOptions tls;
  // Who may call the TaskService (common/auth/authorizer.h); client
  // certificates count when tls.ca_path is set. Without tokens, client
  // certificates or insecure_no_auth the worker refuses to start.
  auth::AuthOptions auth;
  // The worker's own bearer token for calls to the supervisor.
  auth::ClientAuth client_auth;
  // Metrics of this process (gRPC requests and what the core records); null:
  // none. Not owned; must outlive the server.
  metrics::Registry* metrics = nullptr;
  // Stable id (e.g. the pod name); empty = derived from the host name.
  std::string worker_id;
  // Address the supervisor should dial; empty = the bound address.
  std::string advertise_address;
  // Task slots.
  int capacity = 4;
  // Memory for ingestion across all tasks, divided evenly over the slots
  // (TaskManagerOptions::ingestion_memory_bytes); 0: each task uses its
  // spec's maxBytesInMemory.
  int64_t ingestion_memory_bytes = 0;
  // Segment builds at once across the tasks (TaskManagerOptions).
  int concurrent_segment_builds = 1;
  // Deadline of supervisor calls (PublishSegments gets 6x this).
  absl::Duration supervisor_call_timeout = absl::Seconds(10);
  // Heartbeat interval until the supervisor says otherwise, and the wait
  // between failed registrations.
  absl::Duration heartbeat_interval = absl::Seconds(1);
  TaskTuningOptions tuning;
  // Empty: the columnar engine of the segment library (task/columnar_engine.h).
  SegmentEngineFactory engine_factory;
};

class WorkerServer {
 public:
  static absl::StatusOr<std::unique_ptr<WorkerServer>> Start(WorkerServerOptions options);
  ~WorkerServer();

  const std::string& address() const { return grpc_->address(); }
  const std::string& worker_id() const { return options_.worker_id; }
  TaskManager* tasks() { return manager_.get(); }
  bool registered() const { return heartbeater_ != nullptr && heartbeater_->registered(); }

  // Stops serving (running calls get `grace`), persists and stops every task
  // without a final state (a restarted worker resumes them), stops the
  // heartbeats. Idempotent.
  void Shutdown(absl::Duration grace);

 private:
  WorkerServer() = default;
  void Report(const v1::TaskStatus& status) ABSL_LOCKS_EXCLUDED(report_mu_);

  WorkerServerOptions options_;
  std::unique_ptr<DeepStorage> deep_storage_;
  std::unique_ptr<SupervisorClient> supervisor_;
  std::unique_ptr<TaskManager> manager_;
  std::unique_ptr<auth::Authorizer> authorizer_;
  std::unique_ptr<TaskServiceImpl> service_;
  std::unique_ptr<GrpcServer> grpc_;
  std::unique_ptr<WorkerHeartbeater> heartbeater_;
  absl::Mutex report_mu_;
  // Set once the heartbeater runs; status changes before that are carried by
  // the registration.
  WorkerHeartbeater* reporter_ ABSL_GUARDED_BY(report_mu_) = nullptr;
  bool shut_down_ = false;
};

}  // namespace sluice::task

#endif  // SLUICE_TASK_WORKER_SERVER_H_
