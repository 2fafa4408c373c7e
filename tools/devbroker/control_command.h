// The dev broker's control language: one command per line, one reply line
// each ("ok ..." or "error ..."). Commands:
//
//   broker down N | broker up N        take broker N (1-based) off/on the network
//   rtt N MS                           delay broker N's responses by MS ms
//   error APIKEY ERR COUNT             fail the next COUNT requests of APIKEY
//                                      (any broker) with ERR
//   error TOPIC ERR                    make Metadata answers for TOPIC carry ERR
//                                      until cleared with ERR = NO_ERROR
//   create TOPIC PARTITIONS            create a topic (retention cap lifted)
//   leader TOPIC PARTITION BROKER      move a partition's leadership
//   status                             brokers, ports, up/down, topics
//   help                               the command list
//   quit                               stop the broker
//
// APIKEY is a Kafka API name (Produce, Fetch, ListOffsets, Metadata, ...) or
// number; ERR a Kafka error name as librdkafka spells it
// (NOT_LEADER_FOR_PARTITION, REQUEST_TIMED_OUT, _TRANSPORT, ...; the
// RD_KAFKA_RESP_ERR_ prefix and case are optional) or number. Blank lines and
// lines starting with '#' are ignored (no reply).
//
// librdkafka's mock (2.12) has no per-topic request error stack, so the form
// "error TOPIC APIKEY ERR COUNT" is refused with an explanation.
#ifndef SLUICE_TOOLS_DEVBROKER_CONTROL_COMMAND_H_
#define SLUICE_TOOLS_DEVBROKER_CONTROL_COMMAND_H_

#include <librdkafka/rdkafka.h>

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace sluice {
namespace devbroker {

struct ControlCommand {
  enum class Kind {
    kNone,  // Blank or comment line.
    kBrokerDown,
    kBrokerUp,
    kRtt,
    kRequestErrors,
    kTopicError,
    kCreateTopic,
    kSetLeader,
    kStatus,
    kHelp,
    kQuit,
  };
  Kind kind = Kind::kNone;
  int32_t broker = 0;
  int rtt_ms = 0;
  std::string topic;
  int16_t api_key = 0;
  rd_kafka_resp_err_t error = RD_KAFKA_RESP_ERR_NO_ERROR;
  int count = 0;
  int partitions = 0;
  int32_t partition = 0;
};

// Parses one line. INVALID_ARGUMENT with a usage hint for anything malformed.
// Broker ids and partitions are range-checked by the broker, not here.
absl::StatusOr<ControlCommand> ParseControlCommand(absl::string_view line);

// The help text (one line).
absl::string_view ControlHelp();

// Kafka API key by name (case-insensitive) or number (0..32767).
absl::StatusOr<int16_t> ParseApiKey(absl::string_view text);
// Name of a Kafka API key ("Produce"), or its number as text.
std::string ApiKeyName(int16_t api_key);

// A librdkafka error code by name or number.
absl::StatusOr<rd_kafka_resp_err_t> ParseKafkaError(absl::string_view text);

// Kafka's topic name rule: 1..249 characters of [a-zA-Z0-9._-], not "." or "..".
absl::Status ValidateTopicName(absl::string_view name);

}  // namespace devbroker
}  // namespace sluice

#endif  // SLUICE_TOOLS_DEVBROKER_CONTROL_COMMAND_H_
