// A small Kafka producer for tests, the demo and benchmarks: produce values
// to a topic (and partition), then Flush() to learn whether every record was
// delivered. Not used on the ingestion path (sluice only consumes).
//
//   SLUICE_ASSIGN_OR_RETURN(auto producer, kafka::Producer::Create(
//       {{"bootstrap.servers", bootstrap}, {"linger.ms", "5"}}));
//   for (const std::string& row : rows) {
//     SLUICE_RETURN_IF_ERROR(producer->Produce("wiki", 0, row));
//   }
//   SLUICE_RETURN_IF_ERROR(producer->Flush(absl::Seconds(30)));
//
// Thread-safe (Produce may be called from several threads). Not copyable.
#ifndef SLUICE_COMMON_KAFKA_PRODUCER_H_
#define SLUICE_COMMON_KAFKA_PRODUCER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/kafka/config.h"
#include "common/kafka/handles.h"

namespace sluice {
namespace kafka {

// A record with its envelope: key (null or not), headers, timestamp.
struct OutgoingRecord {
  absl::string_view value;
  // nullopt: a null key (not the same as an empty one).
  std::optional<absl::string_view> key;
  // (name, value) in order; a name may repeat; nullopt: a header without a
  // value.
  std::vector<std::pair<std::string, std::optional<std::string>>> headers;
  // The record's create time, epoch millis; 0: now.
  int64_t timestamp_ms = 0;
};

class Producer {
 public:
  // Partition argument meaning "let librdkafka's partitioner choose".
  static constexpr int32_t kAnyPartition = RD_KAFKA_PARTITION_UA;

  // Counters since creation.
  struct Stats {
    int64_t delivered = 0;
    int64_t failed = 0;
  };

  // `properties`: producer properties (at least "bootstrap.servers").
  // INVALID_ARGUMENT for bad properties.
  static absl::StatusOr<std::unique_ptr<Producer>> Create(const KafkaProperties& properties);

  ~Producer();
  Producer(const Producer&) = delete;
  Producer& operator=(const Producer&) = delete;

  // Enqueues one record (value copied; key optional, empty = no key). Waits
  // (serving delivery reports) while librdkafka's local queue is full. Errors here are local
  // (unknown topic already known to librdkafka, oversized message): INVALID_ARGUMENT, NOT_FOUND...;
  // delivery failures are reported by Flush().
  absl::Status Produce(absl::string_view topic, int32_t partition, absl::string_view value,
                       absl::string_view key = {});
  // The same for a record with its envelope.
  absl::Status ProduceRecord(absl::string_view topic, int32_t partition,
                             const OutgoingRecord& record);

  // Waits until every enqueued record is delivered or failed. Returns the
  // first delivery error since the previous Flush (with its topic, partition
  // and how many records failed), UNAVAILABLE if records are still in flight
  // after `timeout`, else OK.
  absl::Status Flush(absl::Duration timeout);

  Stats stats() const ABSL_LOCKS_EXCLUDED(mu_);

  // Per (topic, partition): one past the highest offset a record was
  // delivered at, i.e. the partition's end after this producer's writes.
  std::map<std::pair<std::string, int32_t>, int64_t> delivered_end_offsets() const
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  Producer() = default;
  static void OnDelivery(rd_kafka_t* rk, const rd_kafka_message_t* message, void* opaque);
  void RecordDelivery(const rd_kafka_message_t& message) ABSL_LOCKS_EXCLUDED(mu_);

  HandlePtr rk_;

  // Guards the delivery bookkeeping, written by the delivery callback (which
  // runs inside rd_kafka_poll/flush on the calling thread).
  mutable absl::Mutex mu_;
  Stats stats_ ABSL_GUARDED_BY(mu_);
  // First failure since the last Flush, and how many failed since then.
  absl::Status first_error_ ABSL_GUARDED_BY(mu_);
  int64_t failed_since_flush_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::pair<std::string, int32_t>, int64_t> end_offsets_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kafka
}  // namespace sluice

#endif  // SLUICE_COMMON_KAFKA_PRODUCER_H_
