// A real Apache Kafka node (tools/kafka/run_kafka.sh: broker + KRaft
// controller on 127.0.0.1) as a child process, for the real_kafka test tier,
// beside the dev broker's //tools/devbroker. Start-up costs seconds (a JVM and
// a KRaft format): share one per test binary (tests/real_kafka/real_kafka_env.h).
//
//   RealKafkaOptions options;
//   options.dir = dir;
//   SLUICE_ASSIGN_OR_RETURN(auto kafka, RealKafka::Start(options));
//   kafka->bootstrap_servers();                  // "127.0.0.1:PORT"
//   SLUICE_RETURN_IF_ERROR(kafka->CreateTopic("wiki", 4));
//   SLUICE_RETURN_IF_ERROR(kafka->Kill());       // kill -9 (broker and controller)
//   SLUICE_RETURN_IF_ERROR(kafka->Restart());    // same ports, same data
//   SLUICE_RETURN_IF_ERROR(kafka->Pause());      // SIGSTOP: slow to answer
//   SLUICE_RETURN_IF_ERROR(kafka->Resume());     // SIGCONT
//   SLUICE_RETURN_IF_ERROR(kafka->Stop());       // SIGTERM, clean shutdown
//
// The jars: options.jars_dir, else $SLUICE_KAFKA_JARS, else
// <home of the user>/.cache/sluice/kafka/<kKafkaVersion>/lib (where
// scripts/install_deps.sh puts them; the home comes from the password
// database, since Bazel tests run with HOME elsewhere). Missing jars or a
// missing java are an error (FAILED_PRECONDITION), never a reason to skip.
// Call Start/Restart from the thread that stays alive (the child dies with it).
#ifndef SLUICE_TOOLS_KAFKA_REAL_KAFKA_H_
#define SLUICE_TOOLS_KAFKA_REAL_KAFKA_H_

#include <cstdint>
#include <sys/types.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "tests/testing/subprocess.h"

namespace sluice::kafka {

// The Kafka version third_party/kafka/pom.xml pins.
inline constexpr char kKafkaVersion[] = "4.4.0";
// Workspace-relative path of the launcher (a `data` dependency).
inline constexpr char kRunKafkaScript[] = "tools/kafka/run_kafka.sh";

struct RealKafkaOptions {
  // State directory (created); required.
  std::string dir;
  // The launcher; empty: the runfile kRunKafkaScript, else ./tools/kafka/run_kafka.sh.
  std::string script;
  std::string jars_dir;
  std::string heap = "512m";
  // Server properties added after the launcher's defaults.
  std::vector<std::string> properties;
  // Ports; 0: picked once at Start below the ephemeral range, kept by Restart.
  int port = 0;
  int controller_port = 0;
  absl::Duration start_timeout = absl::Seconds(120);
  // Extra environment of the launcher, e.g. {"KAFKA_JVM_OPTS", "-XX:+UseG1GC"}
  // (the default trades peak speed for a quick start).
  std::map<std::string, std::string> env;
  // Security listeners beside PLAINTEXT (which admin calls keep using), on
  // ports picked at Start and kept by Restart: SASL_PLAINTEXT, SSL and
  // SASL_SSL. SASL listeners take PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 for
  // `sasl_users` (name -> password, [A-Za-z0-9._-]; at least one); SASL_SSL
  // also OAUTHBEARER, validated by Kafka's unsecured JWS validator (any
  // unsigned token). TLS listeners present a certificate for 127.0.0.1
  // signed by a throwaway CA (ca_file()); the SSL listener requires a client
  // certificate signed by it (client_cert_file()).
  bool sasl_plaintext = false;
  bool ssl = false;
  bool sasl_ssl = false;
  std::map<std::string, std::string> sasl_users;
};

// The jars directory RealKafka would use for `jars_dir` ("" = the default);
// FAILED_PRECONDITION naming where it looked when there are no jars.
absl::StatusOr<std::string> FindKafkaJars(const std::string& jars_dir = "");

class RealKafka {
 public:
  static absl::StatusOr<std::unique_ptr<RealKafka>> Start(RealKafkaOptions options);
  ~RealKafka();  // SIGKILLs the broker if it still runs.
  RealKafka(const RealKafka&) = delete;
  RealKafka& operator=(const RealKafka&) = delete;

  const std::string& bootstrap_servers() const { return bootstrap_; }
  // "127.0.0.1:PORT" of the security listeners ("" when not enabled).
  std::string sasl_plaintext_bootstrap_servers() const { return Address(sasl_plaintext_port_); }
  std::string ssl_bootstrap_servers() const { return Address(ssl_port_); }
  std::string sasl_ssl_bootstrap_servers() const { return Address(sasl_ssl_port_); }
  // The PEM CA certificate TLS clients trust ("" without a TLS listener).
  std::string ca_file() const {
    return options_.ssl || options_.sasl_ssl ? options_.dir + "/tls/ca.pem" : "";
  }
  // The SSL listener's client: a certificate for CN=sluice-client signed by
  // the CA, its PEM key encrypted with the password in
  // client_key_password_file(), and the same key in a certificate that
  // expired in 2020 ("" without a TLS listener).
  std::string client_cert_file() const { return TlsFile("client.pem"); }
  std::string client_key_file() const { return TlsFile("client.key"); }
  std::string client_key_password_file() const { return TlsFile("client-key.password"); }
  std::string expired_client_cert_file() const { return TlsFile("client-expired.pem"); }
  const std::string& dir() const { return options_.dir; }
  int port() const { return options_.port; }
  // The broker JVM's pid (the launcher's child), -1 if unknown.
  pid_t java_pid() const;
  bool Running();
  // The broker's log (INFO) and the launcher's stderr (warnings).
  std::string server_log() const { return options_.dir + "/server.log"; }
  std::string StderrTail() const;

  // kill -9 of the launcher and the JVM (their process group).
  absl::Status Kill();
  // Starts again on the same directory and ports (after Stop/Kill; a running
  // broker is killed first) and waits until it answers metadata.
  absl::Status Restart();
  // SIGTERM and wait for a clean exit.
  absl::Status Stop(absl::Duration grace = absl::Seconds(60));
  // SIGSTOP / SIGCONT the process group: the broker stops answering, with
  // every connection left open.
  absl::Status Pause();
  absl::Status Resume();

  // ---- admin (librdkafka's Admin API) ----
  // Creates a topic (replication factor 1) with topic configs, e.g.
  // {{"cleanup.policy", "compact"}}; waits until its metadata shows every
  // partition with a leader.
  absl::Status CreateTopic(const std::string& topic, int partitions,
                           const std::map<std::string, std::string>& configs = {});
  // Grows a live topic to `total_partitions` (CreatePartitions).
  absl::Status CreatePartitions(const std::string& topic, int total_partitions);
  // Changes topic configs (IncrementalAlterConfigs is not in librdkafka 2.0;
  // AlterConfigs replaces the topic's dynamic configs with `configs`).
  absl::Status AlterTopicConfigs(const std::string& topic,
                                 const std::map<std::string, std::string>& configs);
  // Deletes the records before `offset` (DeleteRecords): the partition's
  // earliest offset becomes `offset`, as retention would make it.
  absl::Status DeleteRecordsBefore(const std::string& topic, int32_t partition, int64_t offset);
  // Earliest and latest offsets. The latest is the last stable offset for a
  // read_committed reader (an open transaction holds it back), the high
  // watermark for read_uncommitted.
  absl::StatusOr<std::pair<int64_t, int64_t>> Watermarks(const std::string& topic,
                                                         int32_t partition,
                                                         bool read_committed = true);
  // Partitions of `topic` with a leader (0 when the topic does not exist).
  absl::StatusOr<int> PartitionCount(const std::string& topic);
  // Creates or replaces the SCRAM credential of `user` for `mechanism`
  // ("SCRAM-SHA-256" or "SCRAM-SHA-512"; AlterUserScramCredentials, 8192
  // iterations). Connections already logged in stay until they
  // re-authenticate (connections.max.reauth.ms) or reconnect.
  absl::Status SetScramCredential(const std::string& user, const std::string& mechanism,
                                  const std::string& password);

 private:
  explicit RealKafka(RealKafkaOptions options) : options_(std::move(options)) {}
  absl::Status Launch();
  absl::Status CreateTopicOnce(const std::string& topic, int partitions,
                               const std::map<std::string, std::string>& configs);
  // Until every partition of `topic` has a leader that answers ListOffsets.
  absl::Status WaitForLeaders(const std::string& topic, int partitions);

  std::string TlsFile(const char* name) const {
    return options_.ssl || options_.sasl_ssl ? absl::StrCat(options_.dir, "/tls/", name) : "";
  }
  static std::string Address(int port) {
    return port > 0 ? "127.0.0.1:" + std::to_string(port) : "";
  }

  RealKafkaOptions options_;
  int sasl_plaintext_port_ = 0;
  int ssl_port_ = 0;
  int sasl_ssl_port_ = 0;
  std::string jars_;
  std::string bootstrap_;
  std::unique_ptr<testing::Subprocess> process_;
  int starts_ = 0;
};

}  // namespace sluice::kafka

#endif  // SLUICE_TOOLS_KAFKA_REAL_KAFKA_H_
