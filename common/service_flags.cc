#include "common/service_flags.h"

#include <gflags/gflags.h>
#include <glog/logging.h>

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/strip.h"
#include "common/grpc_server.h"
#include "common/metrics/process_metrics.h"

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
DEFINE_string(tls_cert, "", "PEM certificate chain for the gRPC server and outgoing calls");
DEFINE_string(tls_key, "", "PEM private key of --tls_cert");
DEFINE_string(tls_ca, "", "PEM CA bundle: peers must present certificates it signed (mutual TLS)");
DEFINE_int32(shutdown_grace_seconds, 20, "how long running calls get to finish on SIGTERM");
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

namespace sluice {

void InitServiceProcess(const char* usage, int* argc, char*** argv) {
  BlockShutdownSignals();
  gflags::SetUsageMessage(usage);
  gflags::ParseCommandLineFlags(argc, argv, true);
  FLAGS_logtostderr = true;
  google::InitGoogleLogging((*argv)[0]);
}

std::string DeepStorageUriFromFlags() { return FLAGS_deep_storage; }

DeepStorageOptions DeepStorageOptionsFromFlags() {
  DeepStorageOptions options;
  s3::S3Options& s3 = options.s3;
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
  return options;
}

tls::TlsOptions TlsOptionsFromFlags() {
  tls::TlsOptions options;
  options.cert_path = FLAGS_tls_cert;
  options.key_path = FLAGS_tls_key;
  options.ca_path = FLAGS_tls_ca;
  return options;
}

int StartServiceFromFlags(absl::string_view component, const std::string& fault_points,
                          const std::string& metrics_listen, metrics::Registry* registry,
                          metrics::HttpRoutes* routes, ServiceBasics* basics) {
  absl::StatusOr<SecurityOptions> security = LoadSecurityOptions(
      {FLAGS_auth_tokens_file, FLAGS_auth_policy_file, FLAGS_insecure_no_auth, FLAGS_auth_token_file,
       FLAGS_kafka_files_dir, FLAGS_kafka_denied_properties, FLAGS_kafka_allow_oidc_token_endpoint,
       FLAGS_kafka_secret_env_prefix, FLAGS_kafka_secret_destinations_file});
  if (!security.ok()) {
    LOG(ERROR) << component << " " << security.status();
    return 2;
  }
  // The metrics endpoint checks the credentials the gRPC server accepts.
  auth::AuthOptions metrics_auth = security->auth;
  metrics_auth.client_certificates = !FLAGS_tls_ca.empty();
  absl::StatusOr<std::unique_ptr<metrics::MetricsHttpServer>> metrics_http =
      StartServiceBasics(component, fault_points, metrics_listen, registry, metrics_auth, routes);
  if (!metrics_http.ok()) {
    LOG(ERROR) << component << " " << metrics_http.status();
    return metrics_http.status().code() == absl::StatusCode::kInvalidArgument ? 2 : 1;
  }
  basics->security = *std::move(security);
  basics->metrics_http = *std::move(metrics_http);
  // "[worker]" -> component="worker".
  basics->process_gauges = metrics::AddProcessGauges(
      registry, absl::StripSuffix(absl::StripPrefix(component, "["), "]"));
  return 0;
}

void ServeUntilShutdownSignal(absl::string_view component,
                              const std::function<void(absl::Duration grace)>& shutdown) {
  const int signal_number = WaitForShutdownSignal();
  LOG(INFO) << component << " signal " << signal_number << ": shutting down";
  shutdown(absl::Seconds(FLAGS_shutdown_grace_seconds));
  LOG(INFO) << component << " stopped";
}

}  // namespace sluice
