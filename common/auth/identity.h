// Who is calling, in plain C++ (no gRPC): what a call presented (CallIdentity,
// filled by the gRPC layer from metadata and the TLS peer) and what the
// authorizer made of it (Caller).
#ifndef SLUICE_COMMON_AUTH_IDENTITY_H_
#define SLUICE_COMMON_AUTH_IDENTITY_H_

#include <set>
#include <string>

#include "sluice/v1/auth.pb.h"

namespace sluice::auth {

// What one call presented.
struct CallIdentity {
  // The value of the `authorization` metadata; empty when absent.
  std::string authorization;
  // The verified TLS client certificate's principal: its first URI SAN, else
  // its CN; empty without a client certificate.
  std::string certificate_principal;
};

// An authorized caller.
struct Caller {
  // "token:<principal>", "cert:<principal>", or "anonymous" (no auth).
  std::string principal;
  std::set<v1::Role> roles;
  // The worker id a worker principal is bound to; empty when the caller is
  // not bound (authentication off, or not a worker).
  std::string worker_id;
  // Workers: where they may register and the most slots they may claim
  // (policy.h's address= and max_capacity=); empty / 0: unbound.
  std::string worker_address_pattern;
  int max_capacity = 0;
  // False when the server runs with --insecure_no_auth.
  bool authenticated = false;

  bool Has(v1::Role role) const { return roles.count(role) > 0; }

  // Every role, no binding: calls made inside the process (tests, tools) and
  // every call when authentication is off.
  static Caller Anonymous() {
    Caller c;
    c.principal = "anonymous";
    c.roles = {v1::ROLE_ADMIN, v1::ROLE_READER, v1::ROLE_WORKER, v1::ROLE_SUPERVISOR};
    return c;
  }
};

// What a client presents besides its TLS certificate.
struct ClientAuth {
  // Sent as "authorization: Bearer <token>" on every call; empty: none.
  // The supervisor never sends its own: it is the key each worker's token is
  // derived from (worker_token.h).
  std::string bearer_token;
};

// "admin", "reader", "worker", "supervisor" (lower case, as in policy files).
const char* RoleName(v1::Role role);

}  // namespace sluice::auth

#endif  // SLUICE_COMMON_AUTH_IDENTITY_H_
