// The exactly-once audit's inputs as a running supervisor reports them: the
// commit log and the used segments, read as a consistent snapshot (the same
// commit log before and after the segment list). Reading Kafka and segment
// files is tools/audit's KafkaRecordCounter and SegmentFileVerifier.
#ifndef SLUICE_TESTS_FAULT_LIVE_AUDIT_H_
#define SLUICE_TESTS_FAULT_LIVE_AUDIT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "sluice/v1/supervisor_service.grpc.pb.h"

namespace sluice::fault {

struct AuditInputs {
  v1::GetCommitLogResponse commit_log;
  std::vector<v1::SegmentDescriptor> used_segments;
};

// UNAVAILABLE if the datasource kept committing through every attempt; a
// failed call as its status.
absl::StatusOr<AuditInputs> FetchAuditInputs(v1::SupervisorService::Stub* supervisor,
                                             const std::string& datasource,
                                             absl::Duration timeout);

}  // namespace sluice::fault

#endif  // SLUICE_TESTS_FAULT_LIVE_AUDIT_H_
