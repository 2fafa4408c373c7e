// AdminReads: the read-only admin answers (admin_reads.h).
#include "supervisor/admin_reads.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "common/spec_secrets.h"
#include "common/status_macros.h"
#include "supervisor/supervisor_reads.h"

namespace sluice::supervisor {

AdminReads::AdminReads(AdminReadsOptions options) : options_(std::move(options)) {}

absl::StatusOr<v1::GetSupervisorResponse> AdminReads::Get(const std::string& datasource) {
  SLUICE_ASSIGN_OR_RETURN(SpecRecord latest, ReadLatestSpec(*options_.store, datasource));
  if (latest.terminated) {
    return absl::NotFoundError(
        absl::StrCat("the supervisor of ", datasource, " was terminated (see its history)"));
  }
  v1::GetSupervisorResponse response;
  *response.mutable_spec() = RedactedSpec(latest.spec);
  response.set_version(latest.version);
  return response;
}

absl::StatusOr<v1::GetSupervisorHistoryResponse> AdminReads::History(
    const std::string& datasource) {
  return ReadSpecHistory(*options_.store, datasource);
}

absl::StatusOr<v1::ListSupervisorsResponse> AdminReads::List() {
  v1::ListSupervisorsResponse response;
  for (auto& supervisor : options_.supervisors->All()) {
    *response.add_supervisors() = supervisor->Summary();
  }
  return response;
}

absl::StatusOr<v1::SupervisorStatus> AdminReads::Status(const std::string& datasource) {
  SLUICE_ASSIGN_OR_RETURN(auto supervisor, options_.supervisors->Running(datasource));
  v1::SupervisorStatus status = supervisor->Status();
  options_.compaction->FillStatus(datasource, &status);
  return status;
}

absl::StatusOr<v1::ListSegmentsResponse> AdminReads::ListSegments(
    const v1::ListSegmentsRequest& request) {
  return ReadSegments(*options_.store, request);
}

absl::StatusOr<v1::SupervisorServiceListTasksResponse> AdminReads::ListTasks(
    const v1::SupervisorServiceListTasksRequest& request) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<TaskRecord> tasks, ReadTaskRecords(*options_.store, request));
  return options_.reports->TaskList(tasks, request);
}

v1::ListWorkersResponse AdminReads::ListWorkers() {
  v1::ListWorkersResponse response;
  for (v1::WorkerInfo& info : options_.registry->List()) *response.add_workers() = std::move(info);
  return response;
}

absl::StatusOr<v1::GetCommitLogResponse> AdminReads::CommitLog(const std::string& datasource) {
  return ReadCommitLog(*options_.store, datasource);
}

}  // namespace sluice::supervisor
