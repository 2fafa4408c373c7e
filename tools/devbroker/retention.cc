#include "tools/devbroker/retention.h"

#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace sluice {
namespace devbroker {
namespace {

using layout_v2_12::ClusterHead;
using layout_v2_12::Partition;
using layout_v2_12::Topic;

// Upper bound on the topics walked, so a corrupt list cannot loop forever.
constexpr int kMaxTopics = 1 << 20;

absl::Status Refuse(absl::string_view what) {
  return absl::FailedPreconditionError(absl::StrCat(
      "cannot lift librdkafka's mock retention cap (5 MiB / 100000 batches per partition): ", what,
      ". Refusing to run with the cap, because consumers reading from the beginning would "
      "silently miss data; pass --allow_retention_cap to accept it"));
}

std::string VersionString(int version) {
  return absl::StrFormat("%d.%d.%d (0x%08x)", (version >> 24) & 0xff, (version >> 16) & 0xff,
                         (version >> 8) & 0xff, static_cast<unsigned>(version));
}

}  // namespace

absl::Status CheckSupportedVersion(int version) {
  if ((version >> 16) == 0x020c) return absl::OkStatus();
  return Refuse(absl::StrCat("the partition layout is only known for librdkafka 2.12.x, this is ",
                             VersionString(version)));
}

absl::Status VerifyClusterLayoutAt(const void* cluster, const rd_kafka_t* rk, int expected_brokers,
                                   int version) {
  if (absl::Status s = CheckSupportedVersion(version); !s.ok()) return s;
  if (cluster == nullptr) return Refuse("no cluster");
  const auto* head = static_cast<const ClusterHead*>(cluster);
  if (head->rk != rk) return Refuse("the cluster's rd_kafka_t back-pointer does not match");
  if (memchr(head->id, '\0', sizeof(head->id)) == nullptr) {
    return Refuse("the cluster id is not a string");
  }
  if (head->broker_cnt != expected_brokers) {
    return Refuse(absl::StrCat("the cluster says it has ", head->broker_cnt, " brokers, expected ",
                               expected_brokers));
  }
  if (head->topic_cnt < 0 || head->topic_cnt > kMaxTopics) {
    return Refuse(absl::StrCat("implausible topic count ", head->topic_cnt));
  }
  return absl::OkStatus();
}

absl::Status LiftRetentionCapAt(void* cluster, const rd_kafka_t* rk, int expected_brokers,
                                absl::string_view topic, int expected_partitions, int version) {
  if (absl::Status s = VerifyClusterLayoutAt(cluster, rk, expected_brokers, version); !s.ok()) {
    return s;
  }
  auto* head = static_cast<ClusterHead*>(cluster);
  Topic* found = nullptr;
  int walked = 0;
  for (auto* t = static_cast<Topic*>(head->topics.first); t != nullptr;
       t = static_cast<Topic*>(t->link.next)) {
    if (++walked > kMaxTopics) return Refuse("the topic list does not end");
    if (t->cluster != cluster) {
      return Refuse(absl::StrCat("topic #", walked, " does not point back to its cluster"));
    }
    if (t->name == nullptr) return Refuse(absl::StrCat("topic #", walked, " has no name"));
    if (topic == t->name) {
      found = t;
      break;
    }
  }
  if (found == nullptr) {
    return absl::NotFoundError(absl::StrCat("mock cluster has no topic \"", topic, "\""));
  }
  const std::string where = absl::StrCat("topic \"", topic, "\"");
  if (found->partition_cnt != expected_partitions) {
    return Refuse(absl::StrCat(where, " has ", found->partition_cnt,
                               " partitions in the mock's struct, expected ", expected_partitions));
  }
  if (found->partitions == nullptr) return Refuse(where + " has no partition array");
  // Check every partition before writing any.
  for (int i = 0; i < found->partition_cnt; ++i) {
    const Partition& p = found->partitions[i];
    const std::string part = absl::StrCat(where, " partition ", i);
    if (p.id != i) return Refuse(absl::StrCat(part, " has id ", p.id));
    if (p.topic != found) return Refuse(part + " does not point back to its topic");
    const bool defaults = p.max_size == kMockDefaultMaxBytes && p.max_cnt == kMockDefaultMaxBatches;
    const bool lifted = p.max_size == kLiftedMaxBytes && p.max_cnt == kLiftedMaxBatches;
    if (!defaults && !lifted) {
      return Refuse(absl::StrCat(part, " has limits ", p.max_size, " bytes / ", p.max_cnt,
                                 " batches, expected librdkafka's defaults ", kMockDefaultMaxBytes,
                                 " / ", kMockDefaultMaxBatches));
    }
    if (p.cnt > p.max_cnt) return Refuse(part + " holds more batches than its limit");
  }
  for (int i = 0; i < found->partition_cnt; ++i) {
    Partition& p = found->partitions[i];
    __atomic_store_n(&p.max_size, kLiftedMaxBytes, __ATOMIC_RELEASE);
    __atomic_store_n(&p.max_cnt, kLiftedMaxBatches, __ATOMIC_RELEASE);
  }
  return absl::OkStatus();
}

absl::Status VerifyClusterLayout(rd_kafka_mock_cluster_t* cluster, rd_kafka_t* rk,
                                 int expected_brokers) {
  if ((RD_KAFKA_VERSION >> 16) != 0x020c) {
    return Refuse(
        absl::StrCat("the partition layout is only known for librdkafka 2.12.x, "
                     "this was compiled against ",
                     VersionString(RD_KAFKA_VERSION)));
  }
  if (cluster == nullptr || rd_kafka_mock_cluster_handle(cluster) != rk) {
    return Refuse("rd_kafka_mock_cluster_handle() does not return the creating handle");
  }
  return VerifyClusterLayoutAt(cluster, rk, expected_brokers, rd_kafka_version());
}

absl::Status LiftRetentionCap(rd_kafka_mock_cluster_t* cluster, rd_kafka_t* rk,
                              int expected_brokers, absl::string_view topic,
                              int expected_partitions) {
  if (absl::Status s = VerifyClusterLayout(cluster, rk, expected_brokers); !s.ok()) return s;
  return LiftRetentionCapAt(cluster, rk, expected_brokers, topic, expected_partitions,
                            rd_kafka_version());
}

}  // namespace devbroker
}  // namespace sluice
