#include "tests/fault/live_audit.h"

#include <google/protobuf/util/message_differencer.h>
#include <grpcpp/grpcpp.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/grpc_status.h"
#include "common/status_macros.h"

namespace sluice::fault {
namespace {

constexpr int kSnapshotAttempts = 20;

absl::Status GetCommitLog(v1::SupervisorService::Stub* supervisor, const std::string& datasource,
                          absl::Duration timeout, v1::GetCommitLogResponse* log) {
  v1::SupervisorRef ref;
  ref.set_datasource(datasource);
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  return Annotate(FromGrpcStatus(supervisor->GetCommitLog(&context, ref, log)), "GetCommitLog");
}

}  // namespace

absl::StatusOr<AuditInputs> FetchAuditInputs(v1::SupervisorService::Stub* supervisor,
                                             const std::string& datasource,
                                             absl::Duration timeout) {
  for (int attempt = 1;; ++attempt) {
    AuditInputs inputs;
    SLUICE_RETURN_IF_ERROR(GetCommitLog(supervisor, datasource, timeout, &inputs.commit_log));
    v1::ListSegmentsRequest request;
    request.set_datasource(datasource);
    request.set_limit(1000000);
    v1::ListSegmentsResponse response;
    {
      grpc::ClientContext context;
      context.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
      SLUICE_RETURN_IF_ERROR(Annotate(
          FromGrpcStatus(supervisor->ListSegments(&context, request, &response)), "ListSegments"));
    }
    v1::GetCommitLogResponse again;
    SLUICE_RETURN_IF_ERROR(GetCommitLog(supervisor, datasource, timeout, &again));
    if (google::protobuf::util::MessageDifferencer::Equals(inputs.commit_log, again)) {
      for (v1::SegmentDescriptor& s : *response.mutable_segments()) {
        if (s.used()) inputs.used_segments.push_back(std::move(s));
      }
      return inputs;
    }
    if (attempt == kSnapshotAttempts) {
      return absl::UnavailableError(absl::StrCat(
          datasource, " committed new sequences during each of ", kSnapshotAttempts,
          " attempts to read a consistent commit log and segment list"));
    }
    absl::SleepFor(absl::Milliseconds(200));
  }
}

}  // namespace sluice::fault
