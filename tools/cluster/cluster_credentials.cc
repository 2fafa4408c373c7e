#include "tools/cluster/cluster_credentials.h"

#include <sys/stat.h>

#include <fstream>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/auth/token_store.h"
#include "common/auth/worker_token.h"
#include "common/file_util.h"
#include "common/status_macros.h"

namespace sluice {
namespace cluster {

absl::StatusOr<std::string> RandomToken() {
  std::ifstream in("/dev/urandom", std::ios::binary);
  std::string bytes(32, '\0');
  if (!in.read(bytes.data(), bytes.size())) {
    return absl::UnavailableError("cannot read /dev/urandom");
  }
  return absl::BytesToHexString(bytes);
}

absl::StatusOr<ClusterCredentials> MakeClusterCredentials(
    const std::string& dir, const std::vector<std::string>& worker_ids,
    const std::vector<std::string>& worker_addresses) {
  if (!worker_addresses.empty() && worker_addresses.size() != worker_ids.size()) {
    return absl::InvalidArgumentError("one address per worker id, or none");
  }
  SLUICE_RETURN_IF_ERROR(MakeDirs(dir));
  ::chmod(dir.c_str(), 0700);
  ClusterCredentials creds;
  creds.tokens_file = dir + "/tokens";
  creds.policy_file = dir + "/policy";
  std::string tokens = "# sha256 of each token, and the principal's name\n";
  std::string policy = "# principal, roles, worker id, worker options\n";
  auto write_token = [&](const std::string& name, const std::string& token) -> absl::Status {
    const std::string file = absl::StrCat(dir, "/", name, ".token");
    SLUICE_RETURN_IF_ERROR(WriteFileAtomically(file, token + "\n"));
    ::chmod(file.c_str(), 0600);
    creds.token_files[name] = file;
    return absl::OkStatus();
  };
  auto add = [&](const std::string& name, const std::string& roles,
                 const std::string& binding) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(std::string token, RandomToken());
    if (name == "admin") creds.admin_token = token;
    SLUICE_RETURN_IF_ERROR(write_token(name, token));
    absl::StrAppend(&tokens, "sha256:", auth::Sha256Hex(token), " ", name, "\n");
    absl::StrAppend(&policy, "token:", name, " ", roles, binding.empty() ? "" : " ", binding, "\n");
    return absl::OkStatus();
  };
  SLUICE_RETURN_IF_ERROR(add("admin", "admin", ""));
  SLUICE_RETURN_IF_ERROR(add("reader", "reader", ""));
  // The supervisor's key: never a token itself; each worker accepts only the
  // token derived from it for that worker.
  SLUICE_ASSIGN_OR_RETURN(const std::string key, RandomToken());
  SLUICE_RETURN_IF_ERROR(write_token("supervisor", key));
  for (size_t i = 0; i < worker_ids.size(); ++i) {
    const std::string& worker = worker_ids[i];
    const std::string address = worker_addresses.empty() ? "127.0.0.1:*" : worker_addresses[i];
    SLUICE_RETURN_IF_ERROR(add(worker, "worker", absl::StrCat(worker, " address=", address)));
    const std::string supervisor = "supervisor@" + worker;
    absl::StrAppend(&tokens, "sha256:", auth::Sha256Hex(auth::SupervisorTokenForWorker(key, worker)),
                    " ", supervisor, "\n");
    absl::StrAppend(&policy, "token:", supervisor, " supervisor ", worker, "\n");
  }
  SLUICE_RETURN_IF_ERROR(WriteFileAtomically(creds.tokens_file, tokens));
  SLUICE_RETURN_IF_ERROR(WriteFileAtomically(creds.policy_file, policy));
  return creds;
}

}  // namespace cluster
}  // namespace sluice
