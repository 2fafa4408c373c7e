// Principal -> roles (and, for workers, the worker id it is bound to). The
// file named by --auth_policy_file has one principal per line:
//
//   # principal                      roles       worker id   worker options
//   token:ops-admin                  admin
//   token:grafana                    reader
//   cert:spiffe://sluice/worker/w0   worker      w0          address=w0.sluice:7070 max_capacity=8
//   token:supervisor@w0              supervisor  w0
//   cert:sluice-supervisor           supervisor
//
// A principal is "token:<name>" for a bearer token (the name of its line in
// the tokens file) or "cert:<SAN URI or CN>" for a client certificate. Roles
// are comma-separated: admin, reader, worker, supervisor.
//
// A worker principal must name its worker id and the address it may register
// (address=HOST:PORT; HOST may start with "*." for any leading labels, PORT
// may be "*"), and may name the most task slots it may claim
// (max_capacity=N). It may then register, heartbeat and act only as that
// worker, only at that address, and only for the tasks the supervisor
// assigned to it.
//
// A supervisor principal may name a worker id: the one worker whose server
// accepts it. A worker's server refuses a supervisor token bound to another
// worker or to none (what the supervisor sends one worker cannot be replayed
// against another; see worker_token.h); a supervisor certificate, which
// cannot be replayed, may be unbound.
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
  // Workers: the worker this principal is. Supervisors: the only worker that
  // accepts it (empty: any, for certificates).
  std::string worker_id;
  // Workers: where the worker may register (an AddressMatches pattern) and
  // the most slots it may claim (0: no bound beyond the request limits).
  std::string address_pattern;
  int max_capacity = 0;
};

// True when `address` ("host:port") matches `pattern`: the same host
// (case-insensitive) or, for "*.rest", a host ending in ".rest" with at least
// one label before it; the same port, or any for "*".
bool AddressMatches(absl::string_view pattern, absl::string_view address);

class Policy {
 public:
  // INVALID_ARGUMENT naming the file and line for an unknown role, a worker
  // without a worker id or address (or a worker id on a principal that is
  // neither worker nor supervisor, worker options on a non-worker), a
  // malformed option or pattern, a principal without the "token:" or "cert:"
  // prefix, or a principal listed twice.
  static absl::StatusOr<Policy> Load(const std::string& path);
  static absl::StatusOr<Policy> Parse(absl::string_view contents, absl::string_view origin);

  // Null when the principal has no grant.
  const Grant* Find(absl::string_view principal) const;

 private:
  std::map<std::string, Grant, std::less<>> grants_;
};

}  // namespace sluice::auth

#endif  // SLUICE_COMMON_AUTH_POLICY_H_
