#include "common/segment/compaction.h"

#include <algorithm>
#include <memory>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "common/segment/crc32c.h"
#include "common/segment/file_run.h"
#include "common/segment/merger.h"
#include "common/segment/segment_reader.h"

namespace sluice {
namespace segment {
namespace {

struct Input {
  std::string path;
  std::unique_ptr<SegmentReader> reader;
  const SegmentMetadata& metadata() const { return reader->header().metadata; }
};

// A canonical order of the inputs (their ranges, then id), so that the merge
// (which breaks ties between runs by position) never sees the caller's order.
bool Before(const Input& a, const Input& b) {
  const auto& ra = a.metadata().provenance.ranges;
  const auto& rb = b.metadata().provenance.ranges;
  auto key = [](const PartitionRange& r) {
    return std::make_tuple(r.partition, r.start_offset, r.end_offset, r.rows);
  };
  for (size_t i = 0; i < ra.size() && i < rb.size(); ++i) {
    if (key(ra[i]) != key(rb[i])) return key(ra[i]) < key(rb[i]);
  }
  if (ra.size() != rb.size()) return ra.size() < rb.size();
  return a.metadata().segment_id < b.metadata().segment_id;
}

}  // namespace

absl::StatusOr<SegmentInfo> CompactSegments(const CompactionOptions& options) {
  if (options.input_paths.empty()) return absl::InvalidArgumentError("no segments to compact");
  if (options.segment_id.empty() || options.version.empty()) {
    return absl::InvalidArgumentError("segment id and version are required");
  }
  std::vector<Input> inputs;
  for (const std::string& path : options.input_paths) {
    SegmentReader::Options open;
    open.load_dictionaries = false;  // the merge loads one dimension at a time
    absl::StatusOr<std::unique_ptr<SegmentReader>> reader = SegmentReader::Open(path, open);
    if (!reader.ok()) return reader.status();
    if ((*reader)->header().kind != FileKind::kSegment) {
      return absl::FailedPreconditionError(absl::StrCat(path, " is not a segment"));
    }
    inputs.push_back({path, std::move(*reader)});
  }
  std::sort(inputs.begin(), inputs.end(), Before);
  const SegmentMetadata& first = inputs[0].metadata();
  auto name = [](const Input& in) {
    return absl::StrCat("segment ", in.metadata().segment_id, " (", in.path, ")");
  };
  for (const Input& in : inputs) {
    const SegmentMetadata& m = in.metadata();
    if (m.datasource != first.datasource) {
      return absl::FailedPreconditionError(absl::StrCat(
          name(in), " is of datasource ", m.datasource, ", ", name(inputs[0]), " of ",
          first.datasource));
    }
    if (m.interval.start_ms != first.interval.start_ms ||
        m.interval.end_ms != first.interval.end_ms) {
      return absl::FailedPreconditionError(absl::StrCat(
          name(in), " covers [", m.interval.start_ms, ", ", m.interval.end_ms, "), ",
          name(inputs[0]), " [", first.interval.start_ms, ", ", first.interval.end_ms, ")"));
    }
    if (m.provenance.topic != first.provenance.topic) {
      return absl::FailedPreconditionError(absl::StrCat(name(in), " came from \"",
                                                        m.provenance.topic, "\", ",
                                                        name(inputs[0]), " from \"",
                                                        first.provenance.topic, "\""));
    }
  }
  // The union of the ranges; overlapping ranges of a partition are the same
  // records twice.
  struct Owned {
    PartitionRange range;
    size_t input;
  };
  std::vector<Owned> ranges;
  for (size_t i = 0; i < inputs.size(); ++i) {
    for (const PartitionRange& r : inputs[i].metadata().provenance.ranges) ranges.push_back({r, i});
  }
  std::sort(ranges.begin(), ranges.end(), [](const Owned& a, const Owned& b) {
    return std::make_tuple(a.range.partition, a.range.start_offset, a.range.end_offset, a.input) <
           std::make_tuple(b.range.partition, b.range.start_offset, b.range.end_offset, b.input);
  });
  SegmentMetadata metadata;
  metadata.datasource = first.datasource;
  metadata.interval = first.interval;
  metadata.version = options.version;
  metadata.partition_num = options.partition_num;
  metadata.segment_id = options.segment_id;
  metadata.provenance.topic = first.provenance.topic;
  for (size_t i = 0; i < ranges.size(); ++i) {
    const PartitionRange& r = ranges[i].range;
    if (i > 0 && ranges[i - 1].range.partition == r.partition &&
        r.start_offset < ranges[i - 1].range.end_offset) {
      const PartitionRange& prev = ranges[i - 1].range;
      return absl::FailedPreconditionError(absl::StrCat(
          name(inputs[ranges[i - 1].input]), " and ", name(inputs[ranges[i].input]),
          " overlap in partition ", r.partition, ": [", prev.start_offset, ", ", prev.end_offset,
          ") and [", r.start_offset, ", ", r.end_offset, ") (the same records twice)"));
    }
    metadata.provenance.ranges.push_back(r);
  }

  std::vector<std::unique_ptr<SortedRun>> owned;
  std::vector<SortedRun*> runs;
  for (Input& in : inputs) {
    const std::string description = name(in);
    owned.push_back(FileRun(std::move(in.reader), description));
    runs.push_back(owned.back().get());
  }
  MergeOptions merge;
  merge.path = options.path;
  merge.zstd_level = options.zstd_level;
  FileHeader& h = merge.header;
  h.kind = FileKind::kSegment;
  h.compression = options.compression;
  h.rows_per_block = options.rows_per_block;
  h.metadata = metadata;
  h.schema = owned[0]->schema();
  absl::StatusOr<WrittenFile> written = MergeRuns(runs, merge);
  if (!written.ok()) return written.status();
  return SegmentInfoOf(*written);
}

}  // namespace segment
}  // namespace sluice
