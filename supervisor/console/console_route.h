// The web console's JSON API: which call a request path and method name.
// Plain parsing, no gRPC: console_api.h runs the call.
//
//   GET  /console/api/whoami                         the caller and its roles
//   GET  /console/api/workers                        ListWorkers
//   GET  /console/api/datasources                    ListSupervisors
//   GET  /console/api/datasources/<ds>               GetSupervisorStatus
//   GET  /console/api/datasources/<ds>/spec          GetSupervisor
//   GET  /console/api/datasources/<ds>/history       GetSupervisorHistory
//   GET  /console/api/datasources/<ds>/segments      ListSegments (used and unused)
//   GET  /console/api/datasources/<ds>/commit-log    GetCommitLog
//   GET  /console/api/datasources/<ds>/tasks         ListTasks (finished too)
//   GET  /console/api/datasources/<ds>/lag-history   the last hour of lag (lag_history.h)
//   POST /console/api/datasources/<ds>/suspend       SuspendSupervisor
//   POST /console/api/datasources/<ds>/resume        ResumeSupervisor
//   POST /console/api/datasources/<ds>/reset         ResetSupervisor
//   POST /console/api/datasources/<ds>/handoff       HandoffTaskGroups (every reading group)
//   POST /console/api/datasources/<ds>/terminate     TerminateSupervisor
//   POST /console/api/datasources/<ds>/reset-offsets?<partition>=<offset>&...  ResetOffsets
#ifndef SLUICE_SUPERVISOR_CONSOLE_CONSOLE_ROUTE_H_
#define SLUICE_SUPERVISOR_CONSOLE_CONSOLE_ROUTE_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace sluice::supervisor::console {

inline constexpr char kApiPrefix[] = "/console/api/";

enum class ConsoleCall {
  kWhoAmI,
  kWorkers,
  kDatasources,
  kStatus,
  kSpec,
  kSpecHistory,
  kSegments,
  kCommitLog,
  kTasks,
  kLagHistory,
  kSuspend,
  kResume,
  kReset,
  kHandoff,
  kTerminate,
  kResetOffsets,
};

// True for the calls that change something (POST).
bool IsAction(ConsoleCall call);

struct ConsoleRoute {
  ConsoleCall call = ConsoleCall::kWhoAmI;
  // Empty for whoami, workers and datasources.
  std::string datasource;
  // kResetOffsets: partition -> next offset to read, from the query string.
  std::map<int32_t, int64_t> offsets;
};

// The route of `method` `path` (under kApiPrefix) with `query` (raw, after
// "?"). NOT_FOUND for an unknown path or an empty datasource,
// UNIMPLEMENTED (HTTP 405) for a known path with the wrong method (reads are
// GET or HEAD, actions POST), INVALID_ARGUMENT for a reset-offsets query
// that is not <partition>=<offset> pairs (non-negative integers) or names no
// partition.
absl::StatusOr<ConsoleRoute> MatchConsoleRoute(absl::string_view method, absl::string_view path,
                                               absl::string_view query);

}  // namespace sluice::supervisor::console

#endif  // SLUICE_SUPERVISOR_CONSOLE_CONSOLE_ROUTE_H_
