#include "common/kafka/errors.h"

#include <librdkafka/rdkafka.h>

#include "gtest/gtest.h"

namespace sluice {
namespace kafka {
namespace {

TEST(KafkaErrorCodeTest, MapsByWhatTheCallerShouldDo) {
  struct Case {
    rd_kafka_resp_err_t err;
    absl::StatusCode code;
  };
  const Case cases[] = {
      {RD_KAFKA_RESP_ERR_NO_ERROR, absl::StatusCode::kOk},
      {RD_KAFKA_RESP_ERR__TRANSPORT, absl::StatusCode::kUnavailable},
      {RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN, absl::StatusCode::kUnavailable},
      {RD_KAFKA_RESP_ERR__TIMED_OUT, absl::StatusCode::kUnavailable},
      {RD_KAFKA_RESP_ERR__MSG_TIMED_OUT, absl::StatusCode::kUnavailable},
      {RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT, absl::StatusCode::kUnavailable},
      {RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION, absl::StatusCode::kUnavailable},
      {RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE, absl::StatusCode::kUnavailable},
      {RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART, absl::StatusCode::kNotFound},
      {RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC, absl::StatusCode::kNotFound},
      {RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION, absl::StatusCode::kNotFound},
      {RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE, absl::StatusCode::kOutOfRange},
      {RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET, absl::StatusCode::kOutOfRange},
      {RD_KAFKA_RESP_ERR__INVALID_ARG, absl::StatusCode::kInvalidArgument},
      {RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE, absl::StatusCode::kInvalidArgument},
      {RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED, absl::StatusCode::kPermissionDenied},
      {RD_KAFKA_RESP_ERR__QUEUE_FULL, absl::StatusCode::kResourceExhausted},
      {RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS, absl::StatusCode::kAlreadyExists},
      {RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS, absl::StatusCode::kAborted},
      {RD_KAFKA_RESP_ERR_PRODUCER_FENCED, absl::StatusCode::kAborted},
      {RD_KAFKA_RESP_ERR__STATE, absl::StatusCode::kFailedPrecondition},
      {RD_KAFKA_RESP_ERR__BAD_MSG, absl::StatusCode::kDataLoss},
      {RD_KAFKA_RESP_ERR_UNSUPPORTED_VERSION, absl::StatusCode::kUnimplemented},
      {RD_KAFKA_RESP_ERR__DESTROY, absl::StatusCode::kCancelled},
      // Unclassified: local errors are ours (INTERNAL), broker ones UNKNOWN.
      {RD_KAFKA_RESP_ERR__FS, absl::StatusCode::kInternal},
      {RD_KAFKA_RESP_ERR_INCONSISTENT_VOTER_SET, absl::StatusCode::kUnknown},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(KafkaErrorCode(c.err), c.code) << rd_kafka_err2name(c.err);
  }
}

TEST(KafkaErrorToStatusTest, MessageHasContextDescriptionAndName) {
  const absl::Status s =
      KafkaErrorToStatus(RD_KAFKA_RESP_ERR__TRANSPORT, "query watermarks of wiki[3]");
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(s.message(), std::string("query watermarks of wiki[3]: ") +
                             rd_kafka_err2str(RD_KAFKA_RESP_ERR__TRANSPORT) + " (_TRANSPORT)");
}

TEST(KafkaErrorToStatusTest, DetailReplacesGenericDescription) {
  const absl::Status s = KafkaErrorToStatus(RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE, "read t[0]",
                                            "offset 5 is before the log start 10");
  EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(s.message(), "read t[0]: offset 5 is before the log start 10 (OFFSET_OUT_OF_RANGE)");
}

TEST(KafkaErrorToStatusTest, NoErrorIsOk) {
  EXPECT_TRUE(KafkaErrorToStatus(RD_KAFKA_RESP_ERR_NO_ERROR, "anything").ok());
  EXPECT_TRUE(KafkaErrorObjectToStatus(nullptr, "anything").ok());
}

TEST(KafkaErrorObjectToStatusTest, ConsumesTheErrorObject) {
  rd_kafka_error_t* error = rd_kafka_error_new(RD_KAFKA_RESP_ERR__STATE, "transaction not started");
  const absl::Status s = KafkaErrorObjectToStatus(error, "commit");
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(), "commit: transaction not started (_STATE)");
}

}  // namespace
}  // namespace kafka
}  // namespace sluice
