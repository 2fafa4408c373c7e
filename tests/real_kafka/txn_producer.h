// librdkafka's transactional producer writing wiki-edit-like records
// (tools/produce/wiki_rows.h) to chosen partitions, committing or aborting each
// transaction, and counting what became visible to read_committed readers.
//
//   SLUICE_ASSIGN_OR_RETURN(auto producer, TxnProducer::Create(bootstrap, "t", "txn-1"));
//   SLUICE_RETURN_IF_ERROR(producer->Begin());
//   SLUICE_RETURN_IF_ERROR(producer->Send(0));  // one record to partition 0
//   SLUICE_RETURN_IF_ERROR(producer->Commit());  // or Abort()
#ifndef SLUICE_TESTS_REAL_KAFKA_TXN_PRODUCER_H_
#define SLUICE_TESTS_REAL_KAFKA_TXN_PRODUCER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tools/produce/wiki_rows.h"
#include "common/kafka/handles.h"

namespace sluice::real_kafka {

class TxnProducer {
 public:
  static absl::StatusOr<std::unique_ptr<TxnProducer>> Create(
      const std::string& bootstrap, const std::string& topic, const std::string& transactional_id,
      const bench::WikiRowOptions& rows = bench::WikiRowOptions());
  ~TxnProducer();

  absl::Status Begin();
  // One record to `partition` in the open transaction, with `key` (none if
  // empty; a compacted topic needs one).
  absl::Status Send(int32_t partition, const std::string& key = "");
  // Flushes, then commits / aborts. librdkafka 2.0.2 against Kafka 4.4:
  // aborting while records are still in flight fails the producer fatally
  // with INVALID_TXN_STATE (docs/kafka.md), hence the flush first.
  absl::Status Commit();
  absl::Status Abort();
  // Waits until every record sent so far is written (the transaction stays
  // open: its records hold the last stable offset back).
  absl::Status Flush();

  // Records of committed transactions (what read_committed readers see),
  // and of those the malformed ones; records of aborted transactions.
  int64_t committed() const { return committed_; }
  int64_t committed_malformed() const { return committed_malformed_; }
  int64_t aborted() const { return aborted_; }
  // Committed records per partition.
  const std::map<int32_t, int64_t>& committed_by_partition() const { return by_partition_; }

 private:
  TxnProducer(kafka::HandlePtr rk, std::string topic, const bench::WikiRowOptions& rows)
      : rk_(std::move(rk)), topic_(std::move(topic)), rows_(rows) {}
  absl::Status End(bool commit);

  kafka::HandlePtr rk_;
  const std::string topic_;
  bench::WikiRowGenerator rows_;
  int64_t open_ = 0, open_malformed_ = 0;
  std::map<int32_t, int64_t> open_by_partition_;
  int64_t committed_ = 0, committed_malformed_ = 0, aborted_ = 0;
  std::map<int32_t, int64_t> by_partition_;
};

}  // namespace sluice::real_kafka

#endif  // SLUICE_TESTS_REAL_KAFKA_TXN_PRODUCER_H_
