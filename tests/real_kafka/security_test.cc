// Secured ingestion on a real Apache Kafka broker: one scenario per
// security mode sluice supports (SCRAM-SHA-512 and SCRAM-SHA-256 over
// SASL_SSL, PLAIN over SASL_PLAINTEXT, a client certificate over SSL,
// OAUTHBEARER with unsecured JWS tokens over SASL_SSL), each with its
// secrets as ${file:} or ${env:} references, replicas 2, ending with the
// exactly-once audit and `sluicectl verify` PASS, both reading Kafka
// through the same listener, logged in the same way. Then bad credentials:
// a wrong SCRAM password, an expired client certificate, a mechanism the
// listener does not offer, and a password rotated on the broker under
// running tasks: each shows in the datasource's status, `sluicectl status`,
// the tasks' status (while they run) and a metric within kStatusBound,
// naming the mechanism and never a secret; once fixed, everything is
// ingested, nothing lost or skipped (the audit).
#include <stdlib.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "common/kafka/property_policy.h"
#include "common/metrics/http_get.h"
#include "tests/fault/scenario_test_util.h"
#include "tests/real_kafka/real_kafka_scenario.h"
#include "tests/testing/subprocess.h"
#include "tools/cluster/free_ports.h"
#include "tools/cluster/process_cluster.h"

namespace sluice::real_kafka {
namespace {

using fault::FaultScenario;
using fault::ScenarioOptions;

// How long a bad credential may take to show in the status (the
// supervisor's and the tasks'); enforced by every bad-credential test.
constexpr absl::Duration kStatusBound = absl::Seconds(30);
constexpr int64_t kRecordsPerMode = 3000;
constexpr char kPasswordEnv[] = "SLUICE_SECRET_KAFKA_PASSWORD";
constexpr char kKeyPasswordEnv[] = "SLUICE_SECRET_CLIENT_KEY_PASSWORD";

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Replaces `path` at once (a reader never sees half a secret).
void WriteSecretFile(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  std::ofstream(tmp, std::ios::binary | std::ios::trunc) << text << "\n";
  ASSERT_EQ(std::rename(tmp.c_str(), path.c_str()), 0) << path;
}

// The operator's side, made once per binary: --kafka_files_dir with the CA,
// the client certificates and key, and the secret files; the secret
// destinations binding every reference to the broker's secured listeners.
struct Operator {
  std::string files_dir;
  std::string destinations;
  std::string key_password;
  kafka::PropertyPolicyOptions policy;

  std::string File(const std::string& name) const { return files_dir + "/" + name; }
  std::string FileRef(const std::string& name) const {
    return absl::StrCat("${file:", File(name), "}");
  }
};

// Secret files the tests use (each a ${file:} reference bound below).
constexpr const char* kSecretFiles[] = {"sasl-password", "scram-password", "rotating-password"};

const Operator& TheOperator() {
  static const Operator* op = [] {
    auto* o = new Operator;
    kafka::RealKafka* kafka = RealKafkaEnv();
    if (kafka == nullptr) return o;
    o->files_dir = testing::TestTmpDir() + "/kafka-files";
    std::filesystem::create_directories(o->files_dir);
    for (const auto& [from, to] :
         std::vector<std::pair<std::string, std::string>>{
             {kafka->ca_file(), "ca.pem"},
             {kafka->client_cert_file(), "client.pem"},
             {kafka->client_key_file(), "client.key"},
             {kafka->expired_client_cert_file(), "client-expired.pem"}}) {
      std::filesystem::copy_file(from, o->File(to),
                                 std::filesystem::copy_options::overwrite_existing);
    }
    o->key_password =
        std::string(absl::StripTrailingAsciiWhitespace(ReadAll(kafka->client_key_password_file())));
    setenv(kPasswordEnv, SaslPassword().c_str(), 1);
    setenv(kKeyPasswordEnv, o->key_password.c_str(), 1);
    std::ofstream(o->File("sasl-password")) << SaslPassword() << "\n";
    const std::string servers =
        absl::StrCat(kafka->sasl_plaintext_bootstrap_servers(), ",", kafka->ssl_bootstrap_servers(),
                     ",", kafka->sasl_ssl_bootstrap_servers());
    o->destinations = testing::TestTmpDir() + "/secret-destinations";
    std::ofstream out(o->destinations);
    out << "${env:" << kPasswordEnv << "} " << servers << "\n"
        << "${env:" << kKeyPasswordEnv << "} " << servers << "\n";
    for (const char* name : kSecretFiles) out << o->FileRef(name) << " " << servers << "\n";
    out.close();
    o->policy.files_dir = o->files_dir;
    absl::StatusOr<kafka::SecretDestinations> loaded =
        kafka::SecretDestinations::Load(o->destinations);
    EXPECT_TRUE(loaded.ok()) << loaded.status();
    if (loaded.ok()) {
      o->policy.secret_destinations =
          std::make_shared<const kafka::SecretDestinations>(*std::move(loaded));
    }
    return o;
  }();
  return *op;
}

// Metrics endpoints of a scenario's processes (port by process name).
using MetricsPorts = std::map<std::string, int>;

// A scenario reading through `bootstrap` with `properties` (the listener's
// security settings, secrets as references): 2 workers, one group with 2
// replicas, the operator's files and destinations on every process, the
// audit logged in the same way. With `metrics`, each process serves its
// metrics on a port of its own.
ScenarioOptions SecuredOptions(uint64_t seed, const std::string& bootstrap,
                               std::map<std::string, std::string> properties,
                               MetricsPorts* metrics = nullptr) {
  const Operator& op = TheOperator();
  ScenarioOptions options;
  options.seed = seed;
  options.workers = 2;
  options.partitions = 2;
  options.task_count = 1;
  options.replicas = 2;
  options.spec_bootstrap_servers = bootstrap;
  options.spec_only_consumer_properties = std::move(properties);
  options.audit_secret_policy = op.policy;
  const std::vector<std::string> flags = {"--kafka_files_dir=" + op.files_dir,
                                          "--kafka_secret_destinations_file=" + op.destinations};
  options.extra_flags["supervisor"] = flags;
  for (int i = 0; i < options.workers; ++i) options.extra_flags[cluster::WorkerName(i)] = flags;
  if (metrics != nullptr) {
    absl::StatusOr<std::vector<int>> ports = cluster::PickStablePorts(1 + options.workers);
    EXPECT_TRUE(ports.ok()) << ports.status();
    if (ports.ok()) {
      std::vector<std::string> names = {"supervisor"};
      for (int i = 0; i < options.workers; ++i) names.push_back(cluster::WorkerName(i));
      for (size_t i = 0; i < names.size(); ++i) {
        (*metrics)[names[i]] = (*ports)[i];
        options.extra_flags[names[i]].push_back(
            absl::StrCat("--metrics_listen=127.0.0.1:", (*ports)[i]));
      }
    }
  }
  return options;
}

// sluicectl with `args` against the scenario's supervisor as its admin;
// stdout, and the exit code in *code.
std::string Sluicectl(FaultScenario& s, std::vector<std::string> args, int* code) {
  absl::StatusOr<std::string> binary = testing::FindRunfile("tools/sluicectl");
  EXPECT_TRUE(binary.ok()) << binary.status();
  if (!binary.ok()) return "";
  static int runs = 0;
  testing::SubprocessOptions o;
  o.binary = *binary;
  o.args = {"--supervisor=" + s.cluster().supervisor_address(),
            "--auth_token_file=" + s.cluster().token_file("admin"), "--timeout=60s"};
  o.args.insert(o.args.end(), args.begin(), args.end());
  o.name = absl::StrCat("sluicectl-", ++runs);
  o.stdout_path = absl::StrCat(testing::TestTmpDir(), "/", o.name, ".stdout");
  absl::StatusOr<std::unique_ptr<testing::Subprocess>> p = testing::Subprocess::Start(o);
  EXPECT_TRUE(p.ok()) << p.status();
  if (!p.ok()) return "";
  absl::StatusOr<testing::ExitStatus> exit = (*p)->Wait(absl::Minutes(3));
  EXPECT_TRUE(exit.ok()) << exit.status();
  *code = exit.ok() && exit->exited ? exit->code : -1;
  return ReadAll(o.stdout_path) + (*p)->StderrTail();
}

// `sluicectl verify wiki` with the operator's files and destinations (the
// spec's references resolved as the workers do): PASS, every record
// produced committed.
void ExpectVerifyPasses(FaultScenario& s) {
  const Operator& op = TheOperator();
  int code = -1;
  const std::string out =
      Sluicectl(s,
                {"--kafka_files_dir=" + op.files_dir,
                 "--kafka_secret_destinations_file=" + op.destinations,
                 absl::StrCat("--expect_records=", s.produced().records), "verify",
                 fault::kDatasource},
                &code);
  std::cerr << "[real_kafka] " << s.options().name << ": sluicectl verify: "
            << out.substr(0, out.find('\n')) << std::endl;
  EXPECT_EQ(code, 0) << out;
  EXPECT_TRUE(absl::StrContains(out, "PASS")) << out;
}

// Ingests kRecordsPerMode records through the mode's listener; audited.
void IngestAndVerify(ScenarioOptions options) {
  const absl::Time start = absl::Now();
  std::unique_ptr<FaultScenario> s = StartRealKafkaScenario(std::move(options));
  ASSERT_NE(s, nullptr);
  s->StartProducing(kRecordsPerMode, absl::Seconds(3));
  ASSERT_OK(s->Finish());
  ExpectVerifyPasses(*s);
  std::cerr << "[real_kafka] " << s->options().name << ": ingested and audited in "
            << absl::FormatDuration(absl::Now() - start) << std::endl;
}

std::map<std::string, std::string> Sasl(const std::string& protocol, const std::string& mechanism,
                                        const std::string& password_ref) {
  std::map<std::string, std::string> p = {{"security.protocol", protocol},
                                          {"sasl.mechanism", mechanism},
                                          {"sasl.username", kSaslUser},
                                          {"sasl.password", password_ref}};
  if (protocol == "SASL_SSL") p["ssl.ca.location"] = TheOperator().File("ca.pem");
  return p;
}

std::map<std::string, std::string> ClientCertificate(const std::string& certificate) {
  const Operator& op = TheOperator();
  return {{"security.protocol", "SSL"},
          {"ssl.ca.location", op.File("ca.pem")},
          {"ssl.certificate.location", op.File(certificate)},
          {"ssl.key.location", op.File("client.key")},
          {"ssl.key.password", absl::StrCat("${env:", kKeyPasswordEnv, "}")}};
}

// ---- one scenario per mode ----

TEST(RealKafkaSecurity, ScramSha512OverSaslSsl) {
  kafka::RealKafka* kafka = RealKafkaEnv();
  ASSERT_NE(kafka, nullptr);
  IngestAndVerify(SecuredOptions(
      201, kafka->sasl_ssl_bootstrap_servers(),
      Sasl("SASL_SSL", "SCRAM-SHA-512", TheOperator().FileRef("sasl-password"))));
}

TEST(RealKafkaSecurity, ScramSha256OverSaslSsl) {
  kafka::RealKafka* kafka = RealKafkaEnv();
  ASSERT_NE(kafka, nullptr);
  IngestAndVerify(SecuredOptions(202, kafka->sasl_ssl_bootstrap_servers(),
                                 Sasl("SASL_SSL", "SCRAM-SHA-256",
                                      absl::StrCat("${env:", kPasswordEnv, "}"))));
}

TEST(RealKafkaSecurity, PlainOverSaslPlaintext) {
  kafka::RealKafka* kafka = RealKafkaEnv();
  ASSERT_NE(kafka, nullptr);
  IngestAndVerify(SecuredOptions(
      203, kafka->sasl_plaintext_bootstrap_servers(),
      Sasl("SASL_PLAINTEXT", "PLAIN", TheOperator().FileRef("sasl-password"))));
}

// Mutual TLS: the client's certificate and key from --kafka_files_dir, the
// key's password an ${env:} reference.
TEST(RealKafkaSecurity, ClientCertificateOverSsl) {
  kafka::RealKafka* kafka = RealKafkaEnv();
  ASSERT_NE(kafka, nullptr);
  IngestAndVerify(
      SecuredOptions(204, kafka->ssl_bootstrap_servers(), ClientCertificate("client.pem")));
}

// OAUTHBEARER with unsecured JWS tokens librdkafka makes itself
// (sasl.oauthbearer.config "principal=..."): no token endpoint is contacted.
TEST(RealKafkaSecurity, OauthbearerUnsecuredJwsOverSaslSsl) {
  kafka::RealKafka* kafka = RealKafkaEnv();
  ASSERT_NE(kafka, nullptr);
  IngestAndVerify(SecuredOptions(
      205, kafka->sasl_ssl_bootstrap_servers(),
      {{"security.protocol", "SASL_SSL"},
       {"ssl.ca.location", TheOperator().File("ca.pem")},
       {"sasl.mechanism", "OAUTHBEARER"},
       {"enable.sasl.oauthbearer.unsecure.jwt", "true"},
       {"sasl.oauthbearer.config", absl::StrCat("principal=", kSaslUser)}}));
}

// ---- bad credentials ----

// Every file under `dir`, concatenated (the processes' logs).
std::string ReadTree(const std::string& dir) {
  std::string all;
  std::error_code ec;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir, ec)) {
    if (entry.is_regular_file()) all += ReadAll(entry.path().string());
  }
  return all;
}

std::string Metrics(FaultScenario& s, int port) {
  const std::string token(
      absl::StripTrailingAsciiWhitespace(ReadAll(s.cluster().token_file("admin"))));
  absl::StatusOr<metrics::HttpGetResponse> got = metrics::HttpGet(port, "/metrics", token);
  EXPECT_TRUE(got.ok()) << got.status();
  return got.ok() ? got->body : "";
}

// The counter `name` of `mechanism` in a metrics text (0 when absent).
double AuthFailures(const std::string& text, const std::string& name,
                    const std::string& mechanism) {
  const std::string series = absl::StrCat(name, "{datasource=\"", fault::kDatasource,
                                          "\",mechanism=\"", mechanism, "\"} ");
  const size_t at = text.find(series);
  if (at == std::string::npos) return 0;
  return std::strtod(text.c_str() + at + series.size(), nullptr);
}

// Waits (at most kStatusBound from `since`) until the datasource's status
// says `detailed_state` and a recent error names `how` ("Kafka
// authentication failed (<how>)"), and, when `tasks_too`, some task of the
// datasource says it in its error. Returns that error.
std::string ExpectAuthFailureShown(FaultScenario& s, const std::string& how,
                                   const std::string& detailed_state, bool tasks_too,
                                   absl::Time since) {
  const std::string wanted = absl::StrCat("Kafka authentication failed (", how, ")");
  std::string error;
  std::string task_error;
  const absl::Status shown = s.WaitUntil(
      absl::StrCat("\"", wanted, "\" in the status"), kStatusBound - (absl::Now() - since),
      [&]() -> absl::StatusOr<bool> {
        absl::StatusOr<v1::SupervisorStatus> st = s.Status();
        if (!st.ok()) return st.status();
        if (st->detailed_state() != detailed_state) return false;
        error.clear();
        for (const v1::ErrorEvent& e : st->recent_errors()) {
          if (absl::StrContains(e.message(), wanted)) error = e.message();
        }
        if (error.empty()) return false;
        if (!tasks_too) return true;
        absl::StatusOr<v1::SupervisorServiceListTasksResponse> tasks = s.Tasks();
        if (!tasks.ok()) return tasks.status();
        for (const v1::SupervisorTaskRecord& t : tasks->tasks()) {
          if (absl::StrContains(t.error(), wanted)) {
            task_error = t.error();
            return true;
          }
        }
        return false;
      });
  EXPECT_TRUE(shown.ok()) << shown;
  const absl::Duration took = absl::Now() - since;
  std::cerr << "[real_kafka] " << s.options().name << ": shown after "
            << absl::FormatDuration(took) << " (bound " << absl::FormatDuration(kStatusBound)
            << "): " << error << (task_error.empty() ? "" : "\n  task: ") << task_error
            << std::endl;
  EXPECT_LE(took, kStatusBound);
  int code = -1;
  const std::string status = Sluicectl(s, {"status", fault::kDatasource}, &code);
  EXPECT_EQ(code, 0) << status;
  EXPECT_TRUE(absl::StrContains(status, wanted)) << status;
  EXPECT_TRUE(absl::StrContains(status, detailed_state)) << status;
  return error + "\n" + task_error + "\n" + status;
}

// None of `secrets` in what an operator can read: the status (shown
// through sluicectl, `shown`), every process log, the metrics.
void ExpectNoSecret(FaultScenario& s, const std::string& shown, const MetricsPorts& ports,
                    const std::vector<std::string>& secrets) {
  std::string everything = shown + ReadTree(s.root_dir() + "/logs");
  for (const auto& [name, port] : ports) everything += Metrics(s, port);
  absl::StatusOr<v1::SupervisorStatus> st = s.Status();
  if (st.ok()) everything += st->DebugString();
  ASSERT_GT(everything.size(), 1000u);
  for (const std::string& secret : secrets) {
    EXPECT_FALSE(absl::StrContains(everything, secret)) << "a secret is shown or logged";
  }
}

// A wrong SCRAM-SHA-512 password in a ${file:} secret: the datasource
// cannot connect and says why; the file fixed, it connects at its next
// attempt (the reference is read again) and ingests everything.
TEST(RealKafkaSecurity, WrongScramPasswordShownThenFixedInItsFile) {
  kafka::RealKafka* kafka = RealKafkaEnv();
  ASSERT_NE(kafka, nullptr);
  const Operator& op = TheOperator();
  const std::string wrong = "wrong-pw-7f3a9c21";
  WriteSecretFile(op.File("scram-password"), wrong);
  MetricsPorts ports;
  std::unique_ptr<FaultScenario> s = StartRealKafkaScenario(
      SecuredOptions(211, kafka->sasl_ssl_bootstrap_servers(),
                     Sasl("SASL_SSL", "SCRAM-SHA-512", op.FileRef("scram-password")), &ports));
  ASSERT_NE(s, nullptr);
  const absl::Time start = absl::Now();
  ASSERT_OK(s->Produce(2000));
  const std::string shown = ExpectAuthFailureShown(*s, "SASL SCRAM-SHA-512 over SASL_SSL",
                                                   "UNABLE_TO_CONNECT_TO_STREAM", false, start);
  EXPECT_GT(AuthFailures(Metrics(*s, ports.at("supervisor")),
                         "sluice_supervisor_kafka_auth_failures_total", "SCRAM-SHA-512"),
            0);
  ExpectNoSecret(*s, shown, ports, {wrong, SaslPassword()});
  absl::StatusOr<v1::GetCommitLogResponse> none = s->CommitLog();
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(none->sequences_size(), 0);

  WriteSecretFile(op.File("scram-password"), SaslPassword());
  s->StartProducing(2000, absl::Seconds(3));
  ASSERT_OK(s->Finish());
  ExpectVerifyPasses(*s);
}

// An expired client certificate: the broker refuses the TLS handshake; the
// status names the mechanism. Replaced by a valid one (a new spec), the
// datasource ingests everything.
TEST(RealKafkaSecurity, ExpiredClientCertificateShownThenReplaced) {
  kafka::RealKafka* kafka = RealKafkaEnv();
  ASSERT_NE(kafka, nullptr);
  MetricsPorts ports;
  ScenarioOptions options = SecuredOptions(212, kafka->ssl_bootstrap_servers(),
                                           ClientCertificate("client-expired.pem"), &ports);
  // The scenario's audit would read with the expired certificate of the
  // first spec: it reads through the plain listener, `sluicectl verify`
  // (below) with the current spec's certificate.
  options.audit_secret_policy.reset();
  std::unique_ptr<FaultScenario> s = StartRealKafkaScenario(std::move(options));
  ASSERT_NE(s, nullptr);
  const absl::Time start = absl::Now();
  ASSERT_OK(s->Produce(2000));
  const std::string shown = ExpectAuthFailureShown(*s, "TLS client certificate over SSL",
                                                   "UNABLE_TO_CONNECT_TO_STREAM", false, start);
  EXPECT_GT(AuthFailures(Metrics(*s, ports.at("supervisor")),
                         "sluice_supervisor_kafka_auth_failures_total", "SSL"),
            0);
  ExpectNoSecret(*s, shown, ports, {TheOperator().key_password});

  ASSERT_OK(s->ChangeSpec([](v1::SupervisorSpec* spec) {
    (*spec->mutable_io_config()->mutable_consumer_properties())["ssl.certificate.location"] =
        TheOperator().File("client.pem");
  }));
  s->StartProducing(2000, absl::Seconds(3));
  ASSERT_OK(s->Finish());
  ExpectVerifyPasses(*s);
}

// A mechanism the listener does not offer (OAUTHBEARER on SASL_PLAINTEXT):
// the status names it; no record is read.
TEST(RealKafkaSecurity, MechanismTheListenerDoesNotOfferShown) {
  kafka::RealKafka* kafka = RealKafkaEnv();
  ASSERT_NE(kafka, nullptr);
  MetricsPorts ports;
  std::unique_ptr<FaultScenario> s = StartRealKafkaScenario(
      SecuredOptions(213, kafka->sasl_plaintext_bootstrap_servers(),
                     {{"security.protocol", "SASL_PLAINTEXT"},
                      {"sasl.mechanism", "OAUTHBEARER"},
                      {"enable.sasl.oauthbearer.unsecure.jwt", "true"},
                      {"sasl.oauthbearer.config", absl::StrCat("principal=", kSaslUser)}},
                     &ports));
  ASSERT_NE(s, nullptr);
  const absl::Time start = absl::Now();
  const std::string shown = ExpectAuthFailureShown(*s, "SASL OAUTHBEARER over SASL_PLAINTEXT",
                                                   "UNABLE_TO_CONNECT_TO_STREAM", false, start);
  EXPECT_TRUE(absl::StrContains(shown, "nsupported SASL mechanism")) << shown;
  EXPECT_GT(AuthFailures(Metrics(*s, ports.at("supervisor")),
                         "sluice_supervisor_kafka_auth_failures_total", "OAUTHBEARER"),
            0);
}

// The password rotated under running tasks: the broker's SCRAM credential
// changes (AlterUserScramCredentials) while the ${file:} secret still holds
// the old one. Live connections fail when they re-authenticate
// (kScramSha256ReauthMs); the supervisor's and the tasks' status say so, the
// task metric counts it. Then the file gets the new password: the supervisor
// and the running tasks read it at their next login and ingest on from
// their committed offsets, nothing lost or skipped.
TEST(RealKafkaSecurity, PasswordRotatedUnderRunningTasks) {
  kafka::RealKafka* kafka = RealKafkaEnv();
  ASSERT_NE(kafka, nullptr);
  const Operator& op = TheOperator();
  const std::string user = "sluice-rotating";
  const std::string before = "rot-before-5d1e88a0";
  const std::string after = "rot-after-c02b6f97";
  ASSERT_OK(kafka->SetScramCredential(user, "SCRAM-SHA-256", before));
  WriteSecretFile(op.File("rotating-password"), before);
  std::map<std::string, std::string> props =
      Sasl("SASL_PLAINTEXT", "SCRAM-SHA-256", op.FileRef("rotating-password"));
  props["sasl.username"] = user;
  MetricsPorts ports;
  std::unique_ptr<FaultScenario> s = StartRealKafkaScenario(
      SecuredOptions(214, kafka->sasl_plaintext_bootstrap_servers(), props, &ports));
  ASSERT_NE(s, nullptr);
  ASSERT_OK(s->Produce(2000));
  ASSERT_OK(s->WaitUntilAllCommitted());

  ASSERT_OK(kafka->SetScramCredential(user, "SCRAM-SHA-256", after));
  const absl::Time rotated = absl::Now();
  ASSERT_OK(s->Produce(1000));  // waits in Kafka meanwhile
  // Connections re-authenticate within kScramSha256ReauthMs; the bound
  // counts from the rotation.
  const std::string shown = ExpectAuthFailureShown(*s, "SASL SCRAM-SHA-256 over SASL_PLAINTEXT",
                                                   "LOST_CONTACT_WITH_STREAM", true, rotated);
  double task_failures = 0;
  for (const auto& [name, port] : ports) {
    task_failures += AuthFailures(Metrics(*s, port), "sluice_task_kafka_auth_failures_total",
                                  "SCRAM-SHA-256");
  }
  EXPECT_GT(task_failures, 0);
  ExpectNoSecret(*s, shown, ports, {before, after});

  WriteSecretFile(op.File("rotating-password"), after);
  s->StartProducing(1000, absl::Seconds(2));
  ASSERT_OK(s->Finish());
  ExpectVerifyPasses(*s);
  // The same tasks read on: no task was replaced to get the new password.
  absl::StatusOr<v1::SupervisorServiceListTasksResponse> tasks = s->Tasks(true);
  ASSERT_TRUE(tasks.ok()) << tasks.status();
  for (const v1::SupervisorTaskRecord& t : tasks->tasks()) {
    EXPECT_NE(t.state(), v1::TASK_STATE_FAILED) << t.task_id() << ": " << t.error();
  }
}

}  // namespace
}  // namespace sluice::real_kafka
