// The little HTTP/1.1 that the metrics endpoint needs: parsing one request
// head (plus an optional Content-Length body, which is skipped) from the
// bytes received so far, and formatting a response. Pure functions, no I/O.
#ifndef SLUICE_COMMON_METRICS_HTTP_MESSAGE_H_
#define SLUICE_COMMON_METRICS_HTTP_MESSAGE_H_

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace sluice {
namespace metrics {

struct HttpRequest {
  std::string method;     // "GET", "HEAD", ...
  std::string path;       // the target's path, without the query string
  std::string query;      // the query string after "?" (raw, not decoded); "" when none
  int minor_version = 1;  // HTTP/1.<minor_version>
  // Whether the connection stays open after the response: HTTP/1.1 unless
  // "Connection: close", HTTP/1.0 only with "Connection: keep-alive".
  bool keep_alive = true;
  // The Authorization header's value (e.g. "Bearer <token>"); empty when
  // absent. Never logged.
  std::string authorization;
  // The Host, Origin and Sec-Fetch-Site headers as sent; empty when absent
  // (what a handler checks against cross-site requests).
  std::string host;
  std::string origin;
  std::string sec_fetch_site;
};

struct HttpParseResult {
  enum class State {
    kIncomplete,  // need more bytes
    kComplete,    // `request` is set; `consumed` bytes belong to it
    kInvalid,     // answer `error_status` and close the connection
  };
  State state = State::kIncomplete;
  HttpRequest request;
  size_t consumed = 0;
  int error_status = 0;  // 400, 413, 431, 501 or 505
  std::string error;     // short reason for the response body
};

// Parses the request at the start of `buffer`. A request (head plus body)
// longer than `max_bytes` is invalid (431 when its head does not end within
// `max_bytes`, 413 when its Content-Length takes it past the limit).
// Leading empty lines are skipped; lines may end in CRLF or LF.
HttpParseResult ParseHttpRequest(absl::string_view buffer, size_t max_bytes);

// "HTTP/1.1 <status> <reason>" with Content-Type, Content-Length and, when
// `close`, "Connection: close"; `extra_headers` are complete "Name: value\r\n"
// lines. The body is left out when `head_only` (a HEAD request), but
// Content-Length still gives its size. A 204 has neither header nor body.
std::string FormatHttpResponse(int status, absl::string_view content_type, absl::string_view body,
                               bool close, bool head_only, absl::string_view extra_headers = "");

// "OK", "Not Found", ... for the statuses this server sends.
const char* HttpReason(int status);

}  // namespace metrics
}  // namespace sluice

#endif  // SLUICE_COMMON_METRICS_HTTP_MESSAGE_H_
