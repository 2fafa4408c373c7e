#include "common/metrics/grpc_server_metrics.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/descriptor.h"
#include "absl/time/clock.h"
#include "common/metrics/catalog.h"

namespace sluice {
namespace metrics {
namespace {

using grpc::experimental::InterceptionHookPoints;

constexpr char kUnknownLabel[] = "unknown";

// One per RPC, created by gRPC when the call starts, destroyed when it ends.
class MetricsInterceptor : public grpc::experimental::Interceptor {
 public:
  MetricsInterceptor(Registry* registry, absl::string_view full_method)
      : registry_(registry), start_(absl::Now()) {
    // "/package.Service/Method"
    absl::string_view name = full_method;
    if (!name.empty() && name[0] == '/') name.remove_prefix(1);
    size_t slash = name.rfind('/');
    if (slash == absl::string_view::npos) {
      method_ = std::string(name);
    } else {
      service_ = std::string(name.substr(0, slash));
      method_ = std::string(name.substr(slash + 1));
    }
    // The name is the caller's to choose: only methods of a compiled-in
    // contract (sluice.v1, health, reflection) get series of their own.
    if (google::protobuf::DescriptorPool::generated_pool()->FindMethodByName(
            absl::StrCat(service_, ".", method_)) == nullptr) {
      service_ = kUnknownLabel;
      method_ = kUnknownLabel;
    }
  }

  ~MetricsInterceptor() override {
    if (!recorded_) Record(grpc::StatusCode::CANCELLED);
  }

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS)) {
      Record(methods->GetSendStatus().error_code());
    }
    methods->Proceed();
  }

 private:
  void Record(grpc::StatusCode code) {
    recorded_ = true;
    registry_
        ->GetCounter(kGrpcServerHandled,
                     {{"grpc_service", service_},
                      {"grpc_method", method_},
                      {"grpc_code", absl::StatusCodeToString(static_cast<absl::StatusCode>(code))}})
        ->Increment();
    registry_
        ->GetHistogram(kGrpcServerHandlingSeconds,
                       {{"grpc_service", service_}, {"grpc_method", method_}})
        ->ObserveDuration(absl::Now() - start_);
  }

  Registry* const registry_;
  const absl::Time start_;
  std::string service_;
  std::string method_;
  bool recorded_ = false;
};

class MetricsInterceptorFactory : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit MetricsInterceptorFactory(Registry* registry) : registry_(registry) {}

  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    return new MetricsInterceptor(registry_, info->method() ? info->method() : "");
  }

 private:
  Registry* const registry_;
};

}  // namespace

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> NewGrpcServerMetricsFactory(
    Registry* registry) {
  return std::make_unique<MetricsInterceptorFactory>(registry);
}

}  // namespace metrics
}  // namespace sluice
