// The demo's live progress: one line per snapshot of the system, gathered
// from the supervisor (GetSupervisorStatus, ListTasks) and the producer.
//
//   [  12.5s] produced 120000 | read 110000 (20 unparseable) | checkpoints 4 |
//             segments 6 | committed 75000 | lag 10000
#ifndef SLUICE_TOOLS_DEMO_PROGRESS_H_
#define SLUICE_TOOLS_DEMO_PROGRESS_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "sluice/v1/supervisor_service.grpc.pb.h"

namespace sluice {
namespace demo {

struct ProgressSnapshot {
  absl::Duration elapsed;
  int64_t produced = 0;
  bool producing = false;  // the producer is still running
  // Records read: per partition the highest current offset of any task (or
  // the committed offset) minus where reading started.
  int64_t read = 0;
  // Per task group, the most any replica counted (replicas read the same
  // records), summed over groups, finished ones included.
  int64_t rows = 0;
  int64_t unparseable = 0;
  int64_t checkpoints = 0;
  int64_t reading_tasks = 0;
  int64_t segments_published = 0;
  // Records before the committed offsets (published), and the total lag.
  int64_t committed = 0;
  int64_t lag = 0;
  // Base sequence names of the groups reading now (a new name after a
  // taskDuration is a roll-over) and the number of groups publishing.
  std::set<std::string> reading_groups;
  int64_t publishing_groups = 0;
};

// Fills the supervisor's part of a snapshot from its status and task list.
// `initial_offsets` (where reading started, per partition) turn offsets into
// record counts.
void FillFromSupervisor(const v1::SupervisorStatus& status,
                        const v1::SupervisorServiceListTasksResponse& tasks,
                        const std::map<int32_t, int64_t>& initial_offsets,
                        ProgressSnapshot* snapshot);

// Asks the supervisor (GetSupervisorStatus, ListTasks with finished tasks)
// and fills the snapshot.
absl::Status QuerySupervisor(v1::SupervisorService::StubInterface& stub,
                             const std::string& datasource,
                             const std::map<int32_t, int64_t>& initial_offsets,
                             ProgressSnapshot* snapshot);

// "[  12.5s] produced 120000 | read 110000 (20 unparseable) | ..." (no newline).
std::string FormatProgressLine(const ProgressSnapshot& snapshot);

}  // namespace demo
}  // namespace sluice

#endif  // SLUICE_TOOLS_DEMO_PROGRESS_H_
