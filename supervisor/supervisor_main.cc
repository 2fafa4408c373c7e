// sluice-supervisor: owns the metadata store and runs one stream supervisor
// per datasource. Flags are read here and nowhere else.
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>

#include "common/grpc_server.h"
#include "common/metrics/registry.h"
#include "common/service_start.h"
#include "supervisor/supervisor_server.h"

DEFINE_string(listen, "0.0.0.0:7070", "host:port to serve gRPC on (port 0: pick a free one)");
DEFINE_string(data_dir, "./sluice-data/supervisor",
              "directory of the supervisor's files (and of the SQLite metadata store)");
DEFINE_string(metadata_store, "",
              "sqlite:///path/metadata.db or postgresql://user@host:port/db?sslmode=...&"
              "password_file=/path (no inline password; PGPASSFILE works too); "
              "empty: sqlite under --data_dir");
DEFINE_string(deep_storage, "",
              "deep storage URI, file:///path or s3://bucket/prefix "
              "(default: <data_dir>/deep-storage)");
DEFINE_string(s3_endpoint, "",
              "S3 API endpoint for an s3:// --deep_storage, http(s)://host[:port] "
              "(default: https://s3.<region>.amazonaws.com)");
DEFINE_string(s3_region, "us-east-1", "S3 region (signs requests)");
DEFINE_bool(s3_path_style, false,
            "address buckets as <endpoint>/<bucket> (most S3-compatible servers) instead of "
            "<bucket>.<endpoint host>");
DEFINE_int32(s3_part_size_mb, 16, "S3 multipart part size; files larger than 4 parts are uploaded in parts");
DEFINE_int32(s3_max_attempts, 6,
             "S3 requests are tried this often on 5xx, throttling and timeouts, then fail");
DEFINE_int32(s3_request_timeout_ms, 120000, "deadline of one S3 request (one part for uploads)");
DEFINE_string(metrics_listen, "",
              "host:port to serve Prometheus /metrics and /healthz on, plain HTTP (empty: off); "
              "with authentication on, all but /healthz need a reader or admin bearer token; "
              "also serves the read-only Iceberg REST catalog at /iceberg (docs/iceberg.md)");
DEFINE_string(tls_cert, "", "PEM certificate chain for the gRPC server and outgoing calls");
DEFINE_string(tls_key, "", "PEM private key of --tls_cert");
DEFINE_string(tls_ca, "", "PEM CA bundle: peers must present certificates it signed (mutual TLS)");
DEFINE_int32(shutdown_grace_seconds, 20, "how long running calls get to finish on SIGTERM");
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
DEFINE_string(auth_tokens_file, "",
              "file of accepted bearer tokens, hashed: lines \"sha256:<hex> <name>\" "
              "(see docs/operations.md)");
DEFINE_string(auth_policy_file, "",
              "principal -> roles: lines \"token:<name>|cert:<SAN URI or CN> <roles> [worker id]\"");
DEFINE_bool(insecure_no_auth, false,
            "serve without authentication: every caller has every role (loopback demos only)");
DEFINE_string(auth_token_file, "", "file holding this process's own bearer token for its calls");
DEFINE_string(kafka_files_dir, "",
              "the only directory spec properties may name files in (key stores, CA files, "
              "${file:} secrets); empty: none");
DEFINE_string(kafka_denied_properties, "",
              "comma-separated librdkafka properties to refuse in specs, besides the built-in list");
DEFINE_bool(kafka_allow_oidc_token_endpoint, false,
            "allow specs to set sasl.oauthbearer.method=oidc and its token endpoint URL");
DEFINE_string(kafka_secret_env_prefix, "SLUICE_SECRET_",
              "${env:NAME} secret references must name a variable with this prefix");
DEFINE_string(kafka_secret_destinations_file, "",
              "file binding each ${env:}/${file:} secret reference to the Kafka servers "
              "(host:port, * in the host) it may be sent to; a reference resolves only when "
              "every bootstrap server of the spec is allowed for it. Empty: specs cannot use "
              "references (see docs/operations.md)");
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
DEFINE_string(fault_points, "",
              "fault injection for tests, e.g. supervisor.publish.after_commit=crash "
              "(see common/fault_injection.h)");

namespace {
std::atomic<bool> leadership_lost{false};
}  // namespace

int main(int argc, char** argv) {
  sluice::BlockShutdownSignals();
  gflags::SetUsageMessage("sluice supervisor: exactly-once Kafka ingestion into segments");
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  FLAGS_logtostderr = true;
  google::InitGoogleLogging(argv[0]);

  auto security = sluice::LoadSecurityOptions(
      {FLAGS_auth_tokens_file, FLAGS_auth_policy_file, FLAGS_insecure_no_auth, FLAGS_auth_token_file,
       FLAGS_kafka_files_dir, FLAGS_kafka_denied_properties, FLAGS_kafka_allow_oidc_token_endpoint,
       FLAGS_kafka_secret_env_prefix, FLAGS_kafka_secret_destinations_file});
  if (!security.ok()) {
    LOG(ERROR) << "[supervisor] " << security.status();
    return 2;
  }
  // Outlive the gRPC server and the metrics endpoint (both point into them).
  sluice::metrics::Registry registry;
  // The endpoint's further paths: the server adds the Iceberg REST catalog.
  sluice::metrics::HttpRoutes http_routes;
  // The metrics endpoint checks the credentials the gRPC server accepts.
  sluice::auth::AuthOptions metrics_auth = security->auth;
  metrics_auth.client_certificates = !FLAGS_tls_ca.empty();
  auto metrics_http = sluice::StartServiceBasics("[supervisor]", FLAGS_fault_points,
                                                 FLAGS_metrics_listen, &registry, metrics_auth,
                                                 &http_routes);
  if (!metrics_http.ok()) {
    LOG(ERROR) << "[supervisor] " << metrics_http.status();
    return metrics_http.status().code() == absl::StatusCode::kInvalidArgument ? 2 : 1;
  }

  sluice::supervisor::SupervisorServerOptions options;
  options.listen_address = FLAGS_listen;
  options.data_dir = FLAGS_data_dir;
  options.metadata_store_url = FLAGS_metadata_store;
  options.deep_storage_uri = FLAGS_deep_storage;
  {
    sluice::s3::S3Options& s3 = options.deep_storage_options.s3;
    s3.endpoint = FLAGS_s3_endpoint;
    s3.region = FLAGS_s3_region;
    s3.path_style = FLAGS_s3_path_style;
    s3.part_size_bytes = int64_t{FLAGS_s3_part_size_mb} << 20;
    s3.multipart_threshold_bytes = 4 * s3.part_size_bytes;
    s3.retry.max_attempts = FLAGS_s3_max_attempts;
    s3.request_timeout = absl::Milliseconds(FLAGS_s3_request_timeout_ms);
    // Credentials: AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY/AWS_SESSION_TOKEN or
    // AWS_SHARED_CREDENTIALS_FILE/~/.aws/credentials with AWS_PROFILE, loaded
    // by OpenDeepStorage.
  }
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
  options.tls.cert_path = FLAGS_tls_cert;
  options.tls.key_path = FLAGS_tls_key;
  options.tls.ca_path = FLAGS_tls_ca;
  options.auth = security->auth;
  options.client_auth = security->client_auth;
  options.kafka_policy = security->kafka_policy;
  options.metrics = &registry;
  if (*metrics_http != nullptr) options.http_routes = &http_routes;
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
  auto server = sluice::supervisor::SupervisorServer::Start(std::move(options));
  if (!server.ok()) {
    LOG(ERROR) << "[supervisor] cannot start: " << server.status();
    return 1;
  }
  const int signal_number = sluice::WaitForShutdownSignal();
  LOG(INFO) << "[supervisor] signal " << signal_number << ": shutting down";
  (*server)->Shutdown(absl::Seconds(leadership_lost ? 1 : FLAGS_shutdown_grace_seconds));
  LOG(INFO) << "[supervisor] stopped";
  return leadership_lost ? 3 : 0;
}
