#include "task/worker_server.h"

#include <glog/logging.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/names.h"
#include "common/status_macros.h"

namespace sluice::task {

absl::StatusOr<std::unique_ptr<WorkerServer>> WorkerServer::Start(WorkerServerOptions options) {
  if (options.data_dir.empty()) return absl::InvalidArgumentError("--data_dir is required");
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
  SLUICE_RETURN_IF_ERROR(MakeDirs(absl::StrCat(options.data_dir, "/tasks")));
  if (options.deep_storage_uri.empty()) {
    options.deep_storage_uri = absl::StrCat("file://", options.data_dir, "/deep-storage");
  }
  std::unique_ptr<WorkerServer> server(new WorkerServer());
  SLUICE_ASSIGN_OR_RETURN(server->deep_storage_, OpenDeepStorage(options.deep_storage_uri));
  server->service_ = std::make_unique<TaskServiceImpl>();

  GrpcServerOptions grpc_options;
  grpc_options.listen_address = options.listen_address;
  grpc_options.services = {server->service_.get()};
  SLUICE_ASSIGN_OR_RETURN(grpc_options.credentials, tls::MakeServerCredentials(options.tls));
  grpc_options.metrics = options.metrics;
  SLUICE_ASSIGN_OR_RETURN(server->grpc_, GrpcServer::Start(std::move(grpc_options)));
  if (options.advertise_address.empty()) options.advertise_address = server->grpc_->address();
  server->options_ = std::move(options);
  server->grpc_->SetServing(true);
  LOG(INFO) << "[worker " << server->options_.worker_id << "] serving sluice.v1.TaskService on "
            << server->address() << " (data dir " << server->options_.data_dir
            << ", supervisor " << server->options_.supervisor_address << ")";
  return server;
}

WorkerServer::~WorkerServer() { Shutdown(absl::ZeroDuration()); }

void WorkerServer::Shutdown(absl::Duration grace) {
  if (grpc_) grpc_->Shutdown(grace);
}

}  // namespace sluice::task
