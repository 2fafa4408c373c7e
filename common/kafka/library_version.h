// The librdkafka sluice runs with: its version for the startup logs, and the
// oldest release sluice is built for (2.12: SCRAM against Kafka 4.x, the
// protocol versions Kafka 4 kept). The library is built from source and linked
// statically (scripts/install_librdkafka.sh, third_party/librdkafka/BUILD).
#ifndef SLUICE_COMMON_KAFKA_LIBRARY_VERSION_H_
#define SLUICE_COMMON_KAFKA_LIBRARY_VERSION_H_

#include <string>

namespace sluice {
namespace kafka {

// rd_kafka_version() format: 0xMMmmrrpp.
inline constexpr int kMinLibrdkafkaVersion = 0x020c0000;

// "librdkafka 2.12.1", from the library linked in (rd_kafka_version_str()).
std::string LibrdkafkaDescription();

}  // namespace kafka
}  // namespace sluice

#endif  // SLUICE_COMMON_KAFKA_LIBRARY_VERSION_H_
