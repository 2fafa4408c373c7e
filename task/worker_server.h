// The task worker process minus flag parsing: owns the gRPC server and the
// tasks it runs. `main` builds the options; tests start it in-process.
#ifndef SLUICE_TASK_WORKER_SERVER_H_
#define SLUICE_TASK_WORKER_SERVER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/deep_storage.h"
#include "common/grpc_server.h"
#include "common/metrics/registry.h"
#include "common/tls/credentials.h"
#include "task/task_service.h"

namespace sluice::task {

struct WorkerServerOptions {
  // host:port to serve on; port 0 picks a free one.
  std::string listen_address = "127.0.0.1:0";
  // Task state lives in <data_dir>/tasks/<task id>/; created if missing.
  std::string data_dir;
  // host:port of the supervisor.
  std::string supervisor_address;
  // "file:///path"; empty = <data_dir>/deep-storage.
  std::string deep_storage_uri;
  // Certificates for the gRPC server and for the calls it makes to the supervisor
  // (tls::MakeChannelCredentials); mutual TLS when ca_path is set. Empty:
  // plaintext.
  tls::TlsOptions tls;
  // Metrics of this process (gRPC requests and what the core records); null:
  // none. Not owned; must outlive the server.
  metrics::Registry* metrics = nullptr;
  // Stable id (e.g. the pod name); empty = derived from the host name.
  std::string worker_id;
  // Address the supervisor should dial; empty = the bound address.
  std::string advertise_address;
  // Task slots.
  int capacity = 4;
};

class WorkerServer {
 public:
  static absl::StatusOr<std::unique_ptr<WorkerServer>> Start(WorkerServerOptions options);
  ~WorkerServer();

  const std::string& address() const { return grpc_->address(); }
  const std::string& worker_id() const { return options_.worker_id; }

  void Shutdown(absl::Duration grace);

 private:
  WorkerServer() = default;

  WorkerServerOptions options_;
  std::unique_ptr<DeepStorage> deep_storage_;
  std::unique_ptr<TaskServiceImpl> service_;
  std::unique_ptr<GrpcServer> grpc_;
};

}  // namespace sluice::task

#endif  // SLUICE_TASK_WORKER_SERVER_H_
