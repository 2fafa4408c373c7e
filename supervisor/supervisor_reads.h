// The supervisor's read-only admin answers, straight from the metadata
// store: the latest spec, spec history, segments, tasks, the commit log and
// handoff states. Free functions over a MetadataStore (thread-safe as the
// store is); the manager's parts (admin_reads.h and the rest) read through
// these. Names a user typed are validated first (INVALID_ARGUMENT); an
// unknown datasource is NOT_FOUND.
#ifndef SLUICE_SUPERVISOR_SUPERVISOR_READS_H_
#define SLUICE_SUPERVISOR_SUPERVISOR_READS_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sluice/v1/supervisor_service.pb.h"
#include "supervisor/store/metadata_store.h"

namespace sluice::supervisor {

// The latest spec version of a datasource (tombstones included); NOT_FOUND
// if it never had one.
absl::StatusOr<SpecRecord> ReadLatestSpec(MetadataStore& store, const std::string& datasource);

// Every spec version, tombstones included, with secrets redacted.
absl::StatusOr<v1::GetSupervisorHistoryResponse> ReadSpecHistory(MetadataStore& store,
                                                                 const std::string& datasource);

// Segments of a datasource (used ones unless include_unused), optionally
// overlapping an interval; limit 0 means 10000.
absl::StatusOr<v1::ListSegmentsResponse> ReadSegments(MetadataStore& store,
                                                     const v1::ListSegmentsRequest& request);

// The task records a SupervisorService.ListTasks request asks for (finished ones
// too when it asks for them or for a terminal state); empty datasource: all.
absl::StatusOr<std::vector<TaskRecord>> ReadTaskRecords(
    MetadataStore& store, const v1::SupervisorServiceListTasksRequest& request);

// The answer for `tasks` (pure): filtered by the requested states, with the
// latest status each task's worker reported (`reported`, by task id) in
// place of the stored offsets, plus its row stats and error.
v1::SupervisorServiceListTasksResponse TaskListResponse(
    const std::vector<TaskRecord>& tasks, const v1::SupervisorServiceListTasksRequest& request,
    const std::map<std::string, v1::TaskStatus>& reported);

// Topic (the stored one, else the latest spec's), initial and committed
// offsets, committed sequences and offset resets.
absl::StatusOr<v1::GetCommitLogResponse> ReadCommitLog(MetadataStore& store,
                                                       const std::string& datasource);

// Which of the requested segments are handed off, and which failed.
absl::StatusOr<v1::GetHandoffStatusResponse> ReadHandoffStatus(
    MetadataStore& store, const v1::GetHandoffStatusRequest& request);

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_SUPERVISOR_READS_H_
