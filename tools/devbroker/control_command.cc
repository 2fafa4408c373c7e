#include "tools/devbroker/control_command.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace sluice {
namespace devbroker {
namespace {

struct ApiKeyEntry {
  int16_t key;
  const char* name;
};

// Kafka protocol API keys the mock broker implements or clients send.
constexpr ApiKeyEntry kApiKeys[] = {
    {0, "Produce"},
    {1, "Fetch"},
    {2, "ListOffsets"},
    {3, "Metadata"},
    {8, "OffsetCommit"},
    {9, "OffsetFetch"},
    {10, "FindCoordinator"},
    {11, "JoinGroup"},
    {12, "Heartbeat"},
    {13, "LeaveGroup"},
    {14, "SyncGroup"},
    {15, "DescribeGroups"},
    {16, "ListGroups"},
    {17, "SaslHandshake"},
    {18, "ApiVersions"},
    {19, "CreateTopics"},
    {20, "DeleteTopics"},
    {21, "DeleteRecords"},
    {22, "InitProducerId"},
    {23, "OffsetForLeaderEpoch"},
    {24, "AddPartitionsToTxn"},
    {25, "AddOffsetsToTxn"},
    {26, "EndTxn"},
    {28, "TxnOffsetCommit"},
    {32, "DescribeConfigs"},
    {36, "SaslAuthenticate"},
};

absl::Status Usage(absl::string_view what, absl::string_view usage) {
  return absl::InvalidArgumentError(absl::StrCat(what, " (usage: ", usage, ")"));
}

bool ParseInt(absl::string_view text, int64_t min, int64_t max, int64_t* out) {
  int64_t value;
  if (!absl::SimpleAtoi(text, &value) || value < min || value > max) return false;
  *out = value;
  return true;
}

}  // namespace

absl::StatusOr<int16_t> ParseApiKey(absl::string_view text) {
  int64_t number;
  if (ParseInt(text, 0, 32767, &number)) return static_cast<int16_t>(number);
  for (const ApiKeyEntry& entry : kApiKeys) {
    if (absl::EqualsIgnoreCase(text, entry.name)) return entry.key;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown Kafka API \"", text,
                   "\" (a number, or Produce, Fetch, "
                   "ListOffsets, Metadata, OffsetCommit, FindCoordinator, ...)"));
}

std::string ApiKeyName(int16_t api_key) {
  for (const ApiKeyEntry& entry : kApiKeys) {
    if (entry.key == api_key) return entry.name;
  }
  return absl::StrCat(api_key);
}

absl::StatusOr<rd_kafka_resp_err_t> ParseKafkaError(absl::string_view text) {
  const rd_kafka_err_desc* descs = nullptr;
  size_t count = 0;
  rd_kafka_get_err_descs(&descs, &count);
  int64_t number;
  if (ParseInt(text, -200, 1000, &number)) {
    // Only codes librdkafka knows: anything else is no rd_kafka_resp_err_t
    // (found by //fuzz:devbroker_command_fuzzer: "error wiki 313").
    if (number == RD_KAFKA_RESP_ERR_NO_ERROR) return RD_KAFKA_RESP_ERR_NO_ERROR;
    for (size_t i = 0; i < count; ++i) {
      if (descs[i].name != nullptr && descs[i].code == number) return descs[i].code;
    }
  } else {
    std::string name = absl::AsciiStrToUpper(text);
    absl::string_view view = name;
    absl::ConsumePrefix(&view, "RD_KAFKA_RESP_ERR_");
    if (view == "NO_ERROR") return RD_KAFKA_RESP_ERR_NO_ERROR;
    for (size_t i = 0; i < count; ++i) {
      if (descs[i].name != nullptr && view == descs[i].name) return descs[i].code;
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown Kafka error \"", text,
                   "\" (a known code, or a name such as NOT_LEADER_FOR_PARTITION, REQUEST_TIMED_OUT)"));
}

absl::Status ValidateTopicName(absl::string_view name) {
  if (name.empty() || name.size() > 249 || name == "." || name == "..") {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid topic name \"", name, "\": 1..249 characters, not . or .."));
  }
  for (char c : name) {
    if (!absl::ascii_isalnum(c) && c != '.' && c != '_' && c != '-') {
      return absl::InvalidArgumentError(absl::StrCat("invalid topic name \"", name,
                                                     "\": only letters, digits, '.', '_' and '-'"));
    }
  }
  return absl::OkStatus();
}

absl::string_view ControlHelp() {
  return "commands: broker down N | broker up N | rtt N MS | error APIKEY ERR COUNT | "
         "error TOPIC ERR | create TOPIC PARTITIONS | leader TOPIC PARTITION BROKER | "
         "status | help | quit";
}

absl::StatusOr<ControlCommand> ParseControlCommand(absl::string_view line) {
  ControlCommand cmd;
  line = absl::StripAsciiWhitespace(line);
  if (line.empty() || line[0] == '#') return cmd;
  std::vector<absl::string_view> args = absl::StrSplit(line, ' ', absl::SkipWhitespace());
  const std::string verb = absl::AsciiStrToLower(args[0]);
  const size_t n = args.size();
  int64_t number;

  if (verb == "broker") {
    constexpr absl::string_view kUsage = "broker down N | broker up N";
    if (n != 3) return Usage("broker takes 2 arguments", kUsage);
    const std::string what = absl::AsciiStrToLower(args[1]);
    if (what == "down") {
      cmd.kind = ControlCommand::Kind::kBrokerDown;
    } else if (what == "up") {
      cmd.kind = ControlCommand::Kind::kBrokerUp;
    } else {
      return Usage(absl::StrCat("unknown broker action \"", args[1], "\""), kUsage);
    }
    if (!ParseInt(args[2], 1, 1 << 20, &number)) {
      return Usage(absl::StrCat("bad broker id \"", args[2], "\""), kUsage);
    }
    cmd.broker = static_cast<int32_t>(number);
    return cmd;
  }
  if (verb == "rtt") {
    constexpr absl::string_view kUsage = "rtt N MS";
    if (n != 3) return Usage("rtt takes 2 arguments", kUsage);
    cmd.kind = ControlCommand::Kind::kRtt;
    if (!ParseInt(args[1], 1, 1 << 20, &number)) {
      return Usage(absl::StrCat("bad broker id \"", args[1], "\""), kUsage);
    }
    cmd.broker = static_cast<int32_t>(number);
    if (!ParseInt(args[2], 0, 3600 * 1000, &number)) {
      return Usage(absl::StrCat("bad rtt \"", args[2], "\" (0..3600000 ms)"), kUsage);
    }
    cmd.rtt_ms = static_cast<int>(number);
    return cmd;
  }
  if (verb == "error") {
    constexpr absl::string_view kUsage = "error APIKEY ERR COUNT | error TOPIC ERR";
    if (n == 3) {
      cmd.kind = ControlCommand::Kind::kTopicError;
      if (absl::Status s = ValidateTopicName(args[1]); !s.ok()) return Usage(s.message(), kUsage);
      cmd.topic = std::string(args[1]);
      absl::StatusOr<rd_kafka_resp_err_t> err = ParseKafkaError(args[2]);
      if (!err.ok()) return Usage(err.status().message(), kUsage);
      cmd.error = *err;
      return cmd;
    }
    if (n == 4) {
      cmd.kind = ControlCommand::Kind::kRequestErrors;
      absl::StatusOr<int16_t> api = ParseApiKey(args[1]);
      if (!api.ok()) return Usage(api.status().message(), kUsage);
      cmd.api_key = *api;
      absl::StatusOr<rd_kafka_resp_err_t> err = ParseKafkaError(args[2]);
      if (!err.ok()) return Usage(err.status().message(), kUsage);
      cmd.error = *err;
      if (!ParseInt(args[3], 1, 1000000, &number)) {
        return Usage(absl::StrCat("bad count \"", args[3], "\" (1..1000000)"), kUsage);
      }
      cmd.count = static_cast<int>(number);
      return cmd;
    }
    if (n == 5) {
      return Usage(
          "per-topic request errors are not supported by librdkafka's mock cluster "
          "(its request error stacks are per API key, cluster-wide or per broker); use "
          "'error APIKEY ERR COUNT', or 'error TOPIC ERR' for a sticky topic error",
          kUsage);
    }
    return Usage("error takes 2 or 3 arguments", kUsage);
  }
  if (verb == "create") {
    constexpr absl::string_view kUsage = "create TOPIC PARTITIONS";
    if (n != 3) return Usage("create takes 2 arguments", kUsage);
    cmd.kind = ControlCommand::Kind::kCreateTopic;
    if (absl::Status s = ValidateTopicName(args[1]); !s.ok()) return Usage(s.message(), kUsage);
    cmd.topic = std::string(args[1]);
    if (!ParseInt(args[2], 1, 100000, &number)) {
      return Usage(absl::StrCat("bad partition count \"", args[2], "\" (1..100000)"), kUsage);
    }
    cmd.partitions = static_cast<int>(number);
    return cmd;
  }
  if (verb == "leader") {
    constexpr absl::string_view kUsage = "leader TOPIC PARTITION BROKER";
    if (n != 4) return Usage("leader takes 3 arguments", kUsage);
    cmd.kind = ControlCommand::Kind::kSetLeader;
    if (absl::Status s = ValidateTopicName(args[1]); !s.ok()) return Usage(s.message(), kUsage);
    cmd.topic = std::string(args[1]);
    if (!ParseInt(args[2], 0, 100000, &number)) {
      return Usage(absl::StrCat("bad partition \"", args[2], "\""), kUsage);
    }
    cmd.partition = static_cast<int32_t>(number);
    if (!ParseInt(args[3], -1, 1 << 20, &number) || number == 0) {
      return Usage(absl::StrCat("bad broker id \"", args[3], "\" (N >= 1, or -1 for none)"),
                   kUsage);
    }
    cmd.broker = static_cast<int32_t>(number);
    return cmd;
  }
  if (verb == "status" || verb == "help" || verb == "quit") {
    if (n != 1) return Usage(absl::StrCat(verb, " takes no arguments"), verb);
    cmd.kind = verb == "status" ? ControlCommand::Kind::kStatus
               : verb == "help" ? ControlCommand::Kind::kHelp
                                : ControlCommand::Kind::kQuit;
    return cmd;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown command \"", args[0], "\"; ", ControlHelp()));
}

}  // namespace devbroker
}  // namespace sluice
