#include "common/metrics/http_get.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace sluice {
namespace metrics {

absl::StatusOr<HttpGetResponse> HttpGet(int port, const std::string& path,
                                        const std::string& bearer_token) {
  std::vector<std::string> headers;
  if (!bearer_token.empty()) headers.push_back(absl::StrCat("Authorization: Bearer ", bearer_token));
  return HttpCall(port, "GET", path, headers);
}

absl::StatusOr<HttpGetResponse> HttpCall(int port, const std::string& method,
                                         const std::string& path,
                                         const std::vector<std::string>& headers) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::UnavailableError(absl::StrCat("socket: ", strerror(errno)));
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string request = absl::StrCat(method, " ", path, " HTTP/1.1\r\nHost: 127.0.0.1:", port,
                                     "\r\n");
  for (const std::string& header : headers) absl::StrAppend(&request, header, "\r\n");
  if (method == "POST") absl::StrAppend(&request, "Content-Length: 0\r\n");
  absl::StrAppend(&request, "Connection: close\r\n\r\n");
  std::string reply;
  absl::Status status;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      send(fd, request.data(), request.size(), MSG_NOSIGNAL) !=
          static_cast<ssize_t>(request.size())) {
    status = absl::UnavailableError(absl::StrCat("127.0.0.1:", port, ": ", strerror(errno)));
  } else {
    char buf[8192];
    ssize_t n;
    while ((n = recv(fd, buf, sizeof(buf), 0)) > 0) reply.append(buf, n);
    if (n < 0) status = absl::UnavailableError(absl::StrCat("recv: ", strerror(errno)));
  }
  close(fd);
  if (!status.ok()) return status;
  // "HTTP/1.1 200 OK\r\n...\r\n\r\nbody"
  size_t head_end = reply.find("\r\n\r\n");
  HttpGetResponse response;
  if (reply.compare(0, 9, "HTTP/1.1 ") != 0 || head_end == std::string::npos ||
      !absl::SimpleAtoi(reply.substr(9, 3), &response.status)) {
    return absl::UnavailableError(absl::StrCat("not an HTTP response: ", reply.substr(0, 80)));
  }
  response.body = reply.substr(head_end + 4);
  const std::string head = absl::AsciiStrToLower(reply.substr(0, head_end));
  if (absl::StrContains(head, "\r\ntransfer-encoding: chunked")) {
    // "<hex size>[;ext]\r\n<data>\r\n" ... "0\r\n\r\n"
    std::string body;
    absl::string_view rest = response.body;
    while (true) {
      const size_t line_end = rest.find("\r\n");
      uint64_t size = 0;
      if (line_end == absl::string_view::npos ||
          !absl::SimpleHexAtoi(rest.substr(0, std::min(line_end, rest.find(';'))), &size) ||
          rest.size() < line_end + 2 + size) {
        return absl::UnavailableError("malformed chunked body");
      }
      if (size == 0) break;
      const absl::string_view chunk = rest.substr(line_end + 2, size);
      body.append(chunk.data(), chunk.size());
      rest.remove_prefix(std::min(rest.size(), line_end + 2 + size + 2));
    }
    response.body = std::move(body);
  }
  return response;
}

}  // namespace metrics
}  // namespace sluice
