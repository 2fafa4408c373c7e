#include "common/kafka/library_version.h"

#include <librdkafka/rdkafka.h>

#include "absl/strings/str_cat.h"

namespace sluice {
namespace kafka {

static_assert(RD_KAFKA_VERSION >= kMinLibrdkafkaVersion,
              "compiled against librdkafka headers older than 2.12 (Debian's "
              "/usr/include/librdkafka?): run scripts/install_librdkafka.sh");

std::string LibrdkafkaDescription() {
  return absl::StrCat("librdkafka ", rd_kafka_version_str());
}

}  // namespace kafka
}  // namespace sluice
