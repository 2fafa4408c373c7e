#include "tools/devbroker/dev_broker.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/kafka/config.h"
#include "common/kafka/errors.h"
#include "common/status_macros.h"
#include "glog/logging.h"
#include "tools/devbroker/control_command.h"
#include "tools/devbroker/fixed_ports.h"
#include "tools/devbroker/retention.h"

namespace sluice {
namespace devbroker {
namespace {

constexpr int kMaxBrokers = 32;

// Ports from "127.0.0.1:A,127.0.0.1:B".
absl::StatusOr<std::vector<int>> PortsOf(absl::string_view bootstrap) {
  std::vector<int> ports;
  for (absl::string_view entry : absl::StrSplit(bootstrap, ',')) {
    const size_t colon = entry.rfind(':');
    int port = 0;
    if (colon == absl::string_view::npos || !absl::SimpleAtoi(entry.substr(colon + 1), &port)) {
      return absl::InternalError(
          absl::StrCat("unexpected mock bootstrap list \"", bootstrap, "\""));
    }
    ports.push_back(port);
  }
  return ports;
}

}  // namespace

absl::StatusOr<TopicSpec> ParseTopicSpec(absl::string_view text) {
  const size_t colon = text.rfind(':');
  if (colon == absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("topic \"", text, "\": expected NAME:PARTITIONS, e.g. wiki:4"));
  }
  TopicSpec spec;
  spec.name = std::string(text.substr(0, colon));
  SLUICE_RETURN_IF_ERROR(ValidateTopicName(spec.name));
  if (!absl::SimpleAtoi(text.substr(colon + 1), &spec.partitions) || spec.partitions < 1 ||
      spec.partitions > 100000) {
    return absl::InvalidArgumentError(
        absl::StrCat("topic \"", text, "\": partition count must be a number in 1..100000"));
  }
  return spec;
}

absl::StatusOr<std::unique_ptr<DevBroker>> DevBroker::Create(const DevBrokerOptions& options) {
  if (options.brokers < 1 || options.brokers > kMaxBrokers) {
    return absl::InvalidArgumentError(
        absl::StrCat("brokers must be in 1..", kMaxBrokers, ", got ", options.brokers));
  }
  if (options.base_port < 0) {
    return absl::InvalidArgumentError(absl::StrCat("bad base port ", options.base_port));
  }
  {
    std::map<std::string, int> seen;
    for (const TopicSpec& topic : options.topics) {
      SLUICE_RETURN_IF_ERROR(ValidateTopicName(topic.name));
      if (topic.partitions < 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("topic ", topic.name, ": partition count must be >= 1"));
      }
      if (!seen.emplace(topic.name, topic.partitions).second) {
        return absl::InvalidArgumentError(absl::StrCat("topic ", topic.name, " given twice"));
      }
    }
  }
  if (options.base_port > 0) {
    SLUICE_RETURN_IF_ERROR(CheckPortsFree(options.base_port, options.brokers));
  }

  std::unique_ptr<DevBroker> broker(new DevBroker());
  broker->allow_retention_cap_ = options.allow_retention_cap;
  SLUICE_ASSIGN_OR_RETURN(kafka::ConfPtr conf, kafka::BuildConf({{"log_level", "4"}}, "devbroker"));
  SLUICE_ASSIGN_OR_RETURN(broker->rk_, kafka::NewHandle(RD_KAFKA_PRODUCER, std::move(conf)));
  {
    std::optional<FixedPortScope> scope;
    if (options.base_port > 0) scope.emplace(options.base_port, options.brokers);
    broker->cluster_ = rd_kafka_mock_cluster_new(broker->rk_.get(), options.brokers);
  }
  if (broker->cluster_ == nullptr) {
    return absl::InternalError("rd_kafka_mock_cluster_new failed (see the log above)");
  }
  broker->bootstrap_servers_ = rd_kafka_mock_cluster_bootstraps(broker->cluster_);
  SLUICE_ASSIGN_OR_RETURN(broker->ports_, PortsOf(broker->bootstrap_servers_));
  if (static_cast<int>(broker->ports_.size()) != options.brokers) {
    return absl::InternalError(absl::StrCat("mock cluster reports ", broker->ports_.size(),
                                            " brokers, asked for ", options.brokers));
  }
  if (options.base_port > 0) {
    for (int i = 0; i < options.brokers; ++i) {
      if (broker->ports_[i] != options.base_port + i) {
        return absl::InternalError(absl::StrCat(
            "broker ", i + 1, " listens on port ", broker->ports_[i], ", not ",
            options.base_port + i,
            ": the bind() interposer is not in effect (is bind_interposer linked into the "
            "executable?)"));
      }
    }
  }
  {
    absl::MutexLock lock(&broker->mu_);
    broker->up_.assign(options.brokers, true);
    broker->rtt_ms_.assign(options.brokers, 0);
  }

  if (absl::Status layout =
          VerifyClusterLayout(broker->cluster_, broker->rk_.get(), options.brokers);
      !layout.ok()) {
    if (!options.allow_retention_cap) return layout;
    broker->layout_problem_ = std::string(layout.message());
    LOG(WARNING) << "[devbroker] running WITH librdkafka's retention cap (each partition keeps "
                    "only its last 5 MiB / 100000 batches): "
                 << layout.message();
  }
  for (const TopicSpec& topic : options.topics) {
    SLUICE_RETURN_IF_ERROR(broker->CreateTopic(topic));
  }
  LOG(INFO) << "[devbroker] " << options.brokers << " broker(s) at " << broker->bootstrap_servers_
            << "; " << broker->StatusLine();
  return broker;
}

DevBroker::~DevBroker() {
  if (cluster_ != nullptr) rd_kafka_mock_cluster_destroy(cluster_);
}

absl::Status DevBroker::CreateTopic(const TopicSpec& topic) {
  SLUICE_RETURN_IF_ERROR(ValidateTopicName(topic.name));
  if (topic.partitions < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("topic ", topic.name, ": partition count must be >= 1"));
  }
  SLUICE_RETURN_IF_ERROR(kafka::KafkaErrorToStatus(
      rd_kafka_mock_topic_create(cluster_, topic.name.c_str(), topic.partitions,
                                 /*replication_factor=*/std::min(3, broker_count())),
      absl::StrCat("create topic ", topic.name)));
  absl::Status lifted =
      layout_problem_.empty()
          ? LiftRetentionCap(cluster_, rk_.get(), broker_count(), topic.name, topic.partitions)
          : absl::FailedPreconditionError(layout_problem_);
  {
    absl::MutexLock lock(&mu_);
    topics_[topic.name] = TopicState{topic.partitions, lifted.ok()};
  }
  if (lifted.ok()) {
    VLOG(1) << "[devbroker] created " << topic.name << " with " << topic.partitions
            << " partition(s), retention cap lifted";
    return absl::OkStatus();
  }
  if (!allow_retention_cap_) return lifted;
  LOG(WARNING) << "[devbroker] topic " << topic.name
               << " keeps the retention cap: " << lifted.message();
  return absl::OkStatus();
}

absl::Status DevBroker::CheckBroker(int32_t broker) const {
  if (broker < 1 || broker > broker_count()) {
    return absl::InvalidArgumentError(
        absl::StrCat("no broker ", broker, " (brokers are 1..", broker_count(), ")"));
  }
  return absl::OkStatus();
}

absl::Status DevBroker::SetBrokerUp(int32_t broker, bool up) {
  SLUICE_RETURN_IF_ERROR(CheckBroker(broker));
  SLUICE_RETURN_IF_ERROR(
      kafka::KafkaErrorToStatus(up ? rd_kafka_mock_broker_set_up(cluster_, broker)
                                   : rd_kafka_mock_broker_set_down(cluster_, broker),
                                absl::StrCat("set broker ", broker, up ? " up" : " down")));
  absl::MutexLock lock(&mu_);
  up_[broker - 1] = up;
  return absl::OkStatus();
}

absl::Status DevBroker::SetRtt(int32_t broker, int rtt_ms) {
  SLUICE_RETURN_IF_ERROR(CheckBroker(broker));
  if (rtt_ms < 0) return absl::InvalidArgumentError("rtt must be >= 0");
  SLUICE_RETURN_IF_ERROR(
      kafka::KafkaErrorToStatus(rd_kafka_mock_broker_set_rtt(cluster_, broker, rtt_ms),
                                absl::StrCat("set rtt of broker ", broker)));
  absl::MutexLock lock(&mu_);
  rtt_ms_[broker - 1] = rtt_ms;
  return absl::OkStatus();
}

absl::Status DevBroker::PushRequestErrors(int16_t api_key, rd_kafka_resp_err_t error, int count) {
  if (count < 1) return absl::InvalidArgumentError("count must be >= 1");
  std::vector<rd_kafka_resp_err_t> errors(count, error);
  rd_kafka_mock_push_request_errors_array(cluster_, api_key, errors.size(), errors.data());
  return absl::OkStatus();
}

absl::Status DevBroker::SetTopicError(absl::string_view topic, rd_kafka_resp_err_t error) {
  {
    absl::MutexLock lock(&mu_);
    if (topics_.find(std::string(topic)) == topics_.end()) {
      return absl::NotFoundError(absl::StrCat("unknown topic ", topic, " (create it first)"));
    }
  }
  const std::string name(topic);
  rd_kafka_mock_topic_set_error(cluster_, name.c_str(), error);
  return absl::OkStatus();
}

absl::Status DevBroker::SetLeader(absl::string_view topic, int32_t partition, int32_t broker) {
  if (broker != -1) SLUICE_RETURN_IF_ERROR(CheckBroker(broker));
  {
    absl::MutexLock lock(&mu_);
    auto it = topics_.find(std::string(topic));
    if (it == topics_.end()) {
      return absl::NotFoundError(absl::StrCat("unknown topic ", topic, " (create it first)"));
    }
    if (partition < 0 || partition >= it->second.partitions) {
      return absl::InvalidArgumentError(
          absl::StrCat("topic ", topic, " has partitions 0..", it->second.partitions - 1));
    }
  }
  const std::string name(topic);
  return kafka::KafkaErrorToStatus(
      rd_kafka_mock_partition_set_leader(cluster_, name.c_str(), partition, broker),
      absl::StrCat("set leader of ", topic, "[", partition, "]"));
}

std::string DevBroker::StatusLine() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> brokers;
  for (int i = 0; i < broker_count(); ++i) {
    std::string b = absl::StrCat(i + 1, "@", ports_[i], ":", up_[i] ? "up" : "down");
    if (rtt_ms_[i] > 0) absl::StrAppend(&b, ":rtt=", rtt_ms_[i], "ms");
    brokers.push_back(std::move(b));
  }
  std::vector<std::string> topics;
  for (const auto& [name, state] : topics_) {
    topics.push_back(absl::StrCat(name, ":", state.partitions, ":",
                                  state.retention_lifted ? "uncapped" : "CAPPED"));
  }
  return absl::StrCat("bootstrap=", bootstrap_servers_, " brokers=", absl::StrJoin(brokers, ","),
                      " topics=", topics.empty() ? "-" : absl::StrJoin(topics, ","));
}

DevBroker::Reply DevBroker::Execute(absl::string_view line) {
  absl::StatusOr<ControlCommand> parsed = ParseControlCommand(line);
  if (!parsed.ok()) return {absl::StrCat("error ", parsed.status().message())};
  const ControlCommand& cmd = *parsed;
  absl::Status status;
  std::string ok;
  switch (cmd.kind) {
    case ControlCommand::Kind::kNone:
      return {};
    case ControlCommand::Kind::kBrokerDown:
    case ControlCommand::Kind::kBrokerUp: {
      const bool up = cmd.kind == ControlCommand::Kind::kBrokerUp;
      status = SetBrokerUp(cmd.broker, up);
      ok = absl::StrCat("broker ", cmd.broker, up ? " up" : " down");
      break;
    }
    case ControlCommand::Kind::kRtt:
      status = SetRtt(cmd.broker, cmd.rtt_ms);
      ok = absl::StrCat("broker ", cmd.broker, " rtt ", cmd.rtt_ms, "ms");
      break;
    case ControlCommand::Kind::kRequestErrors:
      status = PushRequestErrors(cmd.api_key, cmd.error, cmd.count);
      ok = absl::StrCat("next ", cmd.count, " ", ApiKeyName(cmd.api_key), " request(s) fail with ",
                        rd_kafka_err2name(cmd.error));
      break;
    case ControlCommand::Kind::kTopicError:
      status = SetTopicError(cmd.topic, cmd.error);
      ok = absl::StrCat("topic ", cmd.topic, " error ", rd_kafka_err2name(cmd.error));
      break;
    case ControlCommand::Kind::kCreateTopic:
      status = CreateTopic(TopicSpec{cmd.topic, cmd.partitions});
      ok = absl::StrCat("created ", cmd.topic, " with ", cmd.partitions, " partition(s)");
      break;
    case ControlCommand::Kind::kSetLeader:
      status = SetLeader(cmd.topic, cmd.partition, cmd.broker);
      ok = absl::StrCat("leader of ", cmd.topic, "[", cmd.partition, "] is ", cmd.broker);
      break;
    case ControlCommand::Kind::kStatus:
      ok = StatusLine();
      break;
    case ControlCommand::Kind::kHelp:
      ok = std::string(ControlHelp());
      break;
    case ControlCommand::Kind::kQuit:
      return {"ok quitting", true};
  }
  if (!status.ok()) {
    return {
        absl::StrCat("error ", absl::StatusCodeToString(status.code()), ": ", status.message())};
  }
  return {absl::StrCat("ok ", ok)};
}

}  // namespace devbroker
}  // namespace sluice
