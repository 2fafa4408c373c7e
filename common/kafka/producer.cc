#include "common/kafka/producer.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/kafka/errors.h"
#include "common/status_macros.h"

namespace sluice {
namespace kafka {

absl::StatusOr<std::unique_ptr<Producer>> Producer::Create(const KafkaProperties& properties) {
  std::unique_ptr<Producer> producer(new Producer());
  SLUICE_ASSIGN_OR_RETURN(ConfPtr conf, BuildConf(properties, "producer"));
  rd_kafka_conf_set_dr_msg_cb(conf.get(), &Producer::OnDelivery);
  rd_kafka_conf_set_opaque(conf.get(), producer.get());
  SLUICE_ASSIGN_OR_RETURN(producer->rk_, NewHandle(RD_KAFKA_PRODUCER, std::move(conf)));
  return producer;
}

Producer::~Producer() {
  if (rk_ == nullptr) return;
  // Give queued records a short chance; anything left is purged so destroy
  // does not hang on an unreachable cluster.
  rd_kafka_flush(rk_.get(), 1000);
  rd_kafka_purge(rk_.get(), RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
  rd_kafka_poll(rk_.get(), 0);
}

void Producer::OnDelivery(rd_kafka_t* /*rk*/, const rd_kafka_message_t* message, void* opaque) {
  static_cast<Producer*>(opaque)->RecordDelivery(*message);
}

void Producer::RecordDelivery(const rd_kafka_message_t& message) {
  absl::MutexLock lock(&mu_);
  const std::string topic = rd_kafka_topic_name(message.rkt);
  if (message.err == RD_KAFKA_RESP_ERR_NO_ERROR) {
    ++stats_.delivered;
    int64_t& end = end_offsets_[{topic, message.partition}];
    end = std::max(end, message.offset + 1);
    return;
  }
  ++stats_.failed;
  ++failed_since_flush_;
  if (first_error_.ok()) {
    first_error_ = KafkaErrorToStatus(
        message.err, absl::StrCat("delivery to ", topic, "[", message.partition, "] failed"));
  }
}

absl::Status Producer::Produce(absl::string_view topic, int32_t partition, absl::string_view value,
                               absl::string_view key) {
  OutgoingRecord record;
  record.value = value;
  if (!key.empty()) record.key = key;
  return ProduceRecord(topic, partition, record);
}

absl::Status Producer::ProduceRecord(absl::string_view topic, int32_t partition,
                                     const OutgoingRecord& record) {
  const std::string topic_str(topic);
  const absl::string_view value = record.value;
  // librdkafka owns the headers once a produce succeeds; until then we do.
  rd_kafka_headers_t* headers = nullptr;
  if (!record.headers.empty()) {
    headers = rd_kafka_headers_new(record.headers.size());
    for (const auto& [name, header_value] : record.headers) {
      rd_kafka_header_add(headers, name.data(), static_cast<ssize_t>(name.size()),
                          header_value ? header_value->data() : nullptr,
                          header_value ? static_cast<ssize_t>(header_value->size()) : 0);
    }
  }
  // A null key is a null pointer; an empty one must not be (librdkafka
  // would take it for null).
  static char empty_key[1] = {0};
  char* const key_data =
      !record.key ? nullptr
                  : (record.key->empty() ? empty_key : const_cast<char*>(record.key->data()));
  const size_t key_size = record.key ? record.key->size() : 0;
  rd_kafka_resp_err_t err;
  // Not RD_KAFKA_MSG_F_BLOCK: with a delivery callback it can block forever,
  // because delivery reports are only drained by polling. Poll and retry.
  while (true) {
    err = rd_kafka_producev(
        rk_.get(), RD_KAFKA_V_TOPIC(topic_str.c_str()), RD_KAFKA_V_PARTITION(partition),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
        RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
        RD_KAFKA_V_KEY(key_data, key_size),
        RD_KAFKA_V_TIMESTAMP(record.timestamp_ms), RD_KAFKA_V_HEADERS(headers), RD_KAFKA_V_END);
    if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) break;
    rd_kafka_poll(rk_.get(), 50);
  }
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR && headers != nullptr) rd_kafka_headers_destroy(headers);
  // Serve delivery reports so the callback bookkeeping keeps up.
  rd_kafka_poll(rk_.get(), 0);
  return KafkaErrorToStatus(err, absl::StrCat("produce to ", topic, "[", partition, "]"));
}

absl::Status Producer::Flush(absl::Duration timeout) {
  const int timeout_ms =
      static_cast<int>(std::clamp<int64_t>(absl::ToInt64Milliseconds(timeout), 0, 1 << 30));
  const rd_kafka_resp_err_t err = rd_kafka_flush(rk_.get(), timeout_ms);
  absl::MutexLock lock(&mu_);
  absl::Status result;
  if (!first_error_.ok()) {
    result = absl::Status(first_error_.code(),
                          absl::StrCat(first_error_.message(), " (", failed_since_flush_,
                                       " record(s) failed since the last flush)"));
  } else if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    result = KafkaErrorToStatus(
        err, absl::StrCat("flush: ", rd_kafka_outq_len(rk_.get()),
                          " record(s) still in flight after ", absl::FormatDuration(timeout)));
  }
  first_error_ = absl::OkStatus();
  failed_since_flush_ = 0;
  return result;
}

Producer::Stats Producer::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

std::map<std::pair<std::string, int32_t>, int64_t> Producer::delivered_end_offsets() const {
  absl::MutexLock lock(&mu_);
  return end_offsets_;
}

}  // namespace kafka
}  // namespace sluice
