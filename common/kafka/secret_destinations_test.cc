#include "common/kafka/secret_destinations.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sluice::kafka {
namespace {

TEST(SecretDestinationsTest, ParsesAndMatches) {
  auto d = SecretDestinations::Parse(
      "# reference   servers\n"
      "\n"
      "${env:SLUICE_SECRET_A}   kafka-0.kafka:9093, kafka-1.kafka:9093\n"
      "  ${file:/etc/sluice/kafka/pw}\t*.prod.svc:9093 [::1]:9092\n",
      "destinations");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(d->Declares("${env:SLUICE_SECRET_A}"));
  EXPECT_FALSE(d->Declares("${env:SLUICE_SECRET_B}"));
  EXPECT_TRUE(d->Allows("${env:SLUICE_SECRET_A}", "kafka-1.kafka:9093"));
  EXPECT_FALSE(d->Allows("${env:SLUICE_SECRET_A}", "kafka-2.kafka:9093"));
  EXPECT_FALSE(d->Allows("${env:SLUICE_SECRET_A}", "kafka-0.kafka:9092"));
  EXPECT_FALSE(d->Allows("${env:SLUICE_SECRET_B}", "kafka-0.kafka:9093"));
  // `*` is one label (or part of one), never a dot or nothing.
  const std::string file = "${file:/etc/sluice/kafka/pw}";
  EXPECT_TRUE(d->Allows(file, "b0.prod.svc:9093"));
  EXPECT_FALSE(d->Allows(file, "prod.svc:9093"));
  EXPECT_FALSE(d->Allows(file, ".prod.svc:9093"));
  EXPECT_FALSE(d->Allows(file, "evil.example.prod.svc:9093"));
  EXPECT_FALSE(d->Allows(file, "b0.prod.svc.evil.example:9093"));
  EXPECT_TRUE(d->Allows(file, "[::1]:9092"));
  EXPECT_EQ(d->ServersOf(file), (std::vector<std::string>{"*.prod.svc:9093", "[::1]:9092"}));
}

TEST(SecretDestinationsTest, RefusesMalformedFilesNamingTheLine) {
  for (const char* bad : {
           "${env:SLUICE_SECRET_A}\n",                        // no server
           "SLUICE_SECRET_A kafka:9093\n",                    // not a reference
           "${env:SLUICE_SECRET_A} kafka\n",                  // no port
           "${env:SLUICE_SECRET_A} kafka:99999\n",            // bad port
           "${env:SLUICE_SECRET_A} ::1:9092\n",               // v6 without brackets
           "${env:A} k:1\n${env:A} k:2\n",                    // twice
       }) {
    auto d = SecretDestinations::Parse(bad, "dest.txt");
    EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(d.status().message().find("dest.txt:"), std::string::npos) << d.status();
  }
  EXPECT_FALSE(SecretDestinations::Load("/nonexistent/destinations").ok());
}

TEST(SecretDestinationsTest, ConnectionDestinations) {
  auto d = ConnectionDestinations({{"bootstrap.servers", " SASL_SSL://Kafka-0:9093,kafka-1 ,"},
                                   {"metadata.broker.list", "kafka-0:9093,[::1]:1"},
                                   {"sasl.oauthbearer.token.endpoint.url",
                                    "https://user@idp.example/oauth2/token?x=1"}});
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(*d, (std::vector<std::string>{"kafka-0:9093", "kafka-1:9092", "[::1]:1",
                                          "idp.example:443"}));
  EXPECT_TRUE(ConnectionDestinations({})->empty());
  EXPECT_EQ(ConnectionDestinations({{"bootstrap.servers", "k:port"}}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ConnectionDestinations({{"sasl.oauthbearer.token.endpoint.url", "file:///x"}})
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace sluice::kafka
