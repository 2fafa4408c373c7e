// Principal -> roles (and, for workers, the worker id it is bound to). The
// file named by --auth_policy_file has one principal per line:
//
//   # principal                      roles             worker id (workers only)
//   token:ops-admin                  admin
//   token:grafana                    reader
//   cert:spiffe://sluice/worker/w0   worker            w0
//   cert:sluice-supervisor           supervisor
//
// A principal is "token:<name>" for a bearer token (the name of its line in
// the tokens file) or "cert:<SAN URI or CN>" for a client certificate. Roles
// are comma-separated: admin, reader, worker, supervisor. A worker principal
// must name its worker id, and may then register, heartbeat and act only as
// that worker and for the tasks the supervisor assigned to it.
#ifndef SLUICE_COMMON_AUTH_POLICY_H_
#define SLUICE_COMMON_AUTH_POLICY_H_

#include <map>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "sluice/v1/auth.pb.h"

namespace sluice::auth {

struct Grant {
  std::set<v1::Role> roles;
  std::string worker_id;
};

class Policy {
 public:
  // INVALID_ARGUMENT naming the file and line for an unknown role, a worker
  // without a worker id (or a worker id on a non-worker), a principal without
  // the "token:" or "cert:" prefix, or a principal listed twice.
  static absl::StatusOr<Policy> Load(const std::string& path);
  static absl::StatusOr<Policy> Parse(absl::string_view contents, absl::string_view origin);

  // Null when the principal has no grant.
  const Grant* Find(absl::string_view principal) const;

 private:
  std::map<std::string, Grant, std::less<>> grants_;
};

}  // namespace sluice::auth

#endif  // SLUICE_COMMON_AUTH_POLICY_H_
