// RAII owners for librdkafka C API objects.
//
// Every librdkafka object the project creates is held by one of these
// unique_ptr aliases so that error paths cannot leak handles (a leaked
// rd_kafka_t keeps threads and sockets alive).
#ifndef SLUICE_COMMON_KAFKA_HANDLES_H_
#define SLUICE_COMMON_KAFKA_HANDLES_H_

#include <librdkafka/rdkafka.h>

#include <memory>

namespace sluice {
namespace kafka {

struct ConfDeleter {
  void operator()(rd_kafka_conf_t* conf) const { rd_kafka_conf_destroy(conf); }
};
struct HandleDeleter {
  void operator()(rd_kafka_t* rk) const { rd_kafka_destroy(rk); }
};
struct TopicDeleter {
  void operator()(rd_kafka_topic_t* rkt) const { rd_kafka_topic_destroy(rkt); }
};
struct TopicPartitionListDeleter {
  void operator()(rd_kafka_topic_partition_list_t* list) const {
    rd_kafka_topic_partition_list_destroy(list);
  }
};
struct QueueDeleter {
  void operator()(rd_kafka_queue_t* queue) const { rd_kafka_queue_destroy(queue); }
};
struct MessageDeleter {
  void operator()(rd_kafka_message_t* message) const { rd_kafka_message_destroy(message); }
};
struct MetadataDeleter {
  void operator()(const rd_kafka_metadata_t* metadata) const {
    rd_kafka_metadata_destroy(metadata);
  }
};

using ConfPtr = std::unique_ptr<rd_kafka_conf_t, ConfDeleter>;
// Destroying an rd_kafka_t blocks until its threads have stopped. A consumer
// handle must be closed (rd_kafka_consumer_close) before it is destroyed.
using HandlePtr = std::unique_ptr<rd_kafka_t, HandleDeleter>;
using TopicPtr = std::unique_ptr<rd_kafka_topic_t, TopicDeleter>;
using TopicPartitionListPtr =
    std::unique_ptr<rd_kafka_topic_partition_list_t, TopicPartitionListDeleter>;
using QueuePtr = std::unique_ptr<rd_kafka_queue_t, QueueDeleter>;
using MessagePtr = std::unique_ptr<rd_kafka_message_t, MessageDeleter>;
using MetadataPtr = std::unique_ptr<const rd_kafka_metadata_t, MetadataDeleter>;

}  // namespace kafka
}  // namespace sluice

#endif  // SLUICE_COMMON_KAFKA_HANDLES_H_
