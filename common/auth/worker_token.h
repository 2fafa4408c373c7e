// The supervisor's bearer token for one worker. The supervisor holds one
// secret key (its --auth_token_file) and presents to each worker a token
// derived from it and that worker's id:
//
//   token = lower-case hex of HMAC-SHA256(key, "sluice supervisor to worker " + worker_id)
//
// Each worker's server accepts only the token bound to its own id (policy.h:
// "token:<name> supervisor <worker id>"), so a worker that is compromised, or
// a listener that registered a false address, obtains a token no other
// worker accepts, and cannot derive one without the key. The operator lists
// each worker's token by its hash, like any token; the token itself is what
//   printf %s "sluice supervisor to worker $WORKER_ID" |
//     openssl dgst -sha256 -hmac "$(cat KEY)" -r | cut -d' ' -f1
// prints (docs/operations.md, "Authentication and roles").
#ifndef SLUICE_COMMON_AUTH_WORKER_TOKEN_H_
#define SLUICE_COMMON_AUTH_WORKER_TOKEN_H_

#include <string>

#include "absl/strings/string_view.h"

namespace sluice::auth {

std::string SupervisorTokenForWorker(absl::string_view key, absl::string_view worker_id);

}  // namespace sluice::auth

#endif  // SLUICE_COMMON_AUTH_WORKER_TOKEN_H_
