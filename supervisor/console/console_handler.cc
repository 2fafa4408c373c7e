#include "supervisor/console/console_handler.h"

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include <set>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/enum_names.h"
#include "supervisor/console/console_assets.h"
#include "supervisor/console/console_route.h"

namespace sluice::supervisor::console {

namespace {

// Only this origin's files; no inline script or style; never framed.
constexpr char kSecurityHeaders[] =
    "Content-Security-Policy: default-src 'none'; script-src 'self'; style-src 'self'; "
    "connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'\r\n"
    "X-Content-Type-Options: nosniff\r\n"
    "X-Frame-Options: DENY\r\n"
    "Referrer-Policy: no-referrer\r\n"
    "Cache-Control: no-store\r\n";

metrics::HttpResponse WithHeaders(metrics::HttpResponse response) {
  response.extra_headers = absl::StrCat(kSecurityHeaders, response.extra_headers);
  return response;
}

metrics::HttpResponse Asset(absl::string_view name) {
  const ConsoleAsset* asset = FindConsoleAsset(name);
  if (asset == nullptr) return ErrorResponse(absl::NotFoundError("no such console file"));
  metrics::HttpResponse response;
  response.content_type = std::string(asset->content_type);
  response.body = std::string(asset->body);
  return response;
}

}  // namespace

absl::Status CheckSameOrigin(const metrics::HttpRequest& request) {
  if (!request.sec_fetch_site.empty() && request.sec_fetch_site != "same-origin" &&
      request.sec_fetch_site != "none") {
    return absl::PermissionDeniedError(
        absl::StrCat("cross-site request refused (Sec-Fetch-Site: ",
                     request.sec_fetch_site.substr(0, 20), ")"));
  }
  if (!request.origin.empty() && request.origin != absl::StrCat("http://", request.host) &&
      request.origin != absl::StrCat("https://", request.host)) {
    return absl::PermissionDeniedError("cross-origin request refused (Origin is not this host)");
  }
  return absl::OkStatus();
}

ConsoleHandler::ConsoleHandler(ConsoleHandlerOptions options)
    : options_(std::move(options)),
      api_(v1::SupervisorService::NewStub(options_.channel), &lag_history_) {
  if (options_.statuses) {
    sampler_ = std::thread([this] {
      do {
        lag_history_.Record(absl::Now(), options_.statuses());
      } while (!stop_.WaitForNotificationWithTimeout(options_.lag_sample_period));
    });
  }
}

ConsoleHandler::~ConsoleHandler() {
  stop_.Notify();
  if (sampler_.joinable()) sampler_.join();
}

metrics::HttpResponse ConsoleHandler::Handle(const metrics::HttpRequest& request) {
  absl::string_view path = request.path;
  if (path == "/console") {
    metrics::HttpResponse moved;
    moved.status = 301;
    moved.body = "/console/\n";
    moved.extra_headers = "Location: /console/\r\n";
    return WithHeaders(std::move(moved));
  }
  if (absl::StartsWith(path, kApiPrefix)) return WithHeaders(Api(request));
  if (request.method != "GET" && request.method != "HEAD") {
    metrics::HttpResponse refused =
        ErrorResponse(absl::UnimplementedError("the console's pages are read with GET"));
    refused.extra_headers += "Allow: GET, HEAD\r\n";
    return WithHeaders(std::move(refused));
  }
  if (path == kConsolePrefix) return WithHeaders(Asset("index.html"));
  if (absl::ConsumePrefix(&path, "/console/assets/")) return WithHeaders(Asset(path));
  return WithHeaders(ErrorResponse(absl::NotFoundError("no such console page")));
}

metrics::HttpResponse ConsoleHandler::Api(const metrics::HttpRequest& request) {
  if (absl::Status same = CheckSameOrigin(request); !same.ok()) return ErrorResponse(same);
  absl::StatusOr<ConsoleRoute> route =
      MatchConsoleRoute(request.method, request.path, request.query);
  if (!route.ok()) return ErrorResponse(route.status());
  if (route->call == ConsoleCall::kWhoAmI) return WhoAmI(request);
  return api_.Run(*route, request.authorization);
}

metrics::HttpResponse ConsoleHandler::WhoAmI(const metrics::HttpRequest& request) const {
  google::protobuf::Struct out;
  bool admin = true;
  std::string principal = "anonymous (authentication is off)";
  std::set<v1::Role> roles = {v1::ROLE_ADMIN};
  if (options_.authorizer != nullptr && options_.authorizer->enabled()) {
    auth::CallIdentity identity;
    identity.authorization = request.authorization;
    absl::StatusOr<auth::Caller> caller = options_.authorizer->AuthorizeRoles(
        identity, {v1::ROLE_READER, v1::ROLE_ADMIN}, "the web console");
    if (!caller.ok()) return ErrorResponse(caller.status());
    principal = caller->principal;
    roles = caller->roles;
    admin = roles.count(v1::ROLE_ADMIN) > 0;
  }
  (*out.mutable_fields())["principal"].set_string_value(principal);
  (*out.mutable_fields())["admin"].set_bool_value(admin);
  google::protobuf::ListValue* list = (*out.mutable_fields())["roles"].mutable_list_value();
  for (v1::Role role : roles) list->add_values()->set_string_value(ShortEnumName(role));
  metrics::HttpResponse response;
  response.content_type = "application/json; charset=utf-8";
  (void)google::protobuf::util::MessageToJsonString(out, &response.body);
  return response;
}

}  // namespace sluice::supervisor::console
