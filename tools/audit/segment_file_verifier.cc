#include "tools/audit/segment_file_verifier.h"

#include <cstdio>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/s3/digest.h"
#include "common/segment/segment_reader.h"
#include "common/status_macros.h"

namespace sluice::audit {

absl::StatusOr<std::string> LocalSegmentPath(const std::string& uri) {
  std::string path = uri;
  if (absl::StartsWith(uri, "file://")) {
    path = uri.substr(7);
  } else if (const size_t scheme = uri.find("://"); scheme != std::string::npos) {
    return absl::UnimplementedError(absl::StrCat("cannot read deep storage \"",
                                                 uri.substr(0, scheme),
                                                 "://\": only file:// is supported (", uri, ")"));
  }
  if (path.empty() || path[0] != '/') {
    return absl::InvalidArgumentError(
        absl::StrCat("segment path \"", uri, "\" is not absolute (file:///... expected)"));
  }
  return path;
}

absl::StatusOr<VerifiedSegment> SegmentFileVerifier::Verify(const std::string& path) {
  const bool remote = !absl::StartsWith(path, "file://") && !absl::StartsWith(path, "/") &&
                      path.find("://") != std::string::npos;
  if (!remote) {
    SLUICE_ASSIGN_OR_RETURN(std::string local, LocalSegmentPath(path));
    return VerifyLocal(local);
  }
  if (options_.deep_storage == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "segment ", path, " is in remote deep storage; the audit needs that deep storage "
        "(its URI and credentials) to read it"));
  }
  SLUICE_ASSIGN_OR_RETURN(const std::string local,
                          options_.deep_storage->LocalPathForRead(path, options_.scratch_dir));
  absl::StatusOr<VerifiedSegment> verified = VerifyLocal(local);
  if (local != path) std::remove(local.c_str());
  return verified;
}

absl::StatusOr<VerifiedSegment> SegmentFileVerifier::VerifyLocal(const std::string& local) {
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<segment::SegmentReader> reader,
                          segment::SegmentReader::Open(local));
  const segment::FileHeader& header = reader->header();
  if (header.kind != segment::FileKind::kSegment) {
    return absl::FailedPreconditionError(absl::StrCat(local, " is a spill, not a segment"));
  }
  SLUICE_RETURN_IF_ERROR(reader->Verify());
  VerifiedSegment verified;
  verified.num_rows = static_cast<int64_t>(reader->num_rows());
  verified.checksum = reader->checksum();
  verified.sha256 = absl::StrCat("sha256:", s3::HexOf(s3::Sha256Of(reader->bytes())));
  verified.segment_id = header.metadata.segment_id;
  verified.has_provenance = true;
  verified.provenance.set_topic(header.metadata.provenance.topic);
  for (const segment::PartitionRange& r : header.metadata.provenance.ranges) {
    v1::PartitionRange* range = verified.provenance.add_ranges();
    range->set_partition(r.partition);
    range->set_start_offset(r.start_offset);
    range->set_end_offset(r.end_offset);
    range->set_rows(r.rows);
  }
  return verified;
}

}  // namespace sluice::audit
