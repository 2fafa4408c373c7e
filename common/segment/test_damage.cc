#include "common/segment/test_damage.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/segment/byte_io.h"
#include "common/segment/crc32c.h"
#include "common/segment/file_io.h"
#include "common/segment/format.h"
#include "common/segment/segment_reader.h"

namespace sluice {
namespace segment {
namespace testing {

void ResealChecksum(std::string* bytes) {
  if (bytes->size() < kTrailerSize) return;
  // The trailer ends with the CRC (4 bytes) and the magic (8 bytes); the
  // CRC covers everything before it.
  const uint32_t crc = Crc32c(absl::string_view(*bytes).substr(0, bytes->size() - 12));
  std::string encoded;
  PutFixed32(&encoded, crc);
  bytes->replace(bytes->size() - 12, 4, encoded);
}

absl::StatusOr<std::string> DamageBlocksKeepingChecksum(const std::string& path) {
  absl::StatusOr<std::string> intact = ReadFileToString(path);
  if (!intact.ok()) return intact.status();
  if (intact->size() < kTrailerSize) return absl::NotFoundError(path + " is too short");
  for (size_t i = 0; i + kTrailerSize < intact->size(); ++i) {
    std::string damaged = *intact;
    damaged[i] ^= static_cast<char>(0x5a);
    ResealChecksum(&damaged);
    absl::StatusOr<std::unique_ptr<SegmentReader>> reader =
        SegmentReader::FromBytes(damaged, SegmentReader::Options());
    if (!reader.ok() || (*reader)->header().kind != FileKind::kSegment ||
        (*reader)->Verify().ok()) {
      continue;
    }
    const std::string checksum = (*reader)->checksum();
    reader->reset();
    if (absl::Status s = sluice::WriteFileAtomically(path, damaged); !s.ok()) return s;
    return checksum;
  }
  return absl::NotFoundError(
      absl::StrCat("no single-byte change of ", path, " opens but fails the decode"));
}

}  // namespace testing
}  // namespace segment
}  // namespace sluice
