// The supervisor process minus flag parsing: the metadata store, deep
// storage, the supervisor manager and the gRPC server in front of it. `main`
// builds the options; tests start it in-process.
#ifndef SLUICE_SUPERVISOR_SUPERVISOR_SERVER_H_
#define SLUICE_SUPERVISOR_SUPERVISOR_SERVER_H_

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/auth/authorizer.h"
#include "common/deep_storage.h"
#include "common/open_deep_storage.h"
#include "common/kafka/property_policy.h"
#include "common/grpc_server.h"
#include "common/metrics/http_routes.h"
#include "common/metrics/registry.h"
#include "common/tls/credentials.h"
#include "supervisor/leader_elector.h"
#include "supervisor/leadership_gate.h"
#include "supervisor/pauseless_margin.h"
#include "supervisor/store/metadata_store.h"
#include "supervisor/supervisor_manager.h"
#include "supervisor/supervisor_service.h"

namespace sluice::supervisor {

struct SupervisorServerOptions {
  // host:port to serve on; port 0 picks a free one.
  std::string listen_address = "127.0.0.1:0";
  // Holds the metadata store (metadata.db) unless metadata_store_url says
  // otherwise; created if missing.
  std::string data_dir;
  // --metadata_store (supervisor/store/metadata_store_url.h); empty:
  // <data_dir>/metadata.db.
  std::string metadata_store_url;
  // "file:///path" or "s3://bucket/prefix"; empty = <data_dir>/deep-storage.
  std::string deep_storage_uri;
  // How to reach S3 for an s3:// deep_storage_uri (endpoint, region,
  // credentials, retries).
  DeepStorageOptions deep_storage_options;
  // Told to workers at registration; a worker silent for 3 intervals (and at
  // least min_worker_lost_timeout) is lost.
  absl::Duration heartbeat_interval = absl::Seconds(2);
  absl::Duration min_worker_lost_timeout = absl::Seconds(10);
  // Period of the deep-storage verification of published segments.
  absl::Duration handoff_period = absl::Seconds(2);
  // SupervisorManagerOptions::iceberg_orphan_min_age.
  absl::Duration iceberg_orphan_min_age = absl::Hours(1);
  // SupervisorManagerOptions::replaced_segment_retention.
  absl::Duration replaced_segment_retention = absl::Hours(24);
  // SupervisorManagerOptions::pauseless_checkpoints and pauseless_margin.
  bool pauseless_checkpoints = true;
  PauselessMarginOptions pauseless_margin;
  // Certificates for the gRPC server and for the calls it makes to task workers
  // (tls::MakeChannelCredentials); mutual TLS when ca_path is set. Empty:
  // plaintext.
  tls::TlsOptions tls;
  // Who may call (common/auth/authorizer.h). Client certificates count as
  // credentials when tls.ca_path is set. Without tokens, client certificates
  // or insecure_no_auth the server refuses to start.
  auth::AuthOptions auth;
  // The supervisor's own bearer token for calls to task workers.
  auth::ClientAuth client_auth;
  // What specs' consumerProperties may say (common/kafka/property_policy.h).
  kafka::PropertyPolicyOptions kafka_policy;
  // Metrics of this process (gRPC requests and what the core records); null:
  // none. Not owned; must outlive the server.
  metrics::Registry* metrics = nullptr;
  // The HTTP endpoint's route table (main's, beside --metrics_listen): the
  // server adds the read-only Iceberg REST catalog under /iceberg/
  // (iceberg_rest_routes.h) and removes it at Shutdown. Null: not served.
  // Not owned; must outlive the server.
  metrics::HttpRoutes* http_routes = nullptr;
  // The web console's route table (main's, behind --console_listen): the
  // server adds the console under /console/ (console/console_handler.h) and
  // removes it at Shutdown. Null: no console. Not owned; must outlive the
  // server.
  metrics::HttpRoutes* console_routes = nullptr;

  // Leader election (supervisor/leader_elector.h): several supervisors over
  // one metadata store (PostgreSQL), one leads. A standby serves gRPC (health
  // "" SERVING, sluice.v1.SupervisorService NOT_SERVING) and answers every
  // call UNAVAILABLE naming the leader; once it takes the lease it fences the
  // store at its epoch and starts the manager, adopting running tasks as a
  // restarted supervisor does. False: this supervisor leads from the start.
  bool leader_election = false;
  absl::Duration leader_lease = absl::Seconds(6);
  // host:port standbys name as the leader's; empty: the bound address (with
  // the host name for a wildcard host).
  std::string advertise_address;
  // The lease holder's name; empty: <host name>-<pid>.
  std::string supervisor_id;
  // Runs once when this supervisor loses leadership (another took the lease,
  // or it could not renew it in time); it then serves nothing. main exits,
  // so that the restart comes back as a standby.
  std::function<void(const std::string& why)> on_leadership_lost;
};

// OK unless the store holds a leader lease that has not expired by the
// database's clock (a supervisor with leader election leads it, or led it
// moments ago without resigning); then FAILED_PRECONDITION naming the
// holder, the expiry and --leader_election. What a supervisor started
// without leader election checks before it writes anything.
absl::Status CheckNoLiveLeaderLease(MetadataStore* store);

class SupervisorServer {
 public:
  static absl::StatusOr<std::unique_ptr<SupervisorServer>> Start(SupervisorServerOptions options);
  ~SupervisorServer();

  // host:port actually bound.
  const std::string& address() const { return grpc_->address(); }
  // Null while this supervisor does not lead.
  SupervisorManager* manager() ABSL_LOCKS_EXCLUDED(mu_);
  // Null without leader election.
  LeaderElector* elector() { return elector_.get(); }

  // Graceful stop: health NOT_SERVING, running calls get `grace` to finish,
  // then the stream supervisors stop (their tasks keep running, to be
  // adopted by the next supervisor). Idempotent.
  void Shutdown(absl::Duration grace);

 private:
  SupervisorServer() = default;
  // On the elector's thread: start the manager on a thread of its own (it
  // adopts tasks, which may take longer than a lease renewal period).
  void BecomeLeader(int64_t epoch) ABSL_LOCKS_EXCLUDED(mu_);
  void StopLeading(const std::string& why);

  SupervisorServerOptions options_;
  SupervisorManagerOptions manager_options_;
  std::unique_ptr<MetadataStore> store_;
  std::unique_ptr<DeepStorage> deep_storage_;
  std::unique_ptr<auth::Authorizer> authorizer_;
  std::unique_ptr<LeaderElector> elector_;
  std::unique_ptr<LeadershipGate> gate_;
  std::unique_ptr<SupervisorServiceImpl> service_;
  std::unique_ptr<GrpcServer> grpc_;
  metrics::Gauge* leader_gauge_ = nullptr;
  // Set while the Iceberg REST catalog is in options_.http_routes.
  metrics::HttpRoutes* iceberg_routes_ = nullptr;
  // Set while the web console is in options_.console_routes.
  metrics::HttpRoutes* console_routes_ = nullptr;

  absl::Mutex mu_;
  std::unique_ptr<SupervisorManager> manager_ ABSL_GUARDED_BY(mu_);
  std::thread leading_thread_ ABSL_GUARDED_BY(mu_);
  bool shutting_down_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_SUPERVISOR_SERVER_H_
