// Where each secret reference may be sent: the operator's binding of every
// ${env:NAME} / ${file:PATH} reference a spec may use to the Kafka servers
// that may receive its value. A reference resolves only for a connection
// whose every destination is allowed for it, so whoever can write specs
// cannot point bootstrap.servers at their own broker and receive the secret.
//
// The file named by --kafka_secret_destinations_file (on the supervisor and
// on every worker) has one reference per line, then the servers it may go
// to, separated by commas or spaces:
//
//   # reference                            servers (host:port; * in the host)
//   ${env:SLUICE_SECRET_KAFKA_PASSWORD}    kafka-0.kafka:9093, kafka-1.kafka:9093
//   ${file:/etc/sluice/kafka/ingest.pw}    *.kafka.prod.svc:9093
//
// A reference is written exactly as specs write it (a ${file:} path without
// spaces; another spelling of the same file is another, unbound, reference).
// A server is host:port
// ([v6]:port for IPv6); `*` in the host stands for one or more characters
// other than '.' and ':' (one DNS label or part of one: "*.kafka:9093" takes
// "b0.kafka:9093", not "b0.evil.example.kafka:9093" nor "kafka:9093"). Hosts
// compare case-insensitively; ports exactly. A reference may be listed once.
//
// A connection's destinations are every server of bootstrap.servers and
// metadata.broker.list (a server without a port is port 9092, a
// "PROTOCOL://" prefix is dropped) and, when set, the host:port of
// sasl.oauthbearer.token.endpoint.url (443 for https, 80 for http), which
// receives the OAUTHBEARER client secret.
#ifndef SLUICE_COMMON_KAFKA_SECRET_DESTINATIONS_H_
#define SLUICE_COMMON_KAFKA_SECRET_DESTINATIONS_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/kafka/config.h"

namespace sluice::kafka {

class SecretDestinations {
 public:
  // INVALID_ARGUMENT naming the file and line for a line that is not a
  // reference followed by at least one host:port, a malformed server, or a
  // reference listed twice; errors of reading the file name its path.
  static absl::StatusOr<SecretDestinations> Load(const std::string& path);
  static absl::StatusOr<SecretDestinations> Parse(absl::string_view contents,
                                                  absl::string_view origin);

  // True when the file binds `reference` to some servers.
  bool Declares(absl::string_view reference) const;
  // True when `reference` may be sent to `server` ("host:port", as
  // ConnectionDestinations gives it).
  bool Allows(absl::string_view reference, absl::string_view server) const;
  // The servers `reference` may go to, as written in the file (for
  // messages).
  std::vector<std::string> ServersOf(absl::string_view reference) const;

 private:
  struct Server {
    std::string host_pattern;  // lower case
    std::string port;
    std::string written;
  };
  std::map<std::string, std::vector<Server>, std::less<>> servers_by_reference_;
};

// The host:port of every server the connection `properties` describe sends
// to (see above), lower case, in order, without duplicates.
// INVALID_ARGUMENT naming the property for a server that cannot be parsed.
absl::StatusOr<std::vector<std::string>> ConnectionDestinations(const KafkaProperties& properties);

// "host:port" (or "[v6]:port") from one entry of a server list: an optional
// "PROTOCOL://" prefix dropped, `default_port` when none is given, the host
// lower case. INVALID_ARGUMENT for an empty entry or a bad port.
absl::StatusOr<std::string> NormalizeServer(absl::string_view entry, absl::string_view default_port);

}  // namespace sluice::kafka

#endif  // SLUICE_COMMON_KAFKA_SECRET_DESTINATIONS_H_
