// sluice-supervisor: owns the metadata store and runs one stream supervisor
// per datasource. Flags are read here and nowhere else.
#include <gflags/gflags.h>
#include <glog/logging.h>

#include "common/grpc_server.h"
#include "common/metrics/http_server.h"
#include "common/metrics/registry.h"
#include "supervisor/supervisor_server.h"

DEFINE_string(listen, "0.0.0.0:7070", "host:port to serve gRPC on (port 0: pick a free one)");
DEFINE_string(data_dir, "./sluice-data/supervisor", "directory of the metadata store");
DEFINE_string(deep_storage, "", "deep storage URI, file:///path (default: <data_dir>/deep-storage)");
DEFINE_string(metrics_listen, "",
              "host:port to serve Prometheus /metrics and /healthz on, plain HTTP (empty: off)");
DEFINE_string(tls_cert, "", "PEM certificate chain for the gRPC server and outgoing calls");
DEFINE_string(tls_key, "", "PEM private key of --tls_cert");
DEFINE_string(tls_ca, "",
              "PEM CA bundle: peers must present certificates it signed (mutual TLS)");
DEFINE_int32(shutdown_grace_seconds, 20, "how long running calls get to finish on SIGTERM");

int main(int argc, char** argv) {
  sluice::BlockShutdownSignals();
  gflags::SetUsageMessage("sluice supervisor: exactly-once Kafka ingestion into segments");
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  FLAGS_logtostderr = true;
  google::InitGoogleLogging(argv[0]);

  // Outlives the gRPC server and the metrics endpoint (both point into it).
  sluice::metrics::Registry registry;
  std::unique_ptr<sluice::metrics::MetricsHttpServer> metrics_http;
  if (!FLAGS_metrics_listen.empty()) {
    sluice::metrics::MetricsHttpServerOptions metrics_options;
    metrics_options.listen = FLAGS_metrics_listen;
    metrics_options.registry = &registry;
    auto started = sluice::metrics::MetricsHttpServer::Start(std::move(metrics_options));
    if (!started.ok()) {
      LOG(ERROR) << "[supervisor] cannot serve metrics: " << started.status();
      return 1;
    }
    metrics_http = std::move(*started);
    LOG(INFO) << "[supervisor] metrics on " << FLAGS_metrics_listen << " (port "
              << metrics_http->port() << ")";
  }

  sluice::supervisor::SupervisorServerOptions options;
  options.listen_address = FLAGS_listen;
  options.data_dir = FLAGS_data_dir;
  options.deep_storage_uri = FLAGS_deep_storage;
  options.tls.cert_path = FLAGS_tls_cert;
  options.tls.key_path = FLAGS_tls_key;
  options.tls.ca_path = FLAGS_tls_ca;
  options.metrics = &registry;
  auto server = sluice::supervisor::SupervisorServer::Start(std::move(options));
  if (!server.ok()) {
    LOG(ERROR) << "[supervisor] cannot start: " << server.status();
    return 1;
  }
  const int signal_number = sluice::WaitForShutdownSignal();
  LOG(INFO) << "[supervisor] signal " << signal_number << ": shutting down";
  (*server)->Shutdown(absl::Seconds(FLAGS_shutdown_grace_seconds));
  LOG(INFO) << "[supervisor] stopped";
  return 0;
}
