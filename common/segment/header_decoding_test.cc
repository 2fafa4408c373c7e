#include "common/segment/header_decoding.h"

#include <gtest/gtest.h>

#include <string>

namespace sluice {
namespace segment {
namespace {

std::string Decode(HeaderEncoding encoding, absl::string_view raw) {
  std::string scratch;
  absl::string_view out;
  if (!DecodeHeader(encoding, raw, &scratch, &out)) return "<invalid>";
  return std::string(out);
}

TEST(HeaderDecoding, ParsesTheKnownNamesOnly) {
  EXPECT_EQ(*ParseHeaderEncoding(""), HeaderEncoding::kUtf8);
  EXPECT_EQ(*ParseHeaderEncoding("utf-8"), HeaderEncoding::kUtf8);
  EXPECT_EQ(*ParseHeaderEncoding("ISO-8859-1"), HeaderEncoding::kIso88591);
  EXPECT_EQ(*ParseHeaderEncoding("base64"), HeaderEncoding::kBase64);
  EXPECT_EQ(*ParseHeaderEncoding("HEX"), HeaderEncoding::kHex);
  absl::StatusOr<HeaderEncoding> bad = ParseHeaderEncoding("UTF-16");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("\"UTF-16\""), absl::string_view::npos);
  EXPECT_STREQ(HeaderEncodingName(HeaderEncoding::kIso88591), "ISO-8859-1");
}

TEST(HeaderDecoding, EachEncoding) {
  EXPECT_EQ(Decode(HeaderEncoding::kUtf8, "caf\xc3\xa9"), "caf\xc3\xa9");
  EXPECT_EQ(Decode(HeaderEncoding::kUtf8, "bad \xff byte"), "<invalid>");
  EXPECT_EQ(Decode(HeaderEncoding::kUtf8, ""), "");
  // 0xe9 is é in ISO-8859-1: two bytes in UTF-8.
  EXPECT_EQ(Decode(HeaderEncoding::kIso88591, "caf\xe9"), "caf\xc3\xa9");
  EXPECT_EQ(Decode(HeaderEncoding::kBase64, std::string("\x00\xff\x10", 3)), "AP8Q");
  EXPECT_EQ(Decode(HeaderEncoding::kBase64, "ab"), "YWI=");
  EXPECT_EQ(Decode(HeaderEncoding::kHex, std::string("\x00\xab\x7f", 3)), "00ab7f");
}

TEST(HeaderDecoding, ValidUtf8IsNotCopied) {
  const std::string raw = "plain";
  std::string scratch;
  absl::string_view out;
  ASSERT_TRUE(DecodeHeader(HeaderEncoding::kUtf8, raw, &scratch, &out));
  EXPECT_EQ(out.data(), raw.data());
}

}  // namespace
}  // namespace segment
}  // namespace sluice
