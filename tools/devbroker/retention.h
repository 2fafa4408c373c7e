// Lifting librdkafka's mock-cluster retention cap for the dev broker's topics.
//
// librdkafka's mock broker keeps only the last 5 MiB / 100,000 record batches
// of each partition and silently drops older batches; there is no API to
// change that (KAFKA_DEV_BROKER.md). A consumer that starts at the beginning
// then silently misses data, which breaks exactly-once tests and benchmarks.
//
// The only way around it is to write the two limits (`max_size`, `max_cnt`)
// of librdkafka's private partition struct. That is done here, guarded:
// - only for librdkafka 2.12.x on LP64 (the layout mirrored below is the one
//   of librdkafka's src/rdkafka_mock_int.h at tag v2.12.1, the release
//   scripts/install_librdkafka.sh builds; that script also compiles these
//   offsets against the private header and fails if one differs);
// - only after the layout checks out: the cluster's rd_kafka_t back-pointer
//   and broker count, the topic's name and back-pointer to its cluster, each
//   partition's id == its index and back-pointer to its topic, and the current
//   limits equal to librdkafka's defaults (5 MiB / 100,000) or to the lifted
//   values (lifting twice is harmless).
// Anything else is refused with FAILED_PRECONDITION and nothing is written.
//
// Threading: librdkafka's mock thread owns these structs. The topic list is
// only appended to (no topic is ever deleted in 2.12.x), a topic's partition
// array never moves, and the limits are single aligned words that the mock
// thread only reads when appending a batch, so they are written with atomic
// stores. Lift right after creating a topic, before clients produce to it.
#ifndef SLUICE_TOOLS_DEVBROKER_RETENTION_H_
#define SLUICE_TOOLS_DEVBROKER_RETENTION_H_

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace sluice {
namespace devbroker {

// librdkafka 2.12.1's defaults (rd_kafka_mock_partition_init).
inline constexpr size_t kMockDefaultMaxBytes = 5 * 1024 * 1024;
inline constexpr size_t kMockDefaultMaxBatches = 100000;
// What the cap is lifted to: effectively unlimited (memory is the limit:
// about 220 B of broker RSS per stored 214 B message, nothing is freed).
inline constexpr size_t kLiftedMaxBytes = SIZE_MAX / 2;
inline constexpr size_t kLiftedMaxBatches = SIZE_MAX / 2;

// OK when `version` (rd_kafka_version() format, 0xMMmmrrxx) is a 2.12.x
// release; FAILED_PRECONDITION naming the version otherwise.
absl::Status CheckSupportedVersion(int version);

// Verifies the layout of `cluster` (created with `expected_brokers` brokers on
// handle `rk`) and of `topic` (`expected_partitions` partitions), then raises
// the cap of every partition of `topic`. FAILED_PRECONDITION, saying which
// check failed, when anything does not match; NOT_FOUND if the cluster has no
// topic of that name. Also checks the running librdkafka version.
absl::Status LiftRetentionCap(rd_kafka_mock_cluster_t* cluster, rd_kafka_t* rk,
                              int expected_brokers, absl::string_view topic,
                              int expected_partitions);

// Same checks on the cluster-level fields only (no topic needed): the dev
// broker runs it at start so an incompatible librdkafka is refused before
// anything is served.
absl::Status VerifyClusterLayout(rd_kafka_mock_cluster_t* cluster, rd_kafka_t* rk,
                                 int expected_brokers);

// librdkafka 2.12.1's private struct layouts (src/rdkafka_mock_int.h), reduced
// to what the checks read. Exposed for the tests, which build fake clusters
// in memory to check that every mismatch is refused.
namespace layout_v2_12 {

struct TailqEntry {
  void* next;
  void** prev;
};
struct TailqHead {
  void* first;
  void** last;
};
// rd_list_t.
struct List {
  int size;
  int cnt;
  void** elems;
  void (*free_cb)(void*);
  int flags;
  int elemsize;
  void* p;
};

struct Topic;

// rd_kafka_mock_partition_t.
struct Partition {
  TailqEntry leader_link;
  int32_t id;
  int32_t leader_epoch;
  int64_t start_offset;
  int64_t end_offset;
  int64_t follower_start_offset;
  int64_t follower_end_offset;
  uint8_t update_follower_start_offset;  // rd_bool_t is uint8_t.
  uint8_t update_follower_end_offset;
  TailqHead msgsets;
  size_t size;
  size_t cnt;
  size_t max_size;
  size_t max_cnt;
  TailqHead committed_offsets;
  void* leader;
  void** replicas;
  int replica_cnt;
  List pidstates;
  int32_t follower_id;
  Topic* topic;
  TailqHead leader_responses;
};

// rd_kafka_Uuid_t.
struct Uuid {
  int64_t most_significant_bits;
  int64_t least_significant_bits;
  char base64str[23];
};

// rd_kafka_mock_topic_t.
struct Topic {
  TailqEntry link;
  char* name;
  Uuid id;
  Partition* partitions;
  int partition_cnt;
  int err;
  void* cluster;
};

// The leading fields of struct rd_kafka_mock_cluster_s.
struct ClusterHead {
  char id[32];
  rd_kafka_t* rk;
  int32_t controller_id;
  TailqHead brokers;
  int broker_cnt;
  TailqHead topics;
  int topic_cnt;
};

static_assert(sizeof(void*) == 8, "layout mirrored for LP64 only");
static_assert(offsetof(Partition, id) == 16, "librdkafka 2.12.1 layout");
static_assert(offsetof(Partition, max_size) == 96, "librdkafka 2.12.1 layout");
static_assert(offsetof(Partition, max_cnt) == 104, "librdkafka 2.12.1 layout");
static_assert(offsetof(Partition, topic) == 200, "librdkafka 2.12.1 layout");
static_assert(sizeof(Partition) == 224, "librdkafka 2.12.1 layout");
static_assert(offsetof(Topic, name) == 16, "librdkafka 2.12.1 layout");
static_assert(offsetof(Topic, partitions) == 64, "librdkafka 2.12.1 layout");
static_assert(offsetof(Topic, partition_cnt) == 72, "librdkafka 2.12.1 layout");
static_assert(offsetof(Topic, cluster) == 80, "librdkafka 2.12.1 layout");
static_assert(offsetof(ClusterHead, rk) == 32, "librdkafka 2.12.1 layout");
static_assert(offsetof(ClusterHead, broker_cnt) == 64, "librdkafka 2.12.1 layout");
static_assert(offsetof(ClusterHead, topics) == 72, "librdkafka 2.12.1 layout");
static_assert(offsetof(ClusterHead, topic_cnt) == 88, "librdkafka 2.12.1 layout");

}  // namespace layout_v2_12

// The checks and the write, on a cluster given as raw memory with an
// explicit version (what the public functions call; tests use fakes).
absl::Status VerifyClusterLayoutAt(const void* cluster, const rd_kafka_t* rk, int expected_brokers,
                                   int version);
absl::Status LiftRetentionCapAt(void* cluster, const rd_kafka_t* rk, int expected_brokers,
                                absl::string_view topic, int expected_partitions, int version);

}  // namespace devbroker
}  // namespace sluice

#endif  // SLUICE_TOOLS_DEVBROKER_RETENTION_H_
