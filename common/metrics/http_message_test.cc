#include "common/metrics/http_message.h"

#include <gtest/gtest.h>

#include <string>

namespace sluice {
namespace metrics {
namespace {

using State = HttpParseResult::State;

TEST(ParseHttpRequest, SimpleGet) {
  std::string req = "GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n";
  HttpParseResult r = ParseHttpRequest(req, 8192);
  ASSERT_EQ(r.state, State::kComplete);
  EXPECT_EQ(r.request.method, "GET");
  EXPECT_EQ(r.request.path, "/metrics");
  EXPECT_EQ(r.request.minor_version, 1);
  EXPECT_TRUE(r.request.keep_alive);
  EXPECT_EQ(r.consumed, req.size());
}

TEST(ParseHttpRequest, EveryPrefixIsIncomplete) {
  std::string req = "GET /healthz?x=1 HTTP/1.1\r\nHost: x\r\n\r\n";
  for (size_t n = 0; n < req.size(); ++n) {
    EXPECT_EQ(ParseHttpRequest(req.substr(0, n), 8192).state, State::kIncomplete) << n;
  }
  HttpParseResult r = ParseHttpRequest(req, 8192);
  ASSERT_EQ(r.state, State::kComplete);
  EXPECT_EQ(r.request.path, "/healthz");  // query dropped
}

TEST(ParseHttpRequest, PipelinedRequestsConsumeOneAtATime) {
  std::string first = "GET /a HTTP/1.1\r\n\r\n";
  std::string second = "HEAD /b HTTP/1.1\r\nConnection: close\r\n\r\n";
  HttpParseResult r = ParseHttpRequest(first + second, 8192);
  ASSERT_EQ(r.state, State::kComplete);
  EXPECT_EQ(r.request.path, "/a");
  EXPECT_EQ(r.consumed, first.size());
  r = ParseHttpRequest(second, 8192);
  ASSERT_EQ(r.state, State::kComplete);
  EXPECT_EQ(r.request.method, "HEAD");
  EXPECT_FALSE(r.request.keep_alive);
}

TEST(ParseHttpRequest, ConnectionSemantics) {
  auto keep_alive = [](const std::string& req) {
    HttpParseResult r = ParseHttpRequest(req, 8192);
    EXPECT_EQ(r.state, State::kComplete) << req;
    return r.request.keep_alive;
  };
  EXPECT_TRUE(keep_alive("GET / HTTP/1.1\r\n\r\n"));
  EXPECT_FALSE(keep_alive("GET / HTTP/1.1\r\nConnection: Close\r\n\r\n"));
  EXPECT_FALSE(keep_alive("GET / HTTP/1.1\r\nconnection: keep-alive, close\r\n\r\n"));
  EXPECT_FALSE(keep_alive("GET / HTTP/1.0\r\n\r\n"));
  EXPECT_TRUE(keep_alive("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n"));
}

TEST(ParseHttpRequest, BareLineFeedsAndLeadingEmptyLines) {
  std::string req = "\r\n\nGET /metrics HTTP/1.1\nHost: x\n\n";
  HttpParseResult r = ParseHttpRequest(req, 8192);
  ASSERT_EQ(r.state, State::kComplete);
  EXPECT_EQ(r.request.path, "/metrics");
  EXPECT_EQ(r.consumed, req.size());
}

TEST(ParseHttpRequest, AbsoluteFormTarget) {
  HttpParseResult r = ParseHttpRequest("GET http://pod:9090/metrics HTTP/1.1\r\n\r\n", 8192);
  ASSERT_EQ(r.state, State::kComplete);
  EXPECT_EQ(r.request.path, "/metrics");
}

TEST(ParseHttpRequest, BodyIsWaitedForAndSkipped) {
  std::string head = "POST /metrics HTTP/1.1\r\nContent-Length: 5\r\n\r\n";
  EXPECT_EQ(ParseHttpRequest(head + "abc", 8192).state, State::kIncomplete);
  HttpParseResult r = ParseHttpRequest(head + "abcdeGET", 8192);
  ASSERT_EQ(r.state, State::kComplete);
  EXPECT_EQ(r.consumed, head.size() + 5);
}

TEST(ParseHttpRequest, RejectsMalformedRequests) {
  struct Case {
    const char* request;
    int status;
  };
  for (const Case& c : {
           Case{"GARBAGE\r\n\r\n", 400},
           Case{"GET /x\r\n\r\n", 400},
           Case{"GET  /x HTTP/1.1\r\n\r\n", 400},
           Case{"GET x HTTP/1.1\r\n\r\n", 400},
           Case{"G(T / HTTP/1.1\r\n\r\n", 400},
           Case{"GET / HTTP/2.0\r\n\r\n", 505},
           Case{"GET / FTP/1.1\r\n\r\n", 400},
           Case{"GET / HTTP/1.1\r\nNo colon here\r\n\r\n", 400},
           Case{"GET / HTTP/1.1\r\nBad Name: x\r\n\r\n", 400},
           Case{"GET / HTTP/1.1\r\nA: b\r\n  folded\r\n\r\n", 400},
           Case{"GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400},
           Case{"GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400},
           Case{"GET / HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n", 400},
           Case{"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", 501},
           Case{"POST / HTTP/1.1\r\nContent-Length: 9000\r\n\r\n", 413},
           Case{"GET / HTTP/1.1\r\nAuthorization: Bearer a\r\nauthorization: Bearer b\r\n\r\n",
                400},
       }) {
    HttpParseResult r = ParseHttpRequest(c.request, 8192);
    EXPECT_EQ(r.state, State::kInvalid) << c.request;
    EXPECT_EQ(r.error_status, c.status) << c.request;
    EXPECT_FALSE(r.error.empty()) << c.request;
  }
}

TEST(ParseHttpRequest, AuthorizationHeader) {
  HttpParseResult r = ParseHttpRequest("GET /metrics HTTP/1.1\r\nHost: x\r\n"
                                       "AUTHORIZATION:   Bearer s3cr3t  \r\n\r\n",
                                       8192);
  ASSERT_EQ(r.state, State::kComplete);
  EXPECT_EQ(r.request.authorization, "Bearer s3cr3t");
  r = ParseHttpRequest("GET /metrics HTTP/1.1\r\n\r\n", 8192);
  ASSERT_EQ(r.state, State::kComplete);
  EXPECT_EQ(r.request.authorization, "");
}

TEST(ParseHttpRequest, HostOriginAndFetchSiteHeaders) {
  HttpParseResult r = ParseHttpRequest(
      "POST /console/api/x HTTP/1.1\r\nHost: 127.0.0.1:9\r\nOrigin: http://evil.example\r\n"
      "Sec-Fetch-Site: cross-site\r\n\r\n",
      8192);
  ASSERT_EQ(r.state, State::kComplete);
  EXPECT_EQ(r.request.host, "127.0.0.1:9");
  EXPECT_EQ(r.request.origin, "http://evil.example");
  EXPECT_EQ(r.request.sec_fetch_site, "cross-site");
  // Two Origins: which one would a check have looked at?
  r = ParseHttpRequest("GET / HTTP/1.1\r\nOrigin: http://a\r\nOrigin: http://b\r\n\r\n", 8192);
  EXPECT_EQ(r.state, State::kInvalid);
  EXPECT_EQ(r.error_status, 400);
}

TEST(ParseHttpRequest, HeadLongerThanTheLimit) {
  std::string partial = "GET / HTTP/1.1\r\nX-Long: " + std::string(300, 'a');
  EXPECT_EQ(ParseHttpRequest(partial, 1000).state, State::kIncomplete);
  HttpParseResult r = ParseHttpRequest(partial, 256);
  EXPECT_EQ(r.state, State::kInvalid);
  EXPECT_EQ(r.error_status, 431);
  // A complete head that is still too long.
  r = ParseHttpRequest(partial + "\r\n\r\n", 256);
  EXPECT_EQ(r.state, State::kInvalid);
  EXPECT_EQ(r.error_status, 431);
}

TEST(FormatHttpResponse, HeadersAndBody) {
  EXPECT_EQ(FormatHttpResponse(200, "text/plain", "hi\n", false, false),
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n\r\nhi\n");
  EXPECT_EQ(FormatHttpResponse(404, "text/plain", "no", true, true, "Allow: GET\r\n"),
            "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n"
            "Allow: GET\r\nConnection: close\r\n\r\n");
}

TEST(ParseHttpRequest, KeepsTheQueryStringRawAndApart) {
  HttpParseResult r =
      ParseHttpRequest("GET /iceberg/v1/namespaces?pageToken=a%20b&x#frag HTTP/1.1\r\n\r\n", 8192);
  ASSERT_EQ(r.state, State::kComplete);
  EXPECT_EQ(r.request.path, "/iceberg/v1/namespaces");
  EXPECT_EQ(r.request.query, "pageToken=a%20b&x");
  r = ParseHttpRequest("GET /metrics HTTP/1.1\r\n\r\n", 8192);
  EXPECT_EQ(r.request.query, "");
  r = ParseHttpRequest("GET /metrics#x?y HTTP/1.1\r\n\r\n", 8192);
  EXPECT_EQ(r.request.path, "/metrics");
  EXPECT_EQ(r.request.query, "");
}

TEST(FormatHttpResponse, NoContentHasNoBodyHeaders) {
  EXPECT_EQ(FormatHttpResponse(204, "application/json", "ignored", /*close=*/true,
                               /*head_only=*/false, "X-A: 1\r\n"),
            "HTTP/1.1 204 No Content\r\nX-A: 1\r\nConnection: close\r\n\r\n");
}

}  // namespace
}  // namespace metrics
}  // namespace sluice
