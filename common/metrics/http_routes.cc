#include "common/metrics/http_routes.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace sluice {
namespace metrics {

HttpResponse HttpHandler::Refusal(int status, absl::string_view message) {
  HttpResponse response;
  response.status = status;
  response.body = absl::StrCat(message, "\n");
  return response;
}

absl::Status HttpRoutes::Add(const std::string& prefix, std::shared_ptr<HttpHandler> handler) {
  if (prefix.size() < 3 || prefix.front() != '/' || prefix.back() != '/' ||
      prefix == "/metrics/" || prefix == "/healthz/" || handler == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "HTTP route \"", prefix, "\": a prefix is \"/<name>/\" (not /metrics/ or /healthz/) "
        "with a handler"));
  }
  absl::MutexLock lock(&mu_);
  if (!routes_.emplace(prefix, std::move(handler)).second) {
    return absl::AlreadyExistsError(absl::StrCat("HTTP route \"", prefix, "\" is taken"));
  }
  return absl::OkStatus();
}

void HttpRoutes::Remove(const std::string& prefix) {
  absl::MutexLock lock(&mu_);  // waits for a Dispatch holding the reader lock
  routes_.erase(prefix);
}

bool HttpRoutes::Dispatch(absl::string_view path, const std::function<void(HttpHandler&)>& f) {
  absl::ReaderMutexLock lock(&mu_);
  for (const auto& [prefix, handler] : routes_) {
    if (absl::StartsWith(path, prefix) || path == absl::string_view(prefix).substr(0, prefix.size() - 1)) {
      f(*handler);
      return true;
    }
  }
  return false;
}

}  // namespace metrics
}  // namespace sluice
