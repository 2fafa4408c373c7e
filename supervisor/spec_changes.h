// What differs between two versions of a spec, and whether a running
// supervisor can take the new one in place (SubmitSupervisorResponse.update).
// Pure.
#ifndef SLUICE_SUPERVISOR_SPEC_CHANGES_H_
#define SLUICE_SUPERVISOR_SPEC_CHANGES_H_

#include <string>
#include <vector>

#include "sluice/v1/spec.pb.h"

namespace sluice::supervisor {

// The fields in which `before` and `after` differ, as JSON paths in field
// order ("ioConfig.taskCount", "dataSchema.metricsSpec"): singular messages
// are compared field by field, lists and maps as a whole. Empty when equal.
std::vector<std::string> ChangedSpecFields(const v1::SupervisorSpec& before,
                                           const v1::SupervisorSpec& after);

// Whether a change of these fields (ChangedSpecFields) can be taken by the
// running supervisor without finishing its groups. Live fields change how
// many groups and replicas run, when they roll over and checkpoint, and what
// the supervisor tolerates; never what a record becomes (schema, input
// format, filters, message-time windows, topic, consumer properties), so
// replicas of one group started before and after the change still write
// byte-identical segments. Listed in docs/operations.md "Updating a spec".
bool AppliesLive(const std::vector<std::string>& changed);

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_SPEC_CHANGES_H_
