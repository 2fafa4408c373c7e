// One fault scenario on a real process cluster (//tools/cluster): the dev
// broker, the supervisor (or several, one leading: `supervisors`) and N task
// workers on 127.0.0.1, a topic, a spec
// submitted, records produced (//tools/produce, some malformed) while faults
// are injected, then the end: everything produced committed and the
// exactly-once audit.
//
//   ScenarioOptions options;
//   options.name = "kill_worker_while_reading";
//   absl::StatusOr<std::unique_ptr<FaultScenario>> s = FaultScenario::Start(options);
//   (*s)->StartProducing(20000, absl::Seconds(8));
//   absl::Status st = (*s)->WaitUntilCommittedSequences(2);
//   st = (*s)->cluster().Kill(cluster::WorkerName(0), SIGKILL);
//   st = (*s)->RestartAndWait(cluster::WorkerName(0));
//   st = (*s)->Finish();  // waits, audits; the error says what is wrong and where the logs are
//
// Fault points: every worker and the supervisor run with every fault point of
// their binary configured as crash_if_file:<root>/arm/<process>/<point>, so
// Arm(process, point) makes that process crash at the point's next hit
// (once). Workers also fail every deep storage push while
// <root>/arm/deep-storage-down exists (SetDeepStorageDown). A test that passes
// its own --fault_points in extra_flags replaces these for that process.
//
// Several supervisors (options.supervisors > 1, over options.
// metadata_store_url): supervisor() and every admin or read call go to the
// leader of the moment (a call answered UNAVAILABLE is tried again on
// whichever supervisor leads then, for up to 30 s). S3 deep storage
// (options.s3_endpoint): the processes get the bucket, endpoint and
// credentials (as AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY in their
// environment, never on a command line), and the audit reads the segments
// from there.
//
// Methods that wait poll with generous deadlines (the machine may be
// loaded); none asserts after a fixed sleep. Call everything from the test's
// main thread (the cluster ties its children to the starting thread), except
// that a background producer thread may run meanwhile.
#ifndef SLUICE_TESTS_FAULT_FAULT_SCENARIO_H_
#define SLUICE_TESTS_FAULT_FAULT_SCENARIO_H_

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/kafka/property_policy.h"
#include "common/s3/s3_options.h"
#include "sluice/v1/supervisor_service.grpc.pb.h"
#include "tests/fault/invariants.h"
#include "tools/audit/exactly_once_audit.h"
#include "tools/cluster/process_cluster.h"

namespace sluice::fault {

inline constexpr char kDatasource[] = "wiki";
inline constexpr char kTopic[] = "wiki";
// Armable on the supervisors of an Iceberg scenario (ScenarioOptions::
// iceberg_table): a snapshot staged in deep storage, not yet committed.
inline constexpr char kAfterIcebergStage[] = "supervisor.after_iceberg_stage";
// Of a datasource with a compaction config: the compacted segments pushed,
// nothing staged or committed; and everything staged, before the commit.
inline constexpr char kCompactionAfterPush[] = "supervisor.compaction_after_push";
inline constexpr char kCompactionBeforeCommit[] = "supervisor.compaction_before_commit";

struct ScenarioOptions {
  // Names the scenario's directory and its messages. Required.
  std::string name;
  int workers = 3;
  // More than one: they elect a leader over `metadata_store_url` (required
  // then), see ProcessClusterOptions::supervisors.
  int supervisors = 1;
  // --metadata_store of every supervisor (e.g. a PostgreSQL database's URL,
  // tests/testing/postgres_server.h); empty: SQLite in the supervisor's data
  // dir.
  std::string metadata_store_url;
  // S3 deep storage when s3_endpoint is set (http://host:port, path-style
  // addressing, e.g. tests/s3/s3_server.h): s3://<s3_bucket>/<s3_prefix>.
  // The bucket must exist. The credentials go to the processes through their
  // environment and are never printed.
  std::string s3_endpoint;
  std::string s3_bucket;
  std::string s3_prefix = "deep";
  s3::S3Credentials s3_credentials;
  int brokers = 1;
  int partitions = 4;
  // Kafka outside the cluster (a real Apache Kafka broker the test target
  // shares, tools/kafka/real_kafka.h): its bootstrap servers. The topic must
  // exist already (`partitions` is then only what the test created); the
  // workers and the audit use real Kafka's consumer settings. Empty: the
  // cluster's own dev broker, which creates the topic.
  std::string external_bootstrap_servers;
  // The topic (unique per scenario on a shared broker).
  std::string topic = kTopic;
  // ioConfig.topicPattern instead of ioConfig.topic (which `topic` must
  // then match, being one of the topics read), and topics the dev broker
  // creates besides `topic` ("NAME:PARTITIONS"). Offsets are then keyed by
  // stream partition: what was produced to each (topic, partition) is
  // checked against its id in the commit log.
  std::string topic_pattern;
  std::vector<std::string> more_topics;
  // Extra consumerProperties of the spec, also used by the audit's reader
  // (e.g. {"isolation.level", "read_uncommitted"}).
  std::map<std::string, std::string> consumer_properties;
  // The spec's bootstrap.servers when they are not the cluster's (e.g. a
  // real broker's SASL_SSL listener); producers and the audit's reader keep
  // using the cluster's. Empty: the cluster's.
  std::string spec_bootstrap_servers;
  // consumerProperties of the spec only, not of the audit's reader (e.g. the
  // security settings of spec_bootstrap_servers' listener, with secret
  // references only the supervisor and the workers resolve).
  std::map<std::string, std::string> spec_only_consumer_properties;
  // Set: the audit's Kafka reader connects as the datasource does: to
  // spec_bootstrap_servers (when given) with the spec_only_consumer_properties
  // too, their secret references resolved under this policy (what the
  // workers' --kafka_files_dir and --kafka_secret_destinations_file say).
  std::optional<kafka::PropertyPolicyOptions> audit_secret_policy;
  // The spec (ioConfig, tuningConfig), with timings short enough for tests.
  int task_count = 2;
  int replicas = 2;
  std::string task_duration = "PT10M";
  std::string completion_timeout = "PT90S";
  int64_t max_rows_per_segment = 1500;
  int64_t max_rows_in_memory = 700;
  // Checkpoints without a full segment, so the last records get committed.
  std::string intermediate_handoff_period = "PT2S";
  std::string chat_timeout = "PT2S";
  int chat_retries = 2;
  std::string checkpoint_retry_period = "PT2S";
  std::string segment_granularity = "HOUR";
  // ioConfig.lateMessageRejectionStartDateTime (empty: none). The records of
  // the first batch span 02:00 to about 03:06 on 2026-11-30 (later batches
  // start half an hour apart), so e.g. "2026-11-30T02:30:00Z" throws away
  // about half of the first batch.
  std::string late_message_rejection_start;
  // Records: wiki-edit-like rows, a fraction malformed, partitions in turn.
  uint64_t seed = 1;
  double malformed_fraction = 0.01;
  // The spec sets "icebergTable": {} (table sluice.wiki beside the
  // segments), and the supervisors' crash points include
  // kIcebergCrashPoints.
  bool iceberg_table = false;
  // The spec's "compaction" section (docs/compaction.md), and the
  // supervisors' crash points include kCompactionCrashPoints.
  std::optional<v1::CompactionConfig> compaction;
  // Extra flags by process name ("worker" = every worker), after the
  // scenario's own; see ProcessClusterOptions::extra_flags.
  std::map<std::string, std::vector<std::string>> extra_flags;
};

class FaultScenario {
 public:
  // Starts the cluster under $TEST_TMPDIR/<name>, waits until every process
  // serves, and submits the spec.
  static absl::StatusOr<std::unique_ptr<FaultScenario>> Start(ScenarioOptions options);
  ~FaultScenario();

  cluster::ProcessCluster& cluster() { return *cluster_; }
  const ScenarioOptions& options() const { return options_; }
  const std::string& root_dir() const { return root_; }
  // The (leading) supervisor: with several, the stub of the one leading now
  // (looked up on each call; waits up to 20 s for a leader, and is the first
  // supervisor's if none leads). Valid as long as the scenario.
  v1::SupervisorService::Stub* supervisor();
  // The deep storage URI the processes use (file:// or s3://).
  std::string deep_storage_uri() const { return cluster_->deep_storage_uri(); }

  // ---- records ----
  // Produces `records` records and waits until Kafka has them all.
  absl::Status Produce(int64_t records);
  // The same into `topic`; records of a topic the datasource does not read
  // (`counted` false) are not expected anywhere.
  absl::Status ProduceTo(const std::string& topic, int64_t records, bool counted = true);
  // Has the dev broker create a topic now.
  absl::Status CreateTopic(const std::string& topic, int partitions);
  // Produces `records` records in a background thread, spread over `over`.
  // One background producer at a time.
  void StartProducing(int64_t records, absl::Duration over);
  // Waits for the background producer; its error if it failed.
  absl::Status WaitProduced(absl::Duration timeout = absl::Minutes(3));
  // What was delivered so far; with a topic pattern its end offsets are
  // keyed by the stream partitions of `log` (NOT_FOUND while a (topic,
  // partition) produced to has no id there yet).
  Produced produced() const;
  absl::StatusOr<Produced> ProducedByStreamPartition(const v1::GetCommitLogResponse& log) const;
  // Counts records another producer delivered (e.g. transactional ones:
  // only committed records, with end offsets past the last marker).
  void AddProduced(const Produced& more);

  // ---- faults ----
  // Makes `process` crash (exit 86) at the next hit of fault point `point`.
  absl::Status Arm(const std::string& process, const std::string& point);
  // Takes an Arm back (if it has not fired yet).
  absl::Status Disarm(const std::string& process, const std::string& point);
  // Waits until `process` crashed at `point` (its log says so and it is gone).
  absl::Status WaitForInjectedCrash(const std::string& process, const std::string& point,
                                    absl::Duration timeout = absl::Seconds(90));
  // Every deep storage push fails (UNAVAILABLE) while down.
  absl::Status SetDeepStorageDown(bool down);
  // Restarts `process` and waits until the whole cluster is healthy again.
  absl::Status RestartAndWait(const std::string& process,
                              absl::Duration timeout = absl::Seconds(60));

  // ---- operator actions (SupervisorService admin calls) ----
  absl::Status Suspend();
  absl::Status Resume();
  absl::Status ResetOffsets(const PartitionOffsets& offsets);
  // Submits the spec again with `edit` applied (a new spec version).
  absl::Status ChangeSpec(const std::function<void(v1::SupervisorSpec*)>& edit);
  // Deletes a (stopped) worker's data directory: its next start is empty.
  absl::Status DeleteWorkerData(int worker);

  // ---- reading the state ----
  absl::StatusOr<v1::SupervisorStatus> Status();
  absl::StatusOr<v1::GetCommitLogResponse> CommitLog();
  absl::StatusOr<v1::SupervisorServiceListTasksResponse> Tasks(bool include_finished = false);
  // Index of a worker running a task of the datasource in one of `states`
  // (the one with the most such tasks); NOT_FOUND if none.
  absl::StatusOr<int> WorkerWithTasks(const std::vector<v1::TaskState>& states = {v1::TASK_STATE_READING});
  // WorkerWithTasks, polled until some worker has such a task: right after a
  // roll-over or a new partition every task may be finishing while the new
  // group's tasks start, a moment with no reading task at all.
  absl::StatusOr<int> WaitForWorkerWithTasks(
      absl::Duration timeout = absl::Seconds(60),
      const std::vector<v1::TaskState>& states = {v1::TASK_STATE_READING});

  // ---- waiting ----
  // Polls `condition` until it returns true. DEADLINE_EXCEEDED names `what`,
  // the last error of the condition and the scenario's context.
  absl::Status WaitUntil(const std::string& what, absl::Duration timeout,
                         const std::function<absl::StatusOr<bool>()>& condition);
  // At least `n` sequences committed.
  absl::Status WaitUntilCommittedSequences(int n, absl::Duration timeout = absl::Seconds(90));
  // Every partition committed through what was produced.
  absl::Status WaitUntilAllCommitted(absl::Duration timeout = absl::Minutes(3));
  // `text` appears in the current log of `process`.
  absl::Status WaitForLog(const std::string& process, const std::string& text,
                          absl::Duration timeout = absl::Seconds(60));

  // ---- the end ----
  // The audit of the datasource as it is now (across an operator offset
  // reset when `reset` is given), plus: every partition committed through
  // what was produced; without a reset, the totals equal what was produced.
  audit::AuditReport Audit(const PartitionOffsets& reset = {});
  // Waits for the producer and for everything to be committed, audits, and
  // checks that no process died unexpectedly. On any failure the error holds
  // the audit report, the supervisor's view and where the logs are (copied
  // to the test's undeclared outputs).
  absl::Status Finish(const PartitionOffsets& reset = {},
                      absl::Duration timeout = absl::Minutes(3));

  // Where the logs are, the supervisor's status and tasks, which processes
  // died: appended to every failure. Also copies the logs to the test's
  // undeclared outputs (once).
  std::string Context();

 private:
  explicit FaultScenario(ScenarioOptions options);
  absl::Status Init();
  absl::Status SubmitSpec(const std::function<void(v1::SupervisorSpec*)>& edit = nullptr);
  absl::Status ProduceNow(int64_t records, absl::Duration over, const std::string& topic = "",
                          bool counted = true);
  std::string CopyLogsOnce();
  // One SupervisorService call on the leader, with a deadline; with several
  // supervisors tried again (for up to 30 s) while it fails UNAVAILABLE.
  absl::Status CallSupervisor(
      const std::function<grpc::Status(v1::SupervisorService::Stub*, grpc::ClientContext*)>& call);

  const ScenarioOptions options_;
  std::string root_;
  std::unique_ptr<cluster::ProcessCluster> cluster_;
  // A stub per supervisor name (kept: supervisor() hands out raw pointers).
  std::map<std::string, std::unique_ptr<v1::SupervisorService::Stub>> supervisors_;
  // The supervisor that led at the last look (several supervisors only).
  std::string leader_;

  // Guards what was produced (the producer thread and the test's thread).
  mutable absl::Mutex mu_;
  // Batches produced so far (each has its own seed and time range).
  int batches_ ABSL_GUARDED_BY(mu_) = 0;
  Produced produced_ ABSL_GUARDED_BY(mu_);
  // Topic-pattern scenarios: the end offset produced to each (topic,
  // Kafka partition) read.
  std::map<std::pair<std::string, int32_t>, int64_t> topic_end_offsets_ ABSL_GUARDED_BY(mu_);

  std::thread producer_thread_;
  std::atomic<bool> stop_producing_{false};
  absl::Status producer_status_;  // written by the thread, read after join
  std::string logs_copied_to_;
};

}  // namespace sluice::fault

#endif  // SLUICE_TESTS_FAULT_FAULT_SCENARIO_H_
