#include "supervisor/supervisor_server.h"

#include <glog/logging.h>
#include <unistd.h>

#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/file_util.h"
#include "common/kafka/library_version.h"
#include "common/metrics/catalog.h"
#include "common/open_deep_storage.h"
#include "supervisor/console/console_handler.h"
#include "supervisor/iceberg/iceberg_rest_routes.h"
#include "common/request_limits.h"
#include "common/status_macros.h"
#include "supervisor/store/leader_lease_rows.h"
#include "supervisor/store/metadata_store_url.h"
#include "supervisor/stream_metadata.h"
#include "supervisor/grpc_task_client.h"

namespace sluice::supervisor {
namespace {

constexpr char kServiceName[] = "sluice.v1.SupervisorService";

std::string HostName() {
  char host[256] = {0};
  ::gethostname(host, sizeof(host) - 1);
  return host[0] ? host : "supervisor";
}

// host:port others reach `bound` at: a wildcard host becomes the host name.
std::string AdvertisedAddress(const std::string& bound) {
  const size_t colon = bound.rfind(':');
  if (colon == std::string::npos) return bound;
  const std::string host = bound.substr(0, colon);
  if (host == "0.0.0.0" || host == "[::]" || host == "::" || host.empty()) {
    return absl::StrCat(HostName(), bound.substr(colon));
  }
  return bound;
}

}  // namespace

absl::Status CheckNoLiveLeaderLease(MetadataStore* store) {
  std::optional<LeaderLease> lease;
  int64_t now_ms = 0;
  SLUICE_RETURN_IF_ERROR(store->InLeaseTransaction([&](SqlConnection* db) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(now_ms, DatabaseNowMs(db));
    SLUICE_ASSIGN_OR_RETURN(lease, ReadLeaderLease(db));
    return absl::OkStatus();
  }));
  if (!lease.has_value() || lease->expires_at_ms <= now_ms) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "the metadata store ", store->description(), " is led by supervisor ", lease->holder_id,
      " at ", lease->holder_address, " (leader election, epoch ", lease->epoch,
      "; its lease expires in ", lease->expires_at_ms - now_ms, " ms, at ",
      absl::FormatTime(absl::FromUnixMillis(lease->expires_at_ms)),
      " by the database's clock): a supervisor without --leader_election would be a second, "
      "unfenced leader. Start this one with --leader_election (it then waits as a standby), "
      "or stop that supervisor and wait for its lease to expire"));
}

absl::StatusOr<std::unique_ptr<SupervisorServer>> SupervisorServer::Start(
    SupervisorServerOptions options) {
  if (options.data_dir.empty()) return absl::InvalidArgumentError("--data_dir is required");
  SLUICE_RETURN_IF_ERROR(MakePrivateDir(options.data_dir));
  if (options.deep_storage_uri.empty()) {
    options.deep_storage_uri = absl::StrCat("file://", options.data_dir, "/deep-storage");
  }
  options.auth.client_certificates = !options.tls.ca_path.empty();
  std::unique_ptr<SupervisorServer> server(new SupervisorServer());
  SLUICE_ASSIGN_OR_RETURN(server->authorizer_,
                          auth::Authorizer::Create(options.auth, {v1::SupervisorService::service_full_name()}));
  if (!server->authorizer_->enabled()) {
    LOG(WARNING) << "[supervisor] authentication is OFF (--insecure_no_auth): every caller has "
                    "every role"
                 << (auth::IsLoopbackAddress(options.listen_address)
                         ? ""
                         : absl::StrCat("; and ", options.listen_address,
                                        " is reachable beyond loopback"));
  }
  SLUICE_ASSIGN_OR_RETURN(server->deep_storage_, OpenDeepStorage(options.deep_storage_uri, options.deep_storage_options));

  MetadataStoreOptions store_options;
  SLUICE_RETURN_IF_ERROR(
      ApplyMetadataStoreUrl(options.metadata_store_url, options.data_dir, &store_options));
  SLUICE_ASSIGN_OR_RETURN(server->store_, MetadataStore::Open(store_options));
  SLUICE_ASSIGN_OR_RETURN(const int schema, server->store_->SchemaVersion());
  LOG(INFO) << "[supervisor] metadata store " << server->store_->description()
            << " (schema version " << schema
            << (server->store_->dialect() == SqlDialect::kSqlite
                    ? ", WAL, synchronous=FULL)"
                    : ", PostgreSQL, SERIALIZABLE transactions)");

  SupervisorManagerOptions& manager_options = server->manager_options_;
  manager_options.store = server->store_.get();
  manager_options.deep_storage = server->deep_storage_.get();
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<grpc::ChannelCredentials> task_credentials,
                          tls::MakeChannelCredentials(options.tls));
  manager_options.task_client_factory = [task_credentials,
                                         client_auth = options.client_auth](const ChatOptions& chat) {
    return NewGrpcTaskClient(chat, task_credentials, client_auth);
  };
  manager_options.metrics = options.metrics;
  manager_options.stream_metadata_factory =
      KafkaStreamMetadataFactory(options.kafka_policy, nullptr, options.metrics);
  manager_options.kafka_policy = options.kafka_policy;
  manager_options.heartbeat_interval = options.heartbeat_interval;
  manager_options.min_worker_lost_timeout = options.min_worker_lost_timeout;
  manager_options.handoff_period = options.handoff_period;
  manager_options.iceberg_orphan_min_age = options.iceberg_orphan_min_age;
  manager_options.replaced_segment_retention = options.replaced_segment_retention;
  manager_options.pauseless_checkpoints = options.pauseless_checkpoints;
  manager_options.pauseless_margin = options.pauseless_margin;
  manager_options.scratch_dir = absl::StrCat(options.data_dir, "/scratch");
  SLUICE_RETURN_IF_ERROR(MakeDirs(manager_options.scratch_dir));
  if (options.http_routes != nullptr) {
    IcebergRestCatalogOptions catalog_options;
    catalog_options.store = server->store_.get();
    catalog_options.storage = server->deep_storage_.get();
    catalog_options.scratch_dir = manager_options.scratch_dir;
    SLUICE_ASSIGN_OR_RETURN(IcebergRestCatalog catalog,
                            IcebergRestCatalog::Create(std::move(catalog_options)));
    SLUICE_RETURN_IF_ERROR(options.http_routes->Add(
        kIcebergRestPrefix, std::make_shared<IcebergRestHandler>(std::move(catalog))));
    server->iceberg_routes_ = options.http_routes;
    LOG(INFO) << "[supervisor] Iceberg REST catalog (read-only) at " << kIcebergRestPrefix
              << " of the metrics endpoint";
  }
  metrics::Counter* fenced_counter = nullptr;
  if (options.metrics != nullptr) {
    server->leader_gauge_ = options.metrics->GetGauge(metrics::kSupervisorLeader);
    fenced_counter = options.metrics->GetCounter(metrics::kSupervisorFencedTransactions);
  }

  if (!options.leader_election) {
    // Before anything is written: a store some elected supervisor leads
    // must not get a second, unfenced leader.
    SLUICE_RETURN_IF_ERROR(CheckNoLiveLeaderLease(server->store_.get()));
    absl::MutexLock lock(&server->mu_);
    SLUICE_ASSIGN_OR_RETURN(server->manager_, SupervisorManager::Create(manager_options));
    server->gate_ = std::make_unique<LeadershipGate>(server->manager_.get());
    if (server->leader_gauge_ != nullptr) server->leader_gauge_->Set(1);
  } else {
    if (options.leader_lease < absl::Seconds(1)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--leader_lease_ms must be at least 1000 (got ",
                       absl::ToInt64Milliseconds(options.leader_lease), ")"));
    }
    if (options.supervisor_id.empty()) {
      options.supervisor_id = absl::StrCat(HostName(), "-", ::getpid());
    }
    // No manager until the elector says this supervisor leads.
    server->gate_ = std::make_unique<LeadershipGate>();
    if (server->leader_gauge_ != nullptr) server->leader_gauge_->Set(0);
  }
  server->service_ =
      std::make_unique<SupervisorServiceImpl>(server->gate_.get(), server->authorizer_.get());

  GrpcServerOptions grpc_options;
  // gRPC refuses undecoded what is over every method's bound; each method
  // checks its own bound before its handler (common/request_limits.h).
  grpc_options.max_request_bytes =
      static_cast<int>(MaxRequestBytesOfService(v1::SupervisorService::service_full_name()));
  grpc_options.listen_address = options.listen_address;
  grpc_options.services = {server->service_.get()};
  SLUICE_ASSIGN_OR_RETURN(grpc_options.credentials, tls::MakeServerCredentials(options.tls));
  grpc_options.metrics = options.metrics;
  SLUICE_ASSIGN_OR_RETURN(server->grpc_, GrpcServer::Start(std::move(grpc_options)));
  if (options.console_routes != nullptr) {
    // The console's calls go through this very server (in-process), as the
    // browser's caller: authenticated, authorized and logged like any other.
    console::ConsoleHandlerOptions console_options;
    console_options.channel = server->grpc_->server()->InProcessChannel(grpc::ChannelArguments());
    console_options.authorizer = server->authorizer_.get();
    SupervisorServer* raw = server.get();
    console_options.statuses = [raw] {
      std::vector<v1::SupervisorStatus> statuses;
      SupervisorManager* manager = raw->manager();
      if (manager == nullptr) return statuses;  // a standby
      absl::StatusOr<v1::ListSupervisorsResponse> list = manager->reads()->List();
      if (!list.ok()) return statuses;
      for (const v1::SupervisorSummary& summary : list->supervisors()) {
        absl::StatusOr<v1::SupervisorStatus> status =
            manager->reads()->Status(summary.datasource());
        if (status.ok()) statuses.push_back(*std::move(status));
      }
      return statuses;
    };
    SLUICE_RETURN_IF_ERROR(options.console_routes->Add(
        console::kConsolePrefix, std::make_shared<console::ConsoleHandler>(console_options)));
    server->console_routes_ = options.console_routes;
  }
  server->options_ = std::move(options);
  const SupervisorServerOptions& opts = server->options_;
  if (!opts.leader_election) {
    server->grpc_->SetServing(true);
    server->grpc_->SetServiceServing(kServiceName, true);
    absl::MutexLock lock(&server->mu_);
    LOG(INFO) << "[supervisor] serving sluice.v1.SupervisorService on " << server->address()
              << " (data dir " << opts.data_dir << ", deep storage " << opts.deep_storage_uri
              << ", instance " << server->manager_->instance_id() << ", "
              << sluice::kafka::LibrdkafkaDescription() << ")";
    return server;
  }

  // Alive, not ready: "" serves, the service does not until this leads.
  server->grpc_->SetServiceServing("", true);
  server->grpc_->SetServiceServing(kServiceName, false);
  LeaderElectorOptions elector;
  elector.store = server->store_.get();
  elector.supervisor_id = opts.supervisor_id;
  elector.address =
      opts.advertise_address.empty() ? AdvertisedAddress(server->address()) : opts.advertise_address;
  elector.lease = opts.leader_lease;
  SupervisorServer* raw = server.get();
  elector.on_elected = [raw](int64_t epoch) { raw->BecomeLeader(epoch); };
  elector.on_lost = [raw](const std::string& why) { raw->StopLeading(why); };
  if (fenced_counter != nullptr) {
    elector.on_fenced = [fenced_counter] { fenced_counter->Increment(); };
  }
  LOG(INFO) << "[supervisor] " << opts.supervisor_id << " serving on " << server->address()
            << " (advertised as " << elector.address << ") as a standby until it holds the "
            << "leader lease (" << absl::FormatDuration(opts.leader_lease) << ") in "
            << server->store_->description() << "; data dir " << opts.data_dir
            << ", deep storage " << opts.deep_storage_uri << ", "
            << sluice::kafka::LibrdkafkaDescription();
  server->elector_ = std::make_unique<LeaderElector>(std::move(elector));
  server->gate_->AttachElector(server->elector_.get());
  server->elector_->Start();
  return server;
}

void SupervisorServer::BecomeLeader(int64_t epoch) {
  absl::MutexLock lock(&mu_);
  if (shutting_down_) return;
  leading_thread_ = std::thread([this, epoch] {
    const absl::Time start = absl::Now();
    absl::StatusOr<std::unique_ptr<SupervisorManager>> manager =
        SupervisorManager::Create(manager_options_);
    if (!manager.ok()) {
      LOG(ERROR) << "[supervisor] cannot start leading at epoch " << epoch << ": "
                 << manager.status();
      StopLeading(absl::StrCat("cannot start leading: ", manager.status().ToString()));
      return;
    }
    {
      absl::MutexLock lock(&mu_);
      if (shutting_down_) return;  // the new manager stops as it goes out of scope
      manager_ = std::move(*manager);
      gate_->SetManager(manager_.get());
      LOG(INFO) << "[supervisor] serving sluice.v1.SupervisorService as the leader (epoch "
                << epoch << ", instance " << manager_->instance_id() << "; took "
                << absl::FormatDuration(absl::Now() - start) << " to adopt)";
    }
    grpc_->SetServiceServing(kServiceName, true);
    if (leader_gauge_ != nullptr) leader_gauge_->Set(1);
  });
}

void SupervisorServer::StopLeading(const std::string& why) {
  gate_->Close();
  grpc_->SetServiceServing(kServiceName, false);
  if (leader_gauge_ != nullptr) leader_gauge_->Set(0);
  if (options_.on_leadership_lost) options_.on_leadership_lost(why);
}

SupervisorManager* SupervisorServer::manager() {
  absl::MutexLock lock(&mu_);
  return manager_.get();
}

SupervisorServer::~SupervisorServer() { Shutdown(absl::ZeroDuration()); }

void SupervisorServer::Shutdown(absl::Duration grace) {
  // First: the catalog reads the store and deep storage this server owns
  // (Remove waits for a request being answered).
  if (iceberg_routes_ != nullptr) {
    iceberg_routes_->Remove(kIcebergRestPrefix);
    iceberg_routes_ = nullptr;
  }
  // The console calls this server and samples the manager.
  if (console_routes_ != nullptr) {
    console_routes_->Remove(console::kConsolePrefix);
    console_routes_ = nullptr;
  }
  std::thread leading;
  {
    absl::MutexLock lock(&mu_);
    shutting_down_ = true;
    leading = std::move(leading_thread_);
  }
  if (leading.joinable()) leading.join();
  if (grpc_) grpc_->Shutdown(grace);
  if (gate_) gate_->Close();
  std::unique_ptr<SupervisorManager> manager;
  {
    absl::MutexLock lock(&mu_);
    manager = std::move(manager_);
  }
  manager.reset();
  // Last: the lease is renewed while the manager finishes, then given up so
  // that a standby leads at once.
  if (elector_) elector_->Stop(/*resign=*/true);
}

}  // namespace sluice::supervisor
