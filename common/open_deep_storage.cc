#include "common/open_deep_storage.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/local_deep_storage.h"
#include "common/s3/s3_credentials.h"
#include "common/s3/s3_deep_storage.h"
#include "common/status_macros.h"

namespace sluice {

absl::StatusOr<std::unique_ptr<DeepStorage>> OpenDeepStorage(const std::string& uri,
                                                              const DeepStorageOptions& options) {
  if (absl::StartsWith(uri, "s3://")) {
    SLUICE_RETURN_IF_ERROR(s3::ParseS3Uri(uri).status());
    s3::S3Options s3_options = options.s3;
    if (s3_options.credentials.empty()) {
      SLUICE_ASSIGN_OR_RETURN(s3_options.credentials, s3::LoadS3Credentials());
    }
    SLUICE_ASSIGN_OR_RETURN(auto storage, s3::S3DeepStorage::Open(uri, s3_options));
    return std::unique_ptr<DeepStorage>(std::move(storage));
  }
  std::string path = uri;
  if (absl::StartsWith(uri, "file://")) {
    path = uri.substr(sizeof("file://") - 1);
  } else if (uri.find("://") != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "deep storage \"", uri,
        "\" has an unsupported scheme; use file:///absolute/path or s3://bucket/prefix"));
  }
  SLUICE_ASSIGN_OR_RETURN(auto storage, LocalDeepStorage::Open(path));
  return std::unique_ptr<DeepStorage>(std::move(storage));
}

}  // namespace sluice
