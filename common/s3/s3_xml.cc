#include "common/s3/s3_xml.h"

#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace sluice::s3 {
namespace {

// The inner XML of the first <tag> or <tag attr...> element at or after `from`;
// sets *end past its closing tag.
std::optional<absl::string_view> NextElement(absl::string_view xml, absl::string_view tag,
                                             size_t from, size_t* end) {
  const std::string open = absl::StrCat("<", tag);
  const std::string close = absl::StrCat("</", tag, ">");
  size_t pos = from;
  while (true) {
    pos = xml.find(open, pos);
    if (pos == absl::string_view::npos) return std::nullopt;
    const size_t after = pos + open.size();
    if (after < xml.size() && (xml[after] == '>' || xml[after] == ' ')) break;
    pos = after;  // <Keys> is not <Key>
  }
  const size_t gt = xml.find('>', pos);
  if (gt == absl::string_view::npos) return std::nullopt;
  if (xml[gt - 1] == '/') {  // <Tag/>
    *end = gt + 1;
    return absl::string_view();
  }
  const size_t stop = xml.find(close, gt + 1);
  if (stop == absl::string_view::npos) return std::nullopt;
  *end = stop + close.size();
  return xml.substr(gt + 1, stop - gt - 1);
}

}  // namespace

std::string XmlUnescape(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '&') {
      out.push_back(text[i]);
      continue;
    }
    const size_t semi = text.find(';', i);
    if (semi == absl::string_view::npos || semi - i > 10) {
      out.push_back(text[i]);
      continue;
    }
    const absl::string_view name = text.substr(i + 1, semi - i - 1);
    if (name == "amp") out.push_back('&');
    else if (name == "lt") out.push_back('<');
    else if (name == "gt") out.push_back('>');
    else if (name == "quot") out.push_back('"');
    else if (name == "apos") out.push_back('\'');
    else if (!name.empty() && name[0] == '#') {
      const std::string digits(name.substr(1));
      const long code = digits.size() > 1 && (digits[0] == 'x' || digits[0] == 'X')
                            ? std::strtol(digits.c_str() + 1, nullptr, 16)
                            : std::strtol(digits.c_str(), nullptr, 10);
      if (code > 0 && code < 0x80) {
        out.push_back(static_cast<char>(code));
      } else {
        absl::StrAppend(&out, text.substr(i, semi - i + 1));
      }
    } else {
      absl::StrAppend(&out, text.substr(i, semi - i + 1));
    }
    i = semi;
  }
  return out;
}

std::string XmlEscape(absl::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

std::optional<std::string> XmlText(absl::string_view xml, absl::string_view tag) {
  size_t end = 0;
  std::optional<absl::string_view> inner = NextElement(xml, tag, 0, &end);
  if (!inner) return std::nullopt;
  return XmlUnescape(*inner);
}

std::vector<absl::string_view> XmlElements(absl::string_view xml, absl::string_view tag) {
  std::vector<absl::string_view> out;
  size_t pos = 0;
  while (true) {
    size_t end = 0;
    std::optional<absl::string_view> inner = NextElement(xml, tag, pos, &end);
    if (!inner) break;
    out.push_back(*inner);
    pos = end;
  }
  return out;
}

absl::StatusOr<ListPage> ParseListObjectsV2(absl::string_view xml) {
  if (xml.find("<ListBucketResult") == absl::string_view::npos) {
    return absl::InternalError("S3 ListObjectsV2 answer is not a ListBucketResult");
  }
  ListPage page;
  for (absl::string_view contents : XmlElements(xml, "Contents")) {
    ListedObject object;
    std::optional<std::string> key = XmlText(contents, "Key");
    std::optional<std::string> size = XmlText(contents, "Size");
    if (!key || !size || !absl::SimpleAtoi(*size, &object.size_bytes)) {
      return absl::InternalError("S3 ListObjectsV2 entry without Key or Size");
    }
    object.key = *std::move(key);
    page.objects.push_back(std::move(object));
  }
  page.truncated = XmlText(xml, "IsTruncated").value_or("false") == "true";
  page.next_continuation_token = XmlText(xml, "NextContinuationToken").value_or("");
  if (page.truncated && page.next_continuation_token.empty()) {
    return absl::InternalError("S3 ListObjectsV2 page is truncated but has no continuation token");
  }
  return page;
}

}  // namespace sluice::s3
