// The supervisor and one task worker, both in this process on 127.0.0.1:0,
// with their data under a fresh temporary directory that is removed at the
// end. Options add TLS and metrics registries.
//
//   auto cluster = testing::InProcessCluster::Start({});
//   ASSERT_TRUE(cluster.ok()) << cluster.status();
//   Dial((*cluster)->supervisor().address());
#ifndef SLUICE_TESTS_IN_PROCESS_CLUSTER_H_
#define SLUICE_TESTS_IN_PROCESS_CLUSTER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/metrics/http_routes.h"
#include "common/metrics/registry.h"
#include "common/open_deep_storage.h"
#include "common/tls/credentials.h"
#include "supervisor/supervisor_server.h"
#include "task/worker_server.h"

namespace sluice::testing {

struct InProcessClusterOptions {
  tls::TlsOptions supervisor_tls;
  tls::TlsOptions worker_tls;
  // Not owned; must outlive the cluster. Null: no metrics.
  metrics::Registry* supervisor_metrics = nullptr;
  metrics::Registry* worker_metrics = nullptr;
  // The worker's task tuning (e.g. kafka_cluster = kDevBroker against a mock
  // Kafka, short handoff polls) and the supervisor's handoff verification
  // period, for tests that ingest.
  task::TaskTuningOptions worker_knobs;
  // Both servers' deep storage; empty: file://<dir>/deep. With s3:// the
  // options say how to reach the bucket.
  std::string deep_storage_uri;
  DeepStorageOptions deep_storage_options;
  absl::Duration handoff_period = absl::Seconds(2);
  // The supervisor's --metadata_store; empty: SQLite under its data dir.
  std::string metadata_store_url;
  // The supervisor adds its HTTP routes here (the Iceberg REST catalog);
  // null: none. Not owned; must outlive the cluster.
  metrics::HttpRoutes* supervisor_http_routes = nullptr;
  // Who may call each server (default: no authentication) and what each
  // presents when it calls the other (its bearer token; certificates come
  // from the TLS options).
  auth::AuthOptions supervisor_auth = Insecure();
  auth::AuthOptions worker_auth = Insecure();
  auth::ClientAuth supervisor_client_auth;
  auth::ClientAuth worker_client_auth;

  static auth::AuthOptions Insecure() {
    auth::AuthOptions a;
    a.insecure_no_auth = true;
    return a;
  }
};

class InProcessCluster {
 public:
  static absl::StatusOr<std::unique_ptr<InProcessCluster>> Start(InProcessClusterOptions options);
  // Stops the worker, then the supervisor, and removes the directory.
  ~InProcessCluster();

  InProcessCluster(const InProcessCluster&) = delete;
  InProcessCluster& operator=(const InProcessCluster&) = delete;

  supervisor::SupervisorServer& supervisor() { return *supervisor_; }
  task::WorkerServer& worker() { return *worker_; }
  // Holds supervisor/, worker/ and deep/.
  const std::string& dir() const { return dir_; }

 private:
  InProcessCluster() = default;

  std::string dir_;
  std::unique_ptr<supervisor::SupervisorServer> supervisor_;
  std::unique_ptr<task::WorkerServer> worker_;
};

}  // namespace sluice::testing

#endif  // SLUICE_TESTS_IN_PROCESS_CLUSTER_H_
