#include "supervisor/shared_kafka_clients.h"

#include "common/status_macros.h"

namespace sluice::supervisor {

absl::StatusOr<std::shared_ptr<kafka::MetadataClient>> SharedKafkaClients::Get(
    const kafka::KafkaProperties& properties) {
  absl::MutexLock lock(&mu_);
  DropExpired();
  auto it = clients_.find(properties);
  if (it != clients_.end()) {
    if (std::shared_ptr<kafka::MetadataClient> client = it->second.lock()) return client;
  }
  // Created under the lock: concurrent first users of one cluster get one
  // handle (creating one does not wait for the network).
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<kafka::MetadataClient> created,
                          kafka::MetadataClient::Create(properties));
  std::shared_ptr<kafka::MetadataClient> client(std::move(created));
  clients_[properties] = client;
  return client;
}

int SharedKafkaClients::live() {
  absl::MutexLock lock(&mu_);
  DropExpired();
  return static_cast<int>(clients_.size());
}

void SharedKafkaClients::DropExpired() {
  for (auto it = clients_.begin(); it != clients_.end();) {
    it = it->second.expired() ? clients_.erase(it) : std::next(it);
  }
}

}  // namespace sluice::supervisor
