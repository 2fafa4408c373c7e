// SpecLifecycle: a datasource's spec and supervisor through the admin
// operations: submit (admitted, stored as a new version, applied live or the
// supervisor restarted), suspend, resume, reset, reset offsets, early handoff
// and terminate (a tombstone version; the groups finish publishing on their
// own). Operations of one datasource run one at a time
// (datasource_admin_locks.h), those of different datasources at once.
#ifndef SLUICE_SUPERVISOR_SPEC_LIFECYCLE_H_
#define SLUICE_SUPERVISOR_SPEC_LIFECYCLE_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/kafka/property_policy.h"
#include "sluice/v1/supervisor_service.pb.h"
#include "supervisor/clock.h"
#include "supervisor/datasource_admin_locks.h"
#include "supervisor/running_supervisors.h"
#include "supervisor/store/metadata_store.h"

namespace sluice::supervisor {

struct SpecLifecycleOptions {
  MetadataStore* store = nullptr;
  Clock* clock = Clock::Real();
  // How long an operation waits for a stream supervisor's loop.
  absl::Duration loop_timeout = absl::Seconds(30);
  // What a spec's consumerProperties may say, checked at submit.
  kafka::PropertyPolicyOptions kafka_policy;
  RunningSupervisors* supervisors = nullptr;
};

class SpecLifecycle {
 public:
  explicit SpecLifecycle(SpecLifecycleOptions options);

  absl::StatusOr<v1::SubmitSupervisorResponse> Submit(const v1::SupervisorSpec& spec);
  // SubmitSupervisor: the request's spec in either form (SpecOfSubmitRequest),
  // then Submit; a Druid spec's warnings are added to the answer.
  absl::StatusOr<v1::SubmitSupervisorResponse> Submit(const v1::SubmitSupervisorRequest& request);
  absl::StatusOr<v1::SupervisorSummary> Suspend(const std::string& datasource);
  absl::StatusOr<v1::SupervisorSummary> Resume(const std::string& datasource);
  absl::StatusOr<v1::SupervisorSummary> Reset(const std::string& datasource);
  absl::StatusOr<v1::SupervisorSummary> ResetOffsets(const v1::ResetOffsetsRequest& request);
  // Early handoff of reading groups (StreamSupervisor::Handoff).
  absl::StatusOr<v1::HandoffTaskGroupsResponse> Handoff(
      const v1::HandoffTaskGroupsRequest& request);
  absl::StatusOr<v1::SupervisorSummary> Terminate(const std::string& datasource);

 private:
  // Appends a spec version with `suspended` set and hands it to the running
  // supervisor.
  absl::StatusOr<v1::SupervisorSummary> SetSuspended(const std::string& datasource,
                                                     bool suspended);

  const SpecLifecycleOptions options_;
  DatasourceAdminLocks admin_locks_;
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_SPEC_LIFECYCLE_H_
