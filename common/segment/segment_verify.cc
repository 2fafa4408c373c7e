#include "common/segment/segment_verify.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "common/segment/segment_reader.h"

namespace sluice {
namespace segment {

absl::Status VerifySegmentFile(const std::string& path, const ExpectedSegment& expected,
                               VerifyDepth depth) {
  SegmentReader::Options options;
  // The checksum alone: the dictionaries stay undecoded (the reader checks
  // the header, the directory and every byte's CRC either way).
  options.load_dictionaries = depth != VerifyDepth::kChecksum;
  absl::StatusOr<std::unique_ptr<SegmentReader>> opened = SegmentReader::Open(path, options);
  if (!opened.ok()) return opened.status();
  return VerifyOpenSegment(**opened, path, expected, depth);
}

absl::Status VerifyOpenSegment(SegmentReader& reader, const std::string& path,
                               const ExpectedSegment& expected, VerifyDepth depth) {
  const FileHeader& h = reader.header();
  auto differs = [&](absl::string_view what, const auto& in_file, const auto& wanted) {
    return absl::DataLossError(
        absl::StrCat(path, ": ", what, " is ", in_file, ", expected ", wanted));
  };
  if (h.kind != FileKind::kSegment) return differs("the file kind", FileKindName(h.kind), "segment");
  if (!expected.segment_id.empty() && h.metadata.segment_id != expected.segment_id) {
    return differs("the segment id", h.metadata.segment_id, expected.segment_id);
  }
  if (expected.num_rows >= 0 && reader.num_rows() != static_cast<uint64_t>(expected.num_rows)) {
    return differs("the row count", reader.num_rows(), expected.num_rows);
  }
  if (expected.size_bytes >= 0 &&
      reader.file_size() != static_cast<uint64_t>(expected.size_bytes)) {
    return differs("the size", reader.file_size(), expected.size_bytes);
  }
  if (!expected.checksum.empty() && reader.checksum() != expected.checksum) {
    return differs("the checksum", reader.checksum(), expected.checksum);
  }
  if (depth != VerifyDepth::kFull) return absl::OkStatus();
  if (absl::Status s = reader.Verify(); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat(path, ": ", s.message()));
  }
  return absl::OkStatus();
}

}  // namespace segment
}  // namespace sluice
