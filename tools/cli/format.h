// Readable renderings of the SupervisorService admin responses (sluicectl
// without --json). Pure functions of the messages: unit-tested without a
// server. Times are ISO-8601 UTC, durations like "41m20s", offset maps as
// "0:120 1:88" ("end" for END_OF_PARTITION), sizes in binary units.
#ifndef SLUICE_TOOLS_SLUICECTL_FORMAT_H_
#define SLUICE_TOOLS_SLUICECTL_FORMAT_H_

#include <google/protobuf/message.h>

#include <cstdint>
#include <map>
#include <string>

#include "absl/strings/string_view.h"
#include "sluice/v1/supervisor_service.pb.h"
#include "tools/audit/live_audit.h"

namespace sluice {
namespace sluicectl {

// Small pieces, exposed for tests and reuse.
std::string FormatOffsets(const google::protobuf::Map<int32_t, int64_t>& offsets);
std::string FormatTimeMs(int64_t epoch_ms);  // "-" for 0.
std::string FormatDurationMs(int64_t ms);    // "-" for 0.
std::string FormatBytes(int64_t bytes);      // "1.5 MiB"
std::string YesNo(bool value);

// The message as indented JSON (camelCase names, as --json prints it), with
// 64-bit integers as numbers (proto3 JSON prints them as strings).
std::string ToJson(const google::protobuf::Message& message);

std::string FormatSubmit(const v1::SubmitSupervisorResponse& response);
// CompactDataSource: the intervals queued and those skipped, with why.
std::string FormatCompact(absl::string_view datasource,
                          const v1::CompactDataSourceResponse& response);
// The status lines of a datasource's compaction.
std::string FormatCompactionLines(const v1::CompactionStatus& compaction);
// "2026-12-05T10:00:00.000Z/2026-12-05T11:00:00.000Z".
std::string FormatIntervalMs(const v1::Interval& interval);
// HandoffTaskGroups: the groups handed off and those skipped, with why.
std::string FormatHandoff(absl::string_view datasource,
                          const v1::HandoffTaskGroupsResponse& response);
// `get`: a header line and the stored spec as JSON.
std::string FormatSpec(const v1::GetSupervisorResponse& response);
std::string FormatSupervisorList(const v1::ListSupervisorsResponse& response);
std::string FormatHistory(absl::string_view datasource,
                          const v1::GetSupervisorHistoryResponse& response);
std::string FormatStatus(const v1::SupervisorStatus& status);
std::string FormatSummary(const v1::SupervisorSummary& summary);
std::string FormatSegments(const v1::ListSegmentsResponse& response);
std::string FormatTasks(const v1::SupervisorServiceListTasksResponse& response);
std::string FormatWorkers(const v1::ListWorkersResponse& response, int64_t now_ms);
std::string FormatCommitLog(const v1::GetCommitLogResponse& response);
// verify --json: {"datasource", "pass", "topic", "partitions", "sequences",
// "segments", "recordsInKafka", "rowsIngested", "unparseable", "thrownAway",
// "segmentRows", "recordsRead", "discrepancies": [...]}.
std::string AuditJson(const audit::LiveAuditResult& result);
std::string FormatMarkLoaded(absl::string_view datasource, int requested,
                             const v1::MarkSegmentsLoadedResponse& response);

}  // namespace sluicectl
}  // namespace sluice

#endif  // SLUICE_TOOLS_SLUICECTL_FORMAT_H_
