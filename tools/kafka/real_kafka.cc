#include "tools/kafka/real_kafka.h"

#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <functional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "common/kafka/config.h"
#include "common/kafka/errors.h"
#include "common/kafka/handles.h"
#include "common/status_macros.h"
#include "tools/cluster/free_ports.h"

namespace sluice::kafka {
namespace {

constexpr absl::Duration kAdminTimeout = absl::Seconds(30);

bool HasKafkaJar(const std::string& dir) {
  struct stat st;
  return stat(absl::StrCat(dir, "/kafka_2.13-", kKafkaVersion, ".jar").c_str(), &st) == 0;
}

std::string UserHome() {
  if (const passwd* pw = getpwuid(getuid()); pw != nullptr && pw->pw_dir != nullptr) {
    return pw->pw_dir;
  }
  const char* home = getenv("HOME");
  return home != nullptr ? home : "";
}

// An admin client handle on `bootstrap`.
absl::StatusOr<HandlePtr> AdminHandle(const std::string& bootstrap) {
  SLUICE_ASSIGN_OR_RETURN(ConfPtr conf,
                          BuildConf({{"bootstrap.servers", bootstrap}, {"allow.auto.create.topics", "false"}},
                                    "real-kafka-admin"));
  return NewHandle(RD_KAFKA_PRODUCER, std::move(conf));
}

// Runs one admin request and returns its result event (owned by the caller).
using EventPtr = std::unique_ptr<rd_kafka_event_t, void (*)(rd_kafka_event_t*)>;
absl::StatusOr<EventPtr> RunAdmin(rd_kafka_t* rk, rd_kafka_admin_op_t op,
                                  const std::function<void(rd_kafka_AdminOptions_t*,
                                                           rd_kafka_queue_t*)>& send,
                                  const std::string& what) {
  QueuePtr queue(rd_kafka_queue_new(rk));
  rd_kafka_AdminOptions_t* options = rd_kafka_AdminOptions_new(rk, op);
  char err[256];
  rd_kafka_AdminOptions_set_request_timeout(options, absl::ToInt64Milliseconds(kAdminTimeout), err,
                                            sizeof(err));
  rd_kafka_AdminOptions_set_operation_timeout(options, absl::ToInt64Milliseconds(kAdminTimeout),
                                              err, sizeof(err));
  send(options, queue.get());
  rd_kafka_AdminOptions_destroy(options);
  rd_kafka_event_t* event =
      rd_kafka_queue_poll(queue.get(), absl::ToInt64Milliseconds(kAdminTimeout) + 5000);
  if (event == nullptr) return absl::DeadlineExceededError(absl::StrCat(what, ": no answer"));
  EventPtr owned(event, rd_kafka_event_destroy);
  if (rd_kafka_event_error(event) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return KafkaErrorToStatus(rd_kafka_event_error(event), what,
                              rd_kafka_event_error_string(event));
  }
  return owned;
}

absl::Status TopicResults(const rd_kafka_topic_result_t** results, size_t n,
                          const std::string& what) {
  for (size_t i = 0; i < n; ++i) {
    if (rd_kafka_topic_result_error(results[i]) != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return KafkaErrorToStatus(rd_kafka_topic_result_error(results[i]), what,
                                rd_kafka_topic_result_error_string(results[i]));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> FindKafkaJars(const std::string& jars_dir) {
  std::vector<std::string> tried;
  if (!jars_dir.empty()) {
    tried.push_back(jars_dir);
  } else {
    if (const char* env = getenv("SLUICE_KAFKA_JARS"); env != nullptr && *env != '\0') {
      tried.push_back(env);
    } else {
      tried.push_back(absl::StrCat(UserHome(), "/.cache/sluice/kafka/", kKafkaVersion, "/lib"));
    }
  }
  for (const std::string& dir : tried) {
    if (HasKafkaJar(dir)) return dir;
  }
  return absl::FailedPreconditionError(
      absl::StrCat("no Apache Kafka ", kKafkaVersion, " jars in ", tried[0],
                   " (scripts/install_deps.sh fetches them; $SLUICE_KAFKA_JARS points elsewhere)"));
}

absl::StatusOr<std::unique_ptr<RealKafka>> RealKafka::Start(RealKafkaOptions options) {
  if (options.dir.empty()) return absl::InvalidArgumentError("RealKafka needs a dir");
  SLUICE_ASSIGN_OR_RETURN(std::string jars, FindKafkaJars(options.jars_dir));
  if (!testing::FindInPath("java").ok()) {
    return absl::FailedPreconditionError("java is not installed (scripts/install_deps.sh)");
  }
  if (options.script.empty()) {
    absl::StatusOr<std::string> script = testing::FindRunfile(kRunKafkaScript);
    options.script = script.ok() ? *script : kRunKafkaScript;
  }
  if ((options.sasl_plaintext || options.sasl_ssl) && options.sasl_users.empty()) {
    return absl::InvalidArgumentError("a SASL listener needs at least one of sasl_users");
  }
  // Picked together, so they are distinct.
  SLUICE_ASSIGN_OR_RETURN(std::vector<int> ports, cluster::PickStablePorts(5));
  if (options.port == 0) options.port = ports[0];
  if (options.controller_port == 0) options.controller_port = ports[1];
  std::unique_ptr<RealKafka> kafka(new RealKafka(std::move(options)));
  if (kafka->options_.sasl_plaintext) kafka->sasl_plaintext_port_ = ports[2];
  if (kafka->options_.ssl) kafka->ssl_port_ = ports[3];
  if (kafka->options_.sasl_ssl) kafka->sasl_ssl_port_ = ports[4];
  kafka->jars_ = std::move(jars);
  SLUICE_RETURN_IF_ERROR(kafka->Launch());
  return kafka;
}

RealKafka::~RealKafka() {
  if (process_ != nullptr && process_->Running()) (void)process_->Kill();
}

absl::Status RealKafka::Launch() {
  if (mkdir(options_.dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return absl::InternalError(absl::StrCat("mkdir ", options_.dir, ": ", strerror(errno)));
  }
  const std::string bootstrap_file = options_.dir + "/bootstrap";
  unlink(bootstrap_file.c_str());
  testing::SubprocessOptions sub;
  sub.binary = options_.script;
  sub.args = {"--dir=" + options_.dir,
              absl::StrCat("--port=", options_.port),
              absl::StrCat("--controller_port=", options_.controller_port),
              "--bootstrap_file=" + bootstrap_file,
              "--jars=" + jars_,
              "--heap=" + options_.heap,
              absl::StrCat("--ready_timeout=",
                           absl::ToInt64Seconds(options_.start_timeout))};
  for (const std::string& p : options_.properties) sub.args.push_back("--property=" + p);
  if (sasl_plaintext_port_ > 0) sub.args.push_back(absl::StrCat("--sasl_port=", sasl_plaintext_port_));
  if (ssl_port_ > 0) sub.args.push_back(absl::StrCat("--ssl_port=", ssl_port_));
  if (sasl_ssl_port_ > 0) sub.args.push_back(absl::StrCat("--sasl_ssl_port=", sasl_ssl_port_));
  for (const auto& [name, password] : options_.sasl_users) {
    sub.args.push_back(absl::StrCat("--user=", name, ":", password));
  }
  sub.env = options_.env;
  sub.name = absl::StrCat("kafka", starts_ == 0 ? "" : absl::StrCat(".restart-", starts_));
  sub.stderr_path = absl::StrCat(options_.dir, "/", sub.name, ".stderr");
  sub.stdout_path = absl::StrCat(options_.dir, "/", sub.name, ".stdout");
  ++starts_;
  process_.reset();
  SLUICE_ASSIGN_OR_RETURN(process_, testing::Subprocess::Start(sub));
  absl::StatusOr<std::string> content =
      testing::WaitForFile(bootstrap_file, options_.start_timeout + absl::Seconds(10),
                           process_.get());
  if (!content.ok()) {
    return Annotate(content.status(), absl::StrCat("starting Apache Kafka (", server_log(), ")"));
  }
  bootstrap_ = std::string(absl::StripSuffix(*content, "\n"));
  return absl::OkStatus();
}

pid_t RealKafka::java_pid() const {
  FILE* f = fopen((options_.dir + "/java.pid").c_str(), "r");
  if (f == nullptr) return -1;
  int pid = -1;
  if (fscanf(f, "%d", &pid) != 1) pid = -1;
  fclose(f);
  return pid;
}

bool RealKafka::Running() { return process_ != nullptr && process_->Running(); }

std::string RealKafka::StderrTail() const {
  return process_ != nullptr ? process_->StderrTail() : "";
}

absl::Status RealKafka::Kill() {
  if (!Running()) return absl::FailedPreconditionError("Kafka is not running");
  return process_->Kill().status();
}

absl::Status RealKafka::Restart() {
  if (Running()) SLUICE_RETURN_IF_ERROR(process_->Kill().status());
  return Launch();
}

absl::Status RealKafka::Stop(absl::Duration grace) {
  if (!Running()) return absl::FailedPreconditionError("Kafka is not running");
  SLUICE_ASSIGN_OR_RETURN(testing::ExitStatus exit, process_->Stop(grace));
  if (!exit.success()) {
    return absl::InternalError(
        absl::StrCat("Kafka did not stop cleanly: ", exit.ToString(), "\n", StderrTail()));
  }
  return absl::OkStatus();
}

absl::Status RealKafka::Pause() {
  if (!Running()) return absl::FailedPreconditionError("Kafka is not running");
  if (kill(-process_->pid(), SIGSTOP) != 0) {
    return absl::InternalError(absl::StrCat("SIGSTOP: ", strerror(errno)));
  }
  return absl::OkStatus();
}

absl::Status RealKafka::Resume() {
  if (process_ == nullptr) return absl::FailedPreconditionError("Kafka never ran");
  if (kill(-process_->pid(), SIGCONT) != 0) {
    return absl::InternalError(absl::StrCat("SIGCONT: ", strerror(errno)));
  }
  return absl::OkStatus();
}

absl::Status RealKafka::CreateTopic(const std::string& topic, int partitions,
                                    const std::map<std::string, std::string>& configs) {
  // A broker its controller fenced (it was stopped for longer than
  // broker.session.timeout.ms, 30 s in run_kafka.sh) refuses new topics with
  // INVALID_REPLICATION_FACTOR "All brokers are currently fenced" until it
  // has registered again: retry that.
  const absl::Time deadline = absl::Now() + kAdminTimeout;
  while (true) {
    absl::Status status = CreateTopicOnce(topic, partitions, configs);
    if (status.ok() || !absl::StrContains(status.message(), "fenced") ||
        absl::Now() > deadline) {
      return status;
    }
    absl::SleepFor(absl::Milliseconds(250));
  }
}

absl::Status RealKafka::CreateTopicOnce(const std::string& topic, int partitions,
                                        const std::map<std::string, std::string>& configs) {
  SLUICE_ASSIGN_OR_RETURN(HandlePtr rk, AdminHandle(bootstrap_));
  char err[256];
  rd_kafka_NewTopic_t* new_topic = rd_kafka_NewTopic_new(topic.c_str(), partitions, 1, err,
                                                         sizeof(err));
  if (new_topic == nullptr) return absl::InvalidArgumentError(err);
  for (const auto& [name, value] : configs) {
    rd_kafka_NewTopic_set_config(new_topic, name.c_str(), value.c_str());
  }
  const std::string what = absl::StrCat("CreateTopics ", topic);
  absl::StatusOr<EventPtr> event = RunAdmin(
      rk.get(), RD_KAFKA_ADMIN_OP_CREATETOPICS,
      [&](rd_kafka_AdminOptions_t* o, rd_kafka_queue_t* q) {
        rd_kafka_CreateTopics(rk.get(), &new_topic, 1, o, q);
      },
      what);
  rd_kafka_NewTopic_destroy(new_topic);
  if (!event.ok()) return event.status();
  size_t n = 0;
  const rd_kafka_topic_result_t** results = rd_kafka_CreateTopics_result_topics(
      rd_kafka_event_CreateTopics_result(event->get()), &n);
  SLUICE_RETURN_IF_ERROR(TopicResults(results, n, what));
  return WaitForLeaders(topic, partitions);
}

absl::Status RealKafka::CreatePartitions(const std::string& topic, int total_partitions) {
  SLUICE_ASSIGN_OR_RETURN(HandlePtr rk, AdminHandle(bootstrap_));
  char err[256];
  rd_kafka_NewPartitions_t* np =
      rd_kafka_NewPartitions_new(topic.c_str(), total_partitions, err, sizeof(err));
  if (np == nullptr) return absl::InvalidArgumentError(err);
  const std::string what = absl::StrCat("CreatePartitions ", topic, " to ", total_partitions);
  absl::StatusOr<EventPtr> event = RunAdmin(
      rk.get(), RD_KAFKA_ADMIN_OP_CREATEPARTITIONS,
      [&](rd_kafka_AdminOptions_t* o, rd_kafka_queue_t* q) {
        rd_kafka_CreatePartitions(rk.get(), &np, 1, o, q);
      },
      what);
  rd_kafka_NewPartitions_destroy(np);
  if (!event.ok()) return event.status();
  size_t n = 0;
  const rd_kafka_topic_result_t** results = rd_kafka_CreatePartitions_result_topics(
      rd_kafka_event_CreatePartitions_result(event->get()), &n);
  SLUICE_RETURN_IF_ERROR(TopicResults(results, n, what));
  // The request returns before the new partitions have a leader in the
  // metadata; until then requests for them fail with NOT_LEADER_FOR_PARTITION.
  return WaitForLeaders(topic, total_partitions);
}

absl::Status RealKafka::WaitForLeaders(const std::string& topic, int partitions) {
  const absl::Time deadline = absl::Now() + kAdminTimeout;
  while (true) {
    absl::StatusOr<int> count = PartitionCount(topic);
    if (count.ok() && *count == partitions) {
      // Metadata can show a leader a moment before it serves ListOffsets.
      bool serving = true;
      for (int32_t p = 0; p < partitions && serving; ++p) serving = Watermarks(topic, p).ok();
      if (serving) return absl::OkStatus();
    }
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          topic, ": not every one of its ", partitions, " partitions has a serving leader"));
    }
    absl::SleepFor(absl::Milliseconds(100));
  }
}

absl::Status RealKafka::AlterTopicConfigs(const std::string& topic,
                                          const std::map<std::string, std::string>& configs) {
  SLUICE_ASSIGN_OR_RETURN(HandlePtr rk, AdminHandle(bootstrap_));
  rd_kafka_ConfigResource_t* resource =
      rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, topic.c_str());
  for (const auto& [name, value] : configs) {
    rd_kafka_ConfigResource_set_config(resource, name.c_str(), value.c_str());
  }
  const std::string what = absl::StrCat("AlterConfigs ", topic);
  absl::StatusOr<EventPtr> event = RunAdmin(
      rk.get(), RD_KAFKA_ADMIN_OP_ALTERCONFIGS,
      [&](rd_kafka_AdminOptions_t* o, rd_kafka_queue_t* q) {
        rd_kafka_AlterConfigs(rk.get(), &resource, 1, o, q);
      },
      what);
  rd_kafka_ConfigResource_destroy(resource);
  if (!event.ok()) return event.status();
  size_t n = 0;
  const rd_kafka_ConfigResource_t** results = rd_kafka_AlterConfigs_result_resources(
      rd_kafka_event_AlterConfigs_result(event->get()), &n);
  for (size_t i = 0; i < n; ++i) {
    if (rd_kafka_ConfigResource_error(results[i]) != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return KafkaErrorToStatus(rd_kafka_ConfigResource_error(results[i]), what,
                                rd_kafka_ConfigResource_error_string(results[i]));
    }
  }
  return absl::OkStatus();
}

absl::Status RealKafka::DeleteRecordsBefore(const std::string& topic, int32_t partition,
                                            int64_t offset) {
  SLUICE_ASSIGN_OR_RETURN(HandlePtr rk, AdminHandle(bootstrap_));
  TopicPartitionListPtr list(rd_kafka_topic_partition_list_new(1));
  rd_kafka_topic_partition_list_add(list.get(), topic.c_str(), partition)->offset = offset;
  rd_kafka_DeleteRecords_t* request = rd_kafka_DeleteRecords_new(list.get());
  const std::string what =
      absl::StrCat("DeleteRecords ", topic, "[", partition, "] before ", offset);
  absl::StatusOr<EventPtr> event = RunAdmin(
      rk.get(), RD_KAFKA_ADMIN_OP_DELETERECORDS,
      [&](rd_kafka_AdminOptions_t* o, rd_kafka_queue_t* q) {
        rd_kafka_DeleteRecords(rk.get(), &request, 1, o, q);
      },
      what);
  rd_kafka_DeleteRecords_destroy(request);
  if (!event.ok()) return event.status();
  const rd_kafka_topic_partition_list_t* offsets = rd_kafka_DeleteRecords_result_offsets(
      rd_kafka_event_DeleteRecords_result(event->get()));
  for (int i = 0; offsets != nullptr && i < offsets->cnt; ++i) {
    if (offsets->elems[i].err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return KafkaErrorToStatus(offsets->elems[i].err, what);
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::pair<int64_t, int64_t>> RealKafka::Watermarks(const std::string& topic,
                                                                  int32_t partition,
                                                                  bool read_committed) {
  SLUICE_ASSIGN_OR_RETURN(
      ConfPtr conf,
      BuildConf({{"bootstrap.servers", bootstrap_},
                 {"isolation.level", read_committed ? "read_committed" : "read_uncommitted"}},
                "real-kafka-watermarks"));
  SLUICE_ASSIGN_OR_RETURN(HandlePtr rk, NewHandle(RD_KAFKA_CONSUMER, std::move(conf)));
  int64_t low = 0, high = 0;
  const rd_kafka_resp_err_t err =
      rd_kafka_query_watermark_offsets(rk.get(), topic.c_str(), partition, &low, &high, 10000);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return KafkaErrorToStatus(err, absl::StrCat("watermarks of ", topic, "[", partition, "]"));
  }
  return std::make_pair(low, high);
}

absl::StatusOr<int> RealKafka::PartitionCount(const std::string& topic) {
  SLUICE_ASSIGN_OR_RETURN(HandlePtr rk, AdminHandle(bootstrap_));
  TopicPtr rkt(rd_kafka_topic_new(rk.get(), topic.c_str(), nullptr));
  const rd_kafka_metadata_t* raw = nullptr;
  const rd_kafka_resp_err_t err = rd_kafka_metadata(rk.get(), 0, rkt.get(), &raw, 10000);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return KafkaErrorToStatus(err, absl::StrCat("metadata of ", topic));
  }
  MetadataPtr metadata(raw);
  if (metadata->topic_cnt < 1 || metadata->topics[0].err != RD_KAFKA_RESP_ERR_NO_ERROR) return 0;
  int with_leader = 0;
  for (int i = 0; i < metadata->topics[0].partition_cnt; ++i) {
    if (metadata->topics[0].partitions[i].leader >= 0 &&
        metadata->topics[0].partitions[i].err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      ++with_leader;
    }
  }
  return with_leader;
}

absl::Status RealKafka::SetScramCredential(const std::string& user, const std::string& mechanism,
                                           const std::string& password) {
  rd_kafka_ScramMechanism_t m = RD_KAFKA_SCRAM_MECHANISM_UNKNOWN;
  if (mechanism == "SCRAM-SHA-256") m = RD_KAFKA_SCRAM_MECHANISM_SHA_256;
  if (mechanism == "SCRAM-SHA-512") m = RD_KAFKA_SCRAM_MECHANISM_SHA_512;
  if (m == RD_KAFKA_SCRAM_MECHANISM_UNKNOWN) {
    return absl::InvalidArgumentError(absl::StrCat("not a SCRAM mechanism: ", mechanism));
  }
  SLUICE_ASSIGN_OR_RETURN(HandlePtr rk, AdminHandle(bootstrap_));
  rd_kafka_UserScramCredentialAlteration_t* alteration = rd_kafka_UserScramCredentialUpsertion_new(
      user.c_str(), m, 8192, reinterpret_cast<const unsigned char*>(password.data()),
      password.size(), nullptr, 0);
  const std::string what = absl::StrCat("AlterUserScramCredentials ", user, " ", mechanism);
  absl::StatusOr<EventPtr> event = RunAdmin(
      rk.get(), RD_KAFKA_ADMIN_OP_ALTERUSERSCRAMCREDENTIALS,
      [&](rd_kafka_AdminOptions_t* o, rd_kafka_queue_t* q) {
        rd_kafka_AlterUserScramCredentials(rk.get(), &alteration, 1, o, q);
      },
      what);
  rd_kafka_UserScramCredentialAlteration_destroy(alteration);
  if (!event.ok()) return event.status();
  size_t n = 0;
  const rd_kafka_AlterUserScramCredentials_result_response_t** responses =
      rd_kafka_AlterUserScramCredentials_result_responses(
          rd_kafka_event_AlterUserScramCredentials_result(event->get()), &n);
  for (size_t i = 0; i < n; ++i) {
    const rd_kafka_error_t* error =
        rd_kafka_AlterUserScramCredentials_result_response_error(responses[i]);
    if (error != nullptr && rd_kafka_error_code(error) != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return KafkaErrorToStatus(rd_kafka_error_code(error), what, rd_kafka_error_string(error));
    }
  }
  return absl::OkStatus();
}

}  // namespace sluice::kafka
