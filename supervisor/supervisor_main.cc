// sluice-supervisor: owns the metadata store and runs one stream supervisor
// per datasource. Its own flags are read here; those both binaries share
// (deep storage, S3, TLS, authentication, Kafka policy, shutdown grace) in
// common/service_flags.cc.
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>

#include "common/auth/authorizer.h"
#include "common/grpc_server.h"
#include "common/metrics/http_routes.h"
#include "common/metrics/registry.h"
#include "common/service_flags.h"
#include "supervisor/console/console_server.h"
#include "supervisor/supervisor_server.h"

DEFINE_string(listen, "0.0.0.0:7070", "host:port to serve gRPC on (port 0: pick a free one)");
DEFINE_string(data_dir, "./sluice-data/supervisor",
              "directory of the supervisor's files (and of the SQLite metadata store)");
DEFINE_string(metadata_store, "",
              "sqlite:///path/metadata.db or postgresql://user@host:port/db?sslmode=...&"
              "password_file=/path (no inline password; PGPASSFILE works too); "
              "empty: sqlite under --data_dir");
DEFINE_string(metrics_listen, "",
              "host:port to serve Prometheus /metrics and /healthz on, plain HTTP (empty: off); "
              "with authentication on, all but /healthz need a reader or admin bearer token; "
              "also serves the read-only Iceberg REST catalog at /iceberg (docs/iceberg.md)");
DEFINE_int32(heartbeat_interval_ms, 2000,
             "heartbeat interval told to workers; a worker silent for 3 intervals is lost");
DEFINE_int32(min_worker_lost_timeout_ms, 10000, "a worker is never lost sooner than this");
DEFINE_int32(handoff_period_ms, 2000, "period of the deep-storage verification of segments");
DEFINE_int64(iceberg_orphan_min_age_s, 3600,
             "an Iceberg table's file no snapshot references is removed once seen so for this "
             "many seconds; must exceed the longest publish (staging to commit); 0: never");
DEFINE_int64(replaced_segment_retention_s, 86400,
             "the deep-storage file of a segment a compaction replaced is removed this many "
             "seconds after the replacement (its metadata row stays); 0: never");
DEFINE_bool(pauseless_checkpoints, true,
            "incremental checkpoints set end offsets (max + margin) on reading replicas; "
            "false: every round pauses them (docs/protocol.md)");
DEFINE_int64(pauseless_min_margin, 300, "smallest margin of a pauseless round, per partition");
DEFINE_int64(pauseless_max_margin, 1000000, "largest margin of a pauseless round, per partition");
DEFINE_double(pauseless_safety_factor, 4.0,
              "a pauseless round's margin: read rate x round time x this factor");
DEFINE_int64(pauseless_stalled_checkpoint_ms, 5000,
             "a checkpoint past the stream's known end this long is moved back to what the "
             "replicas read (docs/protocol.md \"Moving a checkpoint back\")");
DEFINE_bool(leader_election, false,
            "several supervisors over one PostgreSQL --metadata_store elect one leader through a "
            "lease with an epoch; the others are standbys (not ready; calls answered UNAVAILABLE "
            "naming the leader). A leader that loses the lease exits with code 3");
DEFINE_int32(leader_lease_ms, 6000,
             "leader lease length (renewed every third of it): a standby takes over this long "
             "after the leader stopped renewing");
DEFINE_string(advertise_address, "",
              "host:port other processes reach this supervisor at, named by standbys "
              "(default: the bound --listen address, the host name for 0.0.0.0)");
DEFINE_string(supervisor_id, "", "this supervisor's name in the leader lease (default: host-pid)");
DEFINE_string(console_listen, "",
              "host:port of the web console (http://HOST:PORT/console/; HTTPS with --tls_cert and "
              "--tls_key); empty: off. Readers and admins sign in with their bearer token (see "
              "docs/console.md)");
DEFINE_string(fault_points, "",
              "fault injection for tests, e.g. supervisor.publish.after_commit=crash "
              "(see common/fault_injection.h)");

namespace {
std::atomic<bool> leadership_lost{false};
}  // namespace

int main(int argc, char** argv) {
  sluice::InitServiceProcess("sluice supervisor: exactly-once Kafka ingestion into segments", &argc,
                             &argv);
  // Outlive the gRPC server and the metrics endpoint (both point into them).
  sluice::metrics::Registry registry;
  // The endpoint's further paths: the server adds the Iceberg REST catalog.
  sluice::metrics::HttpRoutes http_routes;
  sluice::ServiceBasics basics;
  if (int exit_code = sluice::StartServiceFromFlags("[supervisor]", FLAGS_fault_points,
                                                    FLAGS_metrics_listen, &registry, &http_routes,
                                                    &basics);
      exit_code != 0) {
    return exit_code;
  }

  sluice::supervisor::SupervisorServerOptions options;
  options.listen_address = FLAGS_listen;
  options.data_dir = FLAGS_data_dir;
  options.metadata_store_url = FLAGS_metadata_store;
  options.deep_storage_uri = sluice::DeepStorageUriFromFlags();
  options.deep_storage_options = sluice::DeepStorageOptionsFromFlags();
  options.heartbeat_interval = absl::Milliseconds(FLAGS_heartbeat_interval_ms);
  options.min_worker_lost_timeout = absl::Milliseconds(FLAGS_min_worker_lost_timeout_ms);
  options.handoff_period = absl::Milliseconds(FLAGS_handoff_period_ms);
  if (FLAGS_iceberg_orphan_min_age_s < 0) {
    LOG(ERROR) << "--iceberg_orphan_min_age_s must be >= 0 (0: no sweeping)";
    return 2;
  }
  options.iceberg_orphan_min_age = absl::Seconds(FLAGS_iceberg_orphan_min_age_s);
  if (FLAGS_replaced_segment_retention_s < 0) {
    LOG(ERROR) << "--replaced_segment_retention_s must be >= 0 (0: never remove)";
    return 2;
  }
  options.replaced_segment_retention = absl::Seconds(FLAGS_replaced_segment_retention_s);
  options.pauseless_checkpoints = FLAGS_pauseless_checkpoints;
  options.pauseless_margin.min_margin = std::max<int64_t>(0, FLAGS_pauseless_min_margin);
  options.pauseless_margin.max_margin =
      std::max<int64_t>(options.pauseless_margin.min_margin, FLAGS_pauseless_max_margin);
  options.pauseless_margin.safety_factor = std::max(1.0, FLAGS_pauseless_safety_factor);
  options.pauseless_margin.stalled_checkpoint_after =
      absl::Milliseconds(std::max<int64_t>(100, FLAGS_pauseless_stalled_checkpoint_ms));
  options.tls = sluice::TlsOptionsFromFlags();
  options.auth = basics.security.auth;
  options.client_auth = basics.security.client_auth;
  options.kafka_policy = basics.security.kafka_policy;
  options.metrics = &registry;
  if (basics.metrics_http != nullptr) options.http_routes = &http_routes;
  options.leader_election = FLAGS_leader_election;
  options.leader_lease = absl::Milliseconds(FLAGS_leader_lease_ms);
  options.advertise_address = FLAGS_advertise_address;
  options.supervisor_id = FLAGS_supervisor_id;
  options.on_leadership_lost = [](const std::string& why) {
    // Leave through the normal shutdown (the fence already refuses every
    // write); the exit code tells the restart policy why.
    if (!leadership_lost.exchange(true)) {
      LOG(WARNING) << "[supervisor] lost leadership (" << why << "); exiting with code 3";
      ::kill(::getpid(), SIGTERM);
    }
  };
  // The web console's own listener (its page loads without a token; the
  // console checks every API call itself).
  sluice::metrics::HttpRoutes console_routes;
  std::unique_ptr<sluice::supervisor::console::ConsoleServer> console_http;
  if (!FLAGS_console_listen.empty()) {
    if (options.auth.insecure_no_auth && !sluice::auth::IsLoopbackAddress(FLAGS_console_listen)) {
      LOG(ERROR) << "--console_listen=" << FLAGS_console_listen
                 << " is not a loopback address and authentication is off "
                    "(--insecure_no_auth): anyone reaching it could act as an admin";
      return 2;
    }
    // HTTPS with the gRPC server's certificate when it has one.
    auto console = sluice::supervisor::console::ConsoleServer::Start(
        {.listen = FLAGS_console_listen,
         .tls_cert_path = options.tls.cert_path,
         .tls_key_path = options.tls.key_path,
         .routes = &console_routes});
    if (!console.ok()) {
      LOG(ERROR) << "[supervisor] --console_listen: " << console.status();
      return console.status().code() == absl::StatusCode::kInvalidArgument ? 2 : 1;
    }
    console_http = *std::move(console);
    options.console_routes = &console_routes;
    LOG(INFO) << "[supervisor] web console at " << (console_http->tls() ? "https" : "http")
              << "://" << FLAGS_console_listen.substr(0, FLAGS_console_listen.rfind(':')) << ":"
              << console_http->port() << "/console/";
  }
  auto server = sluice::supervisor::SupervisorServer::Start(std::move(options));
  if (!server.ok()) {
    LOG(ERROR) << "[supervisor] cannot start: " << server.status();
    return 1;
  }
  sluice::ServeUntilShutdownSignal("[supervisor]", [&](absl::Duration grace) {
    (*server)->Shutdown(leadership_lost ? absl::Seconds(1) : grace);
  });
  return leadership_lost ? 3 : 0;
}
