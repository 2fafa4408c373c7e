// SigV4-signed requests to one S3 bucket over libcurl, with bounded retries.
//
// Signing is libcurl's own (CURLOPT_AWS_SIGV4, libcurl >= 7.75; Debian 12
// ships 7.88): the canonical request, string to sign and the HMAC chain are
// curl's, which the curl project tests against AWS, so sluice carries no
// hand-rolled crypto protocol code. What curl 7.88 leaves to the caller, this
// class does: the payload hash (x-amz-content-sha256, computed here so
// streamed bodies are signed too), canonical URI and query encoding (curl 7.88
// signs the path and query exactly as given, so they are given canonical:
// RFC 3986 unreserved characters kept, the rest %XX, query keys sorted).
//
// The secret goes only to curl (CURLOPT_PASSWORD); curl's verbose output is
// never enabled, and no status message carries a header value.
//
// Thread-safe: each request uses its own curl handle.
#ifndef SLUICE_COMMON_S3_S3_CLIENT_H_
#define SLUICE_COMMON_S3_S3_CLIENT_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/s3/s3_options.h"

namespace sluice::s3 {

struct S3Request {
  std::string method = "GET";  // GET, HEAD, PUT, POST, DELETE
  // The object key in the bucket (unencoded); empty: the bucket itself.
  std::string key;
  // Unencoded; the client sorts and encodes them.
  std::vector<std::pair<std::string, std::string>> query;
  // Extra request headers; all are signed.
  std::vector<std::pair<std::string, std::string>> headers;
  // The payload of a PUT or POST. Must outlive the call.
  absl::string_view body;
  // GET: the body is written to this descriptor (truncated before each
  // attempt) instead of S3Response::body, and hashed on the way.
  int download_fd = -1;
};

struct S3Response {
  int http_status = 0;
  std::map<std::string, std::string> headers;  // names lowercased
  std::string body;
  int64_t body_bytes = 0;
  std::string body_sha256;  // raw digest, when downloaded to a descriptor

  // The header's value, or "".
  std::string Header(const std::string& lowercase_name) const;
};

class S3Client {
 public:
  // INVALID_ARGUMENT for bad options or missing credentials.
  static absl::StatusOr<std::unique_ptr<S3Client>> Create(const S3Options& options,
                                                          const std::string& bucket);

  // Sends the request, retrying per options.retry on UNAVAILABLE outcomes
  // (5xx, 429, SlowDown, RequestTimeout, timeouts, refused or dropped
  // connections). OK only for a 2xx answer. Otherwise: NOT_FOUND (404),
  // ALREADY_EXISTS (412, a failed If-None-Match), PERMISSION_DENIED (403,
  // e.g. a bad signature), DATA_LOSS (the server found the payload did not
  // match its checksum), INVALID_ARGUMENT (other 4xx), UNAVAILABLE once the
  // attempts are used up.
  absl::StatusOr<S3Response> Call(const S3Request& request) const;

  // One attempt, no retry, no status mapping of the HTTP code: OK with any
  // answer that arrived; UNAVAILABLE when none did.
  absl::StatusOr<S3Response> SendOnce(const S3Request& request) const;

  // The status a non-2xx answer maps to (OK for 2xx); `what` starts the message.
  static absl::Status StatusForResponse(const S3Response& response, absl::string_view what);

  // "s3://bucket/key", for messages.
  std::string Describe(const S3Request& request) const;

  const S3Options& options() const { return options_; }
  const std::string& bucket() const { return bucket_; }

  // RFC 3986 encoding of everything but A-Z a-z 0-9 - . _ ~ (and '/' if
  // keep_slash).
  static std::string UriEncode(absl::string_view text, bool keep_slash);

 private:
  S3Client(S3Options options, std::string bucket);
  std::string UrlFor(const S3Request& request) const;

  const S3Options options_;
  const std::string bucket_;
  std::string base_url_;  // scheme://host[:port] with the bucket in host or path
};

}  // namespace sluice::s3

#endif  // SLUICE_COMMON_S3_S3_CLIENT_H_
