#include "tools/cli/format.h"

#include <google/protobuf/struct.pb.h>

#include <algorithm>
#include <cinttypes>
#include <map>
#include <set>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "common/enum_names.h"
#include "common/proto_json.h"
#include "common/time_util.h"
#include "tools/cli/table.h"

namespace sluice {
namespace sluicectl {
namespace {

constexpr int64_t kEndOfPartition = INT64_MAX;

template <typename Map>
std::vector<int32_t> SortedKeys(const Map& map) {
  std::vector<int32_t> keys;
  for (const auto& [key, value] : map) keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  return keys;
}

std::string OffsetValue(int64_t offset) {
  return offset == kEndOfPartition ? "end" : absl::StrCat(offset);
}

std::string Lookup(const google::protobuf::Map<int32_t, int64_t>& map, int32_t key) {
  auto it = map.find(key);
  return it == map.end() ? "-" : OffsetValue(it->second);
}

// "wiki_..." -> lower-case state names without the enum prefix noise.
std::string HandoffName(v1::HandoffState state) {
  switch (state) {
    case v1::HANDOFF_STATE_PENDING:
      return "pending";
    case v1::HANDOFF_STATE_HANDED_OFF:
      return "handed-off";
    case v1::HANDOFF_STATE_FAILED:
      return "FAILED";
    default:
      return "-";
  }
}

std::string Label(absl::string_view label, absl::string_view value) {
  return absl::StrFormat("%-14s %s\n", absl::StrCat(label, ":"), value);
}

std::string Partitions(const google::protobuf::RepeatedField<int32_t>& partitions) {
  std::vector<int32_t> sorted(partitions.begin(), partitions.end());
  std::sort(sorted.begin(), sorted.end());
  return sorted.empty() ? "-" : absl::StrJoin(sorted, ",");
}

std::string GroupTables(absl::string_view title,
                        const google::protobuf::RepeatedPtrField<v1::TaskGroupStatus>& groups,
                        bool publishing) {
  std::string out = absl::StrCat(title, ": ", groups.size(), "\n");
  for (const v1::TaskGroupStatus& group : groups) {
    Table t({"GROUP", "BASE SEQUENCE", "PARTITIONS", "START OFFSETS",
             publishing ? "END OFFSETS" : "CHECKPOINTS", publishing ? "TIMEOUT IN" : "ROLLS IN"},
            {Table::kRight, Table::kLeft, Table::kLeft, Table::kLeft,
             publishing ? Table::kLeft : Table::kRight});
    t.AddRow(
        {absl::StrCat(group.group_id()), group.base_sequence_name(), Partitions(group.partitions()),
         FormatOffsets(group.start_offsets()),
         publishing ? FormatOffsets(group.end_offsets()) : absl::StrCat(group.checkpoints_size()),
         FormatDurationMs(group.remaining_ms())});
    out += t.Render("  ");
    if (group.tasks_size() > 0) {
      Table tasks({"TASK", "WORKER", "STATE", "CURRENT OFFSETS", "STARTED"});
      for (const v1::TaskSummary& task : group.tasks()) {
        tasks.AddRow({task.task_id(), task.worker_id().empty() ? "-" : task.worker_id(),
                      ShortEnumName(task.state()), FormatOffsets(task.current_offsets()),
                      FormatTimeMs(task.start_time_ms())});
      }
      out += tasks.Render("    ");
    }
  }
  return out;
}

int64_t Sum(const google::protobuf::RepeatedPtrField<v1::PartitionRange>& ranges,
            int64_t (v1::PartitionRange::*field)() const) {
  int64_t total = 0;
  for (const v1::PartitionRange& r : ranges) total += (r.*field)();
  return total;
}

// The commit log's sequences, one row each.
std::string CommitLogSequences(const v1::GetCommitLogResponse& response) {
  Table t(
      {"SEQUENCE", "TASK", "COMMITTED", "RANGES", "ROWS", "UNPARSEABLE", "THROWN AWAY", "SEGMENTS"},
      {Table::kLeft, Table::kLeft, Table::kLeft, Table::kLeft, Table::kRight, Table::kRight,
       Table::kRight, Table::kRight});
  for (const v1::CommittedSequence& s : response.sequences()) {
    std::vector<std::string> ranges;
    for (int32_t p : SortedKeys(s.start_offsets())) {
      auto end = s.end_offsets().find(p);
      ranges.push_back(absl::StrCat(p, ":[", s.start_offsets().at(p), ",",
                                    end == s.end_offsets().end() ? "?" : OffsetValue(end->second),
                                    ")"));
    }
    t.AddRow({s.sequence_name(), s.task_id().empty() ? "-" : s.task_id(),
              FormatTimeMs(s.committed_at_ms()), ranges.empty() ? "-" : absl::StrJoin(ranges, " "),
              absl::StrCat(Sum(s.partition_stats(), &v1::PartitionRange::rows)),
              absl::StrCat(Sum(s.partition_stats(), &v1::PartitionRange::unparseable)),
              absl::StrCat(Sum(s.partition_stats(), &v1::PartitionRange::thrown_away)),
              absl::StrCat(s.segment_ids_size())});
  }
  return t.Render();
}

}  // namespace

std::string FormatOffsets(const google::protobuf::Map<int32_t, int64_t>& offsets) {
  if (offsets.empty()) return "-";
  std::vector<std::string> parts;
  for (int32_t partition : SortedKeys(offsets)) {
    parts.push_back(absl::StrCat(partition, ":", OffsetValue(offsets.at(partition))));
  }
  return absl::StrJoin(parts, " ");
}

std::string FormatTimeMs(int64_t epoch_ms) {
  return epoch_ms == 0 ? "-" : FormatIsoInstant(epoch_ms);
}

std::string FormatDurationMs(int64_t ms) {
  if (ms == 0) return "-";
  if (ms < 0) return absl::StrCat("overdue ", absl::FormatDuration(absl::Milliseconds(-ms)));
  // Whole seconds read better than 41m20.123s.
  return absl::FormatDuration(ms >= 1000 ? absl::Seconds(ms / 1000) : absl::Milliseconds(ms));
}

std::string FormatBytes(int64_t bytes) {
  static const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return absl::StrCat(bytes, " B");
  double value = static_cast<double>(bytes);
  int unit = -1;
  while (value >= 1024 && unit < 3) {
    value /= 1024;
    ++unit;
  }
  return absl::StrFormat("%.1f %s", value, kUnits[unit]);
}

std::string YesNo(bool value) { return value ? "yes" : "no"; }

std::string ToJson(const google::protobuf::Message& message) {
  // Offsets and counts as numbers (1200), not proto3's strings ("1200").
  absl::StatusOr<std::string> out =
      ProtoToJson(message, {.pretty = true, .int64_as_numbers = true});
  if (!out.ok()) return absl::StrCat("{\"error\": \"", out.status().message(), "\"}\n");
  if (out->empty() || out->back() != '\n') *out += '\n';
  return *std::move(out);
}

std::string FormatSubmit(const v1::SubmitSupervisorResponse& response) {
  std::string what;
  switch (response.update()) {
    case v1::SPEC_UPDATE_UNCHANGED:
      what = "unchanged: same as the stored spec, nothing restarted";
      break;
    case v1::SPEC_UPDATE_APPLIED_LIVE:
      what = "applied live: running tasks keep reading";
      break;
    case v1::SPEC_UPDATE_RESTARTED:
      what = "replaced the running spec; its tasks finish and publish first";
      break;
    default:  // CREATED, or an older supervisor that does not say
      what = response.unchanged()  ? "unchanged: same as the stored spec, nothing restarted"
             : response.replaced() ? "replaced the running spec; its tasks finish and publish first"
                                   : "new supervisor";
  }
  std::string out = absl::StrCat(response.spec().datasource(), ": stored spec version ",
                                 response.version(), " (", what, ")\n");
  if (!response.changed_fields().empty() && response.update() != v1::SPEC_UPDATE_UNCHANGED) {
    absl::StrAppend(&out, "changed: ", absl::StrJoin(response.changed_fields(), ", "), "\n");
  }
  return out;
}

std::string FormatHandoff(absl::string_view datasource,
                          const v1::HandoffTaskGroupsResponse& response) {
  std::string out;
  if (response.group_ids().empty()) {
    absl::StrAppend(&out, datasource, ": no group handed off\n");
  } else {
    absl::StrAppend(&out, datasource, ": handing off group",
                    response.group_ids_size() == 1 ? " " : "s ",
                    absl::StrJoin(response.group_ids(), ", "),
                    " (sequence closed; it publishes while the group reads on)\n");
  }
  for (const std::string& skipped : response.skipped()) {
    absl::StrAppend(&out, "skipped ", skipped, "\n");
  }
  return out;
}

std::string FormatIntervalMs(const v1::Interval& interval) {
  return absl::StrCat(FormatIsoInstant(interval.start_ms()), "/",
                      FormatIsoInstant(interval.end_ms()));
}

std::string FormatCompactionLines(const v1::CompactionStatus& c) {
  std::string out;
  out += Label("compaction",
               absl::StrCat(c.enabled() ? "automatic" : "on demand only", "; ", c.compactions(),
                            " compaction(s) replaced ", c.segments_replaced(), " segment(s), ",
                            c.rows_compacted(), " row(s); ", c.conflicts(),
                            " lost a race and were planned again"));
  if (c.has_running()) out += Label("compacting", FormatIntervalMs(c.running()));
  if (!c.recent().empty()) {
    const v1::CompactionRecord& r = c.recent(0);
    out += Label("last compacted",
                 absl::StrCat(FormatIntervalMs(r.interval()), ": ", r.input_segments(),
                              " segment(s) into ", r.output_segments(), ", ", r.rows(),
                              " row(s) in ", r.duration_ms(), " ms at ",
                              FormatTimeMs(r.committed_at_ms()),
                              r.snapshot_id() != 0 ? absl::StrCat(", snapshot ", r.snapshot_id())
                                                   : std::string()));
  }
  for (const v1::PendingCompaction& p : c.pending()) {
    out += Label("to compact", absl::StrCat(FormatIntervalMs(p.interval()), ": ", p.segments(),
                                            " segment(s), ", p.rows(), " row(s): ", p.reason()));
  }
  if (c.snapshots_expired() > 0) {
    out += Label("expired", absl::StrCat(c.snapshots_expired(), " Iceberg snapshot(s)"));
  }
  if (!c.last_error().empty()) {
    out += Label("compaction error",
                 absl::StrCat(FormatTimeMs(c.last_error_ms()), ": ", c.last_error()));
  }
  return out;
}

std::string FormatCompact(absl::string_view datasource,
                          const v1::CompactDataSourceResponse& response) {
  std::string out;
  if (response.queued().empty()) {
    absl::StrAppend(&out, datasource, ": nothing to compact\n");
  } else {
    absl::StrAppend(&out, datasource, ": compacting ", response.queued_size(),
                    " interval(s) in the background (sluicectl status shows progress)\n");
    for (const v1::Interval& interval : response.queued()) {
      absl::StrAppend(&out, "queued ", FormatIntervalMs(interval), "\n");
    }
  }
  for (const v1::PendingCompaction& p : response.skipped()) {
    absl::StrAppend(&out, "skipped ", FormatIntervalMs(p.interval()), ": ", p.reason(), "\n");
  }
  return out;
}

std::string FormatSpec(const v1::GetSupervisorResponse& response) {
  return absl::StrCat("# ", response.spec().datasource(), ", spec version ", response.version(),
                      "\n", ToJson(response.spec()));
}

std::string FormatSupervisorList(const v1::ListSupervisorsResponse& response) {
  if (response.supervisors().empty()) return "no supervisors\n";
  Table t({"DATASOURCE", "STATE", "HEALTHY", "SUSPENDED", "SPEC", "MESSAGE"},
          {Table::kLeft, Table::kLeft, Table::kLeft, Table::kLeft, Table::kRight});
  for (const v1::SupervisorSummary& s : response.supervisors()) {
    t.AddRow({s.datasource(), ShortEnumName(s.state()), YesNo(s.healthy()),
              YesNo(s.suspended()), absl::StrCat("v", s.spec_version()), s.message()});
  }
  return t.Render();
}

std::string FormatHistory(absl::string_view datasource,
                          const v1::GetSupervisorHistoryResponse& response) {
  if (response.versions().empty()) return absl::StrCat(datasource, ": no spec history\n");
  Table t({"VERSION", "CREATED", "TERMINATED", "TOPIC", "TASKS", "REPLICAS", "DURATION"},
          {Table::kRight, Table::kLeft, Table::kLeft, Table::kLeft, Table::kRight, Table::kRight});
  for (const v1::SpecVersion& v : response.versions()) {
    const v1::IoConfig& io = v.spec().io_config();
    t.AddRow({absl::StrCat(v.version()), FormatTimeMs(v.created_at_ms()), YesNo(v.terminated()),
              !io.topic_pattern().empty() ? "pattern " + io.topic_pattern()
              : io.topic().empty()        ? "-"
                                          : io.topic(),
              absl::StrCat(io.task_count()),
              absl::StrCat(io.replicas()), io.task_duration().empty() ? "-" : io.task_duration()});
  }
  return t.Render();
}

namespace {

// Stream partition id -> "topic[partition]" (topic-pattern datasources).
std::map<int32_t, std::string> StreamPartitionNames(
    const google::protobuf::RepeatedPtrField<v1::StreamPartition>& partitions) {
  std::map<int32_t, std::string> out;
  for (const v1::StreamPartition& p : partitions) {
    out[p.id()] = absl::StrCat(p.topic(), "[", p.partition(), "]");
  }
  return out;
}

}  // namespace

std::string FormatStatus(const v1::SupervisorStatus& status) {
  std::string out;
  out += Label("datasource", status.datasource());
  std::string state = ShortEnumName(status.state());
  if (!status.detailed_state().empty() && status.detailed_state() != state) {
    absl::StrAppend(&state, " (", status.detailed_state(), ")");
  }
  out += Label("state", state);
  out += Label("healthy", YesNo(status.healthy()));
  out += Label("suspended", YesNo(status.suspended()));
  if (!status.topic_pattern().empty()) {
    std::set<std::string> topics;
    for (const v1::StreamPartition& p : status.stream_partitions()) topics.insert(p.topic());
    out += Label("topic", absl::StrCat("pattern ", status.topic_pattern(), ", ",
                                       status.partitions(), " partition(s) of ", topics.size(),
                                       " topic(s) seen"));
  } else {
    out += Label("topic", absl::StrCat(status.topic().empty() ? "-" : status.topic(), ", ",
                                       status.partitions(), " partition(s)"));
  }
  out += Label("spec version", absl::StrCat(status.spec_version()));
  out += Label("published", absl::StrCat(status.segments_published(), " segment(s)"));
  if (status.segments_failing_verification() > 0) {
    out += Label("damaged", absl::StrCat(status.segments_failing_verification(),
                                         " used segment(s) fail deep-storage verification "
                                         "(sluicectl segments shows which)"));
  }
  if (status.has_iceberg_table()) {
    const v1::IcebergTableStatus& t = status.iceberg_table();
    out += Label("iceberg table",
                 absl::StrCat(t.table_namespace(), ".", t.table_name(), " at ",
                              t.metadata_location().empty() ? "- (no commit yet)"
                                                            : t.metadata_location()));
    if (t.last_commit_ms() > 0) {
      out += Label("last snapshot", absl::StrCat(t.last_snapshot_id(), " at ",
                                                 FormatTimeMs(t.last_commit_ms())));
    }
    if (!t.last_commit_error().empty()) {
      out += Label("table error", absl::StrCat(FormatTimeMs(t.last_commit_error_ms()), ": ",
                                               t.last_commit_error()));
    }
    if (t.orphan_files_removed() > 0) {
      out += Label("orphans removed", absl::StrCat(t.orphan_files_removed(), " file(s)"));
    }
  }
  if (status.has_compaction()) out += FormatCompactionLines(status.compaction());
  out += Label("lag", absl::StrCat(status.aggregate_lag(), " record(s) in total, offsets as of ",
                                   FormatTimeMs(status.offsets_last_updated_ms())));
  if (!status.time_lag_ms().empty()) {
    out += Label("time lag", absl::StrCat(status.max_time_lag_ms(), " ms at most"));
  }
  if (status.has_auto_scaler()) {
    const v1::AutoScalerStatus& a = status.auto_scaler();
    std::string scaler = absl::StrCat(a.task_count(), " task group(s)");
    if (a.pending_task_count() > 0) {
      absl::StrAppend(&scaler, ", ", a.pending_task_count(), " at the next roll-over");
    }
    absl::StrAppend(&scaler, "; ", a.samples(), " lag sample(s), ", a.samples_above_scale_out(),
                    " >= scale-out, ", a.samples_below_scale_in(), " <= scale-in, last ",
                    a.last_lag());
    out += Label("autoscaler", scaler);
    if (a.has_last_decision()) {
      const v1::ScalingDecision& d = a.last_decision();
      out += Label("last scaling", absl::StrCat(d.from_task_count(), " -> ", d.to_task_count(),
                                                " at ", FormatTimeMs(d.applied_at_ms()), ": ",
                                                d.reason()));
    }
  }

  std::set<int32_t> partitions;
  for (const auto* map : {&status.latest_offsets(), &status.current_offsets(),
                          &status.committed_offsets(), &status.lag()}) {
    for (const auto& [partition, offset] : *map) partitions.insert(partition);
  }
  out += "\n";
  if (partitions.empty()) {
    out += "partitions: none known yet\n";
  } else {
    const std::map<int32_t, std::string> names = StreamPartitionNames(status.stream_partitions());
    std::vector<std::string> header = {"PARTITION", "COMMITTED", "CURRENT",
                                       "LATEST",    "LAG",       "TIME LAG MS"};
    std::vector<Table::Align> align(header.size(), Table::kRight);
    if (!names.empty()) {
      header.insert(header.begin() + 1, "TOPIC[PARTITION]");
      align.insert(align.begin() + 1, Table::kLeft);
    }
    Table t(header, align);
    for (int32_t p : partitions) {
      std::vector<std::string> row = {absl::StrCat(p), Lookup(status.committed_offsets(), p),
                                      Lookup(status.current_offsets(), p),
                                      Lookup(status.latest_offsets(), p), Lookup(status.lag(), p),
                                      Lookup(status.time_lag_ms(), p)};
      if (!names.empty()) {
        auto name = names.find(p);
        row.insert(row.begin() + 1, name == names.end() ? "-" : name->second);
      }
      t.AddRow(row);
    }
    out += t.Render();
  }
  out += "\n";
  out += GroupTables("active groups", status.active_groups(), /*publishing=*/false);
  out += GroupTables("publishing groups", status.publishing_groups(), /*publishing=*/true);
  if (!status.recent_errors().empty()) {
    out += "\nrecent errors:\n";
    for (const v1::ErrorEvent& e : status.recent_errors()) {
      absl::StrAppend(&out, "  ", FormatTimeMs(e.time_ms()), "  ", e.message(), "\n");
    }
  }
  return out;
}

std::string FormatSummary(const v1::SupervisorSummary& summary) {
  std::string out =
      absl::StrCat(summary.datasource(), ": ", ShortEnumName(summary.state()), ", ",
                   summary.healthy() ? "healthy" : "UNHEALTHY", ", ",
                   summary.suspended() ? "suspended" : "not suspended", ", spec version ",
                   summary.spec_version());
  if (!summary.message().empty()) absl::StrAppend(&out, ": ", summary.message());
  return out + "\n";
}

std::string FormatSegments(const v1::ListSegmentsResponse& response) {
  if (response.segments().empty()) return "no segments\n";
  Table t({"SEGMENT", "ROWS", "SIZE", "HANDOFF", "USED", "PUBLISHED BY"},
          {Table::kLeft, Table::kRight, Table::kRight});
  int64_t rows = 0;
  int64_t bytes = 0;
  for (const v1::SegmentDescriptor& s : response.segments()) {
    t.AddRow({s.id(), absl::StrCat(s.num_rows()), FormatBytes(s.size_bytes()),
              HandoffName(s.handoff_state()), YesNo(s.used()),
              s.published_by_task().empty() ? "-" : s.published_by_task()});
    rows += s.num_rows();
    bytes += s.size_bytes();
  }
  return absl::StrCat(t.Render(), response.segments_size(), " segment(s), ", rows, " row(s), ",
                      FormatBytes(bytes), "\n");
}

std::string FormatTasks(const v1::SupervisorServiceListTasksResponse& response) {
  if (response.tasks().empty()) return "no tasks\n";
  Table t({"TASK", "DATASOURCE", "GROUP", "WORKER", "STATE", "ROWS", "UNPARSEABLE",
           "CURRENT OFFSETS", "UPDATED", "ERROR"},
          {Table::kLeft, Table::kLeft, Table::kRight, Table::kLeft, Table::kLeft, Table::kRight,
           Table::kRight});
  for (const v1::SupervisorTaskRecord& task : response.tasks()) {
    t.AddRow({task.task_id(), task.datasource(), absl::StrCat(task.group_id()),
              task.worker_id().empty() ? "-" : task.worker_id(), ShortEnumName(task.state()),
              absl::StrCat(task.row_stats().processed()),
              absl::StrCat(task.row_stats().unparseable()), FormatOffsets(task.current_offsets()),
              FormatTimeMs(task.updated_at_ms()), task.error().empty() ? "-" : task.error()});
  }
  return t.Render();
}

std::string FormatWorkers(const v1::ListWorkersResponse& response, int64_t now_ms) {
  if (response.workers().empty()) return "no workers\n";
  Table t({"WORKER", "ADDRESS", "ALIVE", "TASKS", "LAST HEARTBEAT", "VERSION", "STARTED"},
          {Table::kLeft, Table::kLeft, Table::kLeft, Table::kRight});
  for (const v1::WorkerInfo& w : response.workers()) {
    std::string heartbeat = "-";
    if (w.last_heartbeat_ms() > 0) {
      heartbeat = absl::StrCat(
          FormatDurationMs(std::max<int64_t>(now_ms - w.last_heartbeat_ms(), 1)), " ago");
    }
    t.AddRow({w.worker_id(), w.address(), YesNo(w.alive()),
              absl::StrCat(w.running_tasks(), "/", w.capacity()), heartbeat,
              w.version().empty() ? "-" : w.version(), FormatTimeMs(w.start_time_ms())});
  }
  return t.Render();
}

std::string FormatCommitLog(const v1::GetCommitLogResponse& response) {
  std::string out;
  out += Label("datasource", response.datasource());
  out += Label("topic", !response.topic_pattern().empty() ? "pattern " + response.topic_pattern()
                        : response.topic().empty()           ? "-"
                                                             : response.topic());
  out += Label("initial", FormatOffsets(response.initial_offsets()));
  out += Label("committed", FormatOffsets(response.committed_offsets()));
  out += Label("sequences", absl::StrCat(response.sequences_size()));
  if (!response.scaling_decisions().empty()) {
    out += Label("scalings", absl::StrCat(response.scaling_decisions_size()));
  }
  if (response.sequences().empty() && response.scaling_decisions().empty() &&
      response.stream_partitions().empty()) {
    return out;
  }
  if (!response.stream_partitions().empty()) {
    out += "\n";
    Table names({"PARTITION", "TOPIC", "KAFKA PARTITION"},
                {Table::kRight, Table::kLeft, Table::kRight});
    for (const v1::StreamPartition& p : response.stream_partitions()) {
      names.AddRow({absl::StrCat(p.id()), p.topic(), absl::StrCat(p.partition())});
    }
    out += names.Render();
  }
  if (!response.sequences().empty()) out += "\n" + CommitLogSequences(response);
  if (!response.scaling_decisions().empty()) {
    out += "\n";
    Table scalings({"SCALING", "FROM", "TO", "DECIDED", "APPLIED", "REASON"},
                   {Table::kRight, Table::kRight, Table::kRight, Table::kLeft, Table::kLeft,
                    Table::kLeft});
    for (const v1::ScalingDecision& d : response.scaling_decisions()) {
      scalings.AddRow({absl::StrCat(d.decision_id()), absl::StrCat(d.from_task_count()),
                       absl::StrCat(d.to_task_count()), FormatTimeMs(d.decided_at_ms()),
                       FormatTimeMs(d.applied_at_ms()), d.reason()});
    }
    out += scalings.Render();
  }
  return out;
}


std::string FormatMarkLoaded(absl::string_view datasource, int requested,
                             const v1::MarkSegmentsLoadedResponse& response) {
  return absl::StrCat(datasource, ": marked ", response.marked(), " of ", requested,
                      " segment(s) loaded\n");
}

std::string AuditJson(const audit::LiveAuditResult& result) {
  const audit::AuditReport& r = result.report;
  google::protobuf::Struct json;
  auto& fields = *json.mutable_fields();
  fields["datasource"].set_string_value(r.datasource);
  fields["pass"].set_bool_value(r.ok());
  fields["topic"].set_string_value(result.topic);
  fields["partitions"].set_number_value(static_cast<double>(r.partitions));
  fields["sequences"].set_number_value(static_cast<double>(r.sequences));
  fields["segments"].set_number_value(static_cast<double>(r.segments));
  fields["recordsInKafka"].set_number_value(static_cast<double>(r.records_in_kafka));
  fields["rowsIngested"].set_number_value(static_cast<double>(r.rows_ingested));
  fields["unparseable"].set_number_value(static_cast<double>(r.unparseable));
  fields["thrownAway"].set_number_value(static_cast<double>(r.thrown_away));
  fields["segmentRows"].set_number_value(static_cast<double>(r.segment_rows));
  fields["recordsRead"].set_number_value(static_cast<double>(result.records_read));
  auto* declared = fields["declaredResets"].mutable_list_value();
  for (const std::string& d : r.declared_resets) declared->add_values()->set_string_value(d);
  auto* list = fields["discrepancies"].mutable_list_value();
  for (const std::string& d : r.discrepancies) list->add_values()->set_string_value(d);
  if (result.table.has_value()) {
    const audit::TableAuditReport& t = *result.table;
    auto& table = *fields["icebergTable"].mutable_struct_value()->mutable_fields();
    table["pass"].set_bool_value(t.ok());
    table["metadataLocation"].set_string_value(t.metadata_location);
    table["snapshots"].set_number_value(static_cast<double>(t.snapshots));
    table["otherSnapshots"].set_number_value(static_cast<double>(t.other_snapshots));
    table["dataFiles"].set_number_value(static_cast<double>(t.data_files));
    table["rows"].set_number_value(static_cast<double>(t.rows));
    table["records"].set_number_value(static_cast<double>(t.records));
    auto* declared_jumps = table["declared"].mutable_list_value();
    for (const std::string& d : t.declared) declared_jumps->add_values()->set_string_value(d);
    auto* notes = table["notChecked"].mutable_list_value();
    for (const std::string& n : t.notes) notes->add_values()->set_string_value(n);
    auto* failures = table["discrepancies"].mutable_list_value();
    for (const std::string& d : t.discrepancies) failures->add_values()->set_string_value(d);
  }
  return ToJson(json);
}

}  // namespace sluicectl
}  // namespace sluice
