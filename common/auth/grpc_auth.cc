#include "common/auth/grpc_auth.h"

#include <glog/logging.h>
#include <grpc/grpc_security_constants.h>
#include <grpcpp/support/client_interceptor.h>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/grpc_status.h"
#include "common/status_macros.h"

namespace sluice::auth {
namespace {

std::string FirstProperty(const grpc::AuthContext& auth, const char* name) {
  std::vector<grpc::string_ref> values = auth.FindPropertyValues(name);
  if (values.empty()) return "";
  return std::string(values.front().data(), values.front().size());
}

class BearerInterceptor final : public grpc::experimental::Interceptor {
 public:
  explicit BearerInterceptor(const std::string* header) : header_(header) {}
  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::PRE_SEND_INITIAL_METADATA)) {
      methods->GetSendInitialMetadata()->insert({"authorization", *header_});
    }
    methods->Proceed();
  }

 private:
  const std::string* header_;
};

class BearerInterceptorFactory final
    : public grpc::experimental::ClientInterceptorFactoryInterface {
 public:
  explicit BearerInterceptorFactory(std::string token)
      : header_(absl::StrCat("Bearer ", token)) {}
  grpc::experimental::Interceptor* CreateClientInterceptor(
      grpc::experimental::ClientRpcInfo*) override {
    return new BearerInterceptor(&header_);
  }

 private:
  const std::string header_;
};

}  // namespace

CallIdentity IdentityOf(const grpc::ServerContext& context) {
  CallIdentity identity;
  const auto& metadata = context.client_metadata();
  if (auto it = metadata.find("authorization"); it != metadata.end()) {
    identity.authorization.assign(it->second.data(), it->second.size());
  }
  std::shared_ptr<const grpc::AuthContext> auth = context.auth_context();
  if (auth != nullptr && auth->IsPeerAuthenticated()) {
    identity.certificate_principal = FirstProperty(*auth, GRPC_PEER_URI_PROPERTY_NAME);
    if (identity.certificate_principal.empty()) {
      identity.certificate_principal = FirstProperty(*auth, GRPC_X509_CN_PROPERTY_NAME);
    }
  }
  return identity;
}

grpc::Status AuthorizeCall(const Authorizer& authorizer, const grpc::ServerContext& context,
                           absl::string_view method, Caller* caller) {
  absl::StatusOr<Caller> result = authorizer.Authorize(IdentityOf(context), method);
  if (!result.ok()) {
    LOG(WARNING) << "[auth] refused " << method << " from " << context.peer() << ": "
                 << result.status();
    return ToGrpcStatus(result.status());
  }
  *caller = *std::move(result);
  return grpc::Status::OK;
}

absl::StatusOr<std::string> ReadTokenFile(const std::string& path) {
  SLUICE_ASSIGN_OR_RETURN(std::string contents, ReadFile(path));
  std::string token(absl::StripAsciiWhitespace(contents));
  if (token.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("token file ", path, " is empty"));
  }
  return token;
}

std::shared_ptr<grpc::Channel> NewChannel(const std::string& target,
                                          std::shared_ptr<grpc::ChannelCredentials> credentials,
                                          const ClientAuth& auth,
                                          const grpc::ChannelArguments& args) {
  if (credentials == nullptr) credentials = grpc::InsecureChannelCredentials();
  std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>> creators;
  if (!auth.bearer_token.empty()) {
    creators.push_back(std::make_unique<BearerInterceptorFactory>(auth.bearer_token));
  }
  return grpc::experimental::CreateCustomChannelWithInterceptors(target, credentials, args,
                                                                 std::move(creators));
}

}  // namespace sluice::auth
