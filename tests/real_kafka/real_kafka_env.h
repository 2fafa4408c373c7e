// One real Apache Kafka broker per test binary (starting one costs seconds):
// a gtest Environment that starts it before the first test and stops it after
// the last. Link //tests/real_kafka:real_kafka_env (alwayslink) and use
//
//   kafka::RealKafka* kafka = RealKafkaEnv();   // never null inside a test
//   ASSERT_OK(kafka->CreateTopic(UniqueTopic(), 4));
//
// If the broker cannot start (no jars, no java) the environment's SetUp fails,
// so every test of the binary fails: the tier never skips (scripts/install_deps.sh
// installs what it needs). The broker's state and server.log are under
// $TEST_TMPDIR/kafka; server.log is copied to the test's undeclared outputs.
//
// Besides PLAINTEXT (bootstrap_servers(), for admin calls, producers and the
// audit) the broker has SASL_PLAINTEXT, SSL (client certificate required)
// and SASL_SSL listeners (kafka->sasl_ssl_bootstrap_servers(),
// kafka->ca_file(), kafka->client_cert_file()) with one user, kSaslUser,
// whose password (SaslPassword()) is made at random per run, for PLAIN,
// SCRAM-SHA-256 and SCRAM-SHA-512; OAUTHBEARER (unsecured JWS) on SASL_SSL.
// SCRAM-SHA-256 connections on SASL_PLAINTEXT re-authenticate every
// kScramSha256ReauthMs.
#ifndef SLUICE_TESTS_REAL_KAFKA_REAL_KAFKA_ENV_H_
#define SLUICE_TESTS_REAL_KAFKA_REAL_KAFKA_ENV_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

#include "tools/kafka/real_kafka.h"

namespace sluice::real_kafka {

inline constexpr char kSaslUser[] = "sluice-test";
inline constexpr int kScramSha256ReauthMs = 8000;

// The password of kSaslUser on the shared broker (PLAIN and SCRAM-SHA-512).
const std::string& SaslPassword();

// The shared broker (fails the calling test and returns null if it did not start).
kafka::RealKafka* RealKafkaEnv();

// "<test suite>_<test name>" made a valid topic name, unique per test.
std::string UniqueTopic(const std::string& suffix = "");

// The latest offset of `topic`[p] once it reaches `expected` (or after 30 s,
// whatever it is then): the broker writes a transaction's markers to its
// partitions after EndTxn has answered, so right after a commit the
// watermark can still be short of the last marker.
absl::StatusOr<int64_t> WaitForLatest(kafka::RealKafka* kafka, const std::string& topic,
                                      int32_t p, bool read_committed, int64_t expected);

}  // namespace sluice::real_kafka

#endif  // SLUICE_TESTS_REAL_KAFKA_REAL_KAFKA_ENV_H_
