#include "common/s3/s3_xml.h"

#include <gtest/gtest.h>

namespace sluice::s3 {
namespace {

TEST(S3Xml, ErrorCodeAndMessage) {
  const char kError[] =
      "<?xml version=\"1.0\"?><Error><Code>SlowDown</Code>"
      "<Message>Please &amp; reduce</Message></Error>";
  EXPECT_EQ(XmlText(kError, "Code").value_or(""), "SlowDown");
  EXPECT_EQ(XmlText(kError, "Message").value_or(""), "Please & reduce");
  EXPECT_FALSE(XmlText(kError, "UploadId").has_value());
}

TEST(S3Xml, DoesNotConfuseTagsWithTheSamePrefix) {
  EXPECT_EQ(XmlText("<Keys>no</Keys><Key>yes</Key>", "Key").value_or(""), "yes");
}

TEST(S3Xml, ListObjectsV2Page) {
  const char kList[] =
      "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
      "<Name>b</Name><Prefix>p/</Prefix><KeyCount>2</KeyCount>"
      "<IsTruncated>true</IsTruncated><NextContinuationToken>tok+1</NextContinuationToken>"
      "<Contents><Key>p/a</Key><Size>10</Size></Contents>"
      "<Contents><Key>p/b&amp;c</Key><Size>0</Size></Contents></ListBucketResult>";
  absl::StatusOr<ListPage> page = ParseListObjectsV2(kList);
  ASSERT_TRUE(page.ok()) << page.status();
  ASSERT_EQ(page->objects.size(), 2u);
  EXPECT_EQ(page->objects[0].key, "p/a");
  EXPECT_EQ(page->objects[0].size_bytes, 10);
  EXPECT_EQ(page->objects[1].key, "p/b&c");
  EXPECT_TRUE(page->truncated);
  EXPECT_EQ(page->next_continuation_token, "tok+1");
}

TEST(S3Xml, ListRejectsOtherDocuments) {
  EXPECT_FALSE(ParseListObjectsV2("<Error><Code>x</Code></Error>").ok());
  EXPECT_FALSE(ParseListObjectsV2("<ListBucketResult><IsTruncated>true</IsTruncated>"
                                  "</ListBucketResult>")
                   .ok());
}

TEST(S3Xml, EscapeRoundTrip) {
  EXPECT_EQ(XmlUnescape(XmlEscape("\"a\"<&>")), "\"a\"<&>");
  EXPECT_EQ(XmlUnescape("&#65;&#x42;&unknown;"), "AB&unknown;");
}

}  // namespace
}  // namespace sluice::s3
