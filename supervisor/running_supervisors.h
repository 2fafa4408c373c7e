// RunningSupervisors: the narrow view of the running stream supervisors (one
// per active datasource) that the manager's parts get. SupervisorManager
// holds the map and implements it; the parts never see the manager.
#ifndef SLUICE_SUPERVISOR_RUNNING_SUPERVISORS_H_
#define SLUICE_SUPERVISOR_RUNNING_SUPERVISORS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "supervisor/store/metadata_store.h"
#include "supervisor/stream_supervisor.h"

namespace sluice::supervisor {

class RunningSupervisors {
 public:
  virtual ~RunningSupervisors() = default;
  // NOT_FOUND unless a supervisor runs for the datasource (INVALID_ARGUMENT
  // for a bad name). The reference keeps it alive while the caller uses it.
  virtual absl::StatusOr<std::shared_ptr<StreamSupervisor>> Running(
      const std::string& datasource) = 0;
  // Every running supervisor, in datasource order.
  virtual std::vector<std::shared_ptr<StreamSupervisor>> All() = 0;
  // Starts the stream supervisor of `spec` and adds it (replacing none: the
  // caller took the previous one out first).
  virtual absl::Status Start(SpecRecord spec) = 0;
  // Removes the datasource's running supervisor (null if none) and hands it
  // to the caller.
  virtual std::shared_ptr<StreamSupervisor> Take(const std::string& datasource) = 0;
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_RUNNING_SUPERVISORS_H_
