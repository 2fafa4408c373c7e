// The flags both binaries (sluice-supervisor, sluice-task) share, defined
// once in service_flags.cc (the only file besides the two mains that defines
// flags), and the start-up and shutdown every main does with them: deep
// storage and S3, TLS, authentication and Kafka property policy, shutdown
// grace. Each main keeps the flags that are its own (those whose default or
// help differs too: --listen, --data_dir, --metrics_listen, --fault_points)
// and its wiring.
#ifndef SLUICE_COMMON_SERVICE_FLAGS_H_
#define SLUICE_COMMON_SERVICE_FLAGS_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/metrics/http_routes.h"
#include "common/metrics/http_server.h"
#include "common/metrics/registry.h"
#include "common/open_deep_storage.h"
#include "common/service_start.h"
#include "common/tls/credentials.h"

namespace sluice {

// What every main does first: blocks the shutdown signals (before any thread
// starts, so only WaitForShutdownSignal sees them), parses the command line
// (unknown flags exit), logs to stderr.
void InitServiceProcess(const char* usage, int* argc, char*** argv);

// --deep_storage as given (empty: the binary's default under its data dir).
std::string DeepStorageUriFromFlags();
// The --s3_* flags.
DeepStorageOptions DeepStorageOptionsFromFlags();
// --tls_cert, --tls_key, --tls_ca.
tls::TlsOptions TlsOptionsFromFlags();

// What StartServiceFromFlags sets up; outlives the server it is given to.
struct ServiceBasics {
  SecurityOptions security;
  // Null when --metrics_listen is empty.
  std::unique_ptr<metrics::MetricsHttpServer> metrics_http;
  // The process's own gauges (resident memory) on the registry.
  std::unique_ptr<metrics::Registry::CallbackHandle> process_gauges;
};

// Loads the security settings from the shared flags (LoadSecurityOptions),
// then StartServiceBasics: umask, `fault_points`, and the metrics endpoint
// on `metrics_listen` checking the credentials the gRPC server accepts
// (client certificates when --tls_ca is set). Returns 0 with `basics` set;
// otherwise logs "<component> <error>" and returns main's exit code: 2 for
// settings refused (the security flags, INVALID_ARGUMENT), 1 otherwise.
int StartServiceFromFlags(absl::string_view component, const std::string& fault_points,
                          const std::string& metrics_listen, metrics::Registry* registry,
                          metrics::HttpRoutes* routes, ServiceBasics* basics);

// Waits for SIGTERM or SIGINT, then calls `shutdown` with
// --shutdown_grace_seconds (how long running calls get to finish), logging
// the signal and the end under `component`.
void ServeUntilShutdownSignal(absl::string_view component,
                              const std::function<void(absl::Duration grace)>& shutdown);

}  // namespace sluice

#endif  // SLUICE_COMMON_SERVICE_FLAGS_H_
