#include "supervisor/testing/segment_files.h"

#include <algorithm>
#include <optional>

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "common/segment/incremental_index.h"
#include "common/segment/segment_builder.h"
#include "common/segment/test_rows.h"
#include "common/status_macros.h"

namespace sluice::supervisor::testing {

int64_t SegmentHourStartMs() { return segment::testing::TestInterval().start_ms; }

absl::StatusOr<v1::SegmentDescriptor> PushSegment(DeepStorage* deep, const std::string& work_dir,
                                                  const std::string& key,
                                                  const std::string& datasource,
                                                  const v1::AllocateSegmentResponse& allocated,
                                                  int rows,
                                                  const std::map<int32_t, std::pair<int64_t, int64_t>>&
                                                      sequence_ranges) {
  const segment::Schema schema = segment::testing::TestSchema(/*rollup=*/true, /*discover=*/false);
  const segment::Interval test_interval = segment::testing::TestInterval();
  const segment::Interval interval{allocated.interval().start_ms(), allocated.interval().end_ms()};
  if (interval.end_ms - interval.start_ms != test_interval.end_ms - test_interval.start_ms) {
    return absl::InvalidArgumentError("test segments are one hour long");
  }
  // With sequence ranges the rows are records of the first non-empty range.
  std::optional<std::pair<int32_t, int64_t>> first;  // partition, start offset
  for (const auto& [partition, range] : sequence_ranges) {
    if (range.second <= range.first) continue;
    first = {partition, range.first};
    rows = static_cast<int>(std::min<int64_t>(rows, range.second - range.first));
    break;
  }
  std::vector<segment::testing::OwnedRow> owned =
      segment::testing::RandomRows(/*seed=*/rows, rows, schema, /*partitions=*/1);
  for (size_t i = 0; first && i < owned.size(); ++i) {
    owned[i].partition = first->first;
    owned[i].offset = first->second + static_cast<int64_t>(i);
  }
  SLUICE_ASSIGN_OR_RETURN(auto index, segment::IncrementalIndex::Create({schema, interval}));
  std::map<int32_t, std::pair<int64_t, int64_t>> ranges;
  for (segment::testing::OwnedRow& row : owned) {
    row.time = row.time - test_interval.start_ms + interval.start_ms;
    SLUICE_RETURN_IF_ERROR(
        index->Add(segment::testing::ToInputRow(row, schema), row.partition, row.offset));
    auto [it, inserted] = ranges.emplace(row.partition, std::make_pair(row.offset, row.offset + 1));
    it->second.first = std::min(it->second.first, row.offset);
    it->second.second = std::max(it->second.second, row.offset + 1);
  }
  segment::BuildOptions build;
  build.path = absl::StrCat(work_dir, "/", allocated.segment_id(), ".seg");
  for (char& c : build.path) {
    if (c == ':') c = '-';
  }
  build.schema = schema;
  build.metadata.datasource = datasource;
  build.metadata.interval = interval;
  build.metadata.version = allocated.version();
  build.metadata.partition_num = allocated.partition_num();
  build.metadata.segment_id = allocated.segment_id();
  build.metadata.provenance.topic = "events";
  if (!sequence_ranges.empty()) ranges = sequence_ranges;
  for (const auto& [partition, range] : ranges) {
    build.metadata.provenance.ranges.push_back({partition, range.first, range.second, 0});
  }
  build.live_index = index.get();
  SLUICE_ASSIGN_OR_RETURN(segment::SegmentInfo info, segment::BuildSegment(build));
  SLUICE_ASSIGN_OR_RETURN(std::string uri, deep->Push(info.path, key));

  v1::SegmentDescriptor s;
  s.set_id(allocated.segment_id());
  s.set_datasource(datasource);
  *s.mutable_interval() = allocated.interval();
  s.set_version(allocated.version());
  s.set_partition_num(allocated.partition_num());
  s.set_num_rows(static_cast<int64_t>(info.num_rows));
  s.set_size_bytes(static_cast<int64_t>(info.size_bytes));
  s.set_checksum(info.checksum);
  s.set_path(uri);
  s.mutable_provenance()->set_topic(info.provenance.topic);
  for (const segment::PartitionRange& r : info.provenance.ranges) {
    v1::PartitionRange* range = s.mutable_provenance()->add_ranges();
    range->set_partition(r.partition);
    range->set_start_offset(r.start_offset);
    range->set_end_offset(r.end_offset);
    range->set_rows(r.rows);
  }
  return s;
}

}  // namespace sluice::supervisor::testing
