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

absl::StatusOr<size_t> ChangeKeepingChecksum(const std::string& path) {
  absl::StatusOr<std::string> intact = ReadFileToString(path);
  if (!intact.ok()) return intact.status();
  if (intact->size() < kTrailerSize) return absl::NotFoundError(path + " is too short");
  // x^32 + 0x1EDC6F41 in the CRC's reflected bit order, as bytes: a multiple
  // of the polynomial XORed into a message leaves its CRC as it was.
  static constexpr unsigned char kPolynomial[] = {0xf1, 0x76, 0xec, 0x05, 0x01};
  const size_t covered = intact->size() - 12;  // the CRC and the magic are not
  // After the header: the segment's id, datasource, interval and provenance
  // stay what they were.
  const size_t body = kPreambleSize + DecodeFixed32(intact->data() + 12);
  for (const bool must_decode : {true, false}) {
    for (size_t i = body; i + sizeof(kPolynomial) <= covered; ++i) {
      std::string changed = *intact;
      for (size_t k = 0; k < sizeof(kPolynomial); ++k) {
        changed[i + k] = static_cast<char>(changed[i + k] ^ kPolynomial[k]);
      }
      absl::StatusOr<std::unique_ptr<SegmentReader>> reader =
          SegmentReader::FromBytes(changed, SegmentReader::Options());
      if (!reader.ok() || (*reader)->header().kind != FileKind::kSegment) continue;
      if (must_decode && !(*reader)->Verify().ok()) continue;
      reader->reset();
      if (absl::Status s = sluice::WriteFileAtomically(path, changed); !s.ok()) return s;
      return i;
    }
  }
  return absl::NotFoundError(
      absl::StrCat("no change of ", path, " keeps its checksum and still opens"));
}

}  // namespace testing
}  // namespace segment
}  // namespace sluice
