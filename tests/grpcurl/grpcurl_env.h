// The grpcurl test tier's shared fixture: one sluice deployment per test
// binary, driven only by the real grpcurl binary (subprocesses), never by a
// C++ stub. A gtest Environment starts, before the first test:
//   - a ProcessCluster (tools/cluster): dev broker with topics "wiki" (4
//     partitions) and "wiki-edits" (2), the supervisor and two task workers,
//     authentication on (bearer tokens: admin, reader, supervisor, workers);
//     kRecordsPerTopic records produced into each topic;
//   - a supervisor alone with mutual TLS and client certificates as the only
//     credential (cert:operator admin, cert:grafana reader), its CA and
//     client certificates under CertDir() as ca.crt, operator.crt/.key,
//     grafana.crt/.key;
//   - a supervisor alone with --insecure_no_auth on 127.0.0.1.
// If anything cannot start (no grpcurl: scripts/install_deps.sh builds it)
// every test of the binary fails: the tier never skips.
//
// grpcurl is $SLUICE_GRPCURL, else ~/.cache/sluice/grpcurl/<kGrpcurlVersion>/bin/grpcurl
// (the user's home from the password database: Bazel moves $HOME), where
// scripts/install_grpcurl.sh puts it.
#ifndef SLUICE_TESTS_GRPCURL_GRPCURL_ENV_H_
#define SLUICE_TESTS_GRPCURL_GRPCURL_ENV_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tests/testing/subprocess.h"
#include "tools/cluster/process_cluster.h"

namespace sluice::grpcurl {

inline constexpr char kGrpcurlVersion[] = "v1.9.4";
inline constexpr int64_t kRecordsPerTopic = 6000;

// How one grpcurl (or shell) run ended.
using Result = testing::CapturedRun;

absl::StatusOr<std::string> FindGrpcurl();

// Runs grpcurl with `args` (no shell) and `stdin_data` on its stdin.
Result Grpcurl(const std::vector<std::string>& args, const std::string& stdin_data = "",
               absl::Duration timeout = absl::Seconds(30));
// Runs `command` with `bash -c` in `cwd`, grpcurl's directory first in PATH,
// `env` added to the environment.
Result Shell(const std::string& command, const std::string& cwd,
             const std::map<std::string, std::string>& env = {},
             absl::Duration timeout = absl::Seconds(30));

// The "Code: X" and "Message: Y" grpcurl prints on stderr for an RPC error
// ("" when absent).
std::string ErrorCode(const Result& result);
std::string ErrorMessage(const Result& result);

// "-H" "authorization: Bearer <token of principal>" ("admin", "reader", ...).
std::vector<std::string> BearerArgs(const std::string& principal);

// The shared deployment (fails the calling test and returns null if it did
// not start).
cluster::ProcessCluster* Cluster();
// Addresses of the standalone supervisors.
std::string TlsSupervisorAddress();
std::string NoAuthSupervisorAddress();
// Where ca.crt, operator.crt, operator.key, grafana.crt, grafana.key are.
std::string CertDir();

// A file of the repository (README.md, docs/operations.md), from runfiles.
absl::StatusOr<std::string> ReadRepoFile(const std::string& path);
// The README's example spec (the ```json block after "A spec reads like
// Druid's"), as written.
absl::StatusOr<std::string> ReadmeSpec();

// Polls `args` (a grpcurl call) until `done(stdout)` or the timeout; the last
// result either way.
Result PollUntil(const std::vector<std::string>& args,
                 const std::function<bool(const std::string&)>& done, absl::Duration timeout);

}  // namespace sluice::grpcurl

#endif  // SLUICE_TESTS_GRPCURL_GRPCURL_ENV_H_
