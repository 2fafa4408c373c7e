// A fault-suite scenario (tests/fault/fault_scenario.h) on the shared real
// Kafka broker: its own topic, created first, and real Kafka's consumer
// settings for the workers and the audit.
#ifndef SLUICE_TESTS_REAL_KAFKA_REAL_KAFKA_SCENARIO_H_
#define SLUICE_TESTS_REAL_KAFKA_REAL_KAFKA_SCENARIO_H_

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "tests/fault/fault_scenario.h"
#include "tests/real_kafka/real_kafka_env.h"

namespace sluice::real_kafka {

// Creates the topic `options.topic` (UniqueTopic() when it is the default)
// with `options.partitions` partitions and `configs`, then starts the
// scenario on the shared broker. With `create_topic` false the topic must
// exist already. Null after recording the failure.
inline std::unique_ptr<fault::FaultScenario> StartRealKafkaScenario(
    fault::ScenarioOptions options, const std::map<std::string, std::string>& configs = {},
    bool create_topic = true) {
  kafka::RealKafka* kafka = RealKafkaEnv();
  if (kafka == nullptr) return nullptr;
  if (options.topic == fault::kTopic) options.topic = UniqueTopic();
  if (options.name.empty()) options.name = options.topic;
  const absl::Status created = create_topic
                                   ? kafka->CreateTopic(options.topic, options.partitions, configs)
                                   : absl::OkStatus();
  EXPECT_TRUE(created.ok()) << created;
  if (!created.ok()) return nullptr;
  options.external_bootstrap_servers = kafka->bootstrap_servers();
  absl::StatusOr<std::unique_ptr<fault::FaultScenario>> s =
      fault::FaultScenario::Start(std::move(options));
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? std::move(*s) : nullptr;
}

}  // namespace sluice::real_kafka

#endif  // SLUICE_TESTS_REAL_KAFKA_REAL_KAFKA_SCENARIO_H_
