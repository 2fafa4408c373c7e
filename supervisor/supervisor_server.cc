#include "supervisor/supervisor_server.h"

#include <glog/logging.h>

#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/open_deep_storage.h"
#include "common/status_macros.h"
#include "supervisor/metadata_store_url.h"
#include "supervisor/stream_metadata.h"
#include "supervisor/grpc_task_client.h"

namespace sluice::supervisor {

absl::StatusOr<std::unique_ptr<SupervisorServer>> SupervisorServer::Start(
    SupervisorServerOptions options) {
  if (options.data_dir.empty()) return absl::InvalidArgumentError("--data_dir is required");
  SLUICE_RETURN_IF_ERROR(MakePrivateDir(options.data_dir));
  if (options.deep_storage_uri.empty()) {
    options.deep_storage_uri = absl::StrCat("file://", options.data_dir, "/deep-storage");
  }
  options.auth.client_certificates = !options.tls.ca_path.empty();
  std::unique_ptr<SupervisorServer> server(new SupervisorServer());
  SLUICE_ASSIGN_OR_RETURN(server->authorizer_,
                          auth::Authorizer::Create(options.auth, {v1::SupervisorService::service_full_name()}));
  if (!server->authorizer_->enabled()) {
    LOG(WARNING) << "[supervisor] authentication is OFF (--insecure_no_auth): every caller has "
                    "every role"
                 << (auth::IsLoopbackAddress(options.listen_address)
                         ? ""
                         : absl::StrCat("; and ", options.listen_address,
                                        " is reachable beyond loopback"));
  }
  SLUICE_ASSIGN_OR_RETURN(server->deep_storage_, OpenDeepStorage(options.deep_storage_uri, options.deep_storage_options));

  MetadataStoreOptions store_options;
  SLUICE_RETURN_IF_ERROR(
      ApplyMetadataStoreUrl(options.metadata_store_url, options.data_dir, &store_options));
  SLUICE_ASSIGN_OR_RETURN(server->store_, MetadataStore::Open(store_options));
  SLUICE_ASSIGN_OR_RETURN(const int schema, server->store_->SchemaVersion());
  LOG(INFO) << "[supervisor] metadata store " << server->store_->description()
            << " (schema version " << schema
            << (server->store_->dialect() == SqlDialect::kSqlite
                    ? ", WAL, synchronous=FULL)"
                    : ", PostgreSQL, SERIALIZABLE transactions)");

  SupervisorManagerOptions manager_options;
  manager_options.store = server->store_.get();
  manager_options.deep_storage = server->deep_storage_.get();
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<grpc::ChannelCredentials> task_credentials,
                          tls::MakeChannelCredentials(options.tls));
  manager_options.task_client_factory = [task_credentials,
                                         client_auth = options.client_auth](const ChatOptions& chat) {
    return NewGrpcTaskClient(chat, task_credentials, client_auth);
  };
  manager_options.metrics = options.metrics;
  manager_options.stream_metadata_factory = KafkaStreamMetadataFactory(options.kafka_policy);
  manager_options.kafka_policy = options.kafka_policy;
  manager_options.heartbeat_interval = options.heartbeat_interval;
  manager_options.min_worker_lost_timeout = options.min_worker_lost_timeout;
  manager_options.handoff_period = options.handoff_period;
  manager_options.pauseless_checkpoints = options.pauseless_checkpoints;
  manager_options.pauseless_margin = options.pauseless_margin;
  manager_options.scratch_dir = absl::StrCat(options.data_dir, "/scratch");
  SLUICE_RETURN_IF_ERROR(MakeDirs(manager_options.scratch_dir));
  SLUICE_ASSIGN_OR_RETURN(server->manager_, SupervisorManager::Create(manager_options));
  server->service_ =
      std::make_unique<SupervisorServiceImpl>(server->manager_.get(), server->authorizer_.get());

  GrpcServerOptions grpc_options;
  grpc_options.listen_address = options.listen_address;
  grpc_options.services = {server->service_.get()};
  SLUICE_ASSIGN_OR_RETURN(grpc_options.credentials, tls::MakeServerCredentials(options.tls));
  grpc_options.metrics = options.metrics;
  SLUICE_ASSIGN_OR_RETURN(server->grpc_, GrpcServer::Start(std::move(grpc_options)));
  server->options_ = std::move(options);
  server->grpc_->SetServing(true);
  LOG(INFO) << "[supervisor] serving sluice.v1.SupervisorService on " << server->address()
            << " (data dir " << server->options_.data_dir << ", deep storage "
            << server->options_.deep_storage_uri << ", instance " << server->manager_->instance_id()
            << ")";
  return server;
}

SupervisorServer::~SupervisorServer() { Shutdown(absl::ZeroDuration()); }

void SupervisorServer::Shutdown(absl::Duration grace) {
  if (grpc_) grpc_->Shutdown(grace);
  manager_.reset();
}

}  // namespace sluice::supervisor
