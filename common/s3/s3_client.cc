#include "common/s3/s3_client.h"

#include <curl/curl.h>
#include <errno.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "absl/base/call_once.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/retry.h"
#include "common/s3/digest.h"
#include "common/s3/s3_xml.h"

namespace sluice::s3 {
namespace {

void GlobalInitOnce() {
  static absl::once_flag once;
  absl::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct Transfer {
  absl::string_view upload;
  size_t upload_pos = 0;
  S3Response* response = nullptr;
  int download_fd = -1;
  Sha256 hasher;
  int write_errno = 0;
};

size_t ReadBody(char* buffer, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t n = std::min(size * count, t->upload.size() - t->upload_pos);
  std::memcpy(buffer, t->upload.data() + t->upload_pos, n);
  t->upload_pos += n;
  return n;
}

// curl rewinds a body it must send again (after a 100-continue refusal or a
// redirect).
int SeekBody(void* user, curl_off_t offset, int origin) {
  auto* t = static_cast<Transfer*>(user);
  if (origin != SEEK_SET || offset < 0 || static_cast<size_t>(offset) > t->upload.size()) {
    return CURL_SEEKFUNC_CANTSEEK;
  }
  t->upload_pos = static_cast<size_t>(offset);
  return CURL_SEEKFUNC_OK;
}

size_t WriteBody(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t n = size * count;
  t->response->body_bytes += static_cast<int64_t>(n);
  // Only a 2xx body is the object; an error answer's XML goes to `body`.
  const bool object = t->download_fd >= 0 && t->response->http_status / 100 == 2;
  if (!object) {
    t->response->body.append(data, n);
    return n;
  }
  t->hasher.Update(absl::string_view(data, n));
  size_t done = 0;
  while (done < n) {
    const ssize_t w = ::write(t->download_fd, data + done, n - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      t->write_errno = errno;
      return 0;
    }
    done += static_cast<size_t>(w);
  }
  return n;
}

size_t WriteHeader(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t n = size * count;
  absl::string_view line(data, n);
  if (absl::StartsWith(line, "HTTP/")) {
    // A new answer (after 100 Continue, say): start over.
    t->response->headers.clear();
    const size_t sp = line.find(' ');
    int code = 0;
    if (sp != absl::string_view::npos && line.size() >= sp + 4) {
      for (size_t i = sp + 1; i < sp + 4; ++i) code = code * 10 + (line[i] - '0');
    }
    t->response->http_status = code;
    return n;
  }
  const size_t colon = line.find(':');
  if (colon != absl::string_view::npos) {
    t->response->headers[absl::AsciiStrToLower(line.substr(0, colon))] =
        std::string(absl::StripAsciiWhitespace(line.substr(colon + 1)));
  }
  return n;
}

bool IsTransientCurlError(CURLcode code) {
  switch (code) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_WEIRD_SERVER_REPLY:
      return true;
    default:
      return false;
  }
}

const char kEmptySha256Hex[] = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

}  // namespace

std::string S3Response::Header(const std::string& lowercase_name) const {
  auto it = headers.find(lowercase_name);
  return it == headers.end() ? "" : it->second;
}

std::string S3Client::UriEncode(absl::string_view text, bool keep_slash) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    const bool unreserved = absl::ascii_isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~';
    if (unreserved || (keep_slash && c == '/')) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

absl::StatusOr<std::unique_ptr<S3Client>> S3Client::Create(const S3Options& options,
                                                           const std::string& bucket) {
  absl::Status valid = ValidateS3Options(options);
  if (!valid.ok()) return valid;
  if (options.credentials.access_key_id.empty() || options.credentials.secret_access_key.empty()) {
    return absl::InvalidArgumentError("S3 client needs an access key id and a secret access key");
  }
  GlobalInitOnce();
  return std::unique_ptr<S3Client>(new S3Client(options, bucket));
}

S3Client::S3Client(S3Options options, std::string bucket)
    : options_(std::move(options)), bucket_(std::move(bucket)) {
  std::string endpoint = options_.endpoint;
  if (endpoint.empty()) endpoint = absl::StrCat("https://s3.", options_.region, ".amazonaws.com");
  if (options_.path_style) {
    base_url_ = absl::StrCat(endpoint, "/", bucket_);
  } else {
    absl::string_view rest = endpoint;
    const size_t scheme_end = rest.find("://");
    base_url_ = absl::StrCat(rest.substr(0, scheme_end + 3), bucket_, ".",
                             rest.substr(scheme_end + 3));
  }
}

std::string S3Client::Describe(const S3Request& request) const {
  return absl::StrCat("S3 ", request.method, " s3://", bucket_, "/", request.key);
}

std::string S3Client::UrlFor(const S3Request& request) const {
  std::string url = absl::StrCat(base_url_, "/", UriEncode(request.key, /*keep_slash=*/true));
  std::vector<std::pair<std::string, std::string>> query;
  for (const auto& [k, v] : request.query) {
    query.emplace_back(UriEncode(k, false), UriEncode(v, false));
  }
  std::sort(query.begin(), query.end());
  for (size_t i = 0; i < query.size(); ++i) {
    absl::StrAppend(&url, i == 0 ? "?" : "&", query[i].first, "=", query[i].second);
  }
  return url;
}

absl::StatusOr<S3Response> S3Client::SendOnce(const S3Request& request) const {
  CURL* curl = curl_easy_init();
  if (curl == nullptr) return absl::ResourceExhaustedError("curl_easy_init failed");
  S3Response response;
  Transfer transfer;
  transfer.upload = request.body;
  transfer.response = &response;
  transfer.download_fd = request.download_fd;

  const std::string url = UrlFor(request);
  const std::string sigv4 = absl::StrCat("aws:amz:", options_.region, ":s3");
  const std::string payload_hash =
      request.body.empty() ? kEmptySha256Hex : HexOf(Sha256Of(request.body));
  curl_slist* headers = nullptr;
  headers = curl_slist_append(headers,
                              absl::StrCat("x-amz-content-sha256: ", payload_hash).c_str());
  if (!options_.credentials.session_token.empty()) {
    headers = curl_slist_append(
        headers,
        absl::StrCat("x-amz-security-token: ", options_.credentials.session_token).c_str());
  }
  for (const auto& [name, value] : request.headers) {
    headers = curl_slist_append(headers, absl::StrCat(name, ": ", value).c_str());
  }

  char error_buffer[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error_buffer);
  curl_easy_setopt(curl, CURLOPT_AWS_SIGV4, sigv4.c_str());
  curl_easy_setopt(curl, CURLOPT_USERNAME, options_.credentials.access_key_id.c_str());
  curl_easy_setopt(curl, CURLOPT_PASSWORD, options_.credentials.secret_access_key.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(absl::ToInt64Milliseconds(options_.connect_timeout)));
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS,
                   static_cast<long>(absl::ToInt64Milliseconds(options_.request_timeout)));
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, WriteHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &transfer);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, WriteBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &transfer);
  if (request.method == "HEAD") {
    curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
  } else if (request.method == "PUT") {
    curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(curl, CURLOPT_READFUNCTION, ReadBody);
    curl_easy_setopt(curl, CURLOPT_READDATA, &transfer);
    curl_easy_setopt(curl, CURLOPT_SEEKFUNCTION, SeekBody);
    curl_easy_setopt(curl, CURLOPT_SEEKDATA, &transfer);
    curl_easy_setopt(curl, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
  } else if (request.method == "POST") {
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    // Never null: a null POSTFIELDS makes curl read the body from stdin.
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.empty() ? "" : request.body.data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(request.body.size()));
  } else if (request.method != "GET") {
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  }
  const CURLcode code = curl_easy_perform(curl);
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);

  if (code != CURLE_OK) {
    const std::string detail = absl::StrCat(Describe(request), ": ", curl_easy_strerror(code),
                                            error_buffer[0] ? absl::StrCat(" (", error_buffer, ")")
                                                            : std::string());
    if (code == CURLE_WRITE_ERROR && transfer.write_errno != 0) {
      return absl::InternalError(
          absl::StrCat(detail, ": writing the download: ", std::strerror(transfer.write_errno)));
    }
    if (IsTransientCurlError(code)) return absl::UnavailableError(detail);
    return absl::InternalError(detail);
  }
  if (request.download_fd >= 0 && response.http_status / 100 == 2) {
    response.body_sha256 = transfer.hasher.Finish();
  }
  return response;
}

absl::Status S3Client::StatusForResponse(const S3Response& response, absl::string_view what) {
  const int http = response.http_status;
  if (http / 100 == 2) return absl::OkStatus();
  const std::string code = XmlText(response.body, "Code").value_or("");
  const std::string message = XmlText(response.body, "Message").value_or("");
  const std::string detail = absl::StrCat(what, ": HTTP ", http, code.empty() ? "" : " ", code,
                                          message.empty() ? "" : ": ", message);
  if (http == 404) return absl::NotFoundError(detail);
  if (http == 412) return absl::AlreadyExistsError(detail);
  if (http == 403) return absl::PermissionDeniedError(detail);
  if (http == 429 || code == "SlowDown" || code == "RequestTimeout" ||
      code == "InternalError" || code == "ServiceUnavailable") {
    return absl::UnavailableError(detail);
  }
  if (http == 501) return absl::UnimplementedError(detail);
  if (http >= 500) return absl::UnavailableError(detail);
  if (code == "BadDigest" || code == "InvalidDigest" || code == "XAmzContentSHA256Mismatch") {
    return absl::DataLossError(detail);
  }
  if (http == 409) return absl::AbortedError(detail);
  if (http / 100 == 4) return absl::InvalidArgumentError(detail);
  return absl::UnknownError(detail);
}

absl::StatusOr<S3Response> S3Client::Call(const S3Request& request) const {
  int attempt = 0;
  absl::StatusOr<S3Response> result = RetryCall<S3Response>(
      options_.retry, SleepUninterrupted, [&]() -> absl::StatusOr<S3Response> {
        ++attempt;
        if (request.download_fd >= 0) {
          if (::ftruncate(request.download_fd, 0) != 0 ||
              ::lseek(request.download_fd, 0, SEEK_SET) != 0) {
            return absl::InternalError(absl::StrCat(Describe(request),
                                                    ": cannot reset the download file: ",
                                                    std::strerror(errno)));
          }
        }
        absl::StatusOr<S3Response> response = SendOnce(request);
        if (!response.ok()) return response.status();
        absl::Status status = StatusForResponse(*response, Describe(request));
        if (!status.ok()) return status;
        return response;
      });
  if (!result.ok() && absl::IsUnavailable(result.status())) {
    return absl::UnavailableError(absl::StrCat(result.status().message(), " (gave up after ",
                                               attempt, " attempts)"));
  }
  return result;
}

}  // namespace sluice::s3
