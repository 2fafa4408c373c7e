// AWS credentials from where the AWS CLI and SDKs look for them:
//   1. AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY (+ AWS_SESSION_TOKEN);
//   2. the shared credentials file, AWS_SHARED_CREDENTIALS_FILE or
//      ~/.aws/credentials, section AWS_PROFILE (default "default"), keys
//      aws_access_key_id, aws_secret_access_key, aws_session_token.
// The secret never appears in a returned status; messages name only the
// variables and files looked at.
#ifndef SLUICE_COMMON_S3_S3_CREDENTIALS_H_
#define SLUICE_COMMON_S3_S3_CREDENTIALS_H_

#include <functional>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/s3/s3_options.h"

namespace sluice::s3 {

// Returns the variable's value, or nullopt when unset.
using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;

// The process environment (getenv).
std::optional<std::string> ProcessEnv(const std::string& name);

// FAILED_PRECONDITION when neither source has a complete key pair (or the
// named profile is missing); INVALID_ARGUMENT for an unreadable or malformed
// credentials file.
absl::StatusOr<S3Credentials> LoadS3Credentials(const EnvLookup& env = ProcessEnv);

// The [profile] section of an INI-style credentials file's text.
// NOT_FOUND when there is no such section.
absl::StatusOr<S3Credentials> ParseSharedCredentials(absl::string_view text,
                                                     absl::string_view profile);

}  // namespace sluice::s3

#endif  // SLUICE_COMMON_S3_S3_CREDENTIALS_H_
