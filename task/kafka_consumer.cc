#include "task/kafka_consumer.h"

#include <glog/logging.h>

#include <atomic>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "common/kafka/auth_failure.h"
#include "common/kafka/errors.h"
#include "common/status_macros.h"

namespace sluice::task {
namespace {


// A librdkafka integer property as the consumer will use it.
int64_t IntProperty(const kafka::KafkaProperties& props, const std::string& name,
                    int64_t fallback) {
  int64_t value = 0;
  return absl::SimpleAtoi(kafka::PropertyOr(props, name, ""), &value) ? value : fallback;
}

int64_t Millis(absl::Duration d) {
  if (d <= absl::ZeroDuration()) return 0;
  if (d > absl::Hours(24)) return 24 * 3600 * 1000;
  return absl::ToInt64Milliseconds(d);
}

}  // namespace

struct KafkaConsumer::AuthEvents {
  absl::Mutex mu;
  // Authentication failures reported to the error callback, not yet taken.
  std::vector<std::pair<rd_kafka_resp_err_t, std::string>> failures ABSL_GUARDED_BY(mu);
};

void KafkaConsumer::ErrorCallback(rd_kafka_t* rk, int err, const char* reason, void* opaque) {
  const auto code = static_cast<rd_kafka_resp_err_t>(err);
  const absl::string_view why = reason != nullptr ? reason : "";
  // Transport errors repeat while a broker is down: rate-limit.
  LOG_EVERY_N(WARNING, 20) << "[kafka " << rd_kafka_name(rk) << "] " << rd_kafka_err2name(code)
                           << ": " << why;
  if (opaque == nullptr || !kafka::IsAuthFailureError(code, why)) return;
  auto* events = static_cast<AuthEvents*>(opaque);
  absl::MutexLock lock(&events->mu);
  // Bounded: taken at every Poll.
  if (events->failures.size() < 100) events->failures.emplace_back(code, std::string(why));
}

void KafkaBatch::Clear() {
  for (rd_kafka_message_t* m : messages_) rd_kafka_message_destroy(m);
  messages_.clear();
  stream_partitions_.clear();
  static std::atomic<uint64_t> last_serial{0};
  serial_ = last_serial.fetch_add(1, std::memory_order_relaxed) + 1;
}

int64_t MessageTimestamp(const rd_kafka_message_t& m) {
  rd_kafka_timestamp_type_t type;
  const int64_t timestamp = rd_kafka_message_timestamp(&m, &type);
  return type == RD_KAFKA_TIMESTAMP_NOT_AVAILABLE ? -1 : timestamp;
}

void ReadMessageEnvelope(const rd_kafka_message_t& m, KafkaEnvelope* out) {
  out->has_key = m.key != nullptr;
  out->key = m.key == nullptr ? absl::string_view()
                              : absl::string_view(static_cast<const char*>(m.key), m.key_len);
  out->timestamp_ms = MessageTimestamp(m);
  out->topic =
      m.rkt != nullptr ? absl::string_view(rd_kafka_topic_name(m.rkt)) : absl::string_view();
  out->partition = m.partition;
  out->headers.clear();
  rd_kafka_headers_t* headers = nullptr;
  // NOENT: the record has no headers.
  if (rd_kafka_message_headers(&m, &headers) != RD_KAFKA_RESP_ERR_NO_ERROR) return;
  const char* name = nullptr;
  const void* value = nullptr;
  size_t size = 0;
  for (size_t h = 0;
       rd_kafka_header_get_all(headers, h, &name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR;
       ++h) {
    KafkaHeader header;
    header.name = absl::string_view(name);
    header.has_value = value != nullptr;
    if (value != nullptr) header.value = absl::string_view(static_cast<const char*>(value), size);
    out->headers.push_back(header);
  }
}

int64_t KafkaBatch::Timestamp(size_t i) const { return MessageTimestamp(*messages_[i]); }

void KafkaBatch::ReadEnvelope(size_t i, KafkaEnvelope* out) const {
  ReadMessageEnvelope(*messages_[i], out);
}

absl::StatusOr<kafka::KafkaProperties> KafkaConsumer::Properties(
    const KafkaConsumerOptions& options) {
  if (options.topic.empty() == options.stream_partitions.empty()) {
    return absl::InvalidArgumentError(
        "the consumer needs a topic or the stream partitions of a topic pattern");
  }
  if (kafka::PropertyOr(options.properties, "bootstrap.servers", "").empty()) {
    return absl::InvalidArgumentError("ioConfig.consumerProperties must set \"bootstrap.servers\"");
  }
  SLUICE_RETURN_IF_ERROR(kafka::CheckProperties(options.properties, options.policy));
  SLUICE_ASSIGN_OR_RETURN(kafka::KafkaProperties resolved,
                          kafka::ResolveSecretReferences(options.properties, options.policy));
  kafka::KafkaProperties props = kafka::WithConsumerDefaults(resolved, options.cluster_kind);
  // The prefetch queue within max_prefetch_bytes: its payloads
  // (queued.max.messages.kbytes) and its message count, at ~1 KiB a message
  // (payload and librdkafka's own ~250 bytes per queued message), where the
  // properties leave them out.
  if (options.max_prefetch_bytes > 0 && !resolved.count("queued.max.messages.kbytes")) {
    const int64_t kbytes = std::max<int64_t>(
        1024, std::min<int64_t>(IntProperty(props, "queued.max.messages.kbytes", 65536),
                                options.max_prefetch_bytes / 1024));
    props["queued.max.messages.kbytes"] = absl::StrCat(kbytes);
  }
  if (options.max_prefetch_bytes > 0 && !resolved.count("queued.min.messages")) {
    const int64_t messages = std::max<int64_t>(
        10000, std::min<int64_t>(IntProperty(props, "queued.min.messages", 100000),
                                 options.max_prefetch_bytes / 1024));
    props["queued.min.messages"] = absl::StrCat(messages);
  }
  // Offsets live in the metadata store: never commit or store them, and an
  // offset that is not available is an error to report, never a silent jump.
  props["enable.auto.commit"] = "false";
  props["enable.auto.offset.store"] = "false";
  props["auto.offset.reset"] = "error";
  // A partition's end tells the reader it is past offsets that hold no record
  // for it (transaction markers, aborted records): TakeReachedEnds.
  props["enable.partition.eof"] = "true";
  // librdkafka wants a group id even for assign(); it is never joined.
  props["group.id"] =
      absl::StrCat("sluice-", options.client_id.empty() ? "task" : options.client_id);
  if (!options.client_id.empty()) props["client.id"] = options.client_id;
  return props;
}

absl::StatusOr<std::unique_ptr<KafkaConsumer>> KafkaConsumer::Create(KafkaConsumerOptions options) {
  SLUICE_ASSIGN_OR_RETURN(const kafka::KafkaProperties props, Properties(options));
  SLUICE_ASSIGN_OR_RETURN(
      kafka::ConfPtr conf,
      kafka::BuildConf(props, options.client_id.empty() ? "consumer" : options.client_id));
  auto auth_events = std::make_unique<AuthEvents>();
  rd_kafka_conf_set_error_cb(conf.get(), &KafkaConsumer::ErrorCallback);
  rd_kafka_conf_set_opaque(conf.get(), auth_events.get());
  SLUICE_ASSIGN_OR_RETURN(kafka::HandlePtr rk,
                          kafka::NewHandle(RD_KAFKA_CONSUMER, std::move(conf)));
  // Errors and other events are served from the consumer queue by Poll.
  rd_kafka_poll_set_consumer(rk.get());
  // librdkafka's defaults where the properties leave them out.
  RefillTrigger refill(IntProperty(props, "queued.min.messages", 100000),
                       IntProperty(props, "queued.max.messages.kbytes", 65536) * 1024);
  std::unique_ptr<KafkaConsumer> consumer(
      new KafkaConsumer(std::move(rk), options.topic, std::move(options.stream_partitions),
                        refill));
  consumer->auth_mechanism_ = kafka::AuthMechanism(options.properties);
  consumer->unresolved_ = std::move(options.properties);
  consumer->policy_ = std::move(options.policy);
  consumer->resolved_ = props;
  consumer->auth_events_ = std::move(auth_events);
  return consumer;
}

void KafkaConsumer::NoteAuthFailure(rd_kafka_resp_err_t err, absl::string_view reason) {
  ++auth_failures_;
  auth_error_ = std::string(
      kafka::AuthFailureStatus(err, "Kafka consumer", reason, resolved_).message());
  LOG_EVERY_N(WARNING, 10) << "[kafka " << rd_kafka_name(rk_.get()) << "] " << auth_error_;
  RefreshCredentials();
}

void KafkaConsumer::RefreshCredentials() {
  // The secrets may have been fixed since the client was made: read them
  // again; librdkafka takes new SASL credentials for its next login.
  // librdkafka does not report every repeated failure: while one is shown,
  // this runs at least every second anyway (PollOnce).
  next_credentials_check_ = absl::Now() + absl::Seconds(1);
  absl::StatusOr<kafka::KafkaProperties> again =
      kafka::ResolveSecretReferences(unresolved_, policy_);
  if (!again.ok()) {
    LOG_EVERY_N(WARNING, 10) << "[kafka " << rd_kafka_name(rk_.get())
                             << "] reading the secret references again: " << again.status();
    return;
  }
  const std::string username = kafka::PropertyOr(*again, "sasl.username", "");
  const std::string password = kafka::PropertyOr(*again, "sasl.password", "");
  if (username == kafka::PropertyOr(resolved_, "sasl.username", "") &&
      password == kafka::PropertyOr(resolved_, "sasl.password", "")) {
    return;
  }
  rd_kafka_error_t* error =
      rd_kafka_sasl_set_credentials(rk_.get(), username.c_str(), password.c_str());
  if (error != nullptr) {
    LOG(WARNING) << "[kafka " << rd_kafka_name(rk_.get()) << "] new SASL credentials refused: "
                 << rd_kafka_error_string(error);
    rd_kafka_error_destroy(error);
    return;
  }
  LOG(INFO) << "[kafka " << rd_kafka_name(rk_.get())
            << "] the SASL credentials' secret references resolve to new values after an "
               "authentication failure: the next login uses them";
  resolved_["sasl.username"] = username;
  resolved_["sasl.password"] = password;
}

void KafkaConsumer::TakeCallbackAuthFailures() {
  if (auth_events_ == nullptr) return;
  std::vector<std::pair<rd_kafka_resp_err_t, std::string>> failures;
  {
    absl::MutexLock lock(&auth_events_->mu);
    failures.swap(auth_events_->failures);
  }
  for (const auto& [err, reason] : failures) NoteAuthFailure(err, reason);
}

int64_t KafkaConsumer::TakeAuthFailures() {
  const int64_t n = auth_failures_;
  auth_failures_ = 0;
  return n;
}

KafkaConsumer::KafkaConsumer(kafka::HandlePtr rk, std::string topic,
                             StreamPartitionMap stream_partitions, RefillTrigger refill)
    : rk_(std::move(rk)),
      queue_(rd_kafka_queue_get_consumer(rk_.get())),
      topic_(std::move(topic)),
      stream_partitions_(std::move(stream_partitions)),
      refill_(refill) {}

absl::StatusOr<TopicPartition> KafkaConsumer::KafkaPartitionOf(int32_t id) const {
  if (stream_partitions_.empty()) return TopicPartition{topic_, id};
  const TopicPartition* name = stream_partitions_.Find(id);
  if (name == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("stream partition ", id, " is not one of the task's"));
  }
  return *name;
}

int32_t KafkaConsumer::StreamPartitionOf(const rd_kafka_message_t* m) {
  if (stream_partitions_.empty()) return m->partition;
  if (m->rkt == nullptr) return -1;
  // Messages come in runs of one partition: one topic lookup per run.
  if (m->rkt != last_rkt_) {
    last_rkt_ = m->rkt;
    last_topic_ids_ = stream_partitions_.Topic(rd_kafka_topic_name(m->rkt));
  }
  if (last_topic_ids_ == nullptr) return -1;
  auto it = last_topic_ids_->find(m->partition);
  return it == last_topic_ids_->end() ? -1 : it->second;
}

KafkaConsumer::~KafkaConsumer() {
  rd_kafka_assign(rk_.get(), nullptr);
  rd_kafka_queue_destroy(queue_);
  rd_kafka_consumer_close(rk_.get());
  // Before auth_events_, which the error callback writes.
  rk_.reset();
}

absl::Status KafkaConsumer::Assign(const OffsetMap& offsets) {
  rd_kafka_resp_err_t err;
  assigned_.clear();
  reached_ends_.clear();
  for (const auto& [partition, offset] : offsets) {
    SLUICE_RETURN_IF_ERROR(KafkaPartitionOf(partition).status());
    assigned_.push_back(partition);
  }
  if (offsets.empty()) {
    err = rd_kafka_assign(rk_.get(), nullptr);
  } else {
    rd_kafka_topic_partition_list_t* list =
        rd_kafka_topic_partition_list_new(static_cast<int>(offsets.size()));
    for (const auto& [partition, offset] : offsets) {
      const TopicPartition name = *KafkaPartitionOf(partition);
      rd_kafka_topic_partition_list_add(list, name.topic.c_str(), name.partition)->offset = offset;
    }
    err = rd_kafka_assign(rk_.get(), list);
    rd_kafka_topic_partition_list_destroy(list);
  }
  return kafka::KafkaErrorToStatus(
      err, absl::StrCat("assign ", topic_.empty() ? "stream partitions" : topic_, " ",
                        FormatOffsets(offsets)));
}

void KafkaConsumer::Wake() { rd_kafka_queue_yield(queue_); }

void KafkaConsumer::WakeFetchers() {
  if (assigned_.empty()) return;
  rd_kafka_topic_partition_list_t* list =
      rd_kafka_topic_partition_list_new(static_cast<int>(assigned_.size()));
  for (int32_t partition : assigned_) {
    const TopicPartition name = *KafkaPartitionOf(partition);
    // Timestamp -1: the latest offset, which any broker answers cheaply.
    rd_kafka_topic_partition_list_add(list, name.topic.c_str(), name.partition)->offset =
        RD_KAFKA_OFFSET_END;
  }
  // The answer does not matter; serving the request is what wakes the broker
  // threads. Bounded: an unreachable broker costs at most this once per fill.
  const rd_kafka_resp_err_t err = rd_kafka_offsets_for_times(rk_.get(), list, 500);
  rd_kafka_topic_partition_list_destroy(list);
  ++fetch_wakeups_;
  VLOG_IF(1, err != RD_KAFKA_RESP_ERR_NO_ERROR)
      << "[kafka " << rd_kafka_name(rk_.get()) << "] waking the fetcher: " << rd_kafka_err2name(err);
}

absl::Status KafkaConsumer::Poll(absl::Duration timeout, size_t max_records, KafkaBatch* batch,
                                 std::vector<OffsetOutOfRange>* out_of_range) {
  // A partition EOF event alone is no reason to return before the timeout
  // (it only updates TakeReachedEnds); a wake, a record or an error is.
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    const int64_t eofs_before = eof_events_;
    absl::Status status = PollOnce(timeout, max_records, batch, out_of_range);
    if (!status.ok() || !batch->empty() || !out_of_range->empty() ||
        eof_events_ == eofs_before) {
      return status;
    }
    timeout = deadline - absl::Now();
    if (timeout <= absl::ZeroDuration()) return status;
  }
}

absl::Status KafkaConsumer::PollOnce(absl::Duration timeout, size_t max_records,
                                     KafkaBatch* batch,
                                     std::vector<OffsetOutOfRange>* out_of_range) {
  batch->Clear();
  if (max_records == 0) return absl::OkStatus();
  std::vector<rd_kafka_message_t*>& messages = batch->messages_;
  messages.resize(max_records);
  // Take what is queued without waiting; if nothing is, wait for one record
  // (rd_kafka_consume_batch_queue would otherwise wait for a full batch), then
  // take whatever arrived with it.
  ssize_t n = rd_kafka_consume_batch_queue(queue_, 0, messages.data(), max_records);
  if (n == 0) {
    n = rd_kafka_consume_batch_queue(queue_, static_cast<int>(Millis(timeout)), messages.data(), 1);
    if (n == 1 && max_records > 1) {
      const ssize_t more =
          rd_kafka_consume_batch_queue(queue_, 0, messages.data() + 1, max_records - 1);
      if (more > 0) n += more;
    }
  }
  if (n < 0) {
    messages.clear();
    return kafka::KafkaErrorToStatus(rd_kafka_last_error(), "Kafka poll");
  }
  messages.resize(static_cast<size_t>(n));
  // Move error events out of the batch.
  size_t kept = 0;
  // A record or a partition end: the connection serves fetches.
  bool fetched = false;
  absl::Status fatal;
  const bool by_stream_partition = !stream_partitions_.empty();
  for (rd_kafka_message_t* m : messages) {
    if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      if (by_stream_partition) {
        const int32_t id = StreamPartitionOf(m);
        if (id < 0) {
          // Not assigned (librdkafka only fetches what is): dropped loudly.
          LOG_EVERY_N(ERROR, 100) << "[kafka " << rd_kafka_name(rk_.get()) << "] a record of "
                                  << rd_kafka_topic_name(m->rkt) << "[" << m->partition
                                  << "] is not one of the task's partitions; dropped";
          rd_kafka_message_destroy(m);
          continue;
        }
        batch->stream_partitions_.push_back(id);
      }
      fetched = true;
      polled_bytes_ += static_cast<double>(m->len);
      messages[kept++] = m;
      continue;
    }
    const char* topic = m->rkt != nullptr ? rd_kafka_topic_name(m->rkt) : "";
    if (m->err == RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET ||
        m->err == RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE) {
      OffsetOutOfRange oor;
      oor.partition = StreamPartitionOf(m);
      oor.offset = m->offset;
      oor.message = rd_kafka_message_errstr(m);
      out_of_range->push_back(std::move(oor));
    } else if (m->err == RD_KAFKA_RESP_ERR__FATAL) {
      char reason[512];
      const rd_kafka_resp_err_t cause = rd_kafka_fatal_error(rk_.get(), reason, sizeof(reason));
      fatal = absl::InternalError(
          absl::StrCat("fatal Kafka consumer error ", rd_kafka_err2name(cause), ": ", reason));
    } else if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      const int32_t id = StreamPartitionOf(m);
      if (m->offset >= 0 && id >= 0) reached_ends_[id] = m->offset;
      ++eof_events_;
      fetched = true;
    } else if (kafka::IsAuthFailureError(m->err, rd_kafka_message_errstr(m))) {
      NoteAuthFailure(m->err, rd_kafka_message_errstr(m));
    } else {
      LOG_EVERY_N(WARNING, 20) << "[kafka " << rd_kafka_name(rk_.get()) << "] " << topic << "["
                               << m->partition << "]: " << rd_kafka_err2name(m->err) << ": "
                               << rd_kafka_message_errstr(m);
    }
    rd_kafka_message_destroy(m);
  }
  messages.resize(kept);
  polled_records_ += static_cast<double>(kept);
  TakeCallbackAuthFailures();
  if (fetched) {
    auth_error_.clear();
  } else if (!auth_error_.empty() && absl::Now() >= next_credentials_check_) {
    RefreshCredentials();
  }
  // The queue filled since the last wake-up and has drained to half: fetch
  // again now rather than whenever librdkafka's broker thread next wakes.
  // Before this poll took its records the queue held them too: that is when
  // it may have been at a limit.
  const double average_bytes = polled_records_ > 0 ? polled_bytes_ / polled_records_ : 0;
  const int64_t queued = static_cast<int64_t>(rd_kafka_queue_length(queue_));
  if (wake_fetchers_ &&
      (refill_.Observe(queued + n, average_bytes) || refill_.Observe(queued, average_bytes))) {
    WakeFetchers();
  }
  return fatal;
}

OffsetMap KafkaConsumer::TakeReachedEnds() {
  OffsetMap out;
  out.swap(reached_ends_);
  return out;
}

absl::StatusOr<std::pair<int64_t, int64_t>> KafkaConsumer::Watermarks(int32_t partition,
                                                                      absl::Duration timeout) {
  SLUICE_ASSIGN_OR_RETURN(const TopicPartition name, KafkaPartitionOf(partition));
  int64_t low = 0, high = 0;
  const rd_kafka_resp_err_t err =
      rd_kafka_query_watermark_offsets(rk_.get(), name.topic.c_str(), name.partition, &low, &high,
                                       static_cast<int>(Millis(timeout)));
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return kafka::KafkaErrorToStatus(
        err, absl::StrCat("watermarks of ", FormatTopicPartition(name)));
  }
  return std::make_pair(low, high);
}

}  // namespace sluice::task
