#include "supervisor/console/console_api.h"

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/enum_names.h"
#include "common/grpc_status.h"

namespace sluice::supervisor::console {

namespace {

constexpr char kJson[] = "application/json; charset=utf-8";

metrics::HttpResponse JsonOf(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.always_print_primitive_fields = true;
  metrics::HttpResponse response;
  response.content_type = kJson;
  if (!google::protobuf::util::MessageToJsonString(message, &response.body, options).ok()) {
    return ErrorResponse(absl::InternalError("the answer could not be written as JSON"));
  }
  return response;
}

// Calls `method` with `request` and answers its response as JSON.
template <typename Request, typename Response, typename Method>
metrics::HttpResponse Call(v1::SupervisorService::StubInterface* stub, Method method,
                           const Request& request, const std::string& authorization,
                           absl::Duration deadline) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + absl::ToChronoMilliseconds(deadline));
  if (!authorization.empty()) context.AddMetadata("authorization", authorization);
  Response response;
  grpc::Status status = (stub->*method)(&context, request, &response);
  if (!status.ok()) return ErrorResponse(FromGrpcStatus(status));
  return JsonOf(response);
}

template <typename Request>
Request ForDatasource(const std::string& datasource) {
  Request request;
  request.set_datasource(datasource);
  return request;
}

}  // namespace

int HttpStatusOf(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kOk: return 200;
    case absl::StatusCode::kUnauthenticated: return 401;
    case absl::StatusCode::kPermissionDenied: return 403;
    case absl::StatusCode::kNotFound: return 404;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange: return 400;
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kAborted:
    case absl::StatusCode::kFailedPrecondition: return 409;
    case absl::StatusCode::kResourceExhausted: return 429;
    case absl::StatusCode::kUnimplemented: return 405;
    case absl::StatusCode::kUnavailable: return 503;
    case absl::StatusCode::kDeadlineExceeded: return 504;
    default: return 500;
  }
}

metrics::HttpResponse ErrorResponse(const absl::Status& status) {
  google::protobuf::Struct error;
  (*error.mutable_fields())["code"].set_string_value(absl::StatusCodeToString(status.code()));
  (*error.mutable_fields())["message"].set_string_value(std::string(status.message()));
  metrics::HttpResponse response;
  response.status = HttpStatusOf(status.code());
  response.content_type = kJson;
  (void)google::protobuf::util::MessageToJsonString(error, &response.body);
  if (response.status == 401) response.extra_headers = "WWW-Authenticate: Bearer\r\n";
  return response;
}

ConsoleApi::ConsoleApi(std::unique_ptr<v1::SupervisorService::StubInterface> stub,
                       const LagHistory* lag_history, absl::Duration deadline)
    : stub_(std::move(stub)), lag_history_(lag_history), deadline_(deadline) {}

metrics::HttpResponse ConsoleApi::Run(const ConsoleRoute& route, const std::string& authorization) {
  using S = v1::SupervisorService::StubInterface;
  auto* stub = stub_.get();
  const std::string& ds = route.datasource;
  switch (route.call) {
    case ConsoleCall::kWhoAmI:
      return ErrorResponse(absl::InternalError("whoami is answered by the handler"));
    case ConsoleCall::kWorkers:
      return Call<v1::ListWorkersRequest, v1::ListWorkersResponse>(
          stub, &S::ListWorkers, v1::ListWorkersRequest(), authorization, deadline_);
    case ConsoleCall::kDatasources:
      return Call<v1::ListSupervisorsRequest, v1::ListSupervisorsResponse>(
          stub, &S::ListSupervisors, v1::ListSupervisorsRequest(), authorization, deadline_);
    case ConsoleCall::kStatus:
      return Call<v1::GetSupervisorStatusRequest, v1::GetSupervisorStatusResponse>(
          stub, &S::GetSupervisorStatus, ForDatasource<v1::GetSupervisorStatusRequest>(ds),
          authorization, deadline_);
    case ConsoleCall::kSpec:
      return Call<v1::GetSupervisorRequest, v1::GetSupervisorResponse>(
          stub, &S::GetSupervisor, ForDatasource<v1::GetSupervisorRequest>(ds), authorization,
          deadline_);
    case ConsoleCall::kSpecHistory:
      return Call<v1::GetSupervisorHistoryRequest, v1::GetSupervisorHistoryResponse>(
          stub, &S::GetSupervisorHistory, ForDatasource<v1::GetSupervisorHistoryRequest>(ds),
          authorization, deadline_);
    case ConsoleCall::kSegments: {
      v1::ListSegmentsRequest request = ForDatasource<v1::ListSegmentsRequest>(ds);
      request.set_include_unused(true);
      return Call<v1::ListSegmentsRequest, v1::ListSegmentsResponse>(
          stub, &S::ListSegments, request, authorization, deadline_);
    }
    case ConsoleCall::kCommitLog:
      return Call<v1::GetCommitLogRequest, v1::GetCommitLogResponse>(
          stub, &S::GetCommitLog, ForDatasource<v1::GetCommitLogRequest>(ds), authorization,
          deadline_);
    case ConsoleCall::kTasks: {
      v1::SupervisorServiceListTasksRequest request =
          ForDatasource<v1::SupervisorServiceListTasksRequest>(ds);
      request.set_include_finished(true);
      return Call<v1::SupervisorServiceListTasksRequest, v1::SupervisorServiceListTasksResponse>(
          stub, &S::ListTasks, request, authorization, deadline_);
    }
    case ConsoleCall::kLagHistory: {
      // The status call decides who may see it (a reader's read), then the
      // history is the supervisor's own record of those statuses.
      metrics::HttpResponse allowed =
          Call<v1::GetSupervisorStatusRequest, v1::GetSupervisorStatusResponse>(
              stub, &S::GetSupervisorStatus, ForDatasource<v1::GetSupervisorStatusRequest>(ds),
              authorization, deadline_);
      if (allowed.status != 200) return allowed;
      metrics::HttpResponse response;
      response.content_type = kJson;
      response.body = lag_history_ != nullptr ? lag_history_->Json(ds) : "{}";
      return response;
    }
    case ConsoleCall::kSuspend:
      return Call<v1::SuspendSupervisorRequest, v1::SuspendSupervisorResponse>(
          stub, &S::SuspendSupervisor, ForDatasource<v1::SuspendSupervisorRequest>(ds),
          authorization, deadline_);
    case ConsoleCall::kResume:
      return Call<v1::ResumeSupervisorRequest, v1::ResumeSupervisorResponse>(
          stub, &S::ResumeSupervisor, ForDatasource<v1::ResumeSupervisorRequest>(ds),
          authorization, deadline_);
    case ConsoleCall::kReset:
      return Call<v1::ResetSupervisorRequest, v1::ResetSupervisorResponse>(
          stub, &S::ResetSupervisor, ForDatasource<v1::ResetSupervisorRequest>(ds),
          authorization, deadline_);
    case ConsoleCall::kHandoff:
      return Call<v1::HandoffTaskGroupsRequest, v1::HandoffTaskGroupsResponse>(
          stub, &S::HandoffTaskGroups, ForDatasource<v1::HandoffTaskGroupsRequest>(ds),
          authorization, deadline_);
    case ConsoleCall::kTerminate:
      return Call<v1::TerminateSupervisorRequest, v1::TerminateSupervisorResponse>(
          stub, &S::TerminateSupervisor, ForDatasource<v1::TerminateSupervisorRequest>(ds),
          authorization, deadline_);
    case ConsoleCall::kResetOffsets: {
      v1::ResetOffsetsRequest request = ForDatasource<v1::ResetOffsetsRequest>(ds);
      for (const auto& [partition, offset] : route.offsets) {
        (*request.mutable_offsets())[partition] = offset;
      }
      return Call<v1::ResetOffsetsRequest, v1::ResetOffsetsResponse>(
          stub, &S::ResetOffsets, request, authorization, deadline_);
    }
  }
  return ErrorResponse(absl::InternalError("unknown console call"));
}

}  // namespace sluice::supervisor::console
