// What the client decides without a server: encoding, status mapping,
// refusing to start without credentials. Requests against a real server are
// in //tests/s3.
#include "common/s3/s3_client.h"

#include <gtest/gtest.h>

#include "common/s3/digest.h"

namespace sluice::s3 {
namespace {

S3Response Answer(int http, const std::string& code) {
  S3Response r;
  r.http_status = http;
  if (!code.empty()) r.body = "<Error><Code>" + code + "</Code><Message>m</Message></Error>";
  return r;
}

TEST(S3Client, UriEncodeKeepsUnreservedOnly) {
  EXPECT_EQ(S3Client::UriEncode("a/b:c+d e~_.-", true), "a/b%3Ac%2Bd%20e~_.-");
  EXPECT_EQ(S3Client::UriEncode("a/b", false), "a%2Fb");
}

TEST(S3Client, StatusMapping) {
  using absl::StatusCode;
  EXPECT_TRUE(S3Client::StatusForResponse(Answer(200, ""), "x").ok());
  EXPECT_TRUE(S3Client::StatusForResponse(Answer(204, ""), "x").ok());
  EXPECT_EQ(S3Client::StatusForResponse(Answer(404, "NoSuchKey"), "x").code(),
            StatusCode::kNotFound);
  EXPECT_EQ(S3Client::StatusForResponse(Answer(412, "PreconditionFailed"), "x").code(),
            StatusCode::kAlreadyExists);
  EXPECT_EQ(S3Client::StatusForResponse(Answer(403, "SignatureDoesNotMatch"), "x").code(),
            StatusCode::kPermissionDenied);
  EXPECT_EQ(S3Client::StatusForResponse(Answer(500, "InternalError"), "x").code(),
            StatusCode::kUnavailable);
  EXPECT_EQ(S3Client::StatusForResponse(Answer(503, "SlowDown"), "x").code(),
            StatusCode::kUnavailable);
  EXPECT_EQ(S3Client::StatusForResponse(Answer(429, ""), "x").code(), StatusCode::kUnavailable);
  EXPECT_EQ(S3Client::StatusForResponse(Answer(400, "RequestTimeout"), "x").code(),
            StatusCode::kUnavailable);
  EXPECT_EQ(S3Client::StatusForResponse(Answer(400, "BadDigest"), "x").code(),
            StatusCode::kDataLoss);
  EXPECT_EQ(S3Client::StatusForResponse(Answer(400, "InvalidArgument"), "x").code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(S3Client::StatusForResponse(Answer(501, "NotImplemented"), "x").code(),
            StatusCode::kUnimplemented);
  EXPECT_NE(S3Client::StatusForResponse(Answer(503, "SlowDown"), "PUT k").message().find("PUT k"),
            std::string::npos);
}

TEST(S3Client, NeedsCredentials) {
  S3Options options;
  EXPECT_EQ(S3Client::Create(options, "bucket").status().code(),
            absl::StatusCode::kInvalidArgument);
  options.credentials.access_key_id = "a";
  options.credentials.secret_access_key = "b";
  EXPECT_TRUE(S3Client::Create(options, "bucket").ok());
}

TEST(S3Client, RefusedConnectionIsUnavailableAfterTheBudget) {
  S3Options options;
  options.endpoint = "http://127.0.0.1:1";  // nothing listens on port 1
  options.path_style = true;
  options.credentials.access_key_id = "a";
  options.credentials.secret_access_key = "secret-never-shown";
  options.retry.initial_backoff = absl::Milliseconds(1);
  options.retry.max_attempts = 3;
  auto client = S3Client::Create(options, "bucket");
  ASSERT_TRUE(client.ok());
  S3Request head;
  head.method = "HEAD";
  head.key = "k";
  absl::StatusOr<S3Response> r = (*client)->Call(head);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable) << r.status();
  EXPECT_NE(r.status().message().find("3 attempts"), std::string::npos) << r.status();
  EXPECT_EQ(r.status().message().find("secret-never-shown"), std::string::npos);
}

TEST(Digest, KnownSha256) {
  EXPECT_EQ(HexOf(Sha256Of("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Base64Of(Sha256Of("")), "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=");
}

}  // namespace
}  // namespace sluice::s3
