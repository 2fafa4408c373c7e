// The stream partitions of a datasource that reads a topic pattern
// (ioConfig.topicPattern): the id that keys its offsets for each Kafka
// (topic, partition), given in order of discovery and never changed or
// given again (common.proto StreamPartition).
//
//   StreamPartitionIds ids;
//   ids.Restore(stored);                       // what the store holds
//   std::vector<int32_t> now = ids.IdsOf(listed);  // new ones get the next ids
//   SLUICE_RETURN_IF_ERROR(Persist(ids.From(persisted_count)));
//
// Thread-safe: the supervisor's Kafka queries give ids on a pool thread
// while its loop reads them.
#ifndef SLUICE_COMMON_STREAM_PARTITIONS_H_
#define SLUICE_COMMON_STREAM_PARTITIONS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "sluice/v1/common.pb.h"
#include "sluice/v1/spec.pb.h"

namespace sluice {

struct TopicPartition {
  std::string topic;
  int32_t partition = 0;

  bool operator<(const TopicPartition& o) const {
    return std::tie(topic, partition) < std::tie(o.topic, o.partition);
  }
  bool operator==(const TopicPartition& o) const {
    return topic == o.topic && partition == o.partition;
  }
};

// "topic[3]" for logs and messages.
std::string FormatTopicPartition(const TopicPartition& tp);

// What a datasource's stored offsets are offsets of, as the metadata store
// keeps it (commit_topic): the topic, or "topicPattern:" + the pattern (no
// topic name holds a ':'). Switching from one to another needs a reset.
inline constexpr char kTopicPatternPrefix[] = "topicPattern:";
std::string StreamNameOf(const v1::IoConfig& io);
// The same for what a segment was read from.
std::string StreamNameOf(const v1::Provenance& provenance);
// The pattern of a StreamNameOf (nullopt: the name is a topic).
std::optional<std::string> TopicPatternOf(const std::string& stream_name);

class StreamPartitionIds {
 public:
  StreamPartitionIds() = default;
  StreamPartitionIds(const StreamPartitionIds&) = delete;
  StreamPartitionIds& operator=(const StreamPartitionIds&) = delete;

  // Takes ids given before (any order). INVALID_ARGUMENT, changing nothing,
  // when one contradicts a known id (another name for the same id or
  // another id for the same name) or is negative.
  absl::Status Restore(const std::vector<v1::StreamPartition>& known) ABSL_LOCKS_EXCLUDED(mu_);

  // The ids of `found`, ascending; those not known yet get the next ids, in
  // (topic, partition) order.
  std::vector<int32_t> IdsOf(std::vector<TopicPartition> found) ABSL_LOCKS_EXCLUDED(mu_);

  std::optional<TopicPartition> Find(int32_t id) const ABSL_LOCKS_EXCLUDED(mu_);

  // Every id >= first_id, ascending (From(0): all of them).
  std::vector<v1::StreamPartition> From(int32_t first_id) const ABSL_LOCKS_EXCLUDED(mu_);

  // The next id to give (= how many were given).
  int32_t next_id() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  mutable absl::Mutex mu_;
  std::vector<TopicPartition> by_id_ ABSL_GUARDED_BY(mu_);
  std::map<TopicPartition, int32_t> by_name_ ABSL_GUARDED_BY(mu_);
};

// Looks up the (topic, partition) of ids a task reads, and the id of a
// record's (topic, partition), from a TaskSpec's stream_partitions.
// Immutable after construction.
class StreamPartitionMap {
 public:
  // INVALID_ARGUMENT for a repeated id or (topic, partition), or a negative one.
  static absl::StatusOr<StreamPartitionMap> Create(
      const google::protobuf::RepeatedPtrField<v1::StreamPartition>& entries);

  bool empty() const { return by_id_.empty(); }
  const TopicPartition* Find(int32_t id) const;
  // -1 when unknown.
  int32_t IdOf(const std::string& topic, int32_t partition) const;
  // The Kafka partition -> id table of one topic (null when unknown):
  // callers translating many records of a topic look it up once.
  const std::map<int32_t, int32_t>* Topic(const std::string& topic) const;

 private:
  std::map<int32_t, TopicPartition> by_id_;
  std::map<std::string, std::map<int32_t, int32_t>> by_topic_;
};

}  // namespace sluice

#endif  // SLUICE_COMMON_STREAM_PARTITIONS_H_
