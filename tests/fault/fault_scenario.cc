#include "tests/fault/fault_scenario.h"

#include <dirent.h>
#include <glog/logging.h>
#include <grpcpp/grpcpp.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdlib>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "tools/produce/wiki_rows.h"
#include "common/file_util.h"
#include "common/open_deep_storage.h"
#include "common/grpc_status.h"
#include "common/kafka/consumer_settings.h"
#include "common/status_macros.h"
#include "common/time_util.h"
#include "tests/fault/soak_plan.h"
#include "tests/testing/subprocess.h"
#include "tools/audit/kafka_record_counter.h"
#include "tools/audit/segment_file_verifier.h"
#include "tools/audit/live_audit.h"
#include "tools/audit/table_audit.h"
#include "tools/cluster/wiki_datasource.h"
#include "tools/produce/wiki_producer.h"

namespace sluice::fault {
namespace {

constexpr absl::Duration kRpcTimeout = absl::Seconds(10);
constexpr absl::Duration kPollInterval = absl::Milliseconds(100);
// How long a call waits for a leader among several supervisors.
constexpr absl::Duration kLeaderTimeout = absl::Seconds(30);
constexpr absl::Duration kLeaderLookup = absl::Seconds(20);

// --fault_points arming every point of `points` for `process` by a file.
std::string FaultPointsFlag(const std::string& root, const std::string& process,
                            const std::vector<std::string>& points, bool deep_storage) {
  std::vector<std::string> entries;
  for (const std::string& p : points) {
    entries.push_back(absl::StrCat(p, "=crash_if_file:", root, "/arm/", process, "/", p));
  }
  if (deep_storage) {
    entries.push_back(
        absl::StrCat("deep_storage.push=error_while_file:", root, "/arm/deep-storage-down"));
  }
  return absl::StrCat("--fault_points=", absl::StrJoin(entries, ","));
}

grpc::ClientContext* WithDeadline(grpc::ClientContext* context) {
  context->set_deadline(absl::ToChronoTime(absl::Now() + kRpcTimeout));
  return context;
}

std::string FormatProtoOffsets(const google::protobuf::Map<int32_t, int64_t>& offsets) {
  return FormatPartitionOffsets(PartitionOffsets(offsets.begin(), offsets.end()));
}

absl::Status CopyDir(const std::string& from, const std::string& to) {
  SLUICE_RETURN_IF_ERROR(MakeDirs(to));
  DIR* dir = opendir(from.c_str());
  if (dir == nullptr) return ErrnoStatus(errno, "opendir", from);
  absl::Status status;
  while (dirent* entry = readdir(dir)) {
    const std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    absl::StatusOr<std::string> content = ReadFile(from + "/" + name);
    if (!content.ok()) continue;  // a directory or unreadable: skip
    status.Update(WriteFileAtomically(to + "/" + name, *content));
  }
  closedir(dir);
  return status;
}

}  // namespace

FaultScenario::FaultScenario(ScenarioOptions options) : options_(std::move(options)) {}

FaultScenario::~FaultScenario() {
  stop_producing_ = true;
  if (producer_thread_.joinable()) producer_thread_.join();
}

absl::StatusOr<std::unique_ptr<FaultScenario>> FaultScenario::Start(ScenarioOptions options) {
  if (options.name.empty()) return absl::InvalidArgumentError("a scenario needs a name");
  std::unique_ptr<FaultScenario> scenario(new FaultScenario(std::move(options)));
  SLUICE_RETURN_IF_ERROR(scenario->Init());
  return scenario;
}

absl::Status FaultScenario::Init() {
  if (options_.supervisors > 1 && options_.metadata_store_url.empty()) {
    return absl::InvalidArgumentError(
        "several supervisors need a shared metadata store (metadata_store_url)");
  }
  const bool s3 = !options_.s3_endpoint.empty();
  if (s3 && (options_.s3_bucket.empty() || options_.s3_credentials.empty())) {
    return absl::InvalidArgumentError("S3 deep storage needs s3_bucket and s3_credentials");
  }
  root_ = absl::StrCat(testing::TestTmpDir(), "/", options_.name);
  SLUICE_RETURN_IF_ERROR(RemoveAll(root_));

  cluster::ProcessClusterOptions o;
  o.root_dir = root_;
  o.supervisors = options_.supervisors;
  o.workers = options_.workers;
  o.brokers = options_.brokers;
  o.topics = {absl::StrCat(options_.topic, ":", options_.partitions)};
  o.topics.insert(o.topics.end(), options_.more_topics.begin(), options_.more_topics.end());
  o.external_bootstrap_servers = options_.external_bootstrap_servers;
  // Every supervisor its own arm directory: the key "supervisor" applies to
  // all of them, each further one's own flag (later) overrides it.
  for (int i = 0; i < options_.supervisors; ++i) {
    const std::string name = cluster::SupervisorName(i);
    SLUICE_RETURN_IF_ERROR(MakeDirs(root_ + "/arm/" + name));
    std::vector<std::string> points = SupervisorCrashPoints();
    if (options_.iceberg_table) points.push_back(kAfterIcebergStage);
    if (options_.compaction.has_value()) {
      points.push_back(kCompactionAfterPush);
      points.push_back(kCompactionBeforeCommit);
    }
    o.extra_flags[name].push_back(FaultPointsFlag(root_, name, points, false));
  }
  if (!options_.metadata_store_url.empty()) {
    o.extra_flags[cluster::kSupervisor].push_back("--metadata_store=" +
                                                  options_.metadata_store_url);
  }
  if (s3) {
    o.deep_storage_uri = absl::StrCat("s3://", options_.s3_bucket,
                                      options_.s3_prefix.empty() ? "" : "/", options_.s3_prefix);
    for (const char* process : {cluster::kSupervisor, "worker"}) {
      std::vector<std::string>& flags = o.extra_flags[process];
      flags.insert(flags.end(), {"--s3_endpoint=" + options_.s3_endpoint, "--s3_path_style",
                                 "--s3_max_attempts=4", "--s3_request_timeout_ms=20000"});
    }
    // The standard AWS variables (common/s3/s3_credentials.h), not flags: a
    // command line is visible to every local user and lands in logs.
    o.env["AWS_ACCESS_KEY_ID"] = options_.s3_credentials.access_key_id;
    o.env["AWS_SECRET_ACCESS_KEY"] = options_.s3_credentials.secret_access_key;
    if (!options_.s3_credentials.session_token.empty()) {
      o.env["AWS_SESSION_TOKEN"] = options_.s3_credentials.session_token;
    }
  }
  for (int i = 0; i < options_.workers; ++i) {
    const std::string name = cluster::WorkerName(i);
    SLUICE_RETURN_IF_ERROR(MakeDirs(root_ + "/arm/" + name));
    o.extra_flags[name] = {FaultPointsFlag(root_, name, WorkerCrashPoints(), true)};
  }
  for (const auto& [process, flags] : options_.extra_flags) {
    std::vector<std::string>& to = o.extra_flags[process];
    to.insert(to.end(), flags.begin(), flags.end());
  }
  SLUICE_ASSIGN_OR_RETURN(cluster_, cluster::ProcessCluster::Create(std::move(o)));
  SLUICE_RETURN_IF_ERROR(cluster_->Start());
  if (absl::Status healthy = cluster_->WaitHealthy(absl::Seconds(90)); !healthy.ok()) {
    return Annotate(healthy, absl::StrCat("starting the cluster of scenario ", options_.name,
                                          " (logs in ", root_, "/logs)"));
  }
  return SubmitSpec();
}

v1::SupervisorService::Stub* FaultScenario::supervisor() {
  std::string name = cluster::kSupervisor;
  if (options_.supervisors > 1) {
    if (leader_.empty() || !cluster_->Leads(leader_)) {
      absl::StatusOr<std::string> leader = cluster_->LeaderSupervisor(kLeaderLookup);
      leader_ = leader.ok() ? *leader : "";
      if (!leader.ok()) LOG(WARNING) << "[scenario " << options_.name << "] " << leader.status();
    }
    if (!leader_.empty()) name = leader_;
  }
  std::unique_ptr<v1::SupervisorService::Stub>& stub = supervisors_[name];
  if (stub == nullptr) stub = cluster_->SupervisorStub(name);
  return stub.get();
}

absl::Status FaultScenario::CallSupervisor(
    const std::function<grpc::Status(v1::SupervisorService::Stub*, grpc::ClientContext*)>& call) {
  const absl::Time deadline = absl::Now() + kLeaderTimeout;
  while (true) {
    v1::SupervisorService::Stub* stub = supervisor();
    grpc::ClientContext context;
    const grpc::Status status = call(stub, WithDeadline(&context));
    if (status.ok() || options_.supervisors == 1 ||
        status.error_code() != grpc::StatusCode::UNAVAILABLE || absl::Now() >= deadline) {
      return FromGrpcStatus(status);
    }
    // A standby's answer, or the leader is gone: look for the leader again.
    leader_.clear();
    absl::SleepFor(kPollInterval);
  }
}

absl::Status FaultScenario::SubmitSpec(const std::function<void(v1::SupervisorSpec*)>& edit) {
  cluster::WikiSpecOptions wiki;
  wiki.datasource = kDatasource;
  wiki.topic = options_.topic;
  wiki.bootstrap_servers = options_.spec_bootstrap_servers.empty()
                              ? cluster_->bootstrap_servers()
                              : options_.spec_bootstrap_servers;
  wiki.task_count = options_.task_count;
  wiki.replicas = options_.replicas;
  wiki.task_duration = options_.task_duration;
  wiki.period = "PT1S";
  wiki.start_delay = "PT0.1S";
  wiki.segment_granularity = options_.segment_granularity;
  wiki.query_granularity = "MINUTE";
  wiki.iceberg_table = options_.iceberg_table;
  v1::SubmitSupervisorRequest request;
  v1::SupervisorSpec* spec = request.mutable_spec();
  *spec = cluster::WikiSpec(wiki);
  if (options_.compaction.has_value()) *spec->mutable_compaction() = *options_.compaction;
  v1::IoConfig* io = spec->mutable_io_config();
  for (const auto& [name, value] : options_.consumer_properties) {
    (*io->mutable_consumer_properties())[name] = value;
  }
  for (const auto& [name, value] : options_.spec_only_consumer_properties) {
    (*io->mutable_consumer_properties())[name] = value;
  }
  io->set_completion_timeout(options_.completion_timeout);
  io->set_late_message_rejection_start_date_time(options_.late_message_rejection_start);
  v1::TuningConfig* tuning = spec->mutable_tuning_config();
  tuning->set_max_rows_per_segment(options_.max_rows_per_segment);
  tuning->set_max_rows_in_memory(options_.max_rows_in_memory);
  tuning->set_intermediate_handoff_period(options_.intermediate_handoff_period);
  tuning->set_chat_timeout(options_.chat_timeout);
  tuning->set_chat_retries(options_.chat_retries);
  tuning->set_checkpoint_retry_period(options_.checkpoint_retry_period);
  tuning->set_handoff_condition_timeout("PT60S");
  if (!options_.topic_pattern.empty()) {
    io->clear_topic();
    io->set_topic_pattern(options_.topic_pattern);
  }
  if (edit) edit(spec);
  v1::SubmitSupervisorResponse response;
  return Annotate(CallSupervisor([&](v1::SupervisorService::Stub* stub, grpc::ClientContext* c) {
                    return stub->SubmitSupervisor(c, request, &response);
                  }),
                  "submitting the spec");
}

// ---- records ----

absl::Status FaultScenario::ProduceNow(int64_t records, absl::Duration over,
                                       const std::string& topic, bool counted) {
  int batch;
  {
    absl::MutexLock lock(&mu_);
    batch = batches_++;
  }
  produce::ProduceOptions o;
  o.properties = {{"bootstrap.servers", cluster_->bootstrap_servers()}};
  o.topic = topic.empty() ? options_.topic : topic;
  o.records = records;
  o.rate = over > absl::ZeroDuration() ? static_cast<double>(records) / absl::ToDoubleSeconds(over)
                                       : 0;
  // Each batch its own records, half an hour after the previous one's start
  // (20,000 records span about an hour: batches overlap in time, segments of
  // one interval come from several sequences).
  o.rows.seed = options_.seed * 1000 + static_cast<uint64_t>(batch);
  o.rows.start_ms = bench::WikiRowOptions().start_ms + batch * 1800 * 1000LL;
  o.rows.mean_step_ms = 200;
  o.rows.malformed_fraction = options_.malformed_fraction;
  o.should_stop = [this] { return stop_producing_.load(); };
  // Outlasts any outage a scenario injects (the producer retries meanwhile).
  o.flush_timeout = absl::Minutes(5);
  o.metadata_timeout = absl::Minutes(1);
  SLUICE_ASSIGN_OR_RETURN(produce::ProduceResult result, produce::ProduceWikiRecords(o));
  absl::MutexLock lock(&mu_);
  if (!counted) return absl::OkStatus();
  if (!options_.topic_pattern.empty()) {
    for (const auto& [p, count] : result.partitions) {
      int64_t& end = topic_end_offsets_[{o.topic, p}];
      end = std::max(end, count.end_offset);
    }
  }
  produced_.records += result.records;
  produced_.malformed += result.malformed;
  for (const auto& [p, count] : result.partitions) {
    int64_t& end = produced_.end_offsets[p];
    end = std::max(end, count.end_offset);
  }
  return absl::OkStatus();
}

absl::Status FaultScenario::Produce(int64_t records) {
  return ProduceNow(records, absl::ZeroDuration());
}

absl::Status FaultScenario::ProduceTo(const std::string& topic, int64_t records, bool counted) {
  return ProduceNow(records, absl::ZeroDuration(), topic, counted);
}

absl::Status FaultScenario::CreateTopic(const std::string& topic, int partitions) {
  return cluster_->BrokerCommand(absl::StrCat("create ", topic, " ", partitions)).status();
}

absl::StatusOr<Produced> FaultScenario::ProducedByStreamPartition(
    const v1::GetCommitLogResponse& log) const {
  Produced out = produced();
  if (options_.topic_pattern.empty()) return out;
  std::map<std::pair<std::string, int32_t>, int32_t> ids;
  for (const v1::StreamPartition& p : log.stream_partitions()) {
    ids[{p.topic(), p.partition()}] = p.id();
  }
  absl::MutexLock lock(&mu_);
  out.end_offsets.clear();
  for (const auto& [name, end] : topic_end_offsets_) {
    auto id = ids.find(name);
    if (id == ids.end()) {
      return absl::NotFoundError(absl::StrCat(name.first, "[", name.second,
                                              "] has no stream partition id yet"));
    }
    out.end_offsets[id->second] = end;
  }
  return out;
}

void FaultScenario::StartProducing(int64_t records, absl::Duration over) {
  if (producer_thread_.joinable()) producer_thread_.join();
  producer_status_ = absl::OkStatus();
  producer_thread_ = std::thread([this, records, over] {
    producer_status_ = ProduceNow(records, over);
  });
}

absl::Status FaultScenario::WaitProduced(absl::Duration timeout) {
  (void)timeout;  // the producer's own Flush is bounded
  if (producer_thread_.joinable()) producer_thread_.join();
  return Annotate(producer_status_, "producing records");
}

Produced FaultScenario::produced() const {
  absl::MutexLock lock(&mu_);
  return produced_;
}

void FaultScenario::AddProduced(const Produced& more) {
  absl::MutexLock lock(&mu_);
  produced_.records += more.records;
  produced_.malformed += more.malformed;
  for (const auto& [p, end] : more.end_offsets) {
    int64_t& to = produced_.end_offsets[p];
    to = std::max(to, end);
  }
}

// ---- faults ----

absl::Status FaultScenario::Arm(const std::string& process, const std::string& point) {
  return WriteFileAtomically(absl::StrCat(root_, "/arm/", process, "/", point), "");
}

absl::Status FaultScenario::Disarm(const std::string& process, const std::string& point) {
  return RemoveAll(absl::StrCat(root_, "/arm/", process, "/", point));
}

absl::Status FaultScenario::WaitForInjectedCrash(const std::string& process,
                                                 const std::string& point,
                                                 absl::Duration timeout) {
  const std::string marker = absl::StrCat("[fault] ", point, ": crashing the process");
  return WaitUntil(absl::StrCat(process, " crashes at fault point ", point), timeout,
                   [&]() -> absl::StatusOr<bool> {
                     if (cluster_->Running(process)) return false;
                     absl::StatusOr<std::string> log = ReadFile(cluster_->log_path(process));
                     if (!log.ok()) return log.status();
                     if (!absl::StrContains(*log, marker)) {
                       return absl::InternalError(
                           absl::StrCat(process, " ended without reaching ", point));
                     }
                     return true;
                   });
}

absl::Status FaultScenario::SetDeepStorageDown(bool down) {
  const std::string flag = root_ + "/arm/deep-storage-down";
  return down ? WriteFileAtomically(flag, "") : RemoveAll(flag);
}

absl::Status FaultScenario::RestartAndWait(const std::string& process, absl::Duration timeout) {
  SLUICE_RETURN_IF_ERROR(cluster_->Restart(process));
  absl::Status healthy = cluster_->WaitHealthy(timeout);
  if (!healthy.ok()) {
    return Annotate(healthy, absl::StrCat("after restarting ", process, "\n", Context()));
  }
  return absl::OkStatus();
}

// ---- operator actions ----

absl::Status FaultScenario::Suspend() {
  v1::SuspendSupervisorRequest ref;
  ref.set_datasource(kDatasource);
  v1::SuspendSupervisorResponse summary;
  return Annotate(CallSupervisor([&](v1::SupervisorService::Stub* stub, grpc::ClientContext* c) {
                    return stub->SuspendSupervisor(c, ref, &summary);
                  }),
                  "SuspendSupervisor");
}

absl::Status FaultScenario::Resume() {
  v1::ResumeSupervisorRequest ref;
  ref.set_datasource(kDatasource);
  v1::ResumeSupervisorResponse summary;
  return Annotate(CallSupervisor([&](v1::SupervisorService::Stub* stub, grpc::ClientContext* c) {
                    return stub->ResumeSupervisor(c, ref, &summary);
                  }),
                  "ResumeSupervisor");
}

absl::Status FaultScenario::ResetOffsets(const PartitionOffsets& offsets) {
  v1::ResetOffsetsRequest request;
  request.set_datasource(kDatasource);
  for (const auto& [p, o] : offsets) (*request.mutable_offsets())[p] = o;
  v1::ResetOffsetsResponse summary;
  return Annotate(CallSupervisor([&](v1::SupervisorService::Stub* stub, grpc::ClientContext* c) {
                    return stub->ResetOffsets(c, request, &summary);
                  }),
                  absl::StrCat("ResetOffsets ", FormatPartitionOffsets(offsets)));
}

absl::Status FaultScenario::ChangeSpec(const std::function<void(v1::SupervisorSpec*)>& edit) {
  return SubmitSpec(edit);
}

absl::Status FaultScenario::DeleteWorkerData(int worker) {
  const std::string name = cluster::WorkerName(worker);
  if (cluster_->Running(name)) {
    return absl::FailedPreconditionError(absl::StrCat(name, " is running"));
  }
  const std::string dir = cluster_->data_dir(name);
  SLUICE_RETURN_IF_ERROR(RemoveAll(dir));
  return MakeDirs(dir);
}

// ---- reading the state ----

absl::StatusOr<v1::SupervisorStatus> FaultScenario::Status() {
  v1::GetSupervisorStatusRequest ref;
  ref.set_datasource(kDatasource);
  v1::GetSupervisorStatusResponse response;
  SLUICE_RETURN_IF_ERROR(
      CallSupervisor([&](v1::SupervisorService::Stub* stub, grpc::ClientContext* c) {
        return stub->GetSupervisorStatus(c, ref, &response);
      }));
  return std::move(*response.mutable_status());
}

absl::StatusOr<v1::GetCommitLogResponse> FaultScenario::CommitLog() {
  v1::GetCommitLogRequest ref;
  ref.set_datasource(kDatasource);
  v1::GetCommitLogResponse log;
  SLUICE_RETURN_IF_ERROR(
      CallSupervisor([&](v1::SupervisorService::Stub* stub, grpc::ClientContext* c) {
        return stub->GetCommitLog(c, ref, &log);
      }));
  return log;
}

absl::StatusOr<v1::SupervisorServiceListTasksResponse> FaultScenario::Tasks(bool include_finished) {
  v1::SupervisorServiceListTasksRequest request;
  request.set_datasource(kDatasource);
  request.set_include_finished(include_finished);
  v1::SupervisorServiceListTasksResponse response;
  SLUICE_RETURN_IF_ERROR(
      CallSupervisor([&](v1::SupervisorService::Stub* stub, grpc::ClientContext* c) {
        return stub->ListTasks(c, request, &response);
      }));
  return response;
}

absl::StatusOr<int> FaultScenario::WorkerWithTasks(const std::vector<v1::TaskState>& states) {
  SLUICE_ASSIGN_OR_RETURN(v1::SupervisorServiceListTasksResponse tasks, Tasks());
  std::map<int, int> count;
  for (const v1::SupervisorTaskRecord& t : tasks.tasks()) {
    if (std::find(states.begin(), states.end(), t.state()) == states.end()) continue;
    int index = -1;
    if (absl::StartsWith(t.worker_id(), "worker-") &&
        absl::SimpleAtoi(t.worker_id().substr(7), &index)) {
      ++count[index];
    }
  }
  if (count.empty()) return absl::NotFoundError("no worker runs such a task");
  return std::max_element(count.begin(), count.end(),
                          [](const auto& a, const auto& b) { return a.second < b.second; })
      ->first;
}

absl::StatusOr<int> FaultScenario::WaitForWorkerWithTasks(
    absl::Duration timeout, const std::vector<v1::TaskState>& states) {
  int worker = -1;
  SLUICE_RETURN_IF_ERROR(WaitUntil("a worker runs a task in the wanted state", timeout,
                                   [&]() -> absl::StatusOr<bool> {
                                     absl::StatusOr<int> w = WorkerWithTasks(states);
                                     if (!w.ok()) return w.status();
                                     worker = *w;
                                     return true;
                                   }));
  return worker;
}

// ---- waiting ----

absl::Status FaultScenario::WaitUntil(const std::string& what, absl::Duration timeout,
                                      const std::function<absl::StatusOr<bool>()>& condition) {
  const absl::Time deadline = absl::Now() + timeout;
  absl::Status last = absl::OkStatus();
  while (true) {
    absl::StatusOr<bool> done = condition();
    if (done.ok() && *done) return absl::OkStatus();
    if (!done.ok()) last = done.status();
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("scenario ", options_.name, ": waited ", absl::FormatDuration(timeout),
                       " for: ", what, last.ok() ? "" : absl::StrCat(" (last error: ",
                                                                    last.ToString(), ")"),
                       "\n", Context()));
    }
    absl::SleepFor(kPollInterval);
  }
}

absl::Status FaultScenario::WaitUntilCommittedSequences(int n, absl::Duration timeout) {
  return WaitUntil(absl::StrCat(n, " committed sequences"), timeout,
                   [&]() -> absl::StatusOr<bool> {
                     SLUICE_ASSIGN_OR_RETURN(v1::GetCommitLogResponse log, CommitLog());
                     return log.sequences_size() >= n;
                   });
}

absl::Status FaultScenario::WaitUntilAllCommitted(absl::Duration timeout) {
  return WaitUntil(
      absl::StrCat("every partition committed through what was produced ",
                   FormatPartitionOffsets(produced().end_offsets)),
      timeout, [&]() -> absl::StatusOr<bool> {
        SLUICE_ASSIGN_OR_RETURN(v1::GetCommitLogResponse log, CommitLog());
        // With a topic pattern the ids appear as the supervisor finds topics.
        absl::StatusOr<Produced> target = ProducedByStreamPartition(log);
        if (!target.ok()) return false;
        for (const auto& [p, end] : target->end_offsets) {
          auto c = log.committed_offsets().find(p);
          if (c == log.committed_offsets().end() || c->second < end) return false;
        }
        return true;
      });
}

absl::Status FaultScenario::WaitForLog(const std::string& process, const std::string& text,
                                       absl::Duration timeout) {
  return WaitUntil(absl::StrCat("\"", text, "\" in the log of ", process), timeout,
                   [&]() -> absl::StatusOr<bool> {
                     absl::StatusOr<std::string> log = ReadFile(cluster_->log_path(process));
                     return log.ok() && absl::StrContains(*log, text);
                   });
}

// ---- the end ----

audit::AuditReport FaultScenario::Audit(const PartitionOffsets& reset) {
  const Produced target = produced();
  audit::AuditReport failed;
  failed.datasource = kDatasource;
  absl::StatusOr<audit::AuditInputs> inputs =
      audit::FetchAuditInputs(*supervisor(), kDatasource, kRpcTimeout);
  if (!inputs.ok()) {
    failed.discrepancies.push_back(
        absl::StrCat("cannot read the commit log and segments: ", inputs.status().ToString()));
    return failed;
  }
  kafka::KafkaProperties properties(options_.consumer_properties.begin(),
                                    options_.consumer_properties.end());
  properties["bootstrap.servers"] = cluster_->bootstrap_servers();
  if (options_.audit_secret_policy.has_value()) {
    for (const auto& [name, value] : options_.spec_only_consumer_properties) {
      properties[name] = value;
    }
    if (!options_.spec_bootstrap_servers.empty()) {
      properties["bootstrap.servers"] = options_.spec_bootstrap_servers;
    }
    absl::StatusOr<kafka::KafkaProperties> resolved =
        kafka::ResolveSecretReferences(properties, *options_.audit_secret_policy);
    if (!resolved.ok()) {
      failed.discrepancies.push_back(absl::StrCat(
          "cannot resolve the spec's secret references: ", resolved.status().ToString()));
      return failed;
    }
    properties = *std::move(resolved);
  }
  absl::StatusOr<std::unique_ptr<audit::KafkaRecordCounter>> counter =
      audit::KafkaRecordCounter::Create(
          {.properties = properties,
           .cluster = options_.external_bootstrap_servers.empty() ? kafka::ClusterKind::kDevBroker
                                                                  : kafka::ClusterKind::kKafka,
           .idle_timeout = absl::Seconds(60)});
  if (!counter.ok()) {
    failed.discrepancies.push_back(
        absl::StrCat("cannot read Kafka: ", counter.status().ToString()));
    return failed;
  }
  // Segments in S3 are downloaded (to a scratch directory), checked and
  // removed; file:// ones are read in place.
  std::unique_ptr<DeepStorage> deep_storage;
  audit::SegmentFileVerifierOptions files;
  if (!options_.s3_endpoint.empty()) {
    DeepStorageOptions deep_options;
    deep_options.s3.endpoint = options_.s3_endpoint;
    deep_options.s3.path_style = true;
    deep_options.s3.credentials = options_.s3_credentials;
    absl::StatusOr<std::unique_ptr<DeepStorage>> opened =
        OpenDeepStorage(cluster_->deep_storage_uri(), deep_options);
    if (!opened.ok()) {
      failed.discrepancies.push_back(absl::StrCat("cannot open the deep storage ",
                                                  cluster_->deep_storage_uri(), ": ",
                                                  opened.status().ToString()));
      return failed;
    }
    deep_storage = *std::move(opened);
    files.deep_storage = deep_storage.get();
    files.scratch_dir = root_ + "/audit-scratch";
    if (absl::Status made = MakeDirs(files.scratch_dir); !made.ok()) {
      failed.discrepancies.push_back(made.ToString());
      return failed;
    }
  }
  audit::SegmentFileVerifier verifier(files);
  audit::AuditReport report =
      audit::RunAudit(inputs->commit_log, inputs->used_segments, counter->get(), &verifier);
  CheckResetsDeclared(reset, &report);
  // An Iceberg datasource's table, audited from its files with the same
  // Kafka counts, as `sluicectl verify` does.
  if (inputs->status.has_value() && inputs->status->has_iceberg_table() &&
      !inputs->status->iceberg_table().metadata_location().empty()) {
    audit::TableAuditOptions table_options;
    table_options.metadata_location = inputs->status->iceberg_table().metadata_location();
    v1::GetSupervisorRequest spec_request;
    spec_request.set_datasource(kDatasource);
    v1::GetSupervisorResponse spec;
    grpc::ClientContext spec_ctx;
    spec_ctx.set_deadline(absl::ToChronoTime(absl::Now() + kRpcTimeout));
    if (supervisor()->GetSupervisor(&spec_ctx, spec_request, &spec).ok()) {
      audit::SetRecordAccounting(spec.spec(), &table_options);
    }
    audit::DeepStorageFileReader table_files(files.deep_storage, files.scratch_dir);
    const std::vector<v1::SegmentDescriptor> all(inputs->segments.segments().begin(),
                                                 inputs->segments.segments().end());
    const audit::TableAuditReport table = audit::RunTableAudit(
        inputs->commit_log, all, report.records_by_sequence, table_options, &table_files);
    LOG(INFO) << "[scenario " << options_.name << "] " << table.ToString();
    for (const std::string& d : table.discrepancies) {
      report.discrepancies.push_back(absl::StrCat("Iceberg table: ", d));
    }
    // Every segment, compacted away or not, is listed: each append snapshot
    // is compared with what its sequence published.
    for (const std::string& n : table.notes) {
      if (absl::StrContains(n, "are not listed")) {
        report.discrepancies.push_back(absl::StrCat("Iceberg table, not checked: ", n));
      }
    }
  }
  absl::StatusOr<Produced> by_id = ProducedByStreamPartition(inputs->commit_log);
  if (!by_id.ok()) {
    report.discrepancies.push_back(std::string(by_id.status().message()));
  } else {
    CheckCommittedThrough(inputs->commit_log, by_id->end_offsets, &report);
  }
  if (reset.empty()) {
    CheckExpectedTotals(target, !options_.late_message_rejection_start.empty(), &report);
  }
  return report;
}

absl::Status FaultScenario::Finish(const PartitionOffsets& reset, absl::Duration timeout) {
  SLUICE_RETURN_IF_ERROR(WaitProduced());
  const absl::Status committed = WaitUntilAllCommitted(timeout);
  const audit::AuditReport report = Audit(reset);
  const absl::Status alive = cluster_->CheckAlive();
  if (committed.ok() && report.ok() && alive.ok()) {
    LOG(INFO) << "[scenario " << options_.name << "] " << report.ToString();
    return absl::OkStatus();
  }
  std::string message = absl::StrCat("scenario ", options_.name, " failed.\n", report.ToString());
  if (!alive.ok()) absl::StrAppend(&message, "\nprocesses: ", alive.message());
  if (!committed.ok()) {
    absl::StrAppend(&message, "\nnot everything was committed: ", committed.message());
  } else {
    absl::StrAppend(&message, "\n", Context());
  }
  return absl::InternalError(message);
}

std::string FaultScenario::CopyLogsOnce() {
  if (!logs_copied_to_.empty()) return logs_copied_to_;
  const char* outputs = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR");
  if (outputs == nullptr) return "";
  const std::string to = absl::StrCat(outputs, "/", options_.name, "-logs");
  if (CopyDir(root_ + "/logs", to).ok()) logs_copied_to_ = to;
  return logs_copied_to_;
}

std::string FaultScenario::Context() {
  std::string out = absl::StrCat("scenario ", options_.name, ": process logs in ", root_, "/logs");
  if (const std::string copy = CopyLogsOnce(); !copy.empty()) {
    absl::StrAppend(&out, " (copied to ", copy,
                    ", kept in bazel-testlogs/<test>/test.outputs/outputs.zip)");
  }
  absl::StrAppend(&out, "\n");
  if (absl::Status alive = cluster_->CheckAlive(); !alive.ok()) {
    absl::StrAppend(&out, "dead processes: ", alive.message().substr(0, 3000), "\n");
  }
  if (options_.supervisors > 1) {
    // Briefly: without a leader every call below would wait for one.
    absl::StatusOr<std::string> leader = cluster_->LeaderSupervisor(absl::Seconds(3));
    if (!leader.ok()) {
      absl::StrAppend(&out, "supervisors: ", leader.status().message(), "\n");
      return out;
    }
    absl::StrAppend(&out, "leading supervisor: ", *leader, "\n");
  }
  absl::StatusOr<v1::SupervisorStatus> status = Status();
  if (!status.ok()) {
    absl::StrAppend(&out, "supervisor status: ", status.status().ToString(), "\n");
    return out;
  }
  absl::StrAppend(&out, "supervisor: ", v1::SupervisorState_Name(status->state()), " (",
                  status->detailed_state(), "), committed ",
                  FormatProtoOffsets(status->committed_offsets()), ", latest ",
                  FormatProtoOffsets(status->latest_offsets()), ", produced ",
                  FormatPartitionOffsets(produced().end_offsets), "\n");
  auto groups = [&out](const char* kind, const auto& list) {
    for (const v1::TaskGroupStatus& g : list) {
      absl::StrAppend(&out, "  ", kind, " group ", g.group_id(), " ", g.base_sequence_name(),
                      ": ", g.checkpoints_size(), " checkpoints\n");
      for (const v1::TaskSummary& t : g.tasks()) {
        absl::StrAppend(&out, "    ", t.task_id(), " on ", t.worker_id(), " ",
                        v1::TaskState_Name(t.state()), " at ",
                        FormatProtoOffsets(t.current_offsets()), "\n");
      }
    }
  };
  groups("reading", status->active_groups());
  groups("publishing", status->publishing_groups());
  for (const v1::ErrorEvent& e : status->recent_errors()) {
    absl::StrAppend(&out, "  error at ", FormatIsoInstant(e.time_ms()), ": ",
                    e.message().substr(0, 400), "\n");
  }
  if (absl::StatusOr<v1::SupervisorServiceListTasksResponse> tasks = Tasks(true); tasks.ok()) {
    for (const v1::SupervisorTaskRecord& t : tasks->tasks()) {
      if (t.error().empty()) continue;
      absl::StrAppend(&out, "  task ", t.task_id(), " (", v1::TaskState_Name(t.state()), " on ",
                      t.worker_id(), "): ", t.error().substr(0, 300), "\n");
    }
  }
  return out;
}

}  // namespace sluice::fault
