// sluicectl: the admin CLI of sluice (tools/cli/commands.h).
//
//   sluicectl --supervisor=127.0.0.1:7070 submit wiki.json
//   sluicectl status wiki
//   sluicectl --json segments wiki
//   sluicectl --auth_token_file=admin.token submit wiki.json
//   sluicectl submit --druid wikipedia-kafka-supervisor.json
//   sluicectl get --druid wikipedia
//   sluicectl reset-offsets wiki --to_time=2026-12-06T00:00:00Z
//   sluicectl verify wiki --deep_storage=s3://bucket/deep --s3_endpoint=http://minio:9000
#include <grpcpp/grpcpp.h>

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/auth/grpc_auth.h"
#include "common/kafka/property_policy.h"
#include "common/open_deep_storage.h"
#include "common/tls/credentials.h"
#include "gflags/gflags.h"
#include "sluice/v1/supervisor_service.grpc.pb.h"
#include "tools/cli/commands.h"

DEFINE_string(supervisor, "",
              "host:port of the supervisor's gRPC service (default: $SLUICE_SUPERVISOR, "
              "else 127.0.0.1:7070)");
DEFINE_bool(json, false, "Print responses as JSON instead of tables.");
DEFINE_string(timeout, "30s", "Deadline of each RPC (e.g. 10s, 2m).");
DEFINE_string(tls_ca, "", "PEM CA bundle to verify the supervisor's certificate (enables TLS).");
DEFINE_string(tls_cert, "", "PEM client certificate chain, for mutual TLS.");
DEFINE_string(tls_key, "", "PEM private key of --tls_cert.");
DEFINE_string(auth_token_file, "",
              "file holding the bearer token to present (default: $SLUICE_AUTH_TOKEN_FILE; "
              "none when unset)");
DEFINE_bool(include_unused, false, "segments: also list unused (dropped) segments.");
DEFINE_int32(limit, 0, "segments: at most this many (0: the supervisor's default).");
DEFINE_string(interval, "", "segments: only those overlapping START/END (ISO-8601 instants).");
DEFINE_bool(include_finished, false, "tasks: include finished tasks.");
DEFINE_string(states, "", "tasks: only these states, comma-separated (e.g. READING,PAUSED).");
DEFINE_bool(druid, false,
            "submit: the file is a Druid Kafka supervisor spec; get: print the spec as one.");
DEFINE_bool(allow_unsupported, false,
            "submit --druid: ignore the Druid fields sluice does not support (a warning each) "
            "instead of refusing the spec.");
DEFINE_string(loader, "sluicectl", "mark-loaded: the name of the confirming loader.");
DEFINE_string(bootstrap, "",
              "verify, reset-offsets --to_time: Kafka bootstrap servers (default: the spec's bootstrap.servers).");
DEFINE_string(kafka_cluster, "kafka",
              "verify, reset-offsets --to_time: kind of Kafka cluster for the consumer settings: kafka, or dev "
              "(sluice-devbroker).");
DEFINE_string(to_time, "",
              "reset-offsets: reset every partition to its first record at or after this time "
              "(ISO-8601, e.g. 2026-12-06T00:00:00Z, or epoch ms), looked up in Kafka; shown "
              "and confirmed first.");
DEFINE_bool(yes, false, "reset-offsets --to_time: apply without asking for confirmation.");
DEFINE_int64(expect_records, -1,
             "verify: records produced to the topic, which must all be in the committed ranges "
             "(-1: not checked).");
DEFINE_string(deep_storage, "",
              "verify: the deep storage of s3:// segments, s3://BUCKET/PREFIX (file:// segments "
              "are read in place). Credentials: AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY/"
              "AWS_SESSION_TOKEN or AWS_SHARED_CREDENTIALS_FILE with AWS_PROFILE.");
DEFINE_string(s3_endpoint, "", "verify: S3 API endpoint, http(s)://host[:port] (default: AWS's)");
DEFINE_string(s3_region, "us-east-1", "verify: S3 region");
DEFINE_bool(s3_path_style, false, "verify: address buckets as <endpoint>/<bucket>");
DEFINE_string(kafka_files_dir, "",
              "verify, reset-offsets --to_time: the directory the spec's ${file:} secret references and key/certificate "
              "files may name (the workers' --kafka_files_dir). With it or "
              "--kafka_secret_destinations_file the spec's secret references are resolved, so "
              "the audit logs in to Kafka as the datasource does.");
DEFINE_string(kafka_secret_destinations_file, "",
              "verify, reset-offsets --to_time: where each secret reference may be sent (the workers' "
              "--kafka_secret_destinations_file).");
DEFINE_string(kafka_secret_env_prefix, "SLUICE_SECRET_",
              "verify, reset-offsets --to_time: ${env:} references must name a variable with this prefix.");

namespace {

int Run(int argc, char** argv) {
  using sluice::sluicectl::kExitUsage;
  gflags::SetUsageMessage(sluice::sluicectl::Usage());
  gflags::ParseCommandLineFlags(&argc, &argv, /*remove_flags=*/true);
  const std::vector<std::string> args(argv + 1, argv + argc);

  sluice::sluicectl::CliOptions options;
  options.json = FLAGS_json;
  if (!absl::ParseDuration(FLAGS_timeout, &options.timeout) ||
      options.timeout <= absl::ZeroDuration()) {
    std::cerr << "sluicectl: --timeout=" << FLAGS_timeout
              << " is not a positive duration (e.g. 10s)\n";
    return kExitUsage;
  }
  options.include_unused = FLAGS_include_unused;
  options.limit = FLAGS_limit;
  options.interval = FLAGS_interval;
  options.include_finished = FLAGS_include_finished;
  options.states = FLAGS_states;
  options.loader = FLAGS_loader;
  options.druid = FLAGS_druid;
  options.allow_unsupported = FLAGS_allow_unsupported;
  options.bootstrap = FLAGS_bootstrap;
  options.kafka_cluster = FLAGS_kafka_cluster;
  options.expect_records = FLAGS_expect_records;
  options.to_time = FLAGS_to_time;
  options.yes = FLAGS_yes;
  // The confirmation is a "y" line on stdin (end of input: not confirmed).
  options.confirm_in = &std::cin;
  if (!FLAGS_kafka_files_dir.empty() || !FLAGS_kafka_secret_destinations_file.empty()) {
    sluice::kafka::PropertyPolicyOptions policy;
    policy.files_dir = FLAGS_kafka_files_dir;
    policy.secret_env_prefix = FLAGS_kafka_secret_env_prefix;
    if (!FLAGS_kafka_secret_destinations_file.empty()) {
      auto destinations =
          sluice::kafka::SecretDestinations::Load(FLAGS_kafka_secret_destinations_file);
      if (!destinations.ok()) {
        std::cerr << "sluicectl: --kafka_secret_destinations_file: "
                  << destinations.status().message() << "\n";
        return kExitUsage;
      }
      policy.secret_destinations =
          std::make_shared<const sluice::kafka::SecretDestinations>(*std::move(destinations));
    }
    options.kafka_secret_policy = std::move(policy);
  }
  std::unique_ptr<sluice::DeepStorage> deep_storage;
  std::string scratch_dir;
  if (!FLAGS_deep_storage.empty()) {
    sluice::DeepStorageOptions storage_options;
    storage_options.s3.endpoint = FLAGS_s3_endpoint;
    storage_options.s3.region = FLAGS_s3_region;
    storage_options.s3.path_style = FLAGS_s3_path_style;
    auto opened = sluice::OpenDeepStorage(FLAGS_deep_storage, storage_options);
    if (!opened.ok()) {
      std::cerr << "sluicectl: --deep_storage: " << opened.status().message() << "\n";
      return kExitUsage;
    }
    deep_storage = *std::move(opened);
    const char* tmp = getenv("TMPDIR");
    std::string tmpl = absl::StrCat(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp",
                                    "/sluicectl-verify-XXXXXX");
    if (mkdtemp(tmpl.data()) == nullptr) {
      std::cerr << "sluicectl: cannot create a scratch directory for downloads: "
                << strerror(errno) << "\n";
      return kExitUsage;
    }
    scratch_dir = tmpl;
    options.deep_storage = deep_storage.get();
    options.scratch_dir = scratch_dir;
  }

  std::string target = FLAGS_supervisor;
  if (target.empty()) {
    const char* env = getenv("SLUICE_SUPERVISOR");
    target = env != nullptr && *env != '\0' ? env : "127.0.0.1:7070";
  }
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
  sluice::tls::TlsOptions tls{FLAGS_tls_cert, FLAGS_tls_key, FLAGS_tls_ca};
  if (tls.enabled()) {
    auto tls_credentials = sluice::tls::MakeChannelCredentials(tls);
    if (!tls_credentials.ok()) {
      std::cerr << "sluicectl: " << tls_credentials.status().message() << "\n";
      return kExitUsage;
    }
    credentials = *tls_credentials;
  }
  // Commit logs and segment lists of big datasources exceed gRPC's default
  // 4 MiB limit on received messages.
  grpc::ChannelArguments channel_args;
  channel_args.SetMaxReceiveMessageSize(-1);
  std::string token_file = FLAGS_auth_token_file;
  if (token_file.empty()) {
    const char* env = getenv("SLUICE_AUTH_TOKEN_FILE");
    if (env != nullptr) token_file = env;
  }
  sluice::auth::ClientAuth auth;
  if (!token_file.empty()) {
    auto token = sluice::auth::ReadTokenFile(token_file);
    if (!token.ok()) {
      std::cerr << "sluicectl: --auth_token_file: " << token.status().message() << "\n";
      return kExitUsage;
    }
    auth.bearer_token = *std::move(token);
  }
  auto channel = sluice::auth::NewChannel(target, credentials, auth, channel_args);
  auto stub = sluice::v1::SupervisorService::NewStub(channel);
  const int code = sluice::sluicectl::RunCommand(args, options, *stub, std::cout, std::cerr);
  if (!scratch_dir.empty()) ::rmdir(scratch_dir.c_str());
  return code;
}

}  // namespace

int main(int argc, char** argv) { return Run(argc, argv); }
