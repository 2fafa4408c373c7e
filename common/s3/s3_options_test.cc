#include "common/s3/s3_options.h"

#include <gtest/gtest.h>

namespace sluice::s3 {
namespace {

TEST(ParseS3Uri, BucketAndPrefix) {
  absl::StatusOr<S3Location> loc = ParseS3Uri("s3://my-bucket/seg/ments/");
  ASSERT_TRUE(loc.ok()) << loc.status();
  EXPECT_EQ(loc->bucket, "my-bucket");
  EXPECT_EQ(loc->prefix, "seg/ments");
  loc = ParseS3Uri("s3://my.bucket");
  ASSERT_TRUE(loc.ok()) << loc.status();
  EXPECT_EQ(loc->prefix, "");
}

TEST(ParseS3Uri, RejectsBadBucketsAndPrefixes) {
  for (const char* uri : {"file:///x", "s3://", "s3://ab/x", "s3://Upper/x", "s3://-bucket/x",
                          "s3://bucket./x", "s3://bucket/a/../b", "s3://bucket/a b",
                          "s3://bucket//x"}) {
    EXPECT_EQ(ParseS3Uri(uri).status().code(), absl::StatusCode::kInvalidArgument) << uri;
  }
}

TEST(ValidateS3Options, Defaults) { EXPECT_TRUE(ValidateS3Options(S3Options()).ok()); }

TEST(ValidateS3Options, RejectsBadValues) {
  S3Options o;
  o.endpoint = "localhost:9000";
  EXPECT_FALSE(ValidateS3Options(o).ok());
  o.endpoint = "http://localhost:9000/path";
  EXPECT_FALSE(ValidateS3Options(o).ok());
  o.endpoint = "http://127.0.0.1:9000";
  EXPECT_TRUE(ValidateS3Options(o).ok());
  o.part_size_bytes = 1 << 20;
  EXPECT_FALSE(ValidateS3Options(o).ok());
  o = S3Options();
  o.retry.max_attempts = 0;  // unbounded retries are not allowed here
  EXPECT_FALSE(ValidateS3Options(o).ok());
  o = S3Options();
  o.region = "US East";
  EXPECT_FALSE(ValidateS3Options(o).ok());
}

}  // namespace
}  // namespace sluice::s3
