// The binaries run the librdkafka built by scripts/install_librdkafka.sh, not
// a shared library the machine happens to have (Debian 12's is 2.0.2).
#include "common/kafka/library_version.h"

#include <librdkafka/rdkafka.h>

#include "gtest/gtest.h"

namespace sluice {
namespace kafka {
namespace {

TEST(LibraryVersionTest, RunsTheBuiltLibrdkafka) {
  EXPECT_GE(rd_kafka_version(), kMinLibrdkafkaVersion) << rd_kafka_version_str();
  // The headers compiled against are the library's own.
  EXPECT_EQ(rd_kafka_version(), RD_KAFKA_VERSION) << rd_kafka_version_str();
  EXPECT_EQ(LibrdkafkaDescription(), std::string("librdkafka ") + rd_kafka_version_str());
}

TEST(LibraryVersionTest, HasTheSecurityFeatures) {
  // builtin.features lists what the library was built with; sluice's users
  // need TLS, SASL (GSSAPI through Cyrus SASL, PLAIN, SCRAM, OAUTHBEARER with
  // OIDC) and every codec Kafka producers use.
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char features[512];
  size_t size = sizeof(features);
  ASSERT_EQ(rd_kafka_conf_get(conf, "builtin.features", features, &size), RD_KAFKA_CONF_OK);
  rd_kafka_conf_destroy(conf);
  const std::string list = std::string(",") + features + ",";
  for (const char* feature : {"ssl", "sasl", "sasl_gssapi", "sasl_plain", "sasl_scram",
                              "sasl_oauthbearer", "oidc", "gzip", "snappy", "lz4", "zstd"}) {
    EXPECT_NE(list.find(std::string(",") + feature + ","), std::string::npos)
        << feature << " missing from builtin.features " << features;
  }
}

}  // namespace
}  // namespace kafka
}  // namespace sluice
