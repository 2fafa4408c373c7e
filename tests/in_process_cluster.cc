#include "tests/in_process_cluster.h"

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/status_macros.h"

namespace sluice::testing {

absl::StatusOr<std::unique_ptr<InProcessCluster>> InProcessCluster::Start(
    InProcessClusterOptions options) {
  char tmpl[] = "/tmp/sluice_cluster_XXXXXX";
  if (mkdtemp(tmpl) == nullptr) {
    return absl::InternalError(absl::StrCat("mkdtemp: ", strerror(errno)));
  }
  std::unique_ptr<InProcessCluster> cluster(new InProcessCluster());
  cluster->dir_ = tmpl;

  supervisor::SupervisorServerOptions sopts;
  sopts.auth = options.supervisor_auth;
  sopts.client_auth = options.supervisor_client_auth;
  sopts.listen_address = "127.0.0.1:0";
  sopts.data_dir = cluster->dir_ + "/supervisor";
  sopts.deep_storage_uri = options.deep_storage_uri.empty() ? "file://" + cluster->dir_ + "/deep"
                                                            : options.deep_storage_uri;
  sopts.deep_storage_options = options.deep_storage_options;
  sopts.tls = std::move(options.supervisor_tls);
  sopts.metrics = options.supervisor_metrics;
  sopts.handoff_period = options.handoff_period;
  sopts.metadata_store_url = options.metadata_store_url;
  sopts.http_routes = options.supervisor_http_routes;
  SLUICE_ASSIGN_OR_RETURN(cluster->supervisor_, supervisor::SupervisorServer::Start(sopts));

  task::WorkerServerOptions wopts;
  wopts.auth = options.worker_auth;
  wopts.client_auth = options.worker_client_auth;
  wopts.listen_address = "127.0.0.1:0";
  wopts.data_dir = cluster->dir_ + "/worker";
  wopts.supervisor_address = cluster->supervisor_->address();
  wopts.worker_id = "worker-0";
  wopts.deep_storage_uri = sopts.deep_storage_uri;
  wopts.deep_storage_options = options.deep_storage_options;
  wopts.tls = std::move(options.worker_tls);
  wopts.metrics = options.worker_metrics;
  wopts.tuning = options.worker_knobs;
  SLUICE_ASSIGN_OR_RETURN(cluster->worker_, task::WorkerServer::Start(wopts));
  return cluster;
}

InProcessCluster::~InProcessCluster() {
  worker_.reset();
  supervisor_.reset();
  if (!dir_.empty()) RemoveAll(dir_).IgnoreError();
}

}  // namespace sluice::testing
