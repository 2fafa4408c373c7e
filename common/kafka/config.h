// Building librdkafka configurations and client handles from plain property
// maps (the `consumer_properties` of a spec, flags of a tool).
//
//   SLUICE_ASSIGN_OR_RETURN(kafka::ConfPtr conf,
//                           kafka::BuildConf({{"bootstrap.servers", "127.0.0.1:9092"}}));
//   SLUICE_ASSIGN_OR_RETURN(kafka::HandlePtr rk,
//                           kafka::NewHandle(RD_KAFKA_CONSUMER, std::move(conf)));
#ifndef SLUICE_COMMON_KAFKA_CONFIG_H_
#define SLUICE_COMMON_KAFKA_CONFIG_H_

#include <librdkafka/rdkafka.h>

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/kafka/handles.h"

namespace sluice {
namespace kafka {

// librdkafka properties by name ("bootstrap.servers", "fetch.wait.max.ms", ...).
using KafkaProperties = std::map<std::string, std::string>;

// sasl.password, ssl.key.password, ssl.keystore.password, ssl.key.pem,
// sasl.oauthbearer.client.secret, and any name containing "password" or
// "secret": properties whose values are never shown or logged.
bool IsSecretProperty(absl::string_view name);

// A new configuration with every property of `properties` set, in key order.
// INVALID_ARGUMENT names the first property librdkafka rejects (unknown name
// or bad value) with librdkafka's own explanation. Client logs are routed to
// glog with the prefix "[kafka <log_prefix>]" unless `properties` sets
// "log_cb"-incompatible logging itself (it cannot: log_cb is not a property).
absl::StatusOr<ConfPtr> BuildConf(const KafkaProperties& properties,
                                  absl::string_view log_prefix = "client");

// Sets one property on `conf`; INVALID_ARGUMENT as above.
absl::Status SetProperty(rd_kafka_conf_t* conf, absl::string_view name, absl::string_view value);

// Creates a client handle of `type` from `conf` (which it consumes, also on
// failure). INVALID_ARGUMENT when librdkafka refuses the configuration
// (e.g. conflicting properties), with its message.
absl::StatusOr<HandlePtr> NewHandle(rd_kafka_type_t type, ConfPtr conf);

// The value of `name` in `properties`, or `fallback`.
std::string PropertyOr(const KafkaProperties& properties, absl::string_view name,
                       absl::string_view fallback);

}  // namespace kafka
}  // namespace sluice

#endif  // SLUICE_COMMON_KAFKA_CONFIG_H_
