#include "common/segment/spill.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/names.h"
#include "common/status_macros.h"
#include "common/segment/file_io.h"
#include "common/segment/merger.h"
#include "common/segment/segment_reader.h"

namespace sluice {
namespace segment {
namespace {

SpillDescriptor Describe(const std::string& path, const SegmentReader& reader) {
  SpillDescriptor d;
  d.path = path;
  const size_t slash = path.rfind('/');
  d.name = path.substr(slash == std::string::npos ? 0 : slash + 1);
  if (absl::EndsWith(d.name, kSpillSuffix)) d.name.resize(d.name.size() - strlen(kSpillSuffix));
  const FileHeader& h = reader.header();
  d.rows = h.num_rows;
  d.input_records = h.input_records;
  d.size_bytes = reader.file_size();
  d.crc = reader.crc();
  d.interval = h.metadata.interval;
  d.partitions = h.partitions;
  d.caller_metadata = h.caller_metadata;
  return d;
}

}  // namespace

absl::StatusOr<SpillDescriptor> PersistIndex(IncrementalIndex* index, const SpillOptions& options) {
  if (absl::Status s = ValidateName("spill name", options.name, kMaxTaskIdLength); !s.ok()) {
    return s;
  }
  if (index->empty()) return absl::FailedPreconditionError("nothing to persist: the index is empty");
  const std::string path = absl::StrCat(options.directory, "/", options.name, kSpillSuffix);
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    return absl::AlreadyExistsError(absl::StrCat("spill ", path, " already exists"));
  }
  MergeOptions merge;
  merge.path = path;
  merge.zstd_level = options.zstd_level;
  FileHeader& h = merge.header;
  h.kind = FileKind::kSpill;
  h.compression = options.compression;
  h.rows_per_block = options.rows_per_block;
  h.metadata.interval = index->interval();
  h.schema = index->schema();
  h.caller_metadata = options.caller_metadata;
  std::unique_ptr<SortedRun> run = index->Snapshot();
  absl::StatusOr<WrittenFile> written = MergeRuns({run.get()}, std::move(merge));
  if (!written.ok()) return written.status();
  SpillDescriptor d;
  d.path = path;
  d.name = options.name;
  d.rows = written->num_rows;
  d.input_records = static_cast<uint64_t>(index->input_records());
  d.size_bytes = written->size_bytes;
  d.crc = written->crc;
  d.interval = index->interval();
  d.partitions = index->partition_stats();
  d.caller_metadata = options.caller_metadata;
  run.reset();
  index->Clear();
  return d;
}

absl::StatusOr<SpillDescriptor> ReadSpill(const std::string& path) {
  absl::StatusOr<std::unique_ptr<SegmentReader>> reader = SegmentReader::Open(path);
  if (!reader.ok()) return reader.status();
  if ((*reader)->header().kind != FileKind::kSpill) {
    return absl::FailedPreconditionError(absl::StrCat(path, " is a segment, not a spill"));
  }
  return Describe(path, **reader);
}

absl::StatusOr<std::vector<std::string>> ReadSpillDimensions(const std::string& path) {
  SegmentReader::Options options;
  options.verify_checksum = false;
  options.load_dictionaries = false;
  absl::StatusOr<std::unique_ptr<SegmentReader>> reader = SegmentReader::Open(path, options);
  if (!reader.ok()) return reader.status();
  if ((*reader)->header().kind != FileKind::kSpill) {
    return absl::FailedPreconditionError(absl::StrCat(path, " is a segment, not a spill"));
  }
  return (*reader)->header().dimensions;
}

absl::StatusOr<std::vector<SpillDescriptor>> ListSpills(const std::string& directory) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> entries, ListDirectory(directory));
  std::vector<std::string> names;
  std::vector<std::string> temporary;
  for (const std::string& name : entries) {
    if (absl::StartsWith(name, kTempFilePrefix)) {
      temporary.push_back(name);
    } else if (name[0] != '.' && absl::EndsWith(name, kSpillSuffix)) {
      names.push_back(name);
    }
  }
  for (const std::string& name : temporary) {
    const std::string path = absl::StrCat(directory, "/", name);
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) return ErrnoStatus(errno, "remove", path);
  }
  std::sort(names.begin(), names.end());
  std::vector<SpillDescriptor> spills;
  for (const std::string& name : names) {
    absl::StatusOr<SpillDescriptor> spill = ReadSpill(absl::StrCat(directory, "/", name));
    if (!spill.ok()) return spill.status();
    spills.push_back(*std::move(spill));
  }
  return spills;
}

absl::Status RemoveSpill(const std::string& path) {
  if (::unlink(path.c_str()) != 0) return ErrnoStatus(errno, "remove", path);
  return absl::OkStatus();
}

}  // namespace segment
}  // namespace sluice
