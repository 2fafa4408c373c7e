// The endpoint's route table: prefixes, dispatch, removal; and a route
// served over TCP after the endpoint's authorization, its refusals in the
// route's own format.
#include "common/metrics/http_routes.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "common/metrics/http_get.h"
#include "common/metrics/http_server.h"
#include "common/metrics/registry.h"

namespace sluice {
namespace metrics {
namespace {

class EchoHandler : public HttpHandler {
 public:
  HttpResponse Handle(const HttpRequest& request) override {
    HttpResponse response;
    response.status = request.path == "/echo/empty" ? 204 : 200;
    response.content_type = "application/json";
    response.body = "{\"path\":\"" + request.path + "\",\"query\":\"" + request.query + "\"}";
    response.extra_headers = "X-Echo: 1\r\n";
    return response;
  }
  HttpResponse Refusal(int status, absl::string_view message) override {
    HttpResponse response;
    response.status = status;
    response.content_type = "application/json";
    response.body = "{\"refused\":\"" + std::string(message) + "\"}";
    return response;
  }
};

TEST(HttpRoutesTest, AddsDispatchesAndRemoves) {
  HttpRoutes routes;
  auto handler = std::make_shared<EchoHandler>();
  for (const char* bad : {"", "/", "echo/", "/echo", "/metrics/", "/healthz/"}) {
    EXPECT_EQ(routes.Add(bad, handler).code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(routes.Add("/x/", nullptr).code(), absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(routes.Add("/echo/", handler).ok());
  EXPECT_EQ(routes.Add("/echo/", handler).code(), absl::StatusCode::kAlreadyExists);
  int calls = 0;
  auto count = [&](HttpHandler&) { ++calls; };
  EXPECT_TRUE(routes.Dispatch("/echo/a/b", count));
  EXPECT_TRUE(routes.Dispatch("/echo", count));
  EXPECT_FALSE(routes.Dispatch("/echoes", count));
  EXPECT_FALSE(routes.Dispatch("/metrics", count));
  EXPECT_EQ(calls, 2);
  routes.Remove("/echo/");
  EXPECT_FALSE(routes.Dispatch("/echo/a", count));
  routes.Remove("/echo/");  // absent: nothing
}

TEST(HttpRoutesTest, ServedAfterTheEndpointsAuthorization) {
  Registry registry;
  HttpRoutes routes;
  ASSERT_TRUE(routes.Add("/echo/", std::make_shared<EchoHandler>()).ok());
  MetricsHttpServerOptions options;
  options.listen = "127.0.0.1:0";
  options.registry = &registry;
  options.routes = &routes;
  options.authorize = [](const std::string& authorization) -> absl::Status {
    if (authorization.empty()) return absl::UnauthenticatedError("no credential");
    if (authorization != "Bearer good") return absl::PermissionDeniedError("no role");
    return absl::OkStatus();
  };
  auto server = MetricsHttpServer::Start(options);
  ASSERT_TRUE(server.ok()) << server.status();
  auto ok = HttpGet((*server)->port(), "/echo/a%2Fb?x=1&y=%20", "good");
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->status, 200);
  EXPECT_EQ(ok->body, R"({"path":"/echo/a%2Fb","query":"x=1&y=%20"})");
  auto empty = HttpGet((*server)->port(), "/echo/empty", "good");
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->status, 204);
  EXPECT_EQ(empty->body, "");
  auto anonymous = HttpGet((*server)->port(), "/echo/a");
  ASSERT_TRUE(anonymous.ok());
  EXPECT_EQ(anonymous->status, 401);
  EXPECT_EQ(anonymous->body, R"({"refused":"no credential"})");
  auto denied = HttpGet((*server)->port(), "/echo/a", "bad");
  ASSERT_TRUE(denied.ok());
  EXPECT_EQ(denied->status, 403);
  EXPECT_EQ(denied->body, R"({"refused":"no role"})");
  // Unrouted paths and the endpoint's own stay as they were.
  EXPECT_EQ(HttpGet((*server)->port(), "/other", "good")->status, 404);
  EXPECT_EQ(HttpGet((*server)->port(), "/metrics", "good")->status, 200);
  EXPECT_TRUE(absl::StrContains(HttpGet((*server)->port(), "/metrics")->body, "no credential"));
  // Removed: the path is unknown again.
  routes.Remove("/echo/");
  EXPECT_EQ(HttpGet((*server)->port(), "/echo/a", "good")->status, 404);
}

}  // namespace
}  // namespace metrics
}  // namespace sluice
