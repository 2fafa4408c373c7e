// sluice's development Kafka broker: librdkafka's mock cluster (real Kafka
// wire protocol on 127.0.0.1) with topics created up front, the retention cap
// lifted for them (retention.h), optional fixed ports (fixed_ports.h), and
// fault injection through control commands (control_command.h).
//
//   DevBrokerOptions options;
//   options.brokers = 3;
//   options.topics = {{"wiki", 4}};
//   SLUICE_ASSIGN_OR_RETURN(auto broker, DevBroker::Create(options));
//   producer props: {"bootstrap.servers", broker->bootstrap_servers()}
//   broker->Execute("broker down 2");   // -> {"ok broker 2 down", false}
//
// Thread-safe: Execute and the fault methods may be called from any thread.
// Destroying it stops the brokers (connected clients see them go away).
// Not copyable or movable.
#ifndef SLUICE_TOOLS_DEVBROKER_DEV_BROKER_H_
#define SLUICE_TOOLS_DEVBROKER_DEV_BROKER_H_

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "common/kafka/handles.h"

namespace sluice {
namespace devbroker {

struct TopicSpec {
  std::string name;
  int partitions = 1;
};

// "NAME:PARTITIONS" (e.g. "wiki:4"); INVALID_ARGUMENT otherwise.
absl::StatusOr<TopicSpec> ParseTopicSpec(absl::string_view text);

struct DevBrokerOptions {
  // Number of brokers (1..32). Partition replicas are min(3, brokers). All
  // brokers share one I/O thread: use 1 for throughput, 3 for failover.
  int brokers = 1;
  // Topics to create at start.
  std::vector<TopicSpec> topics;
  // 0: ephemeral ports. Otherwise broker i listens on base_port + i - 1; the
  // ports must be free (UNAVAILABLE otherwise).
  int base_port = 0;
  // When the retention cap cannot be lifted (unknown librdkafka version or
  // layout): false refuses to start (FAILED_PRECONDITION), true runs with the
  // cap and logs a warning.
  bool allow_retention_cap = false;
};

class DevBroker {
 public:
  static absl::StatusOr<std::unique_ptr<DevBroker>> Create(const DevBrokerOptions& options);
  ~DevBroker();
  DevBroker(const DevBroker&) = delete;
  DevBroker& operator=(const DevBroker&) = delete;

  // "127.0.0.1:PORT1,127.0.0.1:PORT2,..." in broker order.
  const std::string& bootstrap_servers() const { return bootstrap_servers_; }
  // Listen port of broker i at index i - 1.
  const std::vector<int>& ports() const { return ports_; }
  int broker_count() const { return static_cast<int>(ports_.size()); }

  // Creates a topic and lifts its retention cap. ALREADY_EXISTS if the
  // cluster has it; FAILED_PRECONDITION if the cap cannot be lifted and
  // allow_retention_cap is false (the topic then exists, capped).
  absl::Status CreateTopic(const TopicSpec& topic) ABSL_LOCKS_EXCLUDED(mu_);

  // Fault injection. Broker ids are 1-based; INVALID_ARGUMENT when out of range.
  absl::Status SetBrokerUp(int32_t broker, bool up) ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status SetRtt(int32_t broker, int rtt_ms) ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status PushRequestErrors(int16_t api_key, rd_kafka_resp_err_t error, int count);
  // Topic must be one this broker created (NOT_FOUND otherwise).
  absl::Status SetTopicError(absl::string_view topic, rd_kafka_resp_err_t error)
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status SetLeader(absl::string_view topic, int32_t partition, int32_t broker)
      ABSL_LOCKS_EXCLUDED(mu_);

  // One line: brokers with port and up/down (and rtt when set), topics with
  // partition count and retention state.
  std::string StatusLine() const ABSL_LOCKS_EXCLUDED(mu_);

  struct Reply {
    std::string line;  // "ok ..." or "error ...", no newline; empty for no reply.
    bool quit = false;
  };
  // Runs one control line (control_command.h).
  Reply Execute(absl::string_view line);

  // The raw cluster, for tests that inject faults the commands do not cover.
  rd_kafka_mock_cluster_t* cluster() const { return cluster_; }

 private:
  struct TopicState {
    int partitions = 0;
    bool retention_lifted = false;
  };

  DevBroker() = default;
  absl::Status CheckBroker(int32_t broker) const;

  kafka::HandlePtr rk_;  // The handle the mock cluster runs on.
  rd_kafka_mock_cluster_t* cluster_ = nullptr;
  bool allow_retention_cap_ = false;
  // Set when the cluster layout could not be verified at start (only with
  // allow_retention_cap): why every topic keeps the cap.
  std::string layout_problem_;
  std::string bootstrap_servers_;
  std::vector<int> ports_;

  // Guards the bookkeeping of what was created and injected (the mock has no
  // query API for it). Mock API calls are made outside it where they may block.
  mutable absl::Mutex mu_;
  std::map<std::string, TopicState> topics_ ABSL_GUARDED_BY(mu_);
  std::vector<bool> up_ ABSL_GUARDED_BY(mu_);
  std::vector<int> rtt_ms_ ABSL_GUARDED_BY(mu_);
};

}  // namespace devbroker
}  // namespace sluice

#endif  // SLUICE_TOOLS_DEVBROKER_DEV_BROKER_H_
