#include "supervisor/console/console_server.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/tls/test_certs.h"

namespace sluice::supervisor::console {
namespace {

// Answers with what it was given, so the test sees the request as parsed.
class EchoHandler : public metrics::HttpHandler {
 public:
  metrics::HttpResponse Handle(const metrics::HttpRequest& request) override {
    metrics::HttpResponse response;
    response.body = absl::StrCat(request.method, " ", request.path, " ?", request.query,
                                 " auth=", request.authorization, " origin=", request.origin,
                                 " site=", request.sec_fetch_site);
    response.extra_headers = "X-Test: yes\r\nX-Colons: a: b:c\r\n";
    return response;
  }
};

class ConsoleServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(routes_.Add("/console/", std::make_shared<EchoHandler>()).ok());
  }
  metrics::HttpRoutes routes_;
};

TEST_F(ConsoleServerTest, PlainHttpReachesTheRoute) {
  auto server = ConsoleServer::Start({.listen = "127.0.0.1:0", .routes = &routes_});
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_FALSE((*server)->tls());
  httplib::Client client("127.0.0.1", (*server)->port());
  auto got = client.Get("/console/api/x?0=1&2=3",
                        {{"Authorization", "Bearer t"}, {"Origin", "http://h"},
                         {"Sec-Fetch-Site", "same-origin"}});
  ASSERT_TRUE(got) << httplib::to_string(got.error());
  EXPECT_EQ(got->status, 200);
  EXPECT_EQ(got->body,
            "GET /console/api/x ?0=1&2=3 auth=Bearer t origin=http://h site=same-origin");
  EXPECT_EQ(got->get_header_value("X-Test"), "yes");
  EXPECT_EQ(got->get_header_value("X-Colons"), "a: b:c");
  auto posted = client.Post("/console/api/y", "", "text/plain");
  ASSERT_TRUE(posted);
  EXPECT_TRUE(absl::StartsWith(posted->body, "POST /console/api/y")) << posted->body;
  auto elsewhere = client.Get("/metrics");
  ASSERT_TRUE(elsewhere);
  EXPECT_EQ(elsewhere->status, 404);
  // Two Origins: which would a check have looked at?
  auto twice = client.Get("/console/", {{"Origin", "http://a"}, {"Origin", "http://b"}});
  ASSERT_TRUE(twice);
  EXPECT_EQ(twice->status, 400);
  // A body over the bound is refused.
  auto big = client.Post("/console/api/y", std::string(20000, 'x'), "text/plain");
  ASSERT_TRUE(big);
  EXPECT_EQ(big->status, 413);
}

TEST_F(ConsoleServerTest, HttpsWithTheServersCertificate) {
  const std::string dir = ::testing::TempDir();
  auto ca = tls::MakeTestCa(dir, "console-ca");
  ASSERT_TRUE(ca.ok()) << ca.status();
  auto cert = tls::MakeTestCert(dir, *ca, "console-server");
  ASSERT_TRUE(cert.ok()) << cert.status();
  auto server = ConsoleServer::Start({.listen = "127.0.0.1:0",
                                      .tls_cert_path = cert->cert_path,
                                      .tls_key_path = cert->key_path,
                                      .routes = &routes_});
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_TRUE((*server)->tls());
  httplib::SSLClient client("127.0.0.1", (*server)->port());
  client.set_ca_cert_path(ca->cert_path.c_str());
  client.enable_server_certificate_verification(true);
  auto got = client.Get("/console/");
  ASSERT_TRUE(got) << httplib::to_string(got.error());
  EXPECT_EQ(got->status, 200);
  // Plain HTTP to the TLS port gets no answer.
  httplib::Client plain("127.0.0.1", (*server)->port());
  plain.set_read_timeout(2, 0);
  auto refused = plain.Get("/console/");
  EXPECT_TRUE(!refused || refused->status != 200);
}

TEST_F(ConsoleServerTest, BadOptions) {
  for (const char* listen : {"", "nocolon", "host:x", "host:70000"}) {
    EXPECT_EQ(ConsoleServer::Start({.listen = listen, .routes = &routes_}).status().code(),
              absl::StatusCode::kInvalidArgument)
        << listen;
  }
  EXPECT_EQ(ConsoleServer::Start({.listen = "127.0.0.1:0", .tls_cert_path = "/x.pem",
                                  .routes = &routes_})
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ConsoleServer::Start({.listen = "127.0.0.1:0", .tls_cert_path = "/nope.pem",
                                  .tls_key_path = "/nope.key", .routes = &routes_})
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  auto first = ConsoleServer::Start({.listen = "127.0.0.1:0", .routes = &routes_});
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(ConsoleServer::Start(
                {.listen = absl::StrCat("127.0.0.1:", (*first)->port()), .routes = &routes_})
                .status()
                .code(),
            absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace sluice::supervisor::console
