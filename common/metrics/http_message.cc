#include "common/metrics/http_message.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace sluice {
namespace metrics {
namespace {

HttpParseResult Invalid(int status, std::string error) {
  HttpParseResult result;
  result.state = HttpParseResult::State::kInvalid;
  result.error_status = status;
  result.error = std::move(error);
  return result;
}

// RFC 9110 token characters.
bool IsToken(absl::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (absl::ascii_isalnum(static_cast<unsigned char>(c))) continue;
    if (absl::string_view("!#$%&'*+-.^_`|~").find(c) == absl::string_view::npos) return false;
  }
  return true;
}

// Offset just past the empty line that ends the head, or npos.
size_t FindHeadEnd(absl::string_view buffer) {
  for (size_t i = buffer.find('\n'); i != absl::string_view::npos; i = buffer.find('\n', i + 1)) {
    // The line that starts after this '\n' is empty ("\n" or "\r\n").
    if (i + 1 < buffer.size() && buffer[i + 1] == '\n') return i + 2;
    if (i + 2 < buffer.size() && buffer[i + 1] == '\r' && buffer[i + 2] == '\n') return i + 3;
  }
  return absl::string_view::npos;
}

}  // namespace

HttpParseResult ParseHttpRequest(absl::string_view buffer, size_t max_bytes) {
  // Ignore empty lines before the request line (RFC 9112, 2.2).
  size_t skipped = 0;
  while (skipped < buffer.size() && (buffer[skipped] == '\r' || buffer[skipped] == '\n')) {
    ++skipped;
  }
  absl::string_view rest = buffer.substr(skipped);
  size_t head_end = FindHeadEnd(rest);
  if (head_end == absl::string_view::npos) {
    if (buffer.size() > max_bytes) {
      return Invalid(431, absl::StrCat("request head longer than ", max_bytes, " bytes"));
    }
    return HttpParseResult{};
  }
  if (skipped + head_end > max_bytes) {
    return Invalid(431, absl::StrCat("request head longer than ", max_bytes, " bytes"));
  }

  std::vector<absl::string_view> lines = absl::StrSplit(rest.substr(0, head_end), '\n');
  HttpParseResult result;
  HttpRequest& request = result.request;

  // Request line: METHOD SP target SP HTTP/1.x
  absl::string_view request_line = absl::StripSuffix(lines[0], "\r");
  std::vector<absl::string_view> parts = absl::StrSplit(request_line, ' ');
  if (parts.size() != 3 || !IsToken(parts[0]) || parts[1].empty()) {
    return Invalid(400, "malformed request line");
  }
  request.method = std::string(parts[0]);
  absl::string_view version = parts[2];
  if (version == "HTTP/1.1") {
    request.minor_version = 1;
  } else if (version == "HTTP/1.0") {
    request.minor_version = 0;
  } else if (absl::StartsWith(version, "HTTP/") && version.size() == 8 && version[6] == '.') {
    return Invalid(505, absl::StrCat(version, " is not supported"));
  } else {
    return Invalid(400, "malformed HTTP version");
  }
  absl::string_view target = parts[1];
  if (absl::ConsumePrefix(&target, "http://") || absl::ConsumePrefix(&target, "https://")) {
    // absolute-form: drop the authority
    size_t slash = target.find('/');
    target = slash == absl::string_view::npos ? "/" : target.substr(slash);
  }
  if (target[0] != '/') return Invalid(400, "request target must be a path");
  request.path = std::string(target.substr(0, target.find_first_of("?#")));
  if (target.size() > request.path.size() && target[request.path.size()] == '?') {
    absl::string_view query = target.substr(request.path.size() + 1);
    request.query = std::string(query.substr(0, query.find('#')));
  }
  request.keep_alive = request.minor_version == 1;

  // Header fields, up to the empty line that ends the head.
  bool have_length = false;
  uint64_t content_length = 0;
  for (size_t i = 1; i < lines.size(); ++i) {
    absl::string_view line = absl::StripSuffix(lines[i], "\r");
    if (line.empty()) break;  // the end of the head
    if (line[0] == ' ' || line[0] == '\t') return Invalid(400, "folded header lines");
    size_t colon = line.find(':');
    if (colon == absl::string_view::npos || !IsToken(line.substr(0, colon))) {
      return Invalid(400, "malformed header line");
    }
    std::string name = absl::AsciiStrToLower(line.substr(0, colon));
    absl::string_view value = absl::StripAsciiWhitespace(line.substr(colon + 1));
    if (name == "connection") {
      for (absl::string_view option : absl::StrSplit(value, ',')) {
        std::string token = absl::AsciiStrToLower(absl::StripAsciiWhitespace(option));
        if (token == "close") request.keep_alive = false;
        if (token == "keep-alive" && request.minor_version == 0) request.keep_alive = true;
      }
    } else if (name == "content-length") {
      uint64_t length;
      if (!absl::SimpleAtoi(value, &length) || !absl::ascii_isdigit(value[0]) ||
          (have_length && length != content_length)) {
        return Invalid(400, "bad Content-Length");
      }
      have_length = true;
      content_length = length;
    } else if (name == "authorization") {
      // Two credentials would leave it open which one was checked.
      if (!request.authorization.empty()) return Invalid(400, "more than one Authorization header");
      request.authorization = std::string(value);
    } else if (name == "host" || name == "origin" || name == "sec-fetch-site") {
      std::string& field = name == "host"     ? request.host
                           : name == "origin" ? request.origin
                                              : request.sec_fetch_site;
      // Two values would leave it open which one was checked.
      if (!field.empty()) return Invalid(400, absl::StrCat("more than one ", name, " header"));
      field = std::string(value);
    } else if (name == "transfer-encoding") {
      return Invalid(501, "Transfer-Encoding is not supported");
    }
  }

  size_t head_size = skipped + head_end;
  if (content_length > max_bytes || head_size + content_length > max_bytes) {
    return Invalid(413, absl::StrCat("request longer than ", max_bytes, " bytes"));
  }
  if (buffer.size() < head_size + content_length) return HttpParseResult{};
  result.state = HttpParseResult::State::kComplete;
  result.consumed = head_size + content_length;
  return result;
}

const char* HttpReason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 204:
      return "No Content";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 413:
      return "Content Too Large";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
  }
  return "Unknown";
}

std::string FormatHttpResponse(int status, absl::string_view content_type, absl::string_view body,
                               bool close, bool head_only, absl::string_view extra_headers) {
  if (status == 204) {  // no content: neither Content-Type nor Content-Length (RFC 9110, 8.6)
    body = "";
    std::string out = absl::StrCat("HTTP/1.1 204 No Content\r\n", extra_headers);
    if (close) out += "Connection: close\r\n";
    return out + "\r\n";
  }
  std::string out =
      absl::StrCat("HTTP/1.1 ", status, " ", HttpReason(status), "\r\nContent-Type: ", content_type,
                   "\r\nContent-Length: ", body.size(), "\r\n", extra_headers);
  if (close) out += "Connection: close\r\n";
  out += "\r\n";
  if (!head_only) absl::StrAppend(&out, body);
  return out;
}

}  // namespace metrics
}  // namespace sluice
