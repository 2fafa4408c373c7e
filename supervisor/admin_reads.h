// AdminReads: the supervisor's read-only admin answers: a datasource's spec
// and its history, the running supervisors (list, status with its compaction
// part), segments, tasks (with what their workers last reported), workers and
// the commit log. Changes nothing.
#ifndef SLUICE_SUPERVISOR_ADMIN_READS_H_
#define SLUICE_SUPERVISOR_ADMIN_READS_H_

#include <string>

#include "absl/status/statusor.h"
#include "sluice/v1/supervisor_service.pb.h"
#include "supervisor/compaction_control.h"
#include "supervisor/running_supervisors.h"
#include "supervisor/store/metadata_store.h"
#include "supervisor/worker_registry.h"
#include "supervisor/worker_reports.h"

namespace sluice::supervisor {

struct AdminReadsOptions {
  MetadataStore* store = nullptr;
  RunningSupervisors* supervisors = nullptr;
  WorkerRegistry* registry = nullptr;
  WorkerReports* reports = nullptr;
  CompactionControl* compaction = nullptr;
};

class AdminReads {
 public:
  explicit AdminReads(AdminReadsOptions options);

  // The latest spec, secrets redacted; NOT_FOUND once terminated.
  absl::StatusOr<v1::GetSupervisorResponse> Get(const std::string& datasource);
  absl::StatusOr<v1::GetSupervisorHistoryResponse> History(const std::string& datasource);
  absl::StatusOr<v1::ListSupervisorsResponse> List();
  absl::StatusOr<v1::SupervisorStatus> Status(const std::string& datasource);
  absl::StatusOr<v1::ListSegmentsResponse> ListSegments(const v1::ListSegmentsRequest& request);
  absl::StatusOr<v1::SupervisorServiceListTasksResponse> ListTasks(
      const v1::SupervisorServiceListTasksRequest& request);
  v1::ListWorkersResponse ListWorkers();
  absl::StatusOr<v1::GetCommitLogResponse> CommitLog(const std::string& datasource);

 private:
  const AdminReadsOptions options_;
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_ADMIN_READS_H_
