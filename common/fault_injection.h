// Flag-driven fault points at crash-consistency boundaries (Kudu-style), for
// the process-level fault tests. Off unless configured; a disabled point costs
// one relaxed atomic load.
//
// A binary passes its --fault_points flag to ConfigureFaultPoints():
//   "task.after_push=crash"                crash (exit 86) at the first hit
//   "task.after_push=crash@3"              crash at the third hit
//   "deep_storage.push=error@*"            every hit returns UNAVAILABLE
//   "task.before_publish=delay:2000@*"     every hit sleeps 2 s
//   "deep_storage.push=error_while_file:/tmp/x"  UNAVAILABLE while /tmp/x exists
//   "task.after_push=crash_if_file:/tmp/arm"     crash at the first hit after
//                                               /tmp/arm appears; the file is
//                                               deleted first (one crash per
//                                               arming: the first process to
//                                               delete it crashes, a restart
//                                               runs on)
// Several entries are separated by commas. The process logs each trigger.
#ifndef SLUICE_COMMON_FAULT_INJECTION_H_
#define SLUICE_COMMON_FAULT_INJECTION_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace sluice {

// Replaces the configuration. INVALID_ARGUMENT on a malformed spec.
absl::Status ConfigureFaultPoints(absl::string_view spec);

// Called at a fault point. Returns OK when nothing is configured for it;
// crashes, sleeps or returns UNAVAILABLE as configured.
absl::Status HitFaultPoint(absl::string_view point);

// Number of times `point` was hit since configuration (for tests).
int FaultPointHits(absl::string_view point);

}  // namespace sluice

// Evaluates to the status of the fault point (OK almost always).
#define SLUICE_FAULT_POINT(point) ::sluice::HitFaultPoint(point)

#endif  // SLUICE_COMMON_FAULT_INJECTION_H_
