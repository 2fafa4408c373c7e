#include "tools/demo/progress.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "common/grpc_status.h"

namespace sluice {
namespace demo {
namespace {

constexpr absl::Duration kRpcTimeout = absl::Seconds(5);

struct GroupTotals {
  int64_t rows = 0;
  int64_t unparseable = 0;
  int64_t checkpoints = 0;
};

}  // namespace

void FillFromSupervisor(const v1::SupervisorStatus& status,
                        const v1::SupervisorServiceListTasksResponse& tasks,
                        const std::map<int32_t, int64_t>& initial_offsets,
                        ProgressSnapshot* snapshot) {
  auto since_start = [&initial_offsets](int32_t partition, int64_t offset) {
    auto it = initial_offsets.find(partition);
    return std::max<int64_t>(0, offset - (it == initial_offsets.end() ? 0 : it->second));
  };
  snapshot->read = 0;
  for (const auto& [p, offset] : status.current_offsets()) snapshot->read += since_start(p, offset);
  snapshot->committed = 0;
  for (const auto& [p, offset] : status.committed_offsets()) {
    snapshot->committed += since_start(p, offset);
  }
  snapshot->lag = status.aggregate_lag();
  snapshot->segments_published = status.segments_published();
  snapshot->reading_groups.clear();
  for (const v1::TaskGroupStatus& group : status.active_groups()) {
    snapshot->reading_groups.insert(group.base_sequence_name());
  }
  snapshot->publishing_groups = status.publishing_groups_size();

  std::map<std::string, GroupTotals> groups;
  snapshot->reading_tasks = 0;
  for (const v1::SupervisorTaskRecord& task : tasks.tasks()) {
    GroupTotals& g = groups[task.base_sequence_name()];
    g.rows = std::max(g.rows, task.row_stats().processed());
    g.unparseable = std::max(g.unparseable, task.row_stats().unparseable());
    g.checkpoints = std::max(g.checkpoints, task.row_stats().checkpoints());
    if (task.state() == v1::TASK_STATE_READING || task.state() == v1::TASK_STATE_PAUSED) ++snapshot->reading_tasks;
  }
  snapshot->rows = snapshot->unparseable = snapshot->checkpoints = 0;
  for (const auto& [name, g] : groups) {
    snapshot->rows += g.rows;
    snapshot->unparseable += g.unparseable;
    snapshot->checkpoints += g.checkpoints;
  }
}

absl::Status QuerySupervisor(v1::SupervisorService::StubInterface& stub,
                             const std::string& datasource,
                             const std::map<int32_t, int64_t>& initial_offsets,
                             ProgressSnapshot* snapshot) {
  v1::GetSupervisorStatusRequest ref;
  ref.set_datasource(datasource);
  v1::GetSupervisorStatusResponse status;
  {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + kRpcTimeout));
    absl::Status s = FromGrpcStatus(stub.GetSupervisorStatus(&context, ref, &status));
    if (!s.ok()) return s;
  }
  v1::SupervisorServiceListTasksRequest request;
  request.set_datasource(datasource);
  request.set_include_finished(true);
  v1::SupervisorServiceListTasksResponse tasks;
  {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + kRpcTimeout));
    absl::Status s = FromGrpcStatus(stub.ListTasks(&context, request, &tasks));
    if (!s.ok()) return s;
  }
  FillFromSupervisor(status.status(), tasks, initial_offsets, snapshot);
  return absl::OkStatus();
}

std::string FormatProgressLine(const ProgressSnapshot& s) {
  return absl::StrFormat(
      "[%6.1fs] produced %d%s | read %d (%d unparseable) | tasks reading %d | checkpoints %d | "
      "segments published %d | committed %d | lag %d",
      absl::ToDoubleSeconds(s.elapsed), s.produced, s.producing ? "+" : "", s.read, s.unparseable,
      s.reading_tasks, s.checkpoints, s.segments_published, s.committed, s.lag);
}

}  // namespace demo
}  // namespace sluice
