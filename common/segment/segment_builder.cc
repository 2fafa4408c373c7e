#include "common/segment/segment_builder.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "common/names.h"
#include "common/segment/crc32c.h"
#include "common/segment/file_run.h"
#include "common/segment/merger.h"

namespace sluice {
namespace segment {

SegmentInfo SegmentInfoOf(const WrittenFile& written) {
  SegmentInfo info;
  info.path = written.path;
  info.num_rows = written.num_rows;
  info.input_records = written.header.input_records;
  info.size_bytes = written.size_bytes;
  info.crc = written.crc;
  info.checksum = FormatCrc32c(written.crc);
  info.provenance = written.header.metadata.provenance;
  info.min_time = written.header.min_time;
  info.max_time = written.header.max_time;
  return info;
}

absl::StatusOr<SegmentInfo> BuildSegment(const BuildOptions& options) {
  if (absl::Status s = ValidateSchema(options.schema); !s.ok()) return s;
  if (absl::Status s = ValidateDatasource(options.metadata.datasource); !s.ok()) return s;
  if (options.metadata.segment_id.empty() || options.metadata.version.empty()) {
    return absl::InvalidArgumentError("segment id and version are required");
  }
  if (options.metadata.interval.start_ms >= options.metadata.interval.end_ms) {
    return absl::InvalidArgumentError("the segment interval is empty");
  }
  std::vector<std::unique_ptr<SortedRun>> owned;
  for (const std::string& path : options.spill_paths) {
    absl::StatusOr<std::unique_ptr<SortedRun>> run = OpenFileRun(path);
    if (!run.ok()) return run.status();
    if ((*run)->schema().rollup != options.schema.rollup) {
      return absl::FailedPreconditionError(absl::StrCat(path, " was built with another rollup"));
    }
    owned.push_back(std::move(*run));
  }
  if (options.live_index != nullptr && !options.live_index->empty()) {
    owned.push_back(options.live_index->Snapshot());
  }
  std::vector<SortedRun*> runs;
  for (const auto& run : owned) runs.push_back(run.get());

  MergeOptions merge;
  merge.path = options.path;
  merge.zstd_level = options.zstd_level;
  FileHeader& h = merge.header;
  h.kind = FileKind::kSegment;
  h.compression = options.compression;
  h.rows_per_block = options.rows_per_block;
  h.metadata = options.metadata;
  h.schema = options.schema;
  absl::StatusOr<WrittenFile> written = MergeRuns(runs, merge);
  if (!written.ok()) return written.status();
  return SegmentInfoOf(*written);
}

}  // namespace segment
}  // namespace sluice
