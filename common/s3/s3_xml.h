// The few pieces of S3's XML answers sluice reads: error codes, upload ids,
// ListObjectsV2 pages. Not a general XML parser: S3's answers are flat,
// generated documents, and only element text is taken (entities decoded).
#ifndef SLUICE_COMMON_S3_S3_XML_H_
#define SLUICE_COMMON_S3_S3_XML_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace sluice::s3 {

// The text of the first <tag>...</tag> in `xml`, entities decoded.
std::optional<std::string> XmlText(absl::string_view xml, absl::string_view tag);

// Every <tag>...</tag> element's inner XML (not decoded), in order.
std::vector<absl::string_view> XmlElements(absl::string_view xml, absl::string_view tag);

// &amp; &lt; &gt; &quot; &apos; and numeric references; others left as is.
std::string XmlUnescape(absl::string_view text);
// The inverse for element text.
std::string XmlEscape(absl::string_view text);

struct ListedObject {
  std::string key;
  int64_t size_bytes = 0;
};

struct ListPage {
  std::vector<ListedObject> objects;
  bool truncated = false;
  std::string next_continuation_token;
};

// A ListObjectsV2 answer. INTERNAL when it is not one.
absl::StatusOr<ListPage> ParseListObjectsV2(absl::string_view xml);

}  // namespace sluice::s3

#endif  // SLUICE_COMMON_S3_S3_XML_H_
