#include "common/kafka/metadata_client.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "common/kafka/auth_failure.h"
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

struct MetadataClient::SecurityError {
  // The connection's properties: the mechanism, and the secrets no message shows.
  KafkaProperties properties;
  absl::Mutex mu;
  rd_kafka_resp_err_t err ABSL_GUARDED_BY(mu) = RD_KAFKA_RESP_ERR_NO_ERROR;
  std::string reason ABSL_GUARDED_BY(mu);
};

MetadataClient::MetadataClient(HandlePtr rk, std::unique_ptr<SecurityError> security)
    : security_(std::move(security)), rk_(std::move(rk)) {}

MetadataClient::~MetadataClient() = default;

void MetadataClient::ErrorCallback(rd_kafka_t*, int err, const char* reason, void* opaque) {
  // A failed SASL login or TLS handshake reaches the application only here;
  // the request that needed the connection just times out or fails with a
  // transport error.
  if (!IsAuthFailureError(static_cast<rd_kafka_resp_err_t>(err), reason != nullptr ? reason : "")) {
    return;
  }
  auto* security = static_cast<SecurityError*>(opaque);
  absl::MutexLock lock(&security->mu);
  security->err = static_cast<rd_kafka_resp_err_t>(err);
  security->reason = reason != nullptr ? reason : "";
}

absl::Status MetadataClient::Explain(absl::Status status, absl::string_view context) {
  if (status.ok()) {
    ClearSecurityError();
    return status;
  }
  // An answer from the cluster (an unknown topic, a bad partition) is not a
  // failure to connect.
  if (status.code() == absl::StatusCode::kNotFound ||
      status.code() == absl::StatusCode::kInvalidArgument ||
      status.code() == absl::StatusCode::kOutOfRange) {
    return status;
  }
  // Serves the error events queued meanwhile (the callback runs here).
  rd_kafka_poll(rk_.get(), 0);
  absl::MutexLock lock(&security_->mu);
  if (security_->err == RD_KAFKA_RESP_ERR_NO_ERROR) return status;
  return AuthFailureStatus(security_->err, context, security_->reason, security_->properties);
}

void MetadataClient::ClearSecurityError() {
  absl::MutexLock lock(&security_->mu);
  security_->err = RD_KAFKA_RESP_ERR_NO_ERROR;
  security_->reason.clear();
}

absl::StatusOr<std::unique_ptr<MetadataClient>> MetadataClient::Create(
    const KafkaProperties& properties) {
  KafkaProperties props = properties;
  props["allow.auto.create.topics"] = "false";
  // Never join a group, never commit: a group.id in spec properties is fine
  // but irrelevant here.
  props["enable.auto.commit"] = "false";
  // librdkafka 2.0.2 assigns partitions (NewestTimestamps) only with a group
  // id; the client never joins it.
  if (props.find("group.id") == props.end()) props["group.id"] = "sluice-metadata";
  SLUICE_ASSIGN_OR_RETURN(ConfPtr conf, BuildConf(props, "metadata"));
  auto security = std::make_unique<SecurityError>();
  security->properties = properties;
  rd_kafka_conf_set_error_cb(conf.get(), &MetadataClient::ErrorCallback);
  rd_kafka_conf_set_opaque(conf.get(), security.get());
  SLUICE_ASSIGN_OR_RETURN(HandlePtr rk, NewHandle(RD_KAFKA_CONSUMER, std::move(conf)));
  return std::unique_ptr<MetadataClient>(new MetadataClient(std::move(rk), std::move(security)));
}

absl::Status MetadataClient::InSlices(absl::string_view context, absl::Duration timeout,
                                      absl::FunctionRef<absl::Status(absl::Duration)> once) {
  // In slices of at most a second: a failed login is reported (to the error
  // callback) within a second, and then waiting out `timeout` helps no one.
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    const absl::Duration slice = std::min(deadline - absl::Now(), absl::Seconds(1));
    absl::Status status = once(std::max(slice, absl::Milliseconds(1)));
    // Only a slice that timed out is asked again; every other answer is as
    // before.
    if (status.ok() || absl::Now() >= deadline ||
        !absl::StrContains(status.message(), "(_TIMED_OUT)")) {
      return Explain(status, context);
    }
    rd_kafka_poll(rk_.get(), 0);
    {
      absl::MutexLock lock(&security_->mu);
      if (security_->err == RD_KAFKA_RESP_ERR_NO_ERROR) continue;
    }
    return Explain(status, context);
  }
}

absl::StatusOr<std::vector<int32_t>> MetadataClient::ListPartitions(absl::string_view topic,
                                                                    absl::Duration timeout) {
  std::vector<int32_t> partitions;
  SLUICE_RETURN_IF_ERROR(InSlices(
      absl::StrCat("list partitions of topic \"", topic, "\""), timeout,
      [&](absl::Duration slice) -> absl::Status {
        SLUICE_ASSIGN_OR_RETURN(partitions, ListPartitionsOnce(topic, slice));
        return absl::OkStatus();
      }));
  return partitions;
}

absl::StatusOr<std::map<std::string, std::vector<int32_t>>> MetadataClient::ListTopics(
    absl::Duration timeout) {
  std::map<std::string, std::vector<int32_t>> topics;
  SLUICE_RETURN_IF_ERROR(InSlices("list the cluster's topics", timeout,
                                  [&](absl::Duration slice) -> absl::Status {
                                    SLUICE_ASSIGN_OR_RETURN(topics, ListTopicsOnce(slice));
                                    return absl::OkStatus();
                                  }));
  return topics;
}

absl::StatusOr<std::map<std::string, std::vector<int32_t>>> MetadataClient::ListTopicsOnce(
    absl::Duration timeout) {
  const rd_kafka_metadata_t* raw = nullptr;
  const rd_kafka_resp_err_t err = rd_kafka_metadata(rk_.get(), /*all_topics=*/1, nullptr, &raw,
                                                    RemainingMs(absl::Now() + timeout));
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return KafkaErrorToStatus(err, "list the cluster's topics");
  }
  MetadataPtr metadata(raw);
  std::map<std::string, std::vector<int32_t>> topics;
  for (int i = 0; i < metadata->topic_cnt; ++i) {
    const rd_kafka_metadata_topic_t& t = metadata->topics[i];
    // Kafka's internal topics (__consumer_offsets, __transaction_state) are
    // never data; a topic still being created shows next time.
    if (t.topic == nullptr || absl::StartsWith(t.topic, "__")) continue;
    if (t.err != RD_KAFKA_RESP_ERR_NO_ERROR || t.partition_cnt <= 0) continue;
    std::vector<int32_t>& partitions = topics[t.topic];
    for (int p = 0; p < t.partition_cnt; ++p) partitions.push_back(t.partitions[p].id);
    std::sort(partitions.begin(), partitions.end());
  }
  return topics;
}

absl::StatusOr<std::vector<int32_t>> MetadataClient::ListPartitionsOnce(absl::string_view topic,
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
  absl::StatusOr<std::map<int32_t, Watermarks>> marks =
      QueryWatermarksOnce(topic, partitions, timeout);
  absl::Status explained =
      Explain(marks.status(), absl::StrCat("query watermarks of ", topic));
  if (!explained.ok()) return explained;
  return marks;
}

absl::StatusOr<std::map<int32_t, Watermarks>> MetadataClient::QueryWatermarksOnce(
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

absl::StatusOr<std::map<int32_t, OffsetForTime>> MetadataClient::OffsetsForTime(
    absl::string_view topic, const std::vector<int32_t>& partitions, int64_t time_ms,
    absl::Duration timeout) {
  const std::string context = absl::StrCat("look up offsets of topic \"", topic, "\" for time ",
                                           time_ms, " (epoch ms)");
  if (time_ms < 0) return absl::InvalidArgumentError(context + ": the time must be >= 0");
  const absl::Time deadline = absl::Now() + timeout;
  const std::string topic_str(topic);
  std::map<int32_t, OffsetForTime> result;
  if (partitions.empty()) return result;
  TopicPartitionListPtr list(rd_kafka_topic_partition_list_new(partitions.size()));
  for (int32_t partition : partitions) {
    rd_kafka_topic_partition_list_add(list.get(), topic_str.c_str(), partition)->offset = time_ms;
  }
  const rd_kafka_resp_err_t err =
      rd_kafka_offsets_for_times(rk_.get(), list.get(), RemainingMs(deadline));
  absl::Status status;
  for (int i = 0; i < list->cnt && status.ok(); ++i) {
    const rd_kafka_topic_partition_t& tp = list->elems[i];
    if (tp.err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      status = KafkaErrorToStatus(tp.err, absl::StrCat(context, ": partition ", tp.partition));
    }
  }
  if (status.ok() && err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    status = KafkaErrorToStatus(err, context);
  }
  SLUICE_RETURN_IF_ERROR(Explain(status, context));
  // Partitions with no record at or after the time: their latest offset,
  // once their newest record shows it is really older.
  std::vector<int32_t> past_end;
  for (int i = 0; i < list->cnt; ++i) {
    const rd_kafka_topic_partition_t& tp = list->elems[i];
    if (tp.offset >= 0) {
      result[tp.partition] = {tp.offset, OffsetForTimeSource::kRecordAtOrAfter};
    } else {
      past_end.push_back(tp.partition);
    }
  }
  if (past_end.empty()) return result;
  SLUICE_ASSIGN_OR_RETURN(
      auto marks,
      QueryWatermarks(topic, past_end, std::max(deadline - absl::Now(), absl::Milliseconds(1))));
  std::map<int32_t, int64_t> latest;
  for (const auto& [partition, m] : marks) latest[partition] = m.latest;
  SLUICE_ASSIGN_OR_RETURN(
      auto newest,
      NewestTimestamps(topic, latest, std::max(deadline - absl::Now(), absl::Milliseconds(1))));
  for (const auto& [partition, m] : marks) {
    if (m.latest > m.earliest) {
      auto it = newest.find(partition);
      if (it == newest.end()) {
        return absl::UnavailableError(absl::StrCat(
            context, ": partition ", partition,
            ": the broker found no record that new, and its newest record could not be read "
            "in time to confirm it"));
      }
      if (it->second >= time_ms) {
        return absl::FailedPreconditionError(absl::StrCat(
            context, ": partition ", partition, ": the broker found no record that new, yet its "
            "newest record has timestamp ", it->second,
            ": this cluster does not look offsets up by time (librdkafka's mock cluster, the dev "
            "broker, does not)"));
      }
    }
    result[partition] = {m.latest, OffsetForTimeSource::kPastEnd};
  }
  return result;
}

absl::StatusOr<std::map<int32_t, Watermarks>> MetadataClient::QueryAllWatermarks(
    absl::string_view topic, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  SLUICE_ASSIGN_OR_RETURN(std::vector<int32_t> partitions, ListPartitions(topic, timeout));
  return QueryWatermarks(topic, partitions, std::max(deadline - absl::Now(), absl::ZeroDuration()));
}

absl::StatusOr<std::map<int32_t, int64_t>> MetadataClient::NewestTimestamps(
    absl::string_view topic, const std::map<int32_t, int64_t>& latest_offsets,
    absl::Duration timeout) {
  const std::string topic_str(topic);
  std::map<int32_t, int64_t> wanted;  // partition -> offset of its newest record
  TopicPartitionListPtr assignment(rd_kafka_topic_partition_list_new(latest_offsets.size()));
  for (const auto& [partition, latest] : latest_offsets) {
    if (latest <= 0) continue;
    wanted[partition] = latest - 1;
    rd_kafka_topic_partition_list_add(assignment.get(), topic_str.c_str(), partition)->offset =
        latest - 1;
  }
  std::map<int32_t, int64_t> newest;
  if (wanted.empty()) return newest;
  const absl::Time deadline = absl::Now() + timeout;
  // One assignment at a time on the shared handle.
  absl::MutexLock lock(&tail_mu_);
  const std::string context = absl::StrCat("read the newest records of topic \"", topic, "\"");
  absl::Status status =
      KafkaErrorToStatus(rd_kafka_assign(rk_.get(), assignment.get()), context);
  while (status.ok() && !wanted.empty() && absl::Now() < deadline) {
    const int wait_ms = static_cast<int>(
        std::clamp<int64_t>(absl::ToInt64Milliseconds(deadline - absl::Now()), 1, 100));
    MessagePtr message(rd_kafka_consumer_poll(rk_.get(), wait_ms));
    if (message == nullptr) continue;
    if (message->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) continue;
    if (message->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      status = KafkaErrorToStatus(message->err, context, rd_kafka_message_errstr(message.get()));
      break;
    }
    if (message->rkt == nullptr || topic_str != rd_kafka_topic_name(message->rkt)) continue;
    auto it = wanted.find(message->partition);
    if (it == wanted.end() || message->offset < it->second) continue;
    newest[message->partition] = rd_kafka_message_timestamp(message.get(), nullptr);
    wanted.erase(it);
  }
  rd_kafka_assign(rk_.get(), nullptr);
  if (!status.ok()) return Explain(status, context);
  // Partitions not read in time are left out: their time lag is unknown.
  return newest;
}

}  // namespace kafka
}  // namespace sluice
