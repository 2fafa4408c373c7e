#include "tools/demo/segment_table.h"

#include <algorithm>
#include <climits>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/time_util.h"
#include "tools/cli/format.h"
#include "tools/cli/table.h"

namespace sluice {
namespace demo {
namespace {

// "2026-11-30T02:00/03:00" for an interval within a day, else both instants.
std::string IntervalText(const v1::Interval& interval) {
  const std::string start = FormatIsoInstant(interval.start_ms());
  const std::string end = FormatIsoInstant(interval.end_ms());
  if (start.size() >= 16 && end.size() >= 16 && start.substr(0, 10) == end.substr(0, 10)) {
    return absl::StrCat(start.substr(0, 16), "/", end.substr(11, 5));
  }
  return absl::StrCat(start, "/", end);
}

// "p0[0,25012)=25012 p2[0,25012)=25010": each partition's range and the rows
// of it that landed in this segment.
std::string RangesText(const v1::Provenance& provenance) {
  std::vector<std::string> parts;
  for (const v1::PartitionRange& r : provenance.ranges()) {
    parts.push_back(absl::StrCat("p", r.partition(), "[", r.start_offset(), ",", r.end_offset(),
                                 ")=", r.rows()));
  }
  return absl::StrJoin(parts, " ");
}

std::string HandoffText(v1::HandoffState state) {
  switch (state) {
    case v1::HANDOFF_STATE_HANDED_OFF:
      return "handed off";
    case v1::HANDOFF_STATE_PENDING:
      return "pending";
    case v1::HANDOFF_STATE_FAILED:
      return "FAILED";
    default:
      return "-";
  }
}

}  // namespace

std::string FormatSegmentTable(const std::vector<v1::SegmentDescriptor>& segments,
                               size_t max_rows) {
  if (segments.empty()) return "no segments\n";
  std::vector<const v1::SegmentDescriptor*> sorted;
  for (const v1::SegmentDescriptor& s : segments) sorted.push_back(&s);
  // In Kafka order: by the first partition a segment holds records of, then
  // where its range starts (a group's sequences follow each other), then by
  // interval.
  auto kafka_key = [](const v1::SegmentDescriptor& s) {
    int32_t partition = INT32_MAX;
    int64_t start = 0;
    for (const v1::PartitionRange& r : s.provenance().ranges()) {
      if (r.partition() < partition) {
        partition = r.partition();
        start = r.start_offset();
      }
    }
    return std::make_tuple(partition, start, s.interval().start_ms(), s.partition_num());
  };
  std::stable_sort(sorted.begin(), sorted.end(),
                   [&](const v1::SegmentDescriptor* a, const v1::SegmentDescriptor* b) {
                     return kafka_key(*a) < kafka_key(*b);
                   });
  sluicectl::Table table(
      {"#", "INTERVAL", "SHARD", "ROWS", "SIZE", "KAFKA RANGES (rows)", "SEQUENCE", "HANDOFF"},
      {sluicectl::Table::kRight, sluicectl::Table::kLeft, sluicectl::Table::kRight,
       sluicectl::Table::kRight, sluicectl::Table::kRight});
  const size_t head = max_rows == 0 ? sorted.size() : (max_rows + 1) / 2;
  const size_t tail = max_rows == 0 ? 0 : max_rows / 2;
  int64_t rows = 0;
  int64_t bytes = 0;
  for (size_t i = 0; i < sorted.size(); ++i) {
    const v1::SegmentDescriptor& s = *sorted[i];
    rows += s.num_rows();
    bytes += s.size_bytes();
    const bool shown =
        sorted.size() <= max_rows || max_rows == 0 || i < head || i >= sorted.size() - tail;
    if (!shown) {
      if (i == head) {
        table.AddRow({"", absl::StrCat("... ", sorted.size() - head - tail, " more")});
      }
      continue;
    }
    table.AddRow({absl::StrCat(i + 1), IntervalText(s.interval()), absl::StrCat(s.partition_num()),
                  absl::StrCat(s.num_rows()), sluicectl::FormatBytes(s.size_bytes()),
                  RangesText(s.provenance()), s.sequence_name(), HandoffText(s.handoff_state())});
  }
  return absl::StrCat(table.Render("  "), "  ", segments.size(), " segments, ", rows, " rows, ",
                      sluicectl::FormatBytes(bytes), "\n");
}

}  // namespace demo
}  // namespace sluice
