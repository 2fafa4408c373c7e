#include "tests/task_mock_kafka.h"

#include <librdkafka/rdkafka_mock.h>

#include "absl/synchronization/mutex.h"

#include "absl/strings/str_cat.h"

namespace sluice::testing {
namespace {

// Delivery reports are served by whichever thread polls the producer.
struct DeliveryState {
  absl::Mutex mu;
  int delivered ABSL_GUARDED_BY(mu) = 0;
  int failed ABSL_GUARDED_BY(mu) = 0;
  int64_t first_offset ABSL_GUARDED_BY(mu) = -1;
  std::string first_error ABSL_GUARDED_BY(mu);
};

void OnDelivery(rd_kafka_t*, const rd_kafka_message_t* message, void*) {
  auto* state = static_cast<DeliveryState*>(message->_private);
  absl::MutexLock lock(&state->mu);
  if (message->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    if (state->failed++ == 0) state->first_error = rd_kafka_err2str(message->err);
    return;
  }
  if (state->first_offset == -1 || message->offset < state->first_offset) {
    state->first_offset = message->offset;
  }
  ++state->delivered;
}

rd_kafka_t* NewProducer(const std::string& bootstrap, std::string* error) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char errstr[512];
  const std::vector<std::pair<std::string, std::string>> settings = {
      {"linger.ms", "5"}, {"enable.idempotence", "true"}, {"log.connection.close", "false"}};
  if (!bootstrap.empty() &&
      rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap.c_str(), errstr, sizeof(errstr)) !=
          RD_KAFKA_CONF_OK) {
    *error = errstr;
    rd_kafka_conf_destroy(conf);
    return nullptr;
  }
  for (const auto& [key, value] : settings) {
    if (rd_kafka_conf_set(conf, key.c_str(), value.c_str(), errstr, sizeof(errstr)) !=
        RD_KAFKA_CONF_OK) {
      *error = errstr;
      rd_kafka_conf_destroy(conf);
      return nullptr;
    }
  }
  rd_kafka_conf_set_dr_msg_cb(conf, OnDelivery);
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
  if (rk == nullptr) {
    *error = errstr;
    rd_kafka_conf_destroy(conf);
  }
  return rk;
}

}  // namespace

absl::StatusOr<std::unique_ptr<MockKafka>> MockKafka::Start(int brokers) {
  std::unique_ptr<MockKafka> kafka(new MockKafka());
  std::string error;
  kafka->cluster_handle_ = NewProducer("", &error);
  if (kafka->cluster_handle_ == nullptr) {
    return absl::InternalError(absl::StrCat("cannot create the mock cluster's client: ", error));
  }
  kafka->cluster_ = rd_kafka_mock_cluster_new(kafka->cluster_handle_, brokers);
  if (kafka->cluster_ == nullptr) return absl::InternalError("cannot create the mock cluster");
  kafka->bootstrap_ = rd_kafka_mock_cluster_bootstraps(kafka->cluster_);
  kafka->producer_ = NewProducer(kafka->bootstrap_, &error);
  if (kafka->producer_ == nullptr) {
    return absl::InternalError(absl::StrCat("cannot create a producer: ", error));
  }
  return kafka;
}

MockKafka::~MockKafka() {
  if (producer_ != nullptr) {
    rd_kafka_flush(producer_, 5000);
    rd_kafka_destroy(producer_);
  }
  if (cluster_ != nullptr) rd_kafka_mock_cluster_destroy(cluster_);
  if (cluster_handle_ != nullptr) rd_kafka_destroy(cluster_handle_);
}

absl::Status MockKafka::CreateTopic(const std::string& topic, int partitions) {
  const rd_kafka_resp_err_t err = rd_kafka_mock_topic_create(cluster_, topic.c_str(), partitions, 1);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return absl::InternalError(absl::StrCat("create topic ", topic, ": ", rd_kafka_err2str(err)));
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> MockKafka::Produce(const std::string& topic, int32_t partition,
                                           const std::vector<std::string>& values) {
  DeliveryState state;
  for (const std::string& value : values) {
    while (true) {
      const rd_kafka_resp_err_t err = rd_kafka_producev(
          producer_, RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_PARTITION(partition),
          RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
          RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_OPAQUE(&state), RD_KAFKA_V_END);
      if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
        rd_kafka_poll(producer_, 10);
        continue;
      }
      if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        return absl::InternalError(absl::StrCat("produce: ", rd_kafka_err2str(err)));
      }
      break;
    }
  }
  const rd_kafka_resp_err_t err = rd_kafka_flush(producer_, 30000);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return absl::DeadlineExceededError(absl::StrCat("flush: ", rd_kafka_err2str(err)));
  }
  absl::MutexLock lock(&state.mu);
  if (state.failed > 0 || state.delivered != static_cast<int>(values.size())) {
    return absl::InternalError(absl::StrCat(values.size() - state.delivered,
                                            " records not delivered: ", state.first_error));
  }
  return state.first_offset;
}

absl::StatusOr<std::pair<int64_t, int64_t>> MockKafka::Watermarks(const std::string& topic,
                                                                  int32_t partition) {
  int64_t low = 0, high = 0;
  const rd_kafka_resp_err_t err =
      rd_kafka_query_watermark_offsets(producer_, topic.c_str(), partition, &low, &high, 5000);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return absl::UnavailableError(absl::StrCat("watermarks: ", rd_kafka_err2str(err)));
  }
  return std::make_pair(low, high);
}

}  // namespace sluice::testing
