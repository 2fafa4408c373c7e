// Partition discovery and watermark queries against a Kafka cluster.
//
// The supervisor uses it to discover a topic's partitions, to pick start
// offsets (earliest/latest) and to compute lag; the exactly-once audit uses it
// to know how many records a topic holds.
//
//   SLUICE_ASSIGN_OR_RETURN(auto client, kafka::MetadataClient::Create(
//       {{"bootstrap.servers", bootstrap}}));
//   SLUICE_ASSIGN_OR_RETURN(std::vector<int32_t> partitions,
//                           client->ListPartitions("wiki", absl::Seconds(5)));
//   SLUICE_ASSIGN_OR_RETURN(auto marks,
//                           client->QueryWatermarks("wiki", partitions, absl::Seconds(5)));
//
// Thread-safe: every method may be called from any thread concurrently (the
// underlying rd_kafka_t is). Not copyable or movable (owned through unique_ptr).
#ifndef SLUICE_COMMON_KAFKA_METADATA_CLIENT_H_
#define SLUICE_COMMON_KAFKA_METADATA_CLIENT_H_

#include <cstdint>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/kafka/config.h"
#include "common/kafka/handles.h"

namespace sluice {
namespace kafka {

// Offsets of the first record still stored (earliest, Kafka's "low
// watermark") and of the next record to be written (latest, the "high
// watermark") of one partition. latest - earliest records are readable.
struct Watermarks {
  int64_t earliest = 0;
  int64_t latest = 0;

  bool operator==(const Watermarks& other) const {
    return earliest == other.earliest && latest == other.latest;
  }
  friend std::ostream& operator<<(std::ostream& os, const Watermarks& marks) {
    return os << "[" << marks.earliest << ", " << marks.latest << ")";
  }
};

// Where a partition's offset for a time (OffsetsForTime) comes from.
enum class OffsetForTimeSource {
  // The first record with a timestamp at or after the time (a time before
  // the earliest stored record gives the earliest record).
  kRecordAtOrAfter,
  // No record is that new: the partition's latest offset (what a reader
  // there reads next).
  kPastEnd,
};

struct OffsetForTime {
  int64_t offset = 0;
  OffsetForTimeSource source = OffsetForTimeSource::kRecordAtOrAfter;
};

class MetadataClient {
 public:
  // `properties` are consumer properties (at least "bootstrap.servers"); the
  // client never creates topics ("allow.auto.create.topics" is forced false)
  // and never joins a group. INVALID_ARGUMENT for bad properties.
  static absl::StatusOr<std::unique_ptr<MetadataClient>> Create(const KafkaProperties& properties);
  ~MetadataClient();

  MetadataClient(const MetadataClient&) = delete;
  MetadataClient& operator=(const MetadataClient&) = delete;

  // The partition ids of `topic`, ascending. NOT_FOUND if the cluster does
  // not know the topic; UNAVAILABLE if the cluster cannot be reached within
  // `timeout` or the topic's leaders are not elected yet.
  absl::StatusOr<std::vector<int32_t>> ListPartitions(absl::string_view topic,
                                                      absl::Duration timeout);

  // Every topic of the cluster with its partition ids (ascending), for
  // ioConfig.topicPattern. Kafka's internal topics ("__" names) and topics
  // without partitions or with a metadata error (still being created) are
  // left out. UNAVAILABLE / PERMISSION_DENIED as ListPartitions.
  absl::StatusOr<std::map<std::string, std::vector<int32_t>>> ListTopics(absl::Duration timeout);

  // Earliest and latest offsets of each of `partitions` of `topic`, all
  // within `timeout` overall (two ListOffsets requests per leader). NOT_FOUND
  // for an unknown topic or partition (naming it); UNAVAILABLE when a leader
  // is down or time runs out.
  absl::StatusOr<std::map<int32_t, Watermarks>> QueryWatermarks(
      absl::string_view topic, const std::vector<int32_t>& partitions, absl::Duration timeout);

  // A failed call whose cause librdkafka only reported to its error callback
  // (an authentication failure, auth_failure.h: a wrong SASL password, a TLS
  // certificate either side refuses; requests then fail with a transport
  // error or a timeout) returns AuthFailureStatus instead, e.g.
  // PERMISSION_DENIED "list partitions of topic "wiki": Kafka authentication
  // failed (SASL PLAIN over SASL_SSL): SASL authentication error:
  // Authentication failed: Invalid username or password (_AUTHENTICATION)".

  // Partition -> Kafka timestamp (epoch millis; -1 when the record has none)
  // of the newest record of each given partition, the one just below its
  // latest offset (`latest_offsets`, as QueryWatermarks gave them; partitions
  // at 0 are skipped), for the time lag. Reads those records with the
  // client's handle (an assignment, one caller at a time); a partition not
  // read within `timeout` (e.g. the record was deleted meanwhile) is left
  // out. UNAVAILABLE / PERMISSION_DENIED as above.
  absl::StatusOr<std::map<int32_t, int64_t>> NewestTimestamps(
      absl::string_view topic, const std::map<int32_t, int64_t>& latest_offsets,
      absl::Duration timeout) ABSL_LOCKS_EXCLUDED(tail_mu_);

  // Kafka's offsetsForTimes: per partition of `partitions` of `topic`, the
  // offset of the first record whose timestamp is at or after `time_ms`
  // (epoch millis, >= 0), one ListOffsets request per leader; a partition
  // with no record that new gets its latest offset (kPastEnd). A broker
  // that answers "none" although the partition's newest record is that new
  // (librdkafka's mock cluster, the dev broker, does not look records up by
  // time) is FAILED_PRECONDITION, never a silent jump to the end.
  // NOT_FOUND / UNAVAILABLE / PERMISSION_DENIED as QueryWatermarks.
  absl::StatusOr<std::map<int32_t, OffsetForTime>> OffsetsForTime(
      absl::string_view topic, const std::vector<int32_t>& partitions, int64_t time_ms,
      absl::Duration timeout) ABSL_LOCKS_EXCLUDED(tail_mu_);

  // ListPartitions + QueryWatermarks for all of them, sharing `timeout`.
  absl::StatusOr<std::map<int32_t, Watermarks>> QueryAllWatermarks(absl::string_view topic,
                                                                   absl::Duration timeout);

 private:
  struct SecurityError;
  absl::StatusOr<std::vector<int32_t>> ListPartitionsOnce(absl::string_view topic,
                                                          absl::Duration timeout);
  absl::StatusOr<std::map<std::string, std::vector<int32_t>>> ListTopicsOnce(
      absl::Duration timeout);
  // Runs `once` with slices of `timeout` of at most a second, again while a
  // slice times out and no security error was reported; the outcome
  // Explain()ed with `context`.
  absl::Status InSlices(absl::string_view context, absl::Duration timeout,
                        absl::FunctionRef<absl::Status(absl::Duration)> once);
  absl::StatusOr<std::map<int32_t, Watermarks>> QueryWatermarksOnce(
      absl::string_view topic, const std::vector<int32_t>& partitions, absl::Duration timeout);
  MetadataClient(HandlePtr rk, std::unique_ptr<SecurityError> security);
  static void ErrorCallback(rd_kafka_t* rk, int err, const char* reason, void* opaque);
  // `status` (a failed call), or the security error librdkafka reported
  // meanwhile, naming `context`.
  absl::Status Explain(absl::Status status, absl::string_view context);
  // Forgets a reported security error once a call succeeds.
  void ClearSecurityError();

  // Written by librdkafka's error callback: declared before rk_, so it
  // outlives the handle.
  std::unique_ptr<SecurityError> security_;
  HandlePtr rk_;
  // NewestTimestamps assigns partitions to rk_: one assignment at a time.
  absl::Mutex tail_mu_;
};

}  // namespace kafka
}  // namespace sluice

#endif  // SLUICE_COMMON_KAFKA_METADATA_CLIENT_H_
