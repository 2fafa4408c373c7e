#include "tests/real_kafka/txn_producer.h"

#include "absl/strings/str_cat.h"
#include "common/kafka/config.h"
#include "common/kafka/errors.h"
#include "common/status_macros.h"

namespace sluice::real_kafka {
namespace {
constexpr int kTimeoutMs = 30000;
}  // namespace

absl::StatusOr<std::unique_ptr<TxnProducer>> TxnProducer::Create(
    const std::string& bootstrap, const std::string& topic, const std::string& transactional_id,
    const bench::WikiRowOptions& rows) {
  SLUICE_ASSIGN_OR_RETURN(kafka::ConfPtr conf,
                          kafka::BuildConf({{"bootstrap.servers", bootstrap},
                                            {"transactional.id", transactional_id},
                                            {"linger.ms", "5"}},
                                           "txn-producer"));
  SLUICE_ASSIGN_OR_RETURN(kafka::HandlePtr rk,
                          kafka::NewHandle(RD_KAFKA_PRODUCER, std::move(conf)));
  SLUICE_RETURN_IF_ERROR(kafka::KafkaErrorObjectToStatus(
      rd_kafka_init_transactions(rk.get(), kTimeoutMs), "init_transactions"));
  return std::unique_ptr<TxnProducer>(new TxnProducer(std::move(rk), topic, rows));
}

TxnProducer::~TxnProducer() {
  if (rk_ != nullptr) rd_kafka_flush(rk_.get(), 10000);
}

absl::Status TxnProducer::Begin() {
  open_ = open_malformed_ = 0;
  open_by_partition_.clear();
  return kafka::KafkaErrorObjectToStatus(rd_kafka_begin_transaction(rk_.get()),
                                         "begin_transaction");
}

absl::Status TxnProducer::Send(int32_t partition, const std::string& key) {
  const uint64_t malformed_before = rows_.malformed();
  std::string value = rows_.Next();
  const bool malformed = rows_.malformed() != malformed_before;
  while (true) {
    const rd_kafka_resp_err_t err = rd_kafka_producev(
        rk_.get(), RD_KAFKA_V_TOPIC(topic_.c_str()), RD_KAFKA_V_PARTITION(partition),
        RD_KAFKA_V_VALUE(value.data(), value.size()),
        RD_KAFKA_V_KEY(key.empty() ? nullptr : key.data(), key.size()),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
        RD_KAFKA_V_END);
    if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
      rd_kafka_poll(rk_.get(), 50);
      continue;
    }
    SLUICE_RETURN_IF_ERROR(kafka::KafkaErrorToStatus(err, absl::StrCat("produce to ", topic_)));
    break;
  }
  rd_kafka_poll(rk_.get(), 0);
  ++open_;
  if (malformed) ++open_malformed_;
  ++open_by_partition_[partition];
  return absl::OkStatus();
}

absl::Status TxnProducer::End(bool commit) {
  rd_kafka_flush(rk_.get(), kTimeoutMs);
  rd_kafka_error_t* error = commit ? rd_kafka_commit_transaction(rk_.get(), kTimeoutMs)
                                   : rd_kafka_abort_transaction(rk_.get(), kTimeoutMs);
  SLUICE_RETURN_IF_ERROR(kafka::KafkaErrorObjectToStatus(
      error, commit ? "commit_transaction" : "abort_transaction"));
  if (commit) {
    committed_ += open_;
    committed_malformed_ += open_malformed_;
    for (const auto& [p, n] : open_by_partition_) by_partition_[p] += n;
  } else {
    aborted_ += open_;
  }
  open_ = open_malformed_ = 0;
  open_by_partition_.clear();
  return absl::OkStatus();
}

absl::Status TxnProducer::Commit() { return End(true); }

absl::Status TxnProducer::Flush() {
  return kafka::KafkaErrorToStatus(rd_kafka_flush(rk_.get(), kTimeoutMs), "flush");
}
absl::Status TxnProducer::Abort() { return End(false); }

}  // namespace sluice::real_kafka
