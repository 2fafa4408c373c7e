// A Kafka consumer for one task: librdkafka's C API, partitions assigned at
// explicit offsets (no consumer group membership, no commits: offsets live in
// the supervisor's metadata store), records taken from the consumer queue in
// batches.
//
// Not thread-safe: one thread (the task's read loop) uses it.
//
//   auto consumer = KafkaConsumer::Create({.topic = "wiki", .properties = props,
//                                          .client_id = task_id});
//   SLUICE_RETURN_IF_ERROR((*consumer)->Assign({{0, 1200}, {2, 800}}));
//   KafkaBatch batch;
//   std::vector<OffsetOutOfRange> out_of_range;
//   SLUICE_RETURN_IF_ERROR((*consumer)->Poll(absl::Milliseconds(100), 10000, &batch,
//                                            &out_of_range));
//   for (size_t i = 0; i < batch.size(); ++i) Use(batch[i]);
#ifndef SLUICE_TASK_KAFKA_CONSUMER_H_
#define SLUICE_TASK_KAFKA_CONSUMER_H_

#include <librdkafka/rdkafka.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/kafka/config.h"
#include "common/kafka/property_policy.h"
#include "common/kafka/consumer_settings.h"
#include "common/kafka/handles.h"
#include "task/fetch_refill.h"
#include "common/offsets.h"
#include "common/stream_partitions.h"

namespace sluice::task {

struct KafkaConsumerOptions {
  // The topic read; for a topic-pattern task, empty and `stream_partitions`
  // names the (topic, partition) of each stream partition the offset maps
  // are keyed by (records, ends and errors come back under those ids).
  std::string topic;
  StreamPartitionMap stream_partitions;
  // librdkafka properties from the spec ("bootstrap.servers" is required).
  // They override the recommended ones of kafka::WithConsumerDefaults for
  // `cluster_kind`, except the settings exactly-once depends on (no commits,
  // no offset store, auto.offset.reset=error, partition EOF events on: see
  // TakeReachedEnds), which are forced.
  kafka::KafkaProperties properties;
  kafka::ClusterKind cluster_kind = kafka::ClusterKind::kKafka;
  // client.id (e.g. the task id).
  std::string client_id;
  // What `properties` may say (the supervisor checked it at submit; the
  // worker checks again, and resolves secret references, before connecting).
  kafka::PropertyPolicyOptions policy;
  // > 0: the prefetch queue holds at most about this many bytes: its
  // payloads (queued.max.messages.kbytes, at least 1 MiB) and its message
  // count (queued.min.messages, one per KiB, at least 10,000), each unless
  // `properties` sets it.
  int64_t max_prefetch_bytes = 0;
};

struct KafkaRecord {
  // The stream partition (the Kafka partition for a single-topic task).
  int32_t partition;
  int64_t offset;
  absl::string_view value;
};

// One header of a record; a header may have no value (null).
struct KafkaHeader {
  absl::string_view name;
  absl::string_view value;
  bool has_value = false;
};

// A record's envelope (KafkaBatch::ReadEnvelope), for the kafka input format
// and the header filter: views into the batch's messages, valid as long as
// the record value.
struct KafkaEnvelope {
  // A null key (has_key false) is not an empty one.
  bool has_key = false;
  absl::string_view key;
  // Epoch millis (create or log-append time), -1 when the record has none.
  int64_t timestamp_ms = -1;
  absl::string_view topic;
  // The Kafka partition (a topic-pattern task's record has a stream
  // partition id besides).
  int32_t partition = 0;
  // In record order; a name may repeat.
  std::vector<KafkaHeader> headers;
};

// A librdkafka message's Kafka timestamp (epoch millis; -1 when it has none).
int64_t MessageTimestamp(const rd_kafka_message_t& m);

// The envelope of one librdkafka message into *out (its header vector's
// capacity is reused): what KafkaBatch::ReadEnvelope gives the read loop, for
// readers of messages outside a batch (the exactly-once audit re-parses each
// record as the task did). Views into `m`, valid as long as it is. Costs a
// header parse in librdkafka.
void ReadMessageEnvelope(const rd_kafka_message_t& m, KafkaEnvelope* out);

// Records of one Poll. Owns the librdkafka messages; values are valid until
// the batch is cleared or destroyed.
class KafkaBatch {
 public:
  KafkaBatch() = default;
  ~KafkaBatch() { Clear(); }
  KafkaBatch(const KafkaBatch&) = delete;
  KafkaBatch& operator=(const KafkaBatch&) = delete;

  size_t size() const { return messages_.size(); }
  bool empty() const { return messages_.empty(); }
  KafkaRecord operator[](size_t i) const {
    const rd_kafka_message_t* m = messages_[i];
    return KafkaRecord{stream_partitions_.empty() ? m->partition : stream_partitions_[i],
                       m->offset,
                       absl::string_view(static_cast<const char*>(m->payload),
                                         m->payload == nullptr ? 0 : m->len)};
  }
  void Clear();
  // Differs between any two fills of any batches of this process (a batch
  // reused or one made at the same address): what a record of a batch is
  // known by across calls, beside its index.
  uint64_t serial() const { return serial_; }

  // Record i's Kafka timestamp (epoch millis; -1 when it has none).
  int64_t Timestamp(size_t i) const;

  // The envelope of record i into *out (its header vector's capacity is
  // reused). Costs a header parse in librdkafka: only the kafka input
  // format and the header filter call it.
  void ReadEnvelope(size_t i, KafkaEnvelope* out) const;

 private:
  friend class KafkaConsumer;
  std::vector<rd_kafka_message_t*> messages_;
  // Topic-pattern consumers: the stream partition of each message (empty
  // otherwise: the Kafka partition is the id).
  std::vector<int32_t> stream_partitions_;
  uint64_t serial_ = 0;  // set by Clear, which every fill starts with
};

// A partition whose next offset is not available in Kafka (before the
// earliest retained offset, or past the latest).
struct OffsetOutOfRange {
  int32_t partition = 0;
  int64_t offset = 0;
  std::string message;
};

class KafkaConsumer {
 public:
  static absl::StatusOr<std::unique_ptr<KafkaConsumer>> Create(KafkaConsumerOptions options);
  // The librdkafka properties Create configures: the options' checked and
  // resolved properties over the recommended ones, the prefetch bound, and
  // the settings exactly-once depends on. INVALID_ARGUMENT as Create.
  static absl::StatusOr<kafka::KafkaProperties> Properties(const KafkaConsumerOptions& options);
  ~KafkaConsumer();
  KafkaConsumer(const KafkaConsumer&) = delete;
  KafkaConsumer& operator=(const KafkaConsumer&) = delete;

  // Replaces the assignment: partition p is read from offsets[p]. An empty
  // map unassigns everything. Records fetched for the previous assignment and
  // not yet polled are dropped.
  absl::Status Assign(const OffsetMap& offsets);

  // Replaces `batch` with up to `max_records` records, waiting up to
  // `timeout` for the first one. Records of a partition come in offset order.
  // Partitions whose offset is out of range are appended to `out_of_range`
  // (they are not fetched again until the next Assign). Transient errors
  // (broker down, ...) are logged and retried by librdkafka; only fatal
  // client errors are returned (INTERNAL).
  absl::Status Poll(absl::Duration timeout, size_t max_records, KafkaBatch* batch,
                    std::vector<OffsetOutOfRange>* out_of_range);

  // Cuts a Poll waiting for its first record short (it returns what it has,
  // possibly nothing); if none is waiting, the next one returns at once.
  // Thread-safe: a pause or stop calls it so the read loop parks promptly.
  void Wake();

  // Partitions whose end (high watermark; the last stable offset under
  // read_committed) Poll has reached since the last call, with that end
  // offset: every record below it has been returned. The offsets between the
  // last record returned and the end may hold none a reader gets
  // (transaction markers; aborted records under read_committed; compacted
  // records), so this is how a reader learns it is done with them. From
  // librdkafka's partition EOF events, which come in order after the records.
  // Assign() forgets them.
  OffsetMap TakeReachedEnds();

  // Earliest and latest (high watermark) offsets of a partition.
  absl::StatusOr<std::pair<int64_t, int64_t>> Watermarks(int32_t partition, absl::Duration timeout);

  // The topic (empty for a topic-pattern task).
  const std::string& topic() const { return topic_; }

  // How often Poll woke librdkafka's fetcher after the local queue had filled
  // (fetch_refill.h). For tests and logs.
  int64_t fetch_wakeups() const { return fetch_wakeups_; }

  // Authentication (kafka/auth_failure.h): the message of the last
  // authentication failure the client reported (PERMISSION_DENIED "Kafka
  // consumer: Kafka authentication failed (SASL SCRAM-SHA-512 over
  // SASL_SSL): ...", naming the mechanism, never a secret), until a record or
  // a partition end arrives again; "" when there is none. librdkafka keeps
  // reconnecting meanwhile. After each failure the spec's secret references
  // are resolved again, and a changed SASL username or password (a ${file:}
  // secret fixed on disk) is used from the next login on
  // (rd_kafka_sasl_set_credentials): no record is skipped, the assignment
  // stays where it was.
  const std::string& auth_error() const { return auth_error_; }
  // Authentication failures since the last call (for the metric).
  int64_t TakeAuthFailures();
  // The spec's mechanism (kafka::AuthMechanism; "" for PLAINTEXT).
  const std::string& auth_mechanism() const { return auth_mechanism_; }

 private:
  // Written by librdkafka's error callback (in Poll's thread), read by Poll.
  struct AuthEvents;
  static void ErrorCallback(rd_kafka_t* rk, int err, const char* reason, void* opaque);
  KafkaConsumer(kafka::HandlePtr rk, std::string topic, StreamPartitionMap stream_partitions,
                RefillTrigger refill);
  // An authentication failure `err` with `reason` (from an error event or
  // the callback): noted, and the credentials read again.
  void NoteAuthFailure(rd_kafka_resp_err_t err, absl::string_view reason);
  // Resolves the secret references again; new SASL credentials go to
  // librdkafka.
  void RefreshCredentials();
  void TakeCallbackAuthFailures();
  // The Kafka topic and partition of stream partition `id` (for a single
  // topic: topic_ and id). INVALID_ARGUMENT for an id the task was not
  // given.
  absl::StatusOr<TopicPartition> KafkaPartitionOf(int32_t id) const;
  // The stream partition of a message (-1: not one the task reads).
  int32_t StreamPartitionOf(const rd_kafka_message_t* m);

  // One take from the consumer queue (Poll repeats it while it only got
  // partition EOF events).
  absl::Status PollOnce(absl::Duration timeout, size_t max_records, KafkaBatch* batch,
                        std::vector<OffsetOutOfRange>* out_of_range);

  // Wakes the broker threads that fetch the assigned partitions: a
  // ListOffsets request for all of them (one per leader broker), which each
  // serves and then decides again whether to fetch.
  void WakeFetchers();

  kafka::HandlePtr rk_;
  rd_kafka_queue_t* queue_;
  const std::string topic_;
  const StreamPartitionMap stream_partitions_;
  // StreamPartitionOf's memo: the partition table of the last topic seen.
  const rd_kafka_topic_t* last_rkt_ = nullptr;
  const std::map<int32_t, int32_t>* last_topic_ids_ = nullptr;
  // Only the thread that calls Assign and Poll touches these.
  std::vector<int32_t> assigned_;
  RefillTrigger refill_;
  // Only a library without fetch.queue.backoff.ms (before 2.2) needs the
  // wake-up: from 2.2 on a partition whose queue was full fetches again once
  // its backoff ran out, whatever wakes the broker thread, and a wake-up only
  // costs the read loop a ListOffsets round trip (fetch_refill.h).
  const bool wake_fetchers_ = rd_kafka_version() < kafka::kFetchQueueBackoffSince;
  double polled_bytes_ = 0;
  double polled_records_ = 0;
  int64_t fetch_wakeups_ = 0;
  OffsetMap reached_ends_;
  int64_t eof_events_ = 0;
  // Authentication: the unresolved properties and the policy (to read the
  // secrets again), the resolved ones in use (scrubbed from messages).
  kafka::KafkaProperties unresolved_;
  kafka::PropertyPolicyOptions policy_;
  kafka::KafkaProperties resolved_;
  std::string auth_mechanism_;
  std::string auth_error_;
  int64_t auth_failures_ = 0;
  absl::Time next_credentials_check_ = absl::InfinitePast();
  // Written by the error callback until rk_ is destroyed: the destructor
  // resets rk_ first.
  std::unique_ptr<AuthEvents> auth_events_;
};

}  // namespace sluice::task

#endif  // SLUICE_TASK_KAFKA_CONSUMER_H_
