// A SupervisorClient whose every call fails with UNIMPLEMENTED naming the
// call: unit-test fakes derive from it and override only the calls their
// test exercises, so an unexpected call shows up as a clear error.
#ifndef SLUICE_TASK_TESTING_UNIMPLEMENTED_SUPERVISOR_CLIENT_H_
#define SLUICE_TASK_TESTING_UNIMPLEMENTED_SUPERVISOR_CLIENT_H_

#include <string>

#include "absl/status/status.h"
#include "task/supervisor_client.h"

namespace sluice::testing {

class UnimplementedSupervisorClient : public task::SupervisorClient {
 public:
  absl::StatusOr<v1::CheckpointDataSourceMetadataResponse> CheckpointDataSourceMetadata(
      const v1::CheckpointDataSourceMetadataRequest&) override {
    return Unimplemented("CheckpointDataSourceMetadata");
  }
  absl::StatusOr<v1::AllocateSegmentResponse> AllocateSegment(
      const v1::AllocateSegmentRequest&) override {
    return Unimplemented("AllocateSegment");
  }
  absl::StatusOr<v1::PublishSegmentsResponse> PublishSegments(
      const v1::PublishSegmentsRequest&) override {
    return Unimplemented("PublishSegments");
  }
  absl::StatusOr<v1::GetPublishedSegmentsResponse> GetPublishedSegments(
      const v1::GetPublishedSegmentsRequest&) override {
    return Unimplemented("GetPublishedSegments");
  }
  absl::StatusOr<v1::ListSegmentsResponse> ListSegments(const v1::ListSegmentsRequest&) override {
    return Unimplemented("ListSegments");
  }
  absl::StatusOr<v1::GetHandoffStatusResponse> GetHandoffStatus(
      const v1::GetHandoffStatusRequest&) override {
    return Unimplemented("GetHandoffStatus");
  }
  absl::StatusOr<v1::ReportOffsetOutOfRangeResponse> ReportOffsetOutOfRange(
      const v1::ReportOffsetOutOfRangeRequest&) override {
    return Unimplemented("ReportOffsetOutOfRange");
  }
  absl::StatusOr<v1::RegisterWorkerResponse> RegisterWorker(
      const v1::RegisterWorkerRequest&) override {
    return Unimplemented("RegisterWorker");
  }
  absl::StatusOr<v1::WorkerHeartbeatResponse> WorkerHeartbeat(
      const v1::WorkerHeartbeatRequest&) override {
    return Unimplemented("WorkerHeartbeat");
  }
  absl::Status ReportTaskStatus(const v1::ReportTaskStatusRequest&) override {
    return Unimplemented("ReportTaskStatus");
  }

 protected:
  static absl::Status Unimplemented(const char* call) {
    return absl::UnimplementedError(std::string(call) + " is not faked in this test");
  }
};

}  // namespace sluice::testing

#endif  // SLUICE_TASK_TESTING_UNIMPLEMENTED_SUPERVISOR_CLIENT_H_
