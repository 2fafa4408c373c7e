// Opens the deep storage a URI names:
//   file:///abs/path or /abs/path: a directory (created if missing);
//   s3://bucket[/prefix]: an S3 bucket, reached per `options.s3`; without
//     credentials there, they are loaded from the standard AWS environment
//     variables or the shared credentials file (s3/s3_credentials.h).
// Other schemes are INVALID_ARGUMENT.
#ifndef SLUICE_COMMON_OPEN_DEEP_STORAGE_H_
#define SLUICE_COMMON_OPEN_DEEP_STORAGE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/deep_storage.h"
#include "common/s3/s3_options.h"

namespace sluice {

struct DeepStorageOptions {
  // Used for s3:// URIs only.
  s3::S3Options s3;
};

absl::StatusOr<std::unique_ptr<DeepStorage>> OpenDeepStorage(
    const std::string& uri, const DeepStorageOptions& options = {});

}  // namespace sluice

#endif  // SLUICE_COMMON_OPEN_DEEP_STORAGE_H_
