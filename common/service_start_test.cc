// What the mains do first, in-process: the metrics endpoint checks the
// server's own tokens and policy (anonymous /metrics refused, /healthz open),
// and the security flags' files are read with errors naming the flag.
#include "common/service_start.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/strings/match.h"
#include "common/auth/token_store.h"
#include "common/metrics/http_get.h"

namespace sluice {
namespace {

std::string TmpFile(const std::string& name, const std::string& contents) {
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
  std::ofstream(path) << contents;
  return path;
}

auth::AuthOptions TestAuth() {
  auth::AuthOptions options;
  options.tokens_file = TmpFile("tokens", "sha256:" + auth::Sha256Hex("reader-token") +
                                              " grafana\nsha256:" +
                                              auth::Sha256Hex("worker-token") + " w0\n");
  options.policy_file = TmpFile("policy", "token:grafana reader\ntoken:w0 worker w0 address=127.0.0.1:*\n");
  return options;
}

TEST(StartServiceBasicsTest, TheMetricsEndpointNeedsAReaderTokenButLivenessDoesNot) {
  metrics::Registry registry;
  registry.GetCounter("sluice_test_total", "Test.", {})->Increment();
  auto http = StartServiceBasics("[test]", "", "127.0.0.1:0", &registry, TestAuth());
  ASSERT_TRUE(http.ok()) << http.status();
  ASSERT_NE(*http, nullptr);
  const int port = (*http)->port();
  auto get = [port](const std::string& path, const std::string& token = "") {
    auto response = metrics::HttpGet(port, path, token);
    EXPECT_TRUE(response.ok()) << response.status();
    return response.ok() ? *response : metrics::HttpGetResponse{};
  };
  EXPECT_EQ(get("/healthz").status, 200);
  metrics::HttpGetResponse anonymous = get("/metrics");
  EXPECT_EQ(anonymous.status, 401);
  EXPECT_FALSE(absl::StrContains(anonymous.body, "sluice_test_total")) << anonymous.body;
  EXPECT_EQ(get("/metrics", "unknown-token").status, 401);
  metrics::HttpGetResponse worker = get("/metrics", "worker-token");
  EXPECT_EQ(worker.status, 403);
  EXPECT_TRUE(absl::StrContains(worker.body, "token:w0")) << worker.body;
  EXPECT_FALSE(absl::StrContains(worker.body, "worker-token")) << worker.body;
  metrics::HttpGetResponse reader = get("/metrics", "reader-token");
  EXPECT_EQ(reader.status, 200);
  EXPECT_TRUE(absl::StrContains(reader.body, "sluice_test_total 1")) << reader.body;
}

TEST(StartServiceBasicsTest, InsecureNoAuthLeavesTheEndpointOpen) {
  metrics::Registry registry;
  auth::AuthOptions insecure;
  insecure.insecure_no_auth = true;
  auto http = StartServiceBasics("[test]", "", "127.0.0.1:0", &registry, insecure);
  ASSERT_TRUE(http.ok()) << http.status();
  auto response = metrics::HttpGet((*http)->port(), "/metrics");
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 200);
}

TEST(StartServiceBasicsTest, AuthenticationNeitherConfiguredNorOffIsRefused) {
  metrics::Registry registry;
  auto http = StartServiceBasics("[test]", "", "127.0.0.1:0", &registry, auth::AuthOptions());
  EXPECT_EQ(http.status().code(), absl::StatusCode::kFailedPrecondition) << http.status();
  // Metrics off: nothing to check, nothing started.
  auto off = StartServiceBasics("[test]", "", "", &registry, auth::AuthOptions());
  ASSERT_TRUE(off.ok()) << off.status();
  EXPECT_EQ(*off, nullptr);
}

TEST(LoadSecurityOptionsTest, SecretDestinationsFile) {
  SecurityFlags flags;
  flags.kafka_secret_destinations_file =
      TmpFile("destinations", "${env:SLUICE_SECRET_K} kafka-0:9093\n");
  auto loaded = LoadSecurityOptions(flags);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_NE(loaded->kafka_policy.secret_destinations, nullptr);
  EXPECT_TRUE(loaded->kafka_policy.secret_destinations->Allows("${env:SLUICE_SECRET_K}",
                                                               "kafka-0:9093"));
  // No file: no reference is bound anywhere.
  auto none = LoadSecurityOptions(SecurityFlags());
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(none->kafka_policy.secret_destinations, nullptr);
  // A bad line or a missing file names the flag.
  flags.kafka_secret_destinations_file = TmpFile("bad-destinations", "${env:X}\n");
  auto bad = LoadSecurityOptions(flags);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument) << bad.status();
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "--kafka_secret_destinations_file"))
      << bad.status();
  flags.kafka_secret_destinations_file = "/nonexistent/destinations";
  bad = LoadSecurityOptions(flags);
  EXPECT_FALSE(bad.ok());
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "--kafka_secret_destinations_file"))
      << bad.status();
}

}  // namespace
}  // namespace sluice
