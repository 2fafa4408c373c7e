#include "common/kafka/auth_failure.h"

#include <gtest/gtest.h>

#include "absl/strings/match.h"

namespace sluice::kafka {
namespace {

const KafkaProperties kScram = {{"bootstrap.servers", "b:9093"},
                                {"security.protocol", "sasl_ssl"},
                                {"sasl.mechanism", "SCRAM-SHA-512"},
                                {"sasl.username", "ingest"},
                                {"sasl.password", "hunter2-secret"}};

TEST(AuthMechanism, FromTheProtocolAndTheMechanism) {
  EXPECT_EQ(AuthMechanism(kScram), "SCRAM-SHA-512");
  EXPECT_EQ(AuthMechanism({{"security.protocol", "SASL_PLAINTEXT"}, {"sasl.mechanisms", "plain"}}),
            "PLAIN");
  // librdkafka's default mechanism.
  EXPECT_EQ(AuthMechanism({{"security.protocol", "SASL_SSL"}}), "GSSAPI");
  EXPECT_EQ(AuthMechanism({{"security.protocol", "SSL"}}), "SSL");
  EXPECT_EQ(AuthMechanism({{"bootstrap.servers", "b:9092"}}), "");
  EXPECT_EQ(DescribeAuthentication(kScram), "SASL SCRAM-SHA-512 over SASL_SSL");
  EXPECT_EQ(DescribeAuthentication({{"security.protocol", "SSL"}}),
            "TLS client certificate over SSL");
  EXPECT_EQ(DescribeAuthentication({}), "PLAINTEXT");
}

TEST(IsAuthFailureError, LoginAndCertificateRefusalsOnly) {
  EXPECT_TRUE(IsAuthFailureError(RD_KAFKA_RESP_ERR__AUTHENTICATION, "SASL authentication error"));
  EXPECT_TRUE(IsAuthFailureError(RD_KAFKA_RESP_ERR__SSL, "certificate verify failed"));
  EXPECT_TRUE(IsAuthFailureError(RD_KAFKA_RESP_ERR_SASL_AUTHENTICATION_FAILED, ""));
  EXPECT_TRUE(IsAuthFailureError(RD_KAFKA_RESP_ERR_UNSUPPORTED_SASL_MECHANISM, ""));
  // What librdkafka reports when the broker refuses the client's certificate
  // (Apache Kafka with ssl.client.auth=required): no certificate, an expired one.
  EXPECT_TRUE(IsAuthFailureError(
      RD_KAFKA_RESP_ERR__TRANSPORT,
      "ssl://127.0.0.1:36261/bootstrap: Receive failed: error:0A000412:SSL routines::sslv3 "
      "alert bad certificate: SSL alert number 42 (after 1ms in state APIVERSION_QUERY)"));
  EXPECT_TRUE(IsAuthFailureError(
      RD_KAFKA_RESP_ERR__TRANSPORT,
      "Receive failed: error:0A000416:SSL routines::sslv3 alert certificate unknown: SSL alert "
      "number 46"));
  // Other transport trouble is not.
  EXPECT_FALSE(IsAuthFailureError(RD_KAFKA_RESP_ERR__TRANSPORT,
                                  "Connect to ipv4#127.0.0.1:9092 failed: Connection refused"));
  EXPECT_FALSE(IsAuthFailureError(RD_KAFKA_RESP_ERR__TRANSPORT,
                                  "SSL alert number 40 (handshake failure)"));
  EXPECT_FALSE(IsAuthFailureError(RD_KAFKA_RESP_ERR__TRANSPORT, "SSL alert number 420"));
  EXPECT_FALSE(IsAuthFailureError(RD_KAFKA_RESP_ERR__TIMED_OUT, "SSL alert number 42"));
  // Authorization (who may read what) is not authentication.
  EXPECT_FALSE(IsAuthFailureError(RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED, ""));
}

TEST(AuthFailureStatus, NamesTheMechanismNeverTheSecret) {
  const absl::Status status = AuthFailureStatus(
      RD_KAFKA_RESP_ERR__AUTHENTICATION, "list partitions of topic \"wiki\"",
      "sasl_ssl://b:9093/bootstrap: SASL authentication error: Authentication failed during "
      "authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512 (password "
      "hunter2-secret)",
      kScram);
  EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(status.message(),
            "list partitions of topic \"wiki\": Kafka authentication failed (SASL SCRAM-SHA-512 "
            "over SASL_SSL): SASL authentication error: Authentication failed during "
            "authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512 "
            "(password ***) (_AUTHENTICATION)");
  std::string mechanism;
  ASSERT_TRUE(IsAuthFailure(status, &mechanism));
  EXPECT_EQ(mechanism, "SCRAM-SHA-512");

  const absl::Status tls = AuthFailureStatus(RD_KAFKA_RESP_ERR__TRANSPORT, "Kafka poll",
                                             "SSL alert number 46", {{"security.protocol", "SSL"}});
  ASSERT_TRUE(IsAuthFailure(tls, &mechanism)) << tls;
  EXPECT_EQ(mechanism, "SSL");
  EXPECT_TRUE(absl::StrContains(tls.message(), "TLS client certificate over SSL")) << tls;
}

TEST(IsAuthFailure, OnlyItsOwnStatuses) {
  EXPECT_FALSE(IsAuthFailure(absl::UnavailableError("Kafka authentication failed")));
  EXPECT_FALSE(IsAuthFailure(absl::PermissionDeniedError("not a worker of this cluster")));
  EXPECT_FALSE(IsAuthFailure(absl::OkStatus()));
}

TEST(ScrubSecrets, EverySecretValueOfTheProperties) {
  const KafkaProperties props = {{"sasl.password", "p4ss-word"},
                                 {"ssl.key.password", "keypass"},
                                 {"sasl.username", "ingest"},
                                 {"x.secret", "abc"}};
  EXPECT_EQ(ScrubSecrets("p4ss-word and keypass by ingest, abc", props),
            "*** and *** by ingest, abc");
}

}  // namespace
}  // namespace sluice::kafka
