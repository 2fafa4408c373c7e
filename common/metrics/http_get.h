// A one-shot HTTP/1.1 GET over loopback TCP, for tests that scrape a
// MetricsHttpServer (e.g. the in-process cluster tests).
#ifndef SLUICE_COMMON_METRICS_HTTP_GET_H_
#define SLUICE_COMMON_METRICS_HTTP_GET_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace sluice {
namespace metrics {

struct HttpGetResponse {
  int status = 0;
  std::string body;
};

// GET http://127.0.0.1:<port><path> with "Connection: close", read to EOF;
// with "Authorization: Bearer <bearer_token>" unless the token is empty.
// A chunked body (Transfer-Encoding: chunked) is decoded. UNAVAILABLE when
// the connection fails or the answer is not HTTP; a 5 s receive timeout.
absl::StatusOr<HttpGetResponse> HttpGet(int port, const std::string& path,
                                        const std::string& bearer_token = "");

// The same with any method and more header lines ("Name: value", without
// CRLF); no body ("Content-Length: 0" for a POST).
absl::StatusOr<HttpGetResponse> HttpCall(int port, const std::string& method,
                                         const std::string& path,
                                         const std::vector<std::string>& headers);

}  // namespace metrics
}  // namespace sluice

#endif  // SLUICE_COMMON_METRICS_HTTP_GET_H_
