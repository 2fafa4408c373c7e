#include "bench/e2e/sluice_run.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "bench/e2e/process_cpu.h"
#include "common/status_macros.h"
#include "tools/cluster/wiki_datasource.h"
#include "sluice/v1/supervisor_service.grpc.pb.h"
#include "sluice/v1/task_service.grpc.pb.h"

namespace sluice {
namespace bench {
namespace {

constexpr absl::Duration kCallTimeout = absl::Seconds(10);

template <typename Stub, typename Method, typename Request, typename Response>
absl::Status Call(Stub* stub, Method method, const Request& request, Response* response) {
  grpc::ClientContext ctx;
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + kCallTimeout));
  const grpc::Status status = (stub->*method)(&ctx, request, response);
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
}

// tools/cluster's wiki spec (the one the demo and the fault suite run), with
// what a benchmark run varies.
v1::SupervisorSpec MakeSpec(const SluiceRunOptions& options) {
  cluster::WikiSpecOptions wiki;
  wiki.datasource = options.datasource;
  wiki.topic = options.topic;
  wiki.bootstrap_servers = options.bootstrap;
  wiki.replicas = options.replicas;
  wiki.task_count = options.task_count;
  wiki.period = "PT1S";
  wiki.segment_granularity = options.segment_granularity;
  wiki.query_granularity = options.query_granularity;
  wiki.rollup = options.rollup;
  if (options.max_rows_per_segment > 0) wiki.max_rows_per_segment = options.max_rows_per_segment;
  if (options.max_rows_in_memory > 0) wiki.max_rows_in_memory = options.max_rows_in_memory;
  v1::SupervisorSpec spec = cluster::WikiSpec(wiki);
  for (const auto& [name, value] : options.consumer_properties) {
    (*spec.mutable_io_config()->mutable_consumer_properties())[name] = value;
  }
  if (!options.dimensions.empty()) {
    v1::DimensionsSpec* dimensions = spec.mutable_data_schema()->mutable_dimensions_spec();
    dimensions->clear_dimensions();
    for (const std::string& d : options.dimensions) dimensions->add_dimensions(d);
  }
  if (options.max_bytes_in_memory > 0) {
    spec.mutable_tuning_config()->set_max_bytes_in_memory(options.max_bytes_in_memory);
  }
  if (options.iceberg_table) spec.mutable_iceberg_table();
  return spec;
}

bool ReachedEnd(const google::protobuf::Map<int32_t, int64_t>& offsets,
                const std::map<int32_t, int64_t>& end) {
  for (const auto& [p, e] : end) {
    const auto it = offsets.find(p);
    if (it == offsets.end() || it->second < e) return false;
  }
  return true;
}

// A task's own partitions (those its offsets name) read to their end.
bool TaskReachedEnd(const google::protobuf::Map<int32_t, int64_t>& offsets,
                    const std::map<int32_t, int64_t>& end) {
  if (offsets.empty()) return false;
  for (const auto& [p, o] : offsets) {
    const auto it = end.find(p);
    if (it != end.end() && o < it->second) return false;
  }
  return true;
}

int64_t NowMs() { return absl::ToUnixMillis(absl::Now()); }

}  // namespace

double SluiceRunResult::RecordsPerSecond() const {
  const int64_t ms = last_commit_ms - task_start_ms;
  return ms > 0 ? static_cast<double>(records) * 1000.0 / static_cast<double>(ms) : 0;
}

double SluiceRunResult::WorkerCpuPerRecordNs() const {
  return CpuNanosPerRecord(worker_cpu, records);
}

double SluiceRunResult::BrokerCpuPerRecordNs() const {
  return CpuNanosPerRecord(broker_cpu, records);
}

namespace {

// CPU used so far by every worker together.
absl::StatusOr<absl::Duration> WorkersCpu(const BenchCluster& processes) {
  absl::Duration total;
  for (int i = 0; i < processes.worker_count(); ++i) {
    SLUICE_ASSIGN_OR_RETURN(const absl::Duration cpu, ProcessCpu(processes.WorkerPid(i)));
    total += cpu;
  }
  return total;
}

}  // namespace

absl::StatusOr<SluiceRunResult> RunSluice(BenchCluster& processes,
                                          const SluiceRunOptions& options) {
  const int tasks_expected = options.task_count * options.replicas;
  if (processes.worker_count() < options.replicas) {
    return absl::InvalidArgumentError(absl::StrCat(options.replicas, " replicas need as many ",
                                                   "workers; there are ",
                                                   processes.worker_count()));
  }
  using Supervisor = v1::SupervisorService::Stub;
  using Worker = v1::TaskService::Stub;
  std::unique_ptr<Supervisor> supervisor = processes.SupervisorStub();
  std::map<std::string, std::unique_ptr<Worker>> workers;
  for (int i = 0; i < processes.worker_count(); ++i) {
    workers[processes.WorkerId(i)] = processes.WorkerStub(i);
  }
  v1::SuspendSupervisorRequest suspend;
  suspend.set_datasource(options.datasource);
  v1::GetCommitLogRequest commit_log;
  commit_log.set_datasource(options.datasource);
  const absl::Time deadline = absl::Now() + options.timeout;
  auto timed_out = [&](absl::string_view waiting_for) -> absl::Status {
    if (absl::Now() < deadline) return absl::OkStatus();
    return absl::DeadlineExceededError(absl::StrCat(options.datasource, ": timed out waiting for ",
                                                    waiting_for, "; logs under ",
                                                    processes.SupervisorLog()));
  };

  SLUICE_ASSIGN_OR_RETURN(const absl::Duration workers_cpu_before, WorkersCpu(processes));
  SLUICE_ASSIGN_OR_RETURN(const absl::Duration broker_cpu_before,
                          ProcessCpu(processes.BrokerPid()));
  v1::SubmitSupervisorRequest submit;
  *submit.mutable_spec() = MakeSpec(options);
  v1::SubmitSupervisorResponse submitted;
  SLUICE_RETURN_IF_ERROR(Call(supervisor.get(), &Supervisor::SubmitSupervisor, submit, &submitted));
  if (options.after_submit) options.after_submit();

  SluiceRunResult result;
  // 1. Until every replica has read to the end of every partition.
  std::map<std::string, std::string> task_worker;  // task id -> worker id
  while (true) {
    SLUICE_RETURN_IF_ERROR(timed_out("the tasks to read the topic"));
    // The supervisor is asked only until every replica is placed: its
    // metadata store is shared with the checkpoints and publishes measured.
    if (static_cast<int>(task_worker.size()) < tasks_expected) {
      v1::SupervisorServiceListTasksRequest list;
      list.set_datasource(options.datasource);
      v1::SupervisorServiceListTasksResponse tasks;
      SLUICE_RETURN_IF_ERROR(Call(supervisor.get(), &Supervisor::ListTasks, list, &tasks));
      for (const v1::SupervisorTaskRecord& t : tasks.tasks()) {
        if (!t.worker_id().empty()) task_worker[t.task_id()] = t.worker_id();
      }
    }
    int at_end = 0;
    for (const auto& [task_id, worker_id] : task_worker) {
      auto worker = workers.find(worker_id);
      if (worker == workers.end()) continue;
      v1::GetTaskStatusRequest task_ref;
      task_ref.set_task_id(task_id);
      v1::GetTaskStatusResponse got;
      if (!Call(worker->second.get(), &Worker::GetTaskStatus, task_ref, &got).ok()) continue;
      const v1::TaskStatus& status = got.status();
      if (status.state() == v1::TASK_STATE_FAILED) {
        return absl::InternalError(absl::StrCat("task ", task_id, " failed: ", status.error()));
      }
      if (status.start_time_ms() > 0 &&
          (result.task_start_ms == 0 || status.start_time_ms() < result.task_start_ms)) {
        result.task_start_ms = status.start_time_ms();
      }
      if (TaskReachedEnd(status.current_offsets(), options.end_offsets)) ++at_end;
    }
    if (at_end >= tasks_expected) break;
    absl::SleepFor(options.poll_interval);
  }
  result.all_read_seen_ms = NowMs();

  // 2. Suspend: the group is finalized at what the replicas read, and its
  // last sequence published.
  v1::SuspendSupervisorResponse summary;
  SLUICE_RETURN_IF_ERROR(Call(supervisor.get(), &Supervisor::SuspendSupervisor, suspend, &summary));
  v1::GetCommitLogResponse log;
  while (true) {
    SLUICE_RETURN_IF_ERROR(timed_out("the last commit"));
    SLUICE_RETURN_IF_ERROR(Call(supervisor.get(), &Supervisor::GetCommitLog, commit_log, &log));
    if (ReachedEnd(log.committed_offsets(), options.end_offsets)) break;
    absl::SleepFor(options.poll_interval);
  }

  // 3. Until every task ended (published and handed off), so that the
  // handoff and publish metrics are complete. Once a replica succeeded the
  // supervisor stops the others (STOPPED).
  while (true) {
    SLUICE_RETURN_IF_ERROR(timed_out("the tasks to finish"));
    v1::SupervisorServiceListTasksRequest list;
    list.set_datasource(options.datasource);
    list.set_include_finished(true);
    v1::SupervisorServiceListTasksResponse tasks;
    SLUICE_RETURN_IF_ERROR(Call(supervisor.get(), &Supervisor::ListTasks, list, &tasks));
    int succeeded = 0;
    int ended = 0;
    for (const v1::SupervisorTaskRecord& t : tasks.tasks()) {
      if (t.state() == v1::TASK_STATE_FAILED) {
        return absl::InternalError(absl::StrCat("task ", t.task_id(), " failed: ", t.error()));
      }
      if (t.state() == v1::TASK_STATE_SUCCESS) ++succeeded;
      if (t.state() == v1::TASK_STATE_SUCCESS || t.state() == v1::TASK_STATE_STOPPED) ++ended;
    }
    if (succeeded > 0 && ended == tasks.tasks_size()) break;
    absl::SleepFor(absl::Milliseconds(100));
  }
  SLUICE_ASSIGN_OR_RETURN(const absl::Duration workers_cpu_after, WorkersCpu(processes));
  SLUICE_ASSIGN_OR_RETURN(const absl::Duration broker_cpu_after,
                          ProcessCpu(processes.BrokerPid()));
  result.worker_cpu = workers_cpu_after - workers_cpu_before;
  result.broker_cpu = broker_cpu_after - broker_cpu_before;

  // 4. What the commit log and the segment list say.
  for (const v1::CommittedSequence& s : log.sequences()) {
    ++result.sequences;
    result.commit_times_ms.push_back(s.committed_at_ms());
    result.last_commit_ms = std::max(result.last_commit_ms, s.committed_at_ms());
    for (const v1::PartitionRange& r : s.partition_stats()) {
      result.rows += r.rows();
      result.unparseable += r.unparseable();
      result.thrown_away += r.thrown_away();
    }
  }
  result.records = result.rows + result.unparseable + result.thrown_away;
  int64_t expected = 0;
  for (const auto& [p, e] : options.end_offsets) {
    const auto s = options.start_offsets.find(p);
    expected += e - (s == options.start_offsets.end() ? 0 : s->second);
  }
  if (result.records != expected) {
    return absl::DataLossError(
        absl::StrCat(options.datasource, ": the commit log accounts for ", result.records,
                     " records (", result.rows, " rows, ", result.unparseable, " unparseable, ",
                     result.thrown_away, " thrown away); the topic holds ", expected));
  }
  v1::ListSegmentsRequest segments_request;
  segments_request.set_datasource(options.datasource);
  v1::ListSegmentsResponse segments;
  SLUICE_RETURN_IF_ERROR(
      Call(supervisor.get(), &Supervisor::ListSegments, segments_request, &segments));
  for (const v1::SegmentDescriptor& d : segments.segments()) {
    ++result.segments;
    result.segment_rows += d.num_rows();
    result.segment_bytes += d.size_bytes();
  }

  // 5. The services' histograms and the workers' peak RSS.
  const std::map<std::string, std::string> labels = {{"datasource", options.datasource}};
  SLUICE_ASSIGN_OR_RETURN(const std::string supervisor_text, processes.ScrapeSupervisor());
  SLUICE_ASSIGN_OR_RETURN(std::vector<PromSample> supervisor_samples,
                          ParsePromText(supervisor_text));
  SLUICE_ASSIGN_OR_RETURN(
      result.supervisor_checkpoint_seconds,
      MergedHistogram(supervisor_samples, "sluice_supervisor_checkpoint_seconds", labels));
  SLUICE_ASSIGN_OR_RETURN(result.supervisor_publish_transaction_seconds,
                          MergedHistogram(supervisor_samples,
                                          "sluice_supervisor_publish_transaction_seconds", labels));
  SLUICE_ASSIGN_OR_RETURN(
      result.supervisor_iceberg_stage_seconds,
      MergedHistogram(supervisor_samples, "sluice_supervisor_iceberg_stage_seconds", labels));
  result.pauseless_rounds =
      SumSamples(supervisor_samples, "sluice_supervisor_pauseless_checkpoints_total", labels);
  result.fallback_rounds =
      SumSamples(supervisor_samples, "sluice_supervisor_checkpoint_fallbacks_total", labels);
  std::vector<PromSample> worker_samples;
  for (int i = 0; i < processes.worker_count(); ++i) {
    SLUICE_ASSIGN_OR_RETURN(const std::string text, processes.ScrapeWorker(i));
    SLUICE_ASSIGN_OR_RETURN(std::vector<PromSample> samples, ParsePromText(text));
    worker_samples.insert(worker_samples.end(), samples.begin(), samples.end());
    int tasks_here = 0;
    for (const auto& [task_id, worker_id] : task_worker)
      tasks_here += worker_id == processes.WorkerId(i) ? 1 : 0;
    if (tasks_here > 0) {
      SLUICE_ASSIGN_OR_RETURN(const int64_t rss, PeakRssBytes(processes.WorkerPid(i)));
      result.worker_peak_rss_bytes.push_back(rss);
      result.worker_tasks.push_back(tasks_here);
    }
  }
  SLUICE_ASSIGN_OR_RETURN(
      result.task_checkpoint_seconds,
      MergedHistogram(worker_samples, "sluice_task_checkpoint_seconds", labels));
  SLUICE_ASSIGN_OR_RETURN(
      result.task_checkpoint_paused_seconds,
      MergedHistogram(worker_samples, "sluice_task_checkpoint_paused_seconds", labels));
  SLUICE_ASSIGN_OR_RETURN(result.task_publish_seconds,
                          MergedHistogram(worker_samples, "sluice_task_publish_seconds", labels));
  SLUICE_ASSIGN_OR_RETURN(result.worker_pause_seconds,
                          MergedHistogram(worker_samples, "sluice_grpc_server_handling_seconds",
                                          {{"grpc_method", "Pause"}}));
  SLUICE_ASSIGN_OR_RETURN(result.worker_set_end_offsets_seconds,
                          MergedHistogram(worker_samples, "sluice_grpc_server_handling_seconds",
                                          {{"grpc_method", "SetEndOffsets"}}));
  SLUICE_ASSIGN_OR_RETURN(result.task_persist_seconds,
                          MergedHistogram(worker_samples, "sluice_task_persist_seconds", labels));
  return result;
}

}  // namespace bench
}  // namespace sluice
