// What S3 deep storage needs to reach a bucket: where (endpoint, region,
// addressing style), as whom (credentials), and how hard to try (part size,
// timeouts, retries). Plain data; filled by the mains from flags and the
// standard AWS environment (s3_credentials.h), by tests directly.
#ifndef SLUICE_COMMON_S3_S3_OPTIONS_H_
#define SLUICE_COMMON_S3_S3_OPTIONS_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/retry.h"

namespace sluice::s3 {

// Never logged or put in a status message: only `access_key_id` may be named.
struct S3Credentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;  // temporary credentials (STS); may be empty
  // Where they came from ("environment", "/root/.aws/credentials [prod]"), for
  // messages.
  std::string source;

  bool empty() const { return access_key_id.empty() && secret_access_key.empty(); }
};

struct S3Options {
  // scheme://host[:port] of the S3 API; empty: https://s3.<region>.amazonaws.com.
  std::string endpoint;
  std::string region = "us-east-1";
  // true: <endpoint>/<bucket>/<key> (most S3-compatible servers); false:
  // <bucket>.<endpoint host>/<key> (AWS's virtual-hosted style).
  bool path_style = false;
  // Empty: OpenDeepStorage loads them from the environment (LoadS3Credentials).
  S3Credentials credentials;

  // Files larger than this are uploaded in parts of part_size_bytes (S3's
  // minimum part is 5 MiB, the maximum count 10000).
  int64_t multipart_threshold_bytes = int64_t{64} << 20;
  int64_t part_size_bytes = int64_t{16} << 20;

  // Per request: connecting, and the whole request (a part's upload included).
  absl::Duration connect_timeout = absl::Seconds(5);
  absl::Duration request_timeout = absl::Seconds(120);
  // Each request is retried on 5xx, 429/SlowDown, timeouts and refused or
  // dropped connections; after max_attempts it fails UNAVAILABLE.
  RetryOptions retry = {absl::Milliseconds(200), absl::Seconds(5), 2.0, 0.2, 6};
};

// "s3://bucket/some/prefix" -> bucket "bucket", prefix "some/prefix" (no
// leading or trailing '/'; may be empty).
struct S3Location {
  std::string bucket;
  std::string prefix;
};

// INVALID_ARGUMENT unless `uri` is s3://<bucket>[/<prefix>] with a DNS-style
// bucket name and a prefix of safe deep-storage key components.
absl::StatusOr<S3Location> ParseS3Uri(absl::string_view uri);

// INVALID_ARGUMENT for an endpoint that is not http(s)://host[:port], a part
// size under 5 MiB, and the like.
absl::Status ValidateS3Options(const S3Options& options);

}  // namespace sluice::s3

#endif  // SLUICE_COMMON_S3_S3_OPTIONS_H_
