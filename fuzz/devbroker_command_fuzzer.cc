// libFuzzer target: any bytes as one control line of the dev broker. The
// parser must never crash; what it accepts must be in the documented ranges
// (control_command.h), and every error must be INVALID_ARGUMENT with a
// message.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "tools/devbroker/control_command.h"

namespace {

using sluice::devbroker::ControlCommand;

void Check(bool condition) {
  if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view line(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<ControlCommand> cmd = sluice::devbroker::ParseControlCommand(line);
  if (!cmd.ok()) {
    Check(cmd.status().code() == absl::StatusCode::kInvalidArgument);
    Check(!cmd.status().message().empty());
    return 0;
  }
  switch (cmd->kind) {
    case ControlCommand::Kind::kBrokerDown:
    case ControlCommand::Kind::kBrokerUp:
      Check(cmd->broker >= 1 && cmd->broker <= (1 << 20));
      break;
    case ControlCommand::Kind::kRtt:
      Check(cmd->broker >= 1 && cmd->broker <= (1 << 20));
      Check(cmd->rtt_ms >= 0 && cmd->rtt_ms <= 3600000);
      break;
    case ControlCommand::Kind::kRequestErrors:
      Check(cmd->count >= 1 && cmd->count <= 1000000);
      Check(sluice::devbroker::ParseApiKey(sluice::devbroker::ApiKeyName(cmd->api_key)).ok());
      break;
    case ControlCommand::Kind::kTopicError:
      Check(sluice::devbroker::ValidateTopicName(cmd->topic).ok());
      break;
    case ControlCommand::Kind::kCreateTopic:
      Check(sluice::devbroker::ValidateTopicName(cmd->topic).ok());
      Check(cmd->partitions >= 1 && cmd->partitions <= 100000);
      break;
    case ControlCommand::Kind::kSetLeader:
      Check(sluice::devbroker::ValidateTopicName(cmd->topic).ok());
      Check(cmd->partition >= 0 && cmd->partition <= 100000);
      Check(cmd->broker == -1 || (cmd->broker >= 1 && cmd->broker <= (1 << 20)));
      break;
    default:
      break;
  }
  // The pieces on their own.
  (void)sluice::devbroker::ParseApiKey(line);
  (void)sluice::devbroker::ParseKafkaError(line);
  (void)sluice::devbroker::ValidateTopicName(line);
  return 0;
}
