#include "common/kafka/config.h"

#include <syslog.h>

#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "glog/logging.h"

namespace sluice {
namespace kafka {
namespace {

// librdkafka calls this from its own threads; glog is thread-safe. The handle
// name (client.id + type + instance) is the prefix.
void LogToGlog(const rd_kafka_t* rk, int level, const char* facility, const char* buf) {
  const char* name = rk != nullptr ? rd_kafka_name(rk) : "kafka";
  // Repeated on every metadata request against brokers older than 0.11 (the
  // dev broker speaks Metadata v0-v2): not worth a warning each time.
  if (std::string_view(facility) == "AUTOCREATE") {
    LOG_FIRST_N(INFO, 1) << "[kafka " << name << "] " << facility << ": " << buf;
    return;
  }
  if (level <= LOG_ERR) {
    LOG(ERROR) << "[kafka " << name << "] " << facility << ": " << buf;
  } else if (level <= LOG_WARNING) {
    LOG(WARNING) << "[kafka " << name << "] " << facility << ": " << buf;
  } else if (level <= LOG_INFO) {
    LOG(INFO) << "[kafka " << name << "] " << facility << ": " << buf;
  } else {
    VLOG(1) << "[kafka " << name << "] " << facility << ": " << buf;
  }
}

}  // namespace

absl::Status SetProperty(rd_kafka_conf_t* conf, absl::string_view name, absl::string_view value) {
  char errstr[512];
  const std::string name_str(name);
  const std::string value_str(value);
  const rd_kafka_conf_res_t res =
      rd_kafka_conf_set(conf, name_str.c_str(), value_str.c_str(), errstr, sizeof(errstr));
  if (res == RD_KAFKA_CONF_OK) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(res == RD_KAFKA_CONF_UNKNOWN ? "unknown" : "invalid", " Kafka property \"", name,
                   "\"=\"", value, "\": ", errstr));
}

absl::StatusOr<ConfPtr> BuildConf(const KafkaProperties& properties, absl::string_view log_prefix) {
  ConfPtr conf(rd_kafka_conf_new());
  rd_kafka_conf_set_log_cb(conf.get(), &LogToGlog);
  // client.id names the handle in logs unless the caller chose one.
  if (properties.find("client.id") == properties.end() && !log_prefix.empty()) {
    absl::Status s = SetProperty(conf.get(), "client.id", absl::StrCat("sluice-", log_prefix));
    if (!s.ok()) return s;
  }
  for (const auto& [name, value] : properties) {
    absl::Status s = SetProperty(conf.get(), name, value);
    if (!s.ok()) return s;
  }
  return conf;
}

absl::StatusOr<HandlePtr> NewHandle(rd_kafka_type_t type, ConfPtr conf) {
  char errstr[512];
  rd_kafka_t* rk = rd_kafka_new(type, conf.get(), errstr, sizeof(errstr));
  if (rk == nullptr) {
    // rd_kafka_new leaves the conf with the caller on failure; `conf` frees it.
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot create Kafka ", type == RD_KAFKA_PRODUCER ? "producer" : "consumer", ": ", errstr));
  }
  conf.release();  // Owned by the handle now.
  return HandlePtr(rk);
}

std::string PropertyOr(const KafkaProperties& properties, absl::string_view name,
                       absl::string_view fallback) {
  auto it = properties.find(std::string(name));
  return it == properties.end() ? std::string(fallback) : it->second;
}

bool IsSecretProperty(absl::string_view name) {
  const std::string lower = absl::AsciiStrToLower(name);
  return absl::StrContains(lower, "password") || absl::StrContains(lower, "secret") ||
         lower == "ssl.key.pem" || lower == "ssl_key";
}

}  // namespace kafka
}  // namespace sluice
