#include "common/s3/s3_credentials.h"

#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/file_util.h"

namespace sluice::s3 {

std::optional<std::string> ProcessEnv(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

absl::StatusOr<S3Credentials> ParseSharedCredentials(absl::string_view text,
                                                     absl::string_view profile) {
  bool in_section = false;
  bool found = false;
  S3Credentials creds;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line.front() == '[' && line.back() == ']') {
      absl::string_view name = absl::StripAsciiWhitespace(line.substr(1, line.size() - 2));
      // ~/.aws/config spells non-default sections "profile NAME"; accept both.
      absl::ConsumePrefix(&name, "profile ");
      in_section = absl::StripAsciiWhitespace(name) == profile;
      found = found || in_section;
      continue;
    }
    if (!in_section) continue;
    const size_t eq = line.find('=');
    if (eq == absl::string_view::npos) continue;
    const std::string key = absl::AsciiStrToLower(absl::StripAsciiWhitespace(line.substr(0, eq)));
    const std::string value = std::string(absl::StripAsciiWhitespace(line.substr(eq + 1)));
    if (key == "aws_access_key_id") creds.access_key_id = value;
    if (key == "aws_secret_access_key") creds.secret_access_key = value;
    if (key == "aws_session_token") creds.session_token = value;
  }
  if (!found) return absl::NotFoundError(absl::StrCat("no [", profile, "] section"));
  return creds;
}

absl::StatusOr<S3Credentials> LoadS3Credentials(const EnvLookup& env) {
  const std::optional<std::string> key_id = env("AWS_ACCESS_KEY_ID");
  const std::optional<std::string> secret = env("AWS_SECRET_ACCESS_KEY");
  if ((key_id && !key_id->empty()) || (secret && !secret->empty())) {
    if (!key_id || key_id->empty() || !secret || secret->empty()) {
      return absl::FailedPreconditionError(
          "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set together");
    }
    S3Credentials creds;
    creds.access_key_id = *key_id;
    creds.secret_access_key = *secret;
    creds.session_token = env("AWS_SESSION_TOKEN").value_or("");
    creds.source = "environment (AWS_ACCESS_KEY_ID)";
    return creds;
  }
  std::string path = env("AWS_SHARED_CREDENTIALS_FILE").value_or("");
  if (path.empty()) {
    const std::string home = env("HOME").value_or("");
    if (home.empty()) {
      return absl::FailedPreconditionError(
          "no S3 credentials: AWS_ACCESS_KEY_ID is unset and there is no HOME for "
          "~/.aws/credentials (set AWS_SHARED_CREDENTIALS_FILE)");
    }
    path = absl::StrCat(home, "/.aws/credentials");
  }
  std::string profile = env("AWS_PROFILE").value_or("");
  if (profile.empty()) profile = "default";
  if (!PathExists(path)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "no S3 credentials: AWS_ACCESS_KEY_ID is unset and ", path, " does not exist"));
  }
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot read S3 credentials file ", path, ": ", text.status().message()));
  }
  absl::StatusOr<S3Credentials> creds = ParseSharedCredentials(*text, profile);
  if (!creds.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "S3 credentials file ", path, " has no profile [", profile, "] (AWS_PROFILE)"));
  }
  if (creds->access_key_id.empty() || creds->secret_access_key.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "S3 credentials file ", path, " [", profile,
        "] lacks aws_access_key_id or aws_secret_access_key"));
  }
  creds->source = absl::StrCat(path, " [", profile, "]");
  return creds;
}

}  // namespace sluice::s3
