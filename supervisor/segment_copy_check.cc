#include "supervisor/segment_copy_check.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/segment/segment_reader.h"
#include "common/segment/segment_verify.h"
#include "common/status_macros.h"

namespace sluice::supervisor {

absl::Status CheckSegmentCopy(DeepStorage* deep_storage, const std::string& scratch_dir,
                              const HandoffCandidate& segment, CopyCheckDepth depth) {
  absl::Status status = [&]() -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(DeepStorageFileInfo info, deep_storage->Stat(segment.path));
    if (info.size_bytes != segment.size_bytes) {
      return absl::DataLossError(absl::StrCat(segment.path, " has ", info.size_bytes,
                                              " bytes, published with ", segment.size_bytes));
    }
    SLUICE_ASSIGN_OR_RETURN(std::string local,
                            deep_storage->LocalPathForRead(segment.path, scratch_dir));
    // A copy made for reading, to remove afterwards; never the object
    // itself (a local deep storage may live under the scratch directory).
    const bool downloaded = absl::StartsWith(local, scratch_dir + "/") && local != segment.path &&
                            absl::StrCat("file://", local) != segment.path;
    absl::Status checked;
    if (depth == CopyCheckDepth::kFull) {
      segment::ExpectedSegment expected;
      expected.segment_id = segment.id;
      expected.num_rows = segment.num_rows;
      expected.size_bytes = segment.size_bytes;
      expected.checksum = segment.checksum;
      checked = segment::VerifySegmentFile(local, expected);
    } else {
      // Open checks the whole-file CRC-32C and the structure.
      absl::StatusOr<std::unique_ptr<segment::SegmentReader>> reader =
          segment::SegmentReader::Open(local);
      checked = reader.status();
      if (checked.ok() && (*reader)->checksum() != segment.checksum) {
        checked = absl::DataLossError(absl::StrCat(segment.path, " has checksum ",
                                                   (*reader)->checksum(), ", published with ",
                                                   segment.checksum));
      } else if (checked.ok() && static_cast<int64_t>((*reader)->num_rows()) != segment.num_rows) {
        checked = absl::DataLossError(absl::StrCat(segment.path, " has ", (*reader)->num_rows(),
                                                   " rows, published with ", segment.num_rows));
      } else if (checked.ok() && (*reader)->header().metadata.segment_id != segment.id) {
        checked = absl::DataLossError(absl::StrCat(segment.path, " holds segment ",
                                                   (*reader)->header().metadata.segment_id,
                                                   ", not ", segment.id));
      }
    }
    if (downloaded) RemoveAll(local).IgnoreError();
    return checked;
  }();
  // A copy that is not there, or not readable as a segment, is lost data.
  if (absl::IsNotFound(status) || absl::IsInvalidArgument(status)) {
    return absl::DataLossError(status.message());
  }
  return status;
}

}  // namespace sluice::supervisor
