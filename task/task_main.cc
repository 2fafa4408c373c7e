// sluice-task: a task worker. Runs the reading tasks the supervisor assigns,
// restores them after a restart. Flags are read here and nowhere else.
#include <gflags/gflags.h>
#include <glog/logging.h>

#include "common/grpc_server.h"
#include "common/metrics/http_server.h"
#include "common/metrics/registry.h"
#include "task/worker_server.h"

DEFINE_string(listen, "0.0.0.0:7071", "host:port to serve gRPC on (port 0: pick a free one)");
DEFINE_string(data_dir, "./sluice-data/worker", "directory of task state (sequences, spills)");
DEFINE_string(supervisor, "127.0.0.1:7070", "host:port of the supervisor");
DEFINE_string(deep_storage, "", "deep storage URI, file:///path (default: <data_dir>/deep-storage)");
DEFINE_string(worker_id, "", "stable worker id, e.g. the pod name (default: host name)");
DEFINE_string(advertise_address, "", "host:port the supervisor dials (default: the bound address)");
DEFINE_int32(capacity, 4, "task slots");
DEFINE_string(metrics_listen, "",
              "host:port to serve Prometheus /metrics and /healthz on, plain HTTP (empty: off)");
DEFINE_string(tls_cert, "", "PEM certificate chain for the gRPC server and outgoing calls");
DEFINE_string(tls_key, "", "PEM private key of --tls_cert");
DEFINE_string(tls_ca, "",
              "PEM CA bundle: peers must present certificates it signed (mutual TLS)");
DEFINE_int32(shutdown_grace_seconds, 20, "how long running calls get to finish on SIGTERM");

int main(int argc, char** argv) {
  sluice::BlockShutdownSignals();
  gflags::SetUsageMessage("sluice task worker");
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  FLAGS_logtostderr = true;
  google::InitGoogleLogging(argv[0]);

  // Outlives the gRPC server and the metrics endpoint (both point into it).
  sluice::metrics::Registry registry;
  auto metrics_http =
      sluice::metrics::MetricsHttpServer::StartIfListening(FLAGS_metrics_listen, &registry);
  if (!metrics_http.ok()) {
    LOG(ERROR) << "[worker] cannot serve metrics: " << metrics_http.status();
    return 1;
  }
  if (*metrics_http) {
    LOG(INFO) << "[worker] metrics on port " << (*metrics_http)->port();
  }

  sluice::task::WorkerServerOptions options;
  options.listen_address = FLAGS_listen;
  options.data_dir = FLAGS_data_dir;
  options.supervisor_address = FLAGS_supervisor;
  options.deep_storage_uri = FLAGS_deep_storage;
  options.worker_id = FLAGS_worker_id;
  options.advertise_address = FLAGS_advertise_address;
  options.capacity = FLAGS_capacity;
  options.tls.cert_path = FLAGS_tls_cert;
  options.tls.key_path = FLAGS_tls_key;
  options.tls.ca_path = FLAGS_tls_ca;
  options.metrics = &registry;
  auto server = sluice::task::WorkerServer::Start(std::move(options));
  if (!server.ok()) {
    LOG(ERROR) << "[worker] cannot start: " << server.status();
    return 1;
  }
  const int signal_number = sluice::WaitForShutdownSignal();
  LOG(INFO) << "[worker] signal " << signal_number << ": shutting down";
  (*server)->Shutdown(absl::Seconds(FLAGS_shutdown_grace_seconds));
  LOG(INFO) << "[worker] stopped";
  return 0;
}
