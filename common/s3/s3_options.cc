#include "common/s3/s3_options.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/deep_storage.h"
#include "common/status_macros.h"

namespace sluice::s3 {

absl::StatusOr<S3Location> ParseS3Uri(absl::string_view uri) {
  absl::string_view rest = uri;
  if (!absl::ConsumePrefix(&rest, "s3://")) {
    return absl::InvalidArgumentError(absl::StrCat("\"", uri, "\" is not an s3:// URI"));
  }
  S3Location location;
  const size_t slash = rest.find('/');
  location.bucket = std::string(rest.substr(0, slash));
  absl::string_view prefix = slash == absl::string_view::npos ? "" : rest.substr(slash + 1);
  while (absl::ConsumeSuffix(&prefix, "/")) {
  }
  location.prefix = std::string(prefix);
  // S3's bucket naming rules: 3-63 of [a-z0-9.-], starting and ending with a
  // letter or digit.
  const std::string& b = location.bucket;
  bool ok = b.size() >= 3 && b.size() <= 63;
  for (char c : b) {
    ok = ok && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-');
  }
  ok = ok && b.front() != '-' && b.front() != '.' && b.back() != '-' && b.back() != '.';
  if (!ok) {
    return absl::InvalidArgumentError(absl::StrCat(
        "\"", uri, "\": bucket names are 3-63 characters of a-z, 0-9, '.' and '-'"));
  }
  if (!location.prefix.empty()) {
    const absl::Status key_ok = ValidateDeepStorageKey(location.prefix);
    if (!key_ok.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("\"", uri, "\" has a bad prefix: ", key_ok.message()));
    }
  }
  return location;
}

absl::Status ValidateS3Options(const S3Options& options) {
  if (!options.endpoint.empty()) {
    absl::string_view host = options.endpoint;
    if (!absl::ConsumePrefix(&host, "http://") && !absl::ConsumePrefix(&host, "https://")) {
      return absl::InvalidArgumentError(absl::StrCat(
          "S3 endpoint \"", options.endpoint, "\" must be http://host[:port] or https://..."));
    }
    if (host.empty() || absl::StrContains(host, "/")) {
      return absl::InvalidArgumentError(absl::StrCat(
          "S3 endpoint \"", options.endpoint, "\" must name only a host and port"));
    }
  }
  if (options.region.empty()) return absl::InvalidArgumentError("S3 region is empty");
  for (char c : options.region) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) {
      return absl::InvalidArgumentError(
          absl::StrCat("S3 region \"", options.region, "\" is not like us-east-1"));
    }
  }
  if (options.part_size_bytes < (int64_t{5} << 20)) {
    return absl::InvalidArgumentError("S3 part size must be at least 5 MiB");
  }
  if (options.multipart_threshold_bytes < options.part_size_bytes) {
    return absl::InvalidArgumentError("S3 multipart threshold must be at least the part size");
  }
  if (options.retry.max_attempts < 1) {
    return absl::InvalidArgumentError("S3 retries need a bounded max_attempts >= 1");
  }
  return absl::OkStatus();
}

}  // namespace sluice::s3
