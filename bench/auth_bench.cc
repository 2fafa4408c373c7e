// The cost of authentication per call (not part of the test suite):
//   bazel run -c opt //bench:auth_bench
//
// BM_Authorize*: the authorizer alone (plain C++): a bearer token hashed
// (SHA-256) and looked up, the policy grant, the method's roles.
// BM_GrpcCall/*: a unary RPC (ListWorkers) on loopback against an in-process
// supervisor, with authentication off (--insecure_no_auth) and with a bearer
// token, in the same run, so the difference is the per-call cost as a client
// sees it.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>

#include "common/auth/authorizer.h"
#include "common/auth/grpc_auth.h"
#include "common/auth/token_store.h"
#include "sluice/v1/supervisor_service.grpc.pb.h"
#include "supervisor/supervisor_server.h"

namespace sluice {
namespace {

const char kToken[] = "bench-admin-token-0123456789abcdef";

std::string TempDir() {
  static std::string dir = [] {
    char tmpl[] = "/tmp/sluice_auth_bench_XXXXXX";
    return std::string(mkdtemp(tmpl));
  }();
  return dir;
}

auth::AuthOptions TokenAuth() {
  const std::string dir = TempDir();
  std::ofstream(dir + "/tokens") << "sha256:" << auth::Sha256Hex(kToken) << " ops\n";
  std::ofstream(dir + "/policy") << "token:ops admin\n";
  auth::AuthOptions options;
  options.tokens_file = dir + "/tokens";
  options.policy_file = dir + "/policy";
  return options;
}

void BM_AuthorizeToken(benchmark::State& state) {
  auto authz = auth::Authorizer::Create(TokenAuth(), {"sluice.v1.SupervisorService"});
  if (!authz.ok()) return state.SkipWithError(authz.status().ToString().c_str());
  const auth::CallIdentity identity{std::string("Bearer ") + kToken, ""};
  for (auto _ : state) {
    auto caller = (*authz)->Authorize(identity, "/sluice.v1.SupervisorService/ListWorkers");
    benchmark::DoNotOptimize(caller);
  }
}
BENCHMARK(BM_AuthorizeToken);

void BM_AuthorizeCertificate(benchmark::State& state) {
  auth::AuthOptions options = TokenAuth();
  std::ofstream(options.policy_file) << "cert:operator admin\n";
  options.tokens_file.clear();
  options.client_certificates = true;
  auto authz = auth::Authorizer::Create(options, {"sluice.v1.SupervisorService"});
  if (!authz.ok()) return state.SkipWithError(authz.status().ToString().c_str());
  const auth::CallIdentity identity{"", "operator"};
  for (auto _ : state) {
    auto caller = (*authz)->Authorize(identity, "/sluice.v1.SupervisorService/ListWorkers");
    benchmark::DoNotOptimize(caller);
  }
}
BENCHMARK(BM_AuthorizeCertificate);

// One supervisor per mode for the whole run.
supervisor::SupervisorServer* Server(bool with_token) {
  static std::unique_ptr<supervisor::SupervisorServer> servers[2];
  auto& server = servers[with_token];
  if (server == nullptr) {
    supervisor::SupervisorServerOptions options;
    options.data_dir = TempDir() + (with_token ? "/token" : "/open");
    if (with_token) {
      options.auth = TokenAuth();
    } else {
      options.auth.insecure_no_auth = true;
    }
    auto started = supervisor::SupervisorServer::Start(options);
    if (!started.ok()) return nullptr;
    server = *std::move(started);
  }
  return server.get();
}

void BM_GrpcCall(benchmark::State& state) {
  const bool with_token = state.range(0) != 0;
  supervisor::SupervisorServer* server = Server(with_token);
  if (server == nullptr) return state.SkipWithError("supervisor did not start");
  auto stub = v1::SupervisorService::NewStub(
      auth::NewChannel(server->address(), grpc::InsecureChannelCredentials(),
                       {with_token ? kToken : ""}));
  v1::ListWorkersRequest request;
  for (auto _ : state) {
    grpc::ClientContext context;
    v1::ListWorkersResponse response;
    grpc::Status status = stub->ListWorkers(&context, request, &response);
    if (!status.ok()) return state.SkipWithError(status.error_message().c_str());
  }
  state.SetLabel(with_token ? "bearer token" : "no authentication");
}
BENCHMARK(BM_GrpcCall)->Arg(0)->Arg(1)->UseRealTime()->MinTime(2.0);

}  // namespace
}  // namespace sluice

BENCHMARK_MAIN();
