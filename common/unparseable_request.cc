#include "common/unparseable_request.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/descriptor.h"

namespace sluice {
namespace {

using grpc::experimental::InterceptionHookPoints;

// "/sluice.v1.SupervisorService/SubmitSupervisor" -> its input type's full
// name, or "" for a method the generated pool does not know.
std::string RequestTypeOf(absl::string_view path) {
  if (path.size() < 2 || path[0] != '/') return "";
  const size_t slash = path.find('/', 1);
  if (slash == absl::string_view::npos) return "";
  const auto* service = google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(
      std::string(path.substr(1, slash - 1)));
  if (service == nullptr) return "";
  const auto* method = service->FindMethodByName(std::string(path.substr(slash + 1)));
  return method == nullptr ? "" : method->input_type()->full_name();
}

class UnparseableRequestInterceptor : public grpc::experimental::Interceptor {
 public:
  explicit UnparseableRequestInterceptor(grpc::experimental::ServerRpcInfo* info)
      : method_(info->method() == nullptr ? "" : info->method()) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_MESSAGE) &&
        methods->GetRecvMessage() != nullptr) {
      received_ = true;
    }
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS) &&
        !received_) {
      const grpc::Status status = methods->GetSendStatus();
      if (status.error_code() == grpc::StatusCode::INTERNAL && status.error_message().empty()) {
        const std::string type = RequestTypeOf(method_);
        methods->ModifySendStatus(grpc::Status(
            grpc::StatusCode::INVALID_ARGUMENT,
            absl::StrCat("the request to ", method_, " is not a valid ",
                         type.empty() ? "protobuf message" : type,
                         " (it could not be parsed); nothing was changed")));
      }
    }
    methods->Proceed();
  }

 private:
  const std::string method_;
  bool received_ = false;
};

class Factory : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    return new UnparseableRequestInterceptor(info);
  }
};

}  // namespace

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
NewUnparseableRequestInterceptorFactory() {
  return std::make_unique<Factory>();
}

}  // namespace sluice
