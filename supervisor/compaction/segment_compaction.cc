#include "supervisor/compaction/segment_compaction.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/file_util.h"
#include "common/segment/compaction.h"
#include "common/segment/segment_reader.h"
#include "common/status_macros.h"
#include "common/time_util.h"
#include "supervisor/naming.h"
#include "supervisor/segment_copy_check.h"

namespace sluice::supervisor {
namespace {

// Pushes to the keys of one stem tried at most (each taken by other bytes).
constexpr int kMaxKeyAttempts = 100;

// A copy LocalPathForRead made under `scratch_dir` (not the object itself,
// which a local deep storage may keep anywhere).
bool IsDownloadedCopy(const std::string& local, const std::string& uri,
                      const std::string& scratch_dir) {
  return absl::StartsWith(local, scratch_dir + "/") && local != uri &&
         absl::StrCat("file://", local) != uri;
}

// The input's copy, checked against its descriptor; the local path to read.
absl::Status CheckInput(const segment::SegmentReader& reader, const v1::SegmentDescriptor& s) {
  if (reader.checksum() != s.checksum()) {
    return absl::DataLossError(absl::StrCat("segment ", s.id(), ": ", s.path(), " has checksum ",
                                            reader.checksum(), ", the store says ", s.checksum()));
  }
  if (static_cast<int64_t>(reader.num_rows()) != s.num_rows()) {
    return absl::DataLossError(absl::StrCat("segment ", s.id(), ": ", s.path(), " has ",
                                            reader.num_rows(), " rows, the store says ",
                                            s.num_rows()));
  }
  if (reader.header().metadata.segment_id != s.id()) {
    return absl::DataLossError(absl::StrCat("segment ", s.id(), ": ", s.path(), " holds segment ",
                                            reader.header().metadata.segment_id));
  }
  if (!s.sha256().empty()) {
    const std::string digest = Sha256Digest(reader.bytes());
    if (digest != s.sha256()) {
      return absl::DataLossError(absl::StrCat("segment ", s.id(), ": ", s.path(),
                                              " changed after its commit: its SHA-256 is ", digest,
                                              ", the commit recorded ", s.sha256()));
    }
  }
  return absl::OkStatus();
}

// 16 hex characters of the SHA-256 of the group's sorted input ids.
std::string InputsTag(const std::vector<v1::SegmentDescriptor>& group) {
  std::vector<std::string> ids;
  for (const v1::SegmentDescriptor& s : group) ids.push_back(s.id());
  std::sort(ids.begin(), ids.end());
  return Sha256Digest(absl::StrJoin(ids, "\n")).substr(std::string("sha256:").size(), 16);
}

// Pushes `local_path` (whose digest is `sha256`) under `key_stem`; an
// existing object with the same bytes counts as pushed. Returns its URI.
absl::StatusOr<std::string> PushOnce(DeepStorage* deep, const std::string& local_path,
                                     const std::string& sha256, const std::string& key_stem,
                                     const std::string& scratch_dir) {
  for (int attempt = 0; attempt < kMaxKeyAttempts; ++attempt) {
    const std::string key = absl::StrCat(key_stem, "_", attempt, ".sluice");
    absl::StatusOr<std::string> uri = deep->Push(local_path, key);
    if (uri.ok()) return uri;
    if (!absl::IsAlreadyExists(uri.status())) {
      return Annotate(uri.status(), absl::StrCat("pushing ", local_path, " to ", key));
    }
    const std::string existing_uri = deep->UriForKey(key);
    SLUICE_ASSIGN_OR_RETURN(std::string existing,
                            ReadDeepStorageObject(*deep, existing_uri, scratch_dir));
    if (Sha256Digest(existing) == sha256) return existing_uri;  // an earlier run's push
  }
  return absl::ResourceExhaustedError(absl::StrCat(kMaxKeyAttempts, " keys of ", key_stem,
                                                   " hold other files already"));
}

v1::Provenance ToProto(const segment::Provenance& provenance) {
  v1::Provenance p;
  p.set_topic(provenance.topic);
  for (const segment::PartitionRange& r : provenance.ranges) {
    v1::PartitionRange* range = p.add_ranges();
    range->set_partition(r.partition);
    range->set_start_offset(r.start_offset);
    range->set_end_offset(r.end_offset);
    range->set_rows(r.rows);
  }
  return p;
}

}  // namespace

std::string CompactionVersion(absl::Time now, const std::vector<v1::SegmentDescriptor>& segments) {
  int64_t ms = absl::ToUnixMillis(now);
  for (const v1::SegmentDescriptor& s : segments) {
    absl::StatusOr<int64_t> version = ParseIsoInstantMillis(s.version());
    if (version.ok()) ms = std::max(ms, *version + 1);
  }
  return FormatIsoInstant(ms);
}

absl::StatusOr<IntervalCompaction> CompactInterval(DeepStorage* deep_storage,
                                                   const std::string& scratch_dir,
                                                   const IntervalCompactionRequest& request) {
  if (request.version.empty()) return absl::InvalidArgumentError("a compaction needs a version");
  if (request.groups.empty()) return absl::InvalidArgumentError("nothing to compact");
  for (const auto& group : request.groups) {
    if (group.size() < 2) {
      return absl::InvalidArgumentError("a compaction group needs two or more segments");
    }
    for (const v1::SegmentDescriptor& s : group) {
      if (s.datasource() != request.datasource ||
          s.interval().start_ms() != request.interval.start_ms() ||
          s.interval().end_ms() != request.interval.end_ms()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "segment ", s.id(), " is not of datasource ", request.datasource, " and interval [",
            request.interval.start_ms(), ", ", request.interval.end_ms(), ")"));
      }
    }
  }
  SLUICE_RETURN_IF_ERROR(MakeDirs(scratch_dir));

  IntervalCompaction result;
  result.datasource = request.datasource;
  result.interval = request.interval;
  std::vector<std::string> downloaded;
  auto remove_downloaded = [&]() {
    for (const std::string& path : downloaded) RemoveAll(path).IgnoreError();
    downloaded.clear();
  };
  const absl::Status status = [&]() -> absl::Status {
    for (size_t k = 0; k < request.groups.size(); ++k) {
      const std::vector<v1::SegmentDescriptor>& group = request.groups[k];
      segment::CompactionOptions options;
      for (const v1::SegmentDescriptor& s : group) {
        SLUICE_ASSIGN_OR_RETURN(std::string local,
                                deep_storage->LocalPathForRead(s.path(), scratch_dir));
        if (IsDownloadedCopy(local, s.path(), scratch_dir)) downloaded.push_back(local);
        absl::StatusOr<std::unique_ptr<segment::SegmentReader>> reader =
            segment::SegmentReader::Open(local);
        if (!reader.ok()) {
          return absl::DataLossError(
              absl::StrCat("segment ", s.id(), ": ", s.path(), ": ", reader.status().message()));
        }
        SLUICE_RETURN_IF_ERROR(CheckInput(**reader, s));
        options.input_paths.push_back(local);
        result.replaced.push_back(s);
      }
      const int32_t partition = static_cast<int32_t>(k);
      options.version = request.version;
      options.partition_num = partition;
      options.segment_id =
          SegmentId(request.datasource, request.interval.start_ms(), request.interval.end_ms(),
                    request.version, partition);
      options.path = absl::StrCat(scratch_dir, "/compacted_", partition, ".sluice");
      SLUICE_ASSIGN_OR_RETURN(segment::SegmentInfo info, segment::CompactSegments(options));
      remove_downloaded();

      CompactedSegment out;
      out.local_path = info.path;
      {
        SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<segment::SegmentReader> reader,
                                segment::SegmentReader::Open(info.path));
        out.sha256 = Sha256Digest(reader->bytes());
      }
      const std::string key_stem = absl::StrCat(
          request.datasource, "/", request.interval.start_ms(), "_", request.interval.end_ms(), "/",
          request.version, "/", partition, "/compaction_", InputsTag(group));
      SLUICE_ASSIGN_OR_RETURN(std::string uri, PushOnce(deep_storage, info.path, out.sha256,
                                                        key_stem, scratch_dir));
      v1::SegmentDescriptor& d = out.descriptor;
      d.set_id(options.segment_id);
      d.set_datasource(request.datasource);
      *d.mutable_interval() = request.interval;
      d.set_version(request.version);
      d.set_partition_num(partition);
      d.set_num_rows(static_cast<int64_t>(info.num_rows));
      d.set_size_bytes(static_cast<int64_t>(info.size_bytes));
      d.set_checksum(info.checksum);
      d.set_path(uri);
      *d.mutable_provenance() = ToProto(info.provenance);
      d.set_sha256(out.sha256);
      result.outputs.push_back(std::move(out));
    }
    return absl::OkStatus();
  }();
  remove_downloaded();
  if (!status.ok()) {
    for (const CompactedSegment& out : result.outputs) RemoveAll(out.local_path).IgnoreError();
    return status;
  }
  return result;
}

}  // namespace sluice::supervisor
