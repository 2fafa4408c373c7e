// Kafka metadata clients shared by every datasource that connects with the
// same properties: one librdkafka handle (its threads
// and sockets) per cluster and property set, not per datasource. A client
// lives while any datasource holds it and is closed with the last one.
//
// The key is the whole resolved property map: two specs share a client
// only when they would have built identical ones (a client.id or any other
// property that differs gives its own client).
#ifndef SLUICE_SUPERVISOR_SHARED_KAFKA_CLIENTS_H_
#define SLUICE_SUPERVISOR_SHARED_KAFKA_CLIENTS_H_

#include <map>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/kafka/config.h"
#include "common/kafka/metadata_client.h"

namespace sluice::supervisor {

class SharedKafkaClients {
 public:
  // The client for `properties` (already checked and resolved), created on
  // first use. INVALID_ARGUMENT for bad properties (MetadataClient::Create).
  absl::StatusOr<std::shared_ptr<kafka::MetadataClient>> Get(
      const kafka::KafkaProperties& properties) ABSL_LOCKS_EXCLUDED(mu_);

  // Clients held by someone now (tests).
  int live() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void DropExpired() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  absl::Mutex mu_;
  std::map<kafka::KafkaProperties, std::weak_ptr<kafka::MetadataClient>> clients_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_SHARED_KAFKA_CLIENTS_H_
