#include "common/kafka/metadata_client.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/kafka/errors.h"
#include "common/status_macros.h"

namespace sluice {
namespace kafka {
namespace {

// Milliseconds left until `deadline`, at least 1 (librdkafka treats 0 as
// "do not wait", which turns a slow answer into a spurious timeout).
int RemainingMs(absl::Time deadline) {
  const int64_t ms = absl::ToInt64Milliseconds(deadline - absl::Now());
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(ms, 1 << 30)));
}

}  // namespace

absl::StatusOr<std::unique_ptr<MetadataClient>> MetadataClient::Create(
    const KafkaProperties& properties) {
  KafkaProperties props = properties;
  props["allow.auto.create.topics"] = "false";
  // Never join a group, never commit: a group.id in spec properties is fine
  // but irrelevant here.
  props["enable.auto.commit"] = "false";
  SLUICE_ASSIGN_OR_RETURN(ConfPtr conf, BuildConf(props, "metadata"));
  SLUICE_ASSIGN_OR_RETURN(HandlePtr rk, NewHandle(RD_KAFKA_CONSUMER, std::move(conf)));
  return std::unique_ptr<MetadataClient>(new MetadataClient(std::move(rk)));
}

absl::StatusOr<std::vector<int32_t>> MetadataClient::ListPartitions(absl::string_view topic,
                                                                    absl::Duration timeout) {
  const std::string topic_str(topic);
  const std::string context = absl::StrCat("list partitions of topic \"", topic, "\"");
  if (topic.empty()) return absl::InvalidArgumentError(context + ": empty topic name");
  TopicPtr rkt(rd_kafka_topic_new(rk_.get(), topic_str.c_str(), nullptr));
  if (rkt == nullptr) {
    return KafkaErrorToStatus(rd_kafka_last_error(), context);
  }
  const rd_kafka_metadata_t* raw = nullptr;
  const rd_kafka_resp_err_t err = rd_kafka_metadata(rk_.get(), /*all_topics=*/0, rkt.get(), &raw,
                                                    RemainingMs(absl::Now() + timeout));
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) return KafkaErrorToStatus(err, context);
  MetadataPtr metadata(raw);
  for (int i = 0; i < metadata->topic_cnt; ++i) {
    const rd_kafka_metadata_topic_t& t = metadata->topics[i];
    if (topic_str != t.topic) continue;
    if (t.err != RD_KAFKA_RESP_ERR_NO_ERROR) return KafkaErrorToStatus(t.err, context);
    std::vector<int32_t> partitions;
    partitions.reserve(t.partition_cnt);
    for (int p = 0; p < t.partition_cnt; ++p) partitions.push_back(t.partitions[p].id);
    std::sort(partitions.begin(), partitions.end());
    if (partitions.empty()) {
      return absl::UnavailableError(context + ": the cluster reports no partitions (yet)");
    }
    return partitions;
  }
  return absl::NotFoundError(context + ": not in the cluster's metadata answer");
}

absl::StatusOr<std::map<int32_t, Watermarks>> MetadataClient::QueryWatermarks(
    absl::string_view topic, const std::vector<int32_t>& partitions, absl::Duration timeout) {
  // Not rd_kafka_query_watermark_offsets(): in librdkafka 2.0.2 it waits for
  // the ListOffsets replies without a deadline (only the leader lookup uses
  // the timeout), so a leader that went away and came back can block it for
  // minutes. rd_kafka_offsets_for_times() honours its timeout and sends one
  // request per leader; ListOffsets "timestamps" -2 / -1 mean earliest /
  // latest.
  const absl::Time deadline = absl::Now() + timeout;
  const std::string topic_str(topic);
  std::map<int32_t, Watermarks> result;
  if (partitions.empty()) return result;
  const std::string context = absl::StrCat("query watermarks of ", topic);
  for (const int64_t which : {RD_KAFKA_OFFSET_BEGINNING, RD_KAFKA_OFFSET_END}) {
    TopicPartitionListPtr list(rd_kafka_topic_partition_list_new(partitions.size()));
    for (int32_t partition : partitions) {
      rd_kafka_topic_partition_list_add(list.get(), topic_str.c_str(), partition)->offset = which;
    }
    if (absl::Now() >= deadline) {
      return absl::UnavailableError(
          absl::StrCat(context, ": timed out after ", absl::FormatDuration(timeout)));
    }
    const rd_kafka_resp_err_t err =
        rd_kafka_offsets_for_times(rk_.get(), list.get(), RemainingMs(deadline));
    // Per-partition errors first: they name the partition.
    for (int i = 0; i < list->cnt; ++i) {
      const rd_kafka_topic_partition_t& tp = list->elems[i];
      if (tp.err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        return KafkaErrorToStatus(tp.err, absl::StrCat(context, "[", tp.partition, "]"));
      }
    }
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return KafkaErrorToStatus(
          err, absl::StrCat(context, "[", absl::StrJoin(partitions, ","), "] (",
                            which == RD_KAFKA_OFFSET_BEGINNING ? "earliest" : "latest", ")"));
    }
    for (int i = 0; i < list->cnt; ++i) {
      const rd_kafka_topic_partition_t& tp = list->elems[i];
      if (tp.offset < 0) {
        return absl::UnavailableError(
            absl::StrCat(context, "[", tp.partition, "]: the broker answered offset ", tp.offset));
      }
      Watermarks& marks = result[tp.partition];
      (which == RD_KAFKA_OFFSET_BEGINNING ? marks.earliest : marks.latest) = tp.offset;
    }
  }
  return result;
}

absl::StatusOr<std::map<int32_t, Watermarks>> MetadataClient::QueryAllWatermarks(
    absl::string_view topic, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  SLUICE_ASSIGN_OR_RETURN(std::vector<int32_t> partitions, ListPartitions(topic, timeout));
  return QueryWatermarks(topic, partitions, std::max(deadline - absl::Now(), absl::ZeroDuration()));
}

}  // namespace kafka
}  // namespace sluice
