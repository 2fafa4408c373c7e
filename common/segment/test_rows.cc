#include "common/segment/test_rows.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "common/segment/exact_sum.h"
#include "common/segment/incremental_index.h"

namespace sluice {
namespace segment {
namespace testing {
namespace {

uint64_t Bits(double d) {
  uint64_t b;
  std::memcpy(&b, &d, 8);
  return b;
}
double FromBits(uint64_t b) {
  double d;
  std::memcpy(&d, &b, 8);
  return d;
}

const char* const kChannels[] = {"#en.wikipedia", "#de.wikipedia", "#ja.wikipedia", "", "#fr"};
const char* const kWords[] = {"Main", "Café", "日本語", "Ελληνικά", "emoji 🎉", "quote \"x\"",
                              "back\\slash", "tab\there", "", "Zürich", "a", "b"};

std::string RandomString(std::mt19937_64& rng, int cardinality) {
  const uint64_t k = rng() % cardinality;
  return absl::StrCat(kWords[k % (sizeof(kWords) / sizeof(kWords[0]))],
                      k < 12 ? "" : absl::StrCat("-", k));
}

double RandomDouble(std::mt19937_64& rng) {
  switch (rng() % 12) {
    case 0: return std::numeric_limits<double>::max();
    case 1: return -std::numeric_limits<double>::max();
    case 2: return std::numeric_limits<double>::denorm_min();
    case 3: return -0.0;
    case 4: return 1e-300;
    case 5: return std::ldexp(static_cast<double>(rng() % 1000), -(static_cast<int>(rng() % 60)));
    case 6: return rng() % 50 == 0 ? std::numeric_limits<double>::quiet_NaN() : 0.1;
    case 7: return rng() % 50 == 0 ? std::numeric_limits<double>::infinity() : 1e16;
    default: return static_cast<double>(static_cast<int64_t>(rng() % 20001) - 10000) / 8;
  }
}

int64_t RandomLong(std::mt19937_64& rng) {
  switch (rng() % 10) {
    case 0: return std::numeric_limits<int64_t>::max();
    case 1: return std::numeric_limits<int64_t>::min();
    case 2: return -1;
    default: return static_cast<int64_t>(rng() % 2000) - 500;
  }
}

}  // namespace

Schema TestSchema(bool rollup, bool discover) {
  Schema s;
  if (!discover) s.dimensions = {"channel", "page", "user", "flags"};
  s.dimension_exclusions = {"ignored"};
  s.metrics = {{MetricType::kCount, "count", ""},
               {MetricType::kLongSum, "added", "added"},
               {MetricType::kDoubleSum, "delta", "delta"},
               {MetricType::kLongMin, "added_min", "added"},
               {MetricType::kLongMax, "added_max", "added"},
               {MetricType::kDoubleMin, "delta_min", "delta"},
               {MetricType::kDoubleMax, "delta_max", "delta"}};
  s.query_granularity = Granularity(Granularity::Unit::kMinute);
  s.rollup = rollup;
  return s;
}

Interval TestInterval() { return Interval{1796004000000, 1796007600000}; }

std::vector<OwnedRow> RandomRows(uint64_t seed, size_t n, const Schema& schema, int partitions) {
  std::mt19937_64 rng(seed);
  std::vector<int64_t> next_offset(partitions, 100);
  std::vector<OwnedRow> rows;
  const Interval interval = TestInterval();
  for (size_t i = 0; i < n; ++i) {
    OwnedRow row;
    // Clustered times so that rollup merges rows.
    row.time = interval.start_ms + static_cast<int64_t>(rng() % 7) * 60000 +
               static_cast<int64_t>(rng() % 60000);
    if (rng() % 100 == 0) row.time = interval.end_ms - 1;
    std::vector<std::optional<std::string>> values = {
        std::string(kChannels[rng() % 5]), RandomString(rng, 40), RandomString(rng, 8),
        std::nullopt};
    if (rng() % 3 == 0) values[2] = std::nullopt;  // missing user
    if (rng() % 4 == 0) values[3] = rng() % 2 ? "minor" : "";
    if (schema.discover_dimensions()) {
      const char* names[] = {"channel", "page", "user", "flags"};
      for (size_t d = 0; d < 4; ++d) {
        if (values[d].has_value()) row.discovered.emplace_back(names[d], *values[d]);
      }
      if (rng() % 10 == 0) row.discovered.emplace_back(absl::StrCat("extra", rng() % 3), "x");
    } else {
      row.dims = values;
    }
    row.metrics.resize(schema.metrics.size());
    const bool has_added = rng() % 10 != 0;
    const bool has_delta = rng() % 10 != 0;
    const int64_t added = RandomLong(rng);
    const double delta = RandomDouble(rng);
    for (size_t m = 0; m < schema.metrics.size(); ++m) {
      const MetricSpec& spec = schema.metrics[m];
      MetricInput& in = row.metrics[m];
      if (spec.field == "added" && has_added) {
        in.present = true;
        in.long_value = added;
      } else if (spec.field == "delta" && has_delta) {
        in.present = true;
        in.double_value = delta;
      }
    }
    row.partition = static_cast<int32_t>(rng() % partitions);
    row.offset = next_offset[row.partition]++;
    rows.push_back(std::move(row));
  }
  return rows;
}

InputRow ToInputRow(const OwnedRow& row, const Schema& schema) {
  InputRow in;
  in.timestamp_ms = row.time;
  for (const auto& v : row.dims) {
    DimValue d;
    d.present = v.has_value();
    if (d.present) d.text = *v;
    in.dims.push_back(d);
  }
  for (const auto& [name, value] : row.discovered) in.discovered.emplace_back(name, value);
  in.metrics = row.metrics;
  (void)schema;
  return in;
}

std::string ToString(const OutputRow& row) {
  std::string s = absl::StrCat("t=", row.time);
  for (const auto& [k, v] : row.dims) absl::StrAppend(&s, " ", k, "=\"", v, "\"");
  for (uint64_t m : row.metrics) absl::StrAppend(&s, " ", m);
  return s;
}

std::vector<OutputRow> ReferenceRows(const std::vector<OwnedRow>& rows, const Schema& schema) {
  // The key: time, then each output dimension's value (null before any string).
  std::vector<std::string> dims = schema.dimensions;
  if (schema.discover_dimensions()) {
    for (const OwnedRow& r : rows) {
      for (const auto& [name, value] : r.discovered) dims.push_back(name);
    }
    std::sort(dims.begin(), dims.end());
    dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
  }
  using Key = std::tuple<int64_t, std::vector<std::optional<std::string>>, int32_t, int64_t>;
  struct Acc {
    std::vector<uint64_t> values;
    std::vector<ExactSum> sums;
  };
  std::map<Key, Acc> groups;
  for (const OwnedRow& r : rows) {
    std::vector<std::optional<std::string>> values(dims.size());
    for (size_t d = 0; d < dims.size(); ++d) {
      if (!schema.discover_dimensions()) {
        const size_t i = std::find(schema.dimensions.begin(), schema.dimensions.end(), dims[d]) -
                         schema.dimensions.begin();
        values[d] = r.dims[i];
      } else {
        for (const auto& [name, value] : r.discovered) {
          if (name == dims[d]) values[d] = value;
        }
      }
    }
    Key key{schema.query_granularity.Truncate(r.time), values,
            schema.rollup ? 0 : r.partition, schema.rollup ? 0 : r.offset};
    auto [it, inserted] = groups.try_emplace(key);
    Acc& acc = it->second;
    if (inserted) {
      acc.values.assign(schema.metrics.size(), 0);
      acc.sums.resize(schema.metrics.size());
    }
    for (size_t m = 0; m < schema.metrics.size(); ++m) {
      const MetricInput& in = r.metrics[m];
      uint64_t& v = acc.values[m];
      switch (schema.metrics[m].type) {
        case MetricType::kCount: v += 1; break;
        case MetricType::kLongSum: v += in.present ? static_cast<uint64_t>(in.long_value) : 0; break;
        case MetricType::kLongMin: {
          const int64_t x = in.present ? in.long_value : INT64_MAX;
          if (inserted || x < static_cast<int64_t>(v)) v = static_cast<uint64_t>(x);
          break;
        }
        case MetricType::kLongMax: {
          const int64_t x = in.present ? in.long_value : INT64_MIN;
          if (inserted || x > static_cast<int64_t>(v)) v = static_cast<uint64_t>(x);
          break;
        }
        case MetricType::kDoubleSum:
          acc.sums[m].Add(in.present ? in.double_value : 0.0);
          break;
        case MetricType::kDoubleMin: {
          const double x = in.present ? in.double_value : std::numeric_limits<double>::infinity();
          if (inserted || TotalOrderKey(x) < TotalOrderKey(FromBits(v))) v = Bits(x);
          break;
        }
        case MetricType::kDoubleMax: {
          const double x = in.present ? in.double_value : -std::numeric_limits<double>::infinity();
          if (inserted || TotalOrderKey(x) > TotalOrderKey(FromBits(v))) v = Bits(x);
          break;
        }
      }
    }
  }
  std::vector<OutputRow> out;
  for (auto& [key, acc] : groups) {
    OutputRow row;
    row.time = std::get<0>(key);
    for (size_t d = 0; d < dims.size(); ++d) {
      if (std::get<1>(key)[d].has_value()) row.dims.emplace_back(dims[d], *std::get<1>(key)[d]);
    }
    std::sort(row.dims.begin(), row.dims.end());
    for (size_t m = 0; m < schema.metrics.size(); ++m) {
      if (schema.metrics[m].type == MetricType::kDoubleSum) {
        row.metrics.push_back(Bits(acc.sums[m].Round()));
      } else {
        row.metrics.push_back(acc.values[m]);
      }
    }
    out.push_back(std::move(row));
  }
  return out;
}

std::vector<OutputRow> ReadRows(SegmentReader* reader) {
  std::vector<OutputRow> out;
  RowCursor cursor(reader);
  const FileHeader& h = reader->header();
  while (true) {
    absl::StatusOr<bool> more = cursor.Next();
    if (!more.ok() || !*more) break;
    OutputRow row;
    row.time = cursor.time();
    for (size_t d = 0; d < h.dimensions.size(); ++d) {
      std::optional<absl::string_view> v = cursor.dimension(d);
      if (v.has_value()) row.dims.emplace_back(h.dimensions[d], std::string(*v));
    }
    std::sort(row.dims.begin(), row.dims.end());
    for (size_t m = 0; m < h.schema.metrics.size(); ++m) {
      if (IsLongMetric(h.schema.metrics[m].type)) {
        row.metrics.push_back(static_cast<uint64_t>(cursor.long_metric(m)));
      } else {
        row.metrics.push_back(Bits(cursor.double_metric(m)));
      }
    }
    out.push_back(std::move(row));
  }
  return out;
}

std::vector<OwnedRow> Interleave(const std::vector<OwnedRow>& rows, uint64_t seed) {
  std::map<int32_t, std::vector<const OwnedRow*>> by_partition;
  for (const OwnedRow& r : rows) by_partition[r.partition].push_back(&r);
  for (auto& [p, list] : by_partition) {
    std::sort(list.begin(), list.end(),
              [](const OwnedRow* a, const OwnedRow* b) { return a->offset < b->offset; });
  }
  std::vector<std::pair<const std::vector<const OwnedRow*>*, size_t>> cursors;
  for (auto& [p, list] : by_partition) cursors.emplace_back(&list, 0);
  std::mt19937_64 rng(seed);
  std::vector<OwnedRow> out;
  while (!cursors.empty()) {
    const size_t c = rng() % cursors.size();
    // Take a burst, like a fetch of one partition.
    const size_t burst = 1 + rng() % 20;
    for (size_t i = 0; i < burst && cursors[c].second < cursors[c].first->size(); ++i) {
      out.push_back(*(*cursors[c].first)[cursors[c].second++]);
    }
    if (cursors[c].second == cursors[c].first->size()) cursors.erase(cursors.begin() + c);
  }
  return out;
}

absl::StatusOr<SegmentInfo> BuildTestSegment(const std::vector<OwnedRow>& rows,
                                             const Schema& schema, const TestSegment& segment) {
  absl::StatusOr<std::unique_ptr<IncrementalIndex>> index =
      IncrementalIndex::Create({schema, TestInterval()});
  if (!index.ok()) return index.status();
  for (const OwnedRow& row : rows) {
    absl::Status added = (*index)->Add(ToInputRow(row, schema), row.partition, row.offset);
    if (!added.ok()) return added;
  }
  BuildOptions build;
  build.path = segment.path;
  build.schema = schema;
  build.metadata.datasource = segment.datasource;
  build.metadata.interval = TestInterval();
  build.metadata.version = segment.version;
  build.metadata.partition_num = segment.partition_num;
  build.metadata.segment_id = segment.segment_id;
  build.metadata.provenance.topic = "edits";
  build.metadata.provenance.ranges = segment.ranges;
  build.live_index = index->get();
  return BuildSegment(build);
}

}  // namespace testing
}  // namespace segment
}  // namespace sluice
