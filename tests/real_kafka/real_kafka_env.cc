#include "tests/real_kafka/real_kafka_env.h"

#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <memory>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tests/testing/subprocess.h"

namespace sluice::real_kafka {
namespace {

std::unique_ptr<kafka::RealKafka>& Broker() {
  static auto* broker = new std::unique_ptr<kafka::RealKafka>();
  return *broker;
}

// Why the broker did not start. Not a failure of SetUp itself: gtest would
// then mark every test "skipped", which CI's count does not see as failed.
// Each test fails instead (RealKafkaEnv).
absl::Status& StartError() {
  static auto* status = new absl::Status();
  return *status;
}

class Environment : public ::testing::Environment {
 public:
  void SetUp() override {
    kafka::RealKafkaOptions options;
    options.dir = testing::TestTmpDir() + "/kafka";
    // The security listeners cost well under a second of the start (openssl
    // makes the TLS material); every target gets them, so one broker serves
    // the security scenarios too.
    options.sasl_plaintext = true;
    options.ssl = true;
    options.sasl_ssl = true;
    options.sasl_users = {{kSaslUser, SaslPassword()}};
    // SCRAM-SHA-256 logins on SASL_PLAINTEXT re-authenticate every 8 s
    // (KIP-368): a credential changed on the broker fails live connections
    // within that (security_test's rotation). No other mechanism or listener.
    options.properties.push_back(
        absl::StrCat("listener.name.sasl_plaintext.scram-sha-256.connections.max.reauth.ms=",
                     kScramSha256ReauthMs));
    const absl::Time start = absl::Now();
    absl::StatusOr<std::unique_ptr<kafka::RealKafka>> broker = kafka::RealKafka::Start(options);
    if (!broker.ok()) {
      StartError() = broker.status();
      std::cerr << "[real_kafka] the real Kafka broker did not start: " << broker.status()
                << std::endl;
      return;
    }
    Broker() = *std::move(broker);
    std::cerr << "[real_kafka] Apache Kafka " << kafka::kKafkaVersion << " at "
              << Broker()->bootstrap_servers() << " after "
              << absl::FormatDuration(absl::Now() - start) << std::endl;
  }

  void TearDown() override {
    if (Broker() == nullptr) return;
    if (Broker()->Running()) {
      const absl::Status stopped = Broker()->Stop();
      EXPECT_TRUE(stopped.ok()) << stopped;
    }
    if (const char* outputs = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR"); outputs != nullptr) {
      std::ifstream in(Broker()->server_log(), std::ios::binary);
      std::ofstream out(absl::StrCat(outputs, "/kafka-server.log"), std::ios::binary);
      out << in.rdbuf();
    }
    Broker().reset();
  }
};

::testing::Environment* const kEnvironment =
    ::testing::AddGlobalTestEnvironment(new Environment);

}  // namespace

const std::string& SaslPassword() {
  static const std::string* password = [] {
    absl::BitGen gen;
    std::string p = "pw-";
    for (int i = 0; i < 20; ++i) p += "0123456789abcdef"[absl::Uniform(gen, 0, 16)];
    return new std::string(p);
  }();
  return *password;
}

kafka::RealKafka* RealKafkaEnv() {
  kafka::RealKafka* broker = Broker().get();
  if (broker == nullptr) {
    ADD_FAILURE() << "the shared real Kafka broker did not start: " << StartError()
                  << " (scripts/install_deps.sh installs java and the Kafka jars)";
  }
  return broker;
}

std::string UniqueTopic(const std::string& suffix) {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = info != nullptr
                         ? absl::StrCat(info->test_suite_name(), "_", info->name(), suffix)
                         : absl::StrCat("topic", suffix);
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.') c = '_';
  }
  return name;
}

// The latest offset of `topic`[p] once it reaches `expected`: the broker
// writes a transaction's markers to its partitions after EndTxn has
// answered, so right after a commit the watermark can still be one short.
absl::StatusOr<int64_t> WaitForLatest(kafka::RealKafka* kafka, const std::string& topic,
                                      int32_t p, bool read_committed, int64_t expected) {
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (true) {
    absl::StatusOr<std::pair<int64_t, int64_t>> w = kafka->Watermarks(topic, p, read_committed);
    if (!w.ok()) return w.status();
    if (w->second >= expected || absl::Now() > deadline) return w->second;
    absl::SleepFor(absl::Milliseconds(100));
  }
}

}  // namespace sluice::real_kafka
