// Throwaway bearer tokens for a local cluster (the fault suite, the demo):
// one per principal (an admin, a reader, each worker), the supervisor's key
// and the token derived from it for each worker (auth/worker_token.h),
// random, written under a directory (0700) as the files the binaries take:
// the hashed tokens file, the policy (each worker bound to its address), and
// one token file per principal ("supervisor": the key). Nothing is reused
// across runs.
#ifndef SLUICE_TOOLS_CLUSTER_CLUSTER_CREDENTIALS_H_
#define SLUICE_TOOLS_CLUSTER_CLUSTER_CREDENTIALS_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace sluice {
namespace cluster {

struct ClusterCredentials {
  // --auth_tokens_file and --auth_policy_file of every server.
  std::string tokens_file;
  std::string policy_file;
  // Token files: "admin", "reader", "supervisor" (the key) and each worker id.
  std::map<std::string, std::string> token_files;
  // The admin token itself (for the cluster's own channels).
  std::string admin_token;
};

// 32 random bytes as hex, from /dev/urandom.
absl::StatusOr<std::string> RandomToken();

// `worker_addresses`: where each worker may register (host:port patterns,
// policy.h); empty: anywhere on 127.0.0.1.
absl::StatusOr<ClusterCredentials> MakeClusterCredentials(
    const std::string& dir, const std::vector<std::string>& worker_ids,
    const std::vector<std::string>& worker_addresses = {});

}  // namespace cluster
}  // namespace sluice

#endif  // SLUICE_TOOLS_CLUSTER_CLUSTER_CREDENTIALS_H_
