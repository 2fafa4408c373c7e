#include "task/worker_server.h"

#include <glog/logging.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/kafka/library_version.h"
#include "common/names.h"
#include "common/open_deep_storage.h"
#include "common/request_limits.h"
#include "common/status_macros.h"
#include "common/time_util.h"
#include "task/columnar_engine.h"
#include "task/grpc_supervisor_client.h"

namespace sluice::task {

absl::StatusOr<std::unique_ptr<WorkerServer>> WorkerServer::Start(WorkerServerOptions options) {
  if (options.data_dir.empty()) return absl::InvalidArgumentError("--data_dir is required");
  if (options.supervisor_address.empty()) {
    return absl::InvalidArgumentError("--supervisor is required");
  }
  if (options.capacity < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--capacity must be at least 1 (got ", options.capacity, ")"));
  }
  if (options.worker_id.empty()) {
    char host[256] = {0};
    ::gethostname(host, sizeof(host) - 1);
    options.worker_id = host[0] ? host : "worker";
  }
  SLUICE_RETURN_IF_ERROR(ValidateWorkerId(options.worker_id));
  SLUICE_RETURN_IF_ERROR(MakePrivateDir(options.data_dir));
  SLUICE_RETURN_IF_ERROR(MakeDirs(absl::StrCat(options.data_dir, "/tasks")));
  if (options.deep_storage_uri.empty()) {
    options.deep_storage_uri = absl::StrCat("file://", options.data_dir, "/deep-storage");
  }
  if (!options.engine_factory) options.engine_factory = NewColumnarEngine;
  options.auth.client_certificates = !options.tls.ca_path.empty();
  // Supervisor tokens are accepted only when bound to this worker.
  options.auth.server_worker_id = options.worker_id;
  std::unique_ptr<WorkerServer> server(new WorkerServer());
  SLUICE_ASSIGN_OR_RETURN(server->authorizer_,
                          auth::Authorizer::Create(options.auth, {v1::TaskService::service_full_name()}));
  if (!server->authorizer_->enabled()) {
    LOG(WARNING) << "[worker] authentication is OFF (--insecure_no_auth): every caller has "
                    "every role"
                 << (auth::IsLoopbackAddress(options.listen_address)
                         ? ""
                         : absl::StrCat("; and ", options.listen_address,
                                        " is reachable beyond loopback"));
  }
  server->options_ = options;
  SLUICE_ASSIGN_OR_RETURN(server->deep_storage_, OpenDeepStorage(options.deep_storage_uri, options.deep_storage_options));
  GrpcSupervisorClientOptions client;
  client.address = options.supervisor_address;
  SLUICE_ASSIGN_OR_RETURN(client.credentials, tls::MakeChannelCredentials(options.tls));
  client.auth = options.client_auth;
  client.call_timeout = options.supervisor_call_timeout;
  client.publish_timeout = 6 * options.supervisor_call_timeout;
  server->supervisor_ = NewGrpcSupervisorClient(client);

  TaskManagerOptions manager;
  manager.data_dir = options.data_dir;
  manager.worker_id = options.worker_id;
  manager.capacity = options.capacity;
  manager.supervisor = server->supervisor_.get();
  manager.deep_storage = server->deep_storage_.get();
  manager.engine_factory = options.engine_factory;
  WorkerServer* raw = server.get();
  manager.on_state_change = [raw](const v1::TaskStatus& status) { raw->Report(status); };
  manager.tuning = options.tuning;
  manager.ingestion_memory_bytes = options.ingestion_memory_bytes;
  manager.concurrent_segment_builds = options.concurrent_segment_builds;
  manager.metrics = options.metrics;
  SLUICE_ASSIGN_OR_RETURN(server->manager_, TaskManager::Create(std::move(manager)));
  server->service_ =
      std::make_unique<TaskServiceImpl>(server->manager_.get(), server->authorizer_.get());

  GrpcServerOptions grpc_options;
  // gRPC refuses undecoded what is over every method's bound; each method
  // checks its own bound before its handler (common/request_limits.h).
  grpc_options.max_request_bytes =
      static_cast<int>(MaxRequestBytesOfService(v1::TaskService::service_full_name()));
  grpc_options.listen_address = options.listen_address;
  grpc_options.services = {server->service_.get()};
  SLUICE_ASSIGN_OR_RETURN(grpc_options.credentials, tls::MakeServerCredentials(options.tls));
  grpc_options.metrics = options.metrics;
  SLUICE_ASSIGN_OR_RETURN(server->grpc_, GrpcServer::Start(std::move(grpc_options)));
  if (server->options_.advertise_address.empty()) {
    server->options_.advertise_address = server->grpc_->address();
  }
  server->grpc_->SetServing(true);

  WorkerHeartbeaterOptions heartbeat;
  heartbeat.supervisor = server->supervisor_.get();
  heartbeat.info.set_worker_id(server->options_.worker_id);
  heartbeat.info.set_address(server->options_.advertise_address);
  heartbeat.info.set_capacity(server->options_.capacity);
  heartbeat.info.set_version("sluice-task 0.1");
  heartbeat.info.set_start_time_ms(NowMillis());
  TaskManager* tasks = server->manager_.get();
  // Each heartbeat first forgets the tasks that ended past the retention,
  // so what it lists stays bounded however long the worker runs.
  heartbeat.list_tasks = [tasks] {
    tasks->ForgetEndedTasks(absl::Now());
    return tasks->ListTasks();
  };
  heartbeat.stop_task = [tasks](const std::string& task_id) {
    tasks->StopTask(task_id, v1::STOP_MODE_GRACEFUL, "the supervisor no longer wants it").IgnoreError();
  };
  heartbeat.default_interval = options.heartbeat_interval;
  heartbeat.retry_interval = options.heartbeat_interval;
  server->heartbeater_ = std::make_unique<WorkerHeartbeater>(std::move(heartbeat));
  server->heartbeater_->Start();
  {
    absl::MutexLock lock(&server->report_mu_);
    server->reporter_ = server->heartbeater_.get();
  }
  LOG(INFO) << "[worker " << server->options_.worker_id << "] serving sluice.v1.TaskService on "
            << server->address() << " (data dir " << server->options_.data_dir << ", supervisor "
            << server->options_.supervisor_address << ", " << server->options_.capacity
            << " slots, " << tasks->running() << " task(s) restored, "
            << sluice::kafka::LibrdkafkaDescription() << ")";
  return server;
}

WorkerServer::~WorkerServer() { Shutdown(absl::ZeroDuration()); }

void WorkerServer::Report(const v1::TaskStatus& status) {
  absl::MutexLock lock(&report_mu_);
  if (reporter_ != nullptr) reporter_->ReportStatus(status);
}

void WorkerServer::Shutdown(absl::Duration grace) {
  if (shut_down_) return;
  shut_down_ = true;
  if (grpc_) grpc_->Shutdown(grace);
  if (manager_) manager_->Shutdown();
  {
    absl::MutexLock lock(&report_mu_);
    reporter_ = nullptr;
  }
  if (heartbeater_) heartbeater_->Stop();
}

}  // namespace sluice::task
