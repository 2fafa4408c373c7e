// Mapping librdkafka error codes to absl::Status.
//
// Codes follow what the caller should do next (CONTRIBUTING.md):
// - broker/transport trouble and every timeout -> UNAVAILABLE (retry the call);
// - unknown topic or partition -> NOT_FOUND;
// - offset out of range (and a failed auto.offset.reset=error) -> OUT_OF_RANGE;
// - bad arguments, invalid config, oversized messages -> INVALID_ARGUMENT;
// - authorization/authentication failures -> PERMISSION_DENIED;
// - local queue full -> RESOURCE_EXHAUSTED;
// - group rebalances, fenced producers -> ABORTED;
// - corrupt or undecodable data -> DATA_LOSS;
// - unsupported protocol features -> UNIMPLEMENTED;
// - handle being destroyed -> CANCELLED;
// - anything else: INTERNAL for librdkafka's local errors, UNKNOWN for broker
//   errors we have not classified.
#ifndef SLUICE_COMMON_KAFKA_ERRORS_H_
#define SLUICE_COMMON_KAFKA_ERRORS_H_

#include <librdkafka/rdkafka.h>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace sluice {
namespace kafka {

// The absl code for a librdkafka error code (OK for NO_ERROR).
absl::StatusCode KafkaErrorCode(rd_kafka_resp_err_t err);

// A status for `err` whose message reads
// "<context>: <librdkafka description> (<ERROR_NAME>)", e.g.
// "query watermarks of wiki[3]: Local: Broker transport failure (_TRANSPORT)".
// `detail`, when not empty, replaces librdkafka's generic description (use it
// for the errstr librdkafka returned alongside the code). OK for NO_ERROR.
absl::Status KafkaErrorToStatus(rd_kafka_resp_err_t err, absl::string_view context,
                                absl::string_view detail = {});

// Same for an rd_kafka_error_t object (NULL means OK). Takes ownership of
// `error` and destroys it. Fatal errors are reported with their own code but
// the message says "fatal" (the handle is unusable afterwards).
absl::Status KafkaErrorObjectToStatus(rd_kafka_error_t* error, absl::string_view context);

}  // namespace kafka
}  // namespace sluice

#endif  // SLUICE_COMMON_KAFKA_ERRORS_H_
