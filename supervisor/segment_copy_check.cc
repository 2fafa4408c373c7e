#include "supervisor/segment_copy_check.h"

#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/file_util.h"
#include "common/s3/digest.h"
#include "common/segment/segment_reader.h"
#include "common/segment/segment_verify.h"
#include "common/status_macros.h"
#include "common/stream_partitions.h"

namespace sluice::supervisor {
namespace {

std::string Ranges(const std::vector<std::string>& parts) { return absl::StrJoin(parts, ", "); }

// The file's provenance against the expected one, in one comparable form.
std::string FormatProvenance(const std::string& topic,
                             const std::vector<segment::PartitionRange>& ranges) {
  std::vector<std::string> parts;
  for (const segment::PartitionRange& r : ranges) {
    parts.push_back(absl::StrCat(r.partition, ":[", r.start_offset, ",", r.end_offset, ")=",
                                 r.rows));
  }
  return absl::StrCat(topic, " {", Ranges(parts), "}");
}

std::string FormatProvenance(const v1::Provenance& provenance) {
  std::vector<segment::PartitionRange> ranges;
  for (const v1::PartitionRange& r : provenance.ranges()) {
    ranges.push_back({r.partition(), r.start_offset(), r.end_offset(), r.rows()});
  }
  std::sort(ranges.begin(), ranges.end(),
            [](const auto& a, const auto& b) {
              // A compacted segment has several ranges of a partition, sorted
              // by start in its file.
              return a.partition != b.partition ? a.partition < b.partition
                                                : a.start_offset < b.start_offset;
            });
  return FormatProvenance(StreamNameOf(provenance), ranges);
}

absl::Status CheckContents(const segment::SegmentReader& reader,
                           const SegmentExpectation& expected) {
  const std::string& path = expected.path;
  const segment::SegmentMetadata& meta = reader.header().metadata;
  if (reader.checksum() != expected.checksum) {
    return absl::DataLossError(absl::StrCat(path, " has checksum ", reader.checksum(),
                                            ", the descriptor says ", expected.checksum));
  }
  if (static_cast<int64_t>(reader.num_rows()) != expected.num_rows) {
    return absl::DataLossError(absl::StrCat(path, " has ", reader.num_rows(),
                                            " rows, the descriptor says ", expected.num_rows));
  }
  if (meta.segment_id != expected.id) {
    return absl::DataLossError(
        absl::StrCat(path, " holds segment ", meta.segment_id, ", not ", expected.id));
  }
  if (!expected.datasource.empty() && meta.datasource != expected.datasource) {
    return absl::DataLossError(absl::StrCat(path, " belongs to datasource ", meta.datasource,
                                            ", not ", expected.datasource));
  }
  if (expected.interval && (meta.interval.start_ms != expected.interval->start_ms() ||
                            meta.interval.end_ms != expected.interval->end_ms())) {
    return absl::DataLossError(absl::StrCat(
        path, " covers [", meta.interval.start_ms, ", ", meta.interval.end_ms,
        "), the descriptor says [", expected.interval->start_ms(), ", ",
        expected.interval->end_ms(), ")"));
  }
  if (expected.provenance) {
    const std::string in_file =
        FormatProvenance(meta.provenance.topic, meta.provenance.ranges);
    const std::string claimed = FormatProvenance(*expected.provenance);
    if (in_file != claimed) {
      return absl::DataLossError(absl::StrCat(path, " was built from ", in_file,
                                              ", the descriptor says ", claimed));
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::string Sha256Digest(absl::string_view bytes) {
  return absl::StrCat("sha256:", s3::HexOf(s3::Sha256Of(bytes)));
}

SegmentExpectation ExpectationOf(const HandoffCandidate& published, CopyCheckDepth depth) {
  SegmentExpectation e;
  e.id = published.id;
  e.path = published.path;
  e.size_bytes = published.size_bytes;
  e.num_rows = published.num_rows;
  e.checksum = published.checksum;
  e.sha256 = published.sha256;
  e.depth = depth;
  return e;
}

absl::Status CheckSegmentCopy(DeepStorage* deep_storage, const std::string& scratch_dir,
                              const HandoffCandidate& segment, CopyCheckDepth depth) {
  absl::Status status =
      VerifySegmentCopy(deep_storage, scratch_dir, ExpectationOf(segment, depth));
  if (absl::IsNotFound(status)) return absl::DataLossError(status.message());
  return status;
}

SegmentExpectation ExpectationOf(const v1::SegmentDescriptor& descriptor) {
  SegmentExpectation e;
  e.id = descriptor.id();
  e.datasource = descriptor.datasource();
  e.path = descriptor.path();
  e.size_bytes = descriptor.size_bytes();
  e.num_rows = descriptor.num_rows();
  e.checksum = descriptor.checksum();
  e.interval = descriptor.interval();
  e.provenance = descriptor.provenance();
  return e;
}

absl::Status VerifySegmentCopy(DeepStorage* storage, const std::string& scratch_dir,
                               const SegmentExpectation& expected, std::string* sha256) {
  if (!expected.datasource.empty()) {
    absl::string_view key = expected.path;
    const std::string prefix = storage->UriForKey(expected.datasource + "/");
    if (!absl::ConsumePrefix(&key, prefix) || !ValidateDeepStorageKey(key).ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          expected.path, " is not under datasource ", expected.datasource,
          "'s own deep-storage prefix ", prefix));
    }
  }
  SLUICE_ASSIGN_OR_RETURN(DeepStorageFileInfo info, storage->Stat(expected.path));
  if (info.size_bytes != expected.size_bytes) {
    return absl::DataLossError(absl::StrCat(expected.path, " has ", info.size_bytes,
                                            " bytes, the descriptor says ",
                                            expected.size_bytes));
  }
  SLUICE_ASSIGN_OR_RETURN(std::string local, storage->LocalPathForRead(expected.path, scratch_dir));
  // A copy made for reading, to remove afterwards; never the object itself
  // (a local deep storage may live under the scratch directory).
  const bool downloaded = absl::StartsWith(local, scratch_dir + "/") && local != expected.path &&
                          absl::StrCat("file://", local) != expected.path;
  // Open checks the whole-file CRC-32C and the structure. One reader for both
  // checks: the file is read for its checksum once. Closed before the copy
  // is removed.
  const absl::Status status = [&]() -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<segment::SegmentReader> reader,
                            segment::SegmentReader::Open(local));
    // Over the very bytes the reader checks (one mapping of the file).
    std::string digest;
    if (sha256 != nullptr || !expected.sha256.empty()) digest = Sha256Digest(reader->bytes());
    if (!expected.sha256.empty() && digest != expected.sha256) {
      return absl::DataLossError(absl::StrCat(
          "segment ", expected.id, ": ", expected.path,
          " changed after its commit: its SHA-256 is ", digest, ", the commit recorded ",
          expected.sha256, " (its CRC-32C ", reader->checksum(),
          expected.checksum == reader->checksum() ? " still matches" : " differs too", ")"));
    }
    if (expected.depth == CopyCheckDepth::kFull) {
      segment::ExpectedSegment file;
      file.segment_id = expected.id;
      file.num_rows = expected.num_rows;
      file.size_bytes = expected.size_bytes;
      file.checksum = expected.checksum;
      SLUICE_RETURN_IF_ERROR(
          segment::VerifyOpenSegment(*reader, local, file, segment::VerifyDepth::kFull));
    }
    SLUICE_RETURN_IF_ERROR(CheckContents(*reader, expected));
    if (sha256 != nullptr) *sha256 = std::move(digest);
    return absl::OkStatus();
  }();
  if (downloaded) RemoveAll(local).IgnoreError();
  if (absl::IsNotFound(status) || absl::IsInvalidArgument(status)) {
    return absl::DataLossError(status.message());
  }
  return status;
}

}  // namespace sluice::supervisor
