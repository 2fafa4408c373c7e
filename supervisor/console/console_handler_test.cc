// The handler without a supervisor behind it (its channel points nowhere):
// the page, the headers every answer carries, and the refusals that happen
// before any call. tests/console runs it against a live supervisor.
#include "supervisor/console/console_handler.h"

#include <gtest/gtest.h>

#include "absl/strings/match.h"

namespace sluice::supervisor::console {
namespace {

class ConsoleHandlerTest : public ::testing::Test {
 protected:
  ConsoleHandlerTest()
      : handler_({.channel = grpc::CreateChannel("127.0.0.1:1", grpc::InsecureChannelCredentials())}) {}

  metrics::HttpResponse Get(const std::string& path, const std::string& method = "GET") {
    metrics::HttpRequest request;
    request.method = method;
    request.path = path;
    request.host = "127.0.0.1:8080";
    return handler_.Handle(request);
  }

  ConsoleHandler handler_;
};

TEST_F(ConsoleHandlerTest, ServesThePageWithItsSecurityHeaders) {
  metrics::HttpResponse page = Get("/console/");
  EXPECT_EQ(page.status, 200);
  EXPECT_EQ(page.content_type, "text/html; charset=utf-8");
  EXPECT_TRUE(absl::StrContains(page.body, "console.js"));
  for (const char* header :
       {"Content-Security-Policy: default-src 'none'; script-src 'self';",
        "frame-ancestors 'none'", "X-Content-Type-Options: nosniff", "X-Frame-Options: DENY",
        "Cache-Control: no-store"}) {
    EXPECT_TRUE(absl::StrContains(page.extra_headers, header)) << header;
  }
  EXPECT_EQ(Get("/console/assets/console.js").status, 200);
  EXPECT_EQ(Get("/console/assets/nope.js").status, 404);
  EXPECT_EQ(Get("/console/assets/../../etc/passwd").status, 404);
  metrics::HttpResponse moved = Get("/console");
  EXPECT_EQ(moved.status, 301);
  EXPECT_TRUE(absl::StrContains(moved.extra_headers, "Location: /console/\r\n"));
  EXPECT_EQ(Get("/console/", "POST").status, 405);
}

TEST_F(ConsoleHandlerTest, CrossSiteApiRequestsAreRefusedBeforeAnyCall) {
  metrics::HttpRequest request;
  request.method = "POST";
  request.path = "/console/api/datasources/wiki/terminate";
  request.host = "127.0.0.1:8080";
  request.authorization = "Bearer stolen-from-nowhere";
  request.origin = "http://evil.example";
  metrics::HttpResponse refused = handler_.Handle(request);
  EXPECT_EQ(refused.status, 403);
  EXPECT_TRUE(absl::StrContains(refused.body, "cross-origin")) << refused.body;

  request.origin = "";
  request.sec_fetch_site = "cross-site";
  EXPECT_EQ(handler_.Handle(request).status, 403);
  request.sec_fetch_site = "same-site";  // a sibling subdomain is another site's page
  EXPECT_EQ(handler_.Handle(request).status, 403);

  // Same origin gets as far as the call (nothing listens: 503).
  request.sec_fetch_site = "same-origin";
  request.origin = "http://127.0.0.1:8080";
  EXPECT_EQ(handler_.Handle(request).status, 503);
}

TEST_F(ConsoleHandlerTest, ActionsAreNeverGets) {
  metrics::HttpResponse get = Get("/console/api/datasources/wiki/suspend");
  EXPECT_EQ(get.status, 405);
  EXPECT_TRUE(absl::StrContains(get.body, "use POST")) << get.body;
  EXPECT_EQ(Get("/console/api/nope").status, 404);
}

TEST(CheckSameOriginTest, OriginMustBeThisHost) {
  metrics::HttpRequest request;
  request.host = "console.example:443";
  EXPECT_TRUE(CheckSameOrigin(request).ok());  // no Origin: not a cross-site fetch
  request.origin = "https://console.example:443";
  EXPECT_TRUE(CheckSameOrigin(request).ok());
  request.origin = "https://console.example.evil:443";
  EXPECT_EQ(CheckSameOrigin(request).code(), absl::StatusCode::kPermissionDenied);
  request.origin = "null";  // sandboxed frames, file:// pages
  EXPECT_EQ(CheckSameOrigin(request).code(), absl::StatusCode::kPermissionDenied);
}

}  // namespace
}  // namespace sluice::supervisor::console
