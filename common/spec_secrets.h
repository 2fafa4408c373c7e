// Secrets in specs are write-only: every answer and log line shows "***" for
// the value of a secret consumer property (kafka::IsSecretProperty), and a
// resubmission that carries "***" keeps the stored value. References
// (${env:NAME}, ${file:PATH}) are not secrets and are shown as written.
#ifndef SLUICE_COMMON_SPEC_SECRETS_H_
#define SLUICE_COMMON_SPEC_SECRETS_H_

#include "absl/status/status.h"
#include "sluice/v1/spec.pb.h"
#include "sluice/v1/task.pb.h"

namespace sluice {

// The spec as it may be shown: secret values replaced by "***".
v1::SupervisorSpec RedactedSpec(v1::SupervisorSpec spec);
v1::TaskSpec RedactedTaskSpec(v1::TaskSpec spec);

// Replaces every "***" secret of `submitted` with the value `stored` has
// (null: no stored spec). INVALID_ARGUMENT naming the property when there is
// no stored value to keep, or when the connection's destination changed:
// bootstrap.servers, metadata.broker.list, security.protocol,
// client.dns.lookup or any non-secret sasl.* / ssl.* property differs from
// the stored spec's (a stored secret is never sent to another broker).
absl::Status KeepStoredSecrets(v1::SupervisorSpec* submitted, const v1::SupervisorSpec* stored);

}  // namespace sluice

#endif  // SLUICE_COMMON_SPEC_SECRETS_H_
