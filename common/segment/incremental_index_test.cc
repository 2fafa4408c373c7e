#include "common/segment/incremental_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <tuple>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "common/segment/sorted_run.h"

namespace sluice {
namespace segment {
namespace {

constexpr int64_t kHour = 3600000;
const Interval kInterval{1796004000000, 1796004000000 + kHour};

Schema TwoDims(bool rollup) {
  Schema s;
  s.dimensions = {"a", "b"};
  s.metrics = {{MetricType::kCount, "n", ""},
               {MetricType::kLongSum, "sum", "x"},
               {MetricType::kDoubleSum, "dsum", "y"},
               {MetricType::kDoubleMin, "dmin", "y"},
               {MetricType::kLongMax, "lmax", "x"}};
  s.query_granularity = Granularity(Granularity::Unit::kMinute);
  s.rollup = rollup;
  return s;
}

InputRow Row(int64_t t, const char* a, const char* b, int64_t x, double y) {
  InputRow row;
  row.timestamp_ms = t;
  for (const char* v : {a, b}) {
    DimValue d;
    d.present = v != nullptr;
    if (v != nullptr) d.text = v;
    row.dims.push_back(d);
  }
  row.metrics.resize(5);
  for (int m : {1, 4}) {
    row.metrics[m].present = true;
    row.metrics[m].long_value = x;
  }
  for (int m : {2, 3}) {
    row.metrics[m].present = true;
    row.metrics[m].double_value = y;
  }
  return row;
}

struct Snap {
  int64_t time;
  std::vector<std::string> dims;  // "<null>" for null
  std::vector<uint64_t> cells;
  int32_t partition;
  int64_t offset;
};

double D(uint64_t bits) {
  double d;
  std::memcpy(&d, &bits, 8);
  return d;
}

std::vector<Snap> Drain(const IncrementalIndex& index) {
  std::unique_ptr<SortedRun> run = index.Snapshot();
  std::vector<Snap> out;
  while (true) {
    auto more = run->Next();
    EXPECT_TRUE(more.ok());
    if (!*more) break;
    const RunRow& r = run->row();
    Snap s{r.time, {}, {}, r.partition, r.offset};
    for (size_t d = 0; d < run->dimensions().size(); ++d) {
      s.dims.push_back(r.ids[d] == 0 ? "<null>" : std::string(run->dictionary(d)[r.ids[d] - 1]));
    }
    for (size_t m = 0; m < index.schema().metrics.size(); ++m) {
      uint64_t bits = r.cells[m].bits;
      if (r.cells[m].exact != nullptr) {
        const double v = r.cells[m].exact->Round();
        std::memcpy(&bits, &v, 8);
      }
      s.cells.push_back(bits);
    }
    out.push_back(s);
  }
  return out;
}

TEST(IncrementalIndex, RollsUpEqualKeysAfterTruncation) {
  auto index = IncrementalIndex::Create({TwoDims(true), kInterval});
  ASSERT_TRUE(index.ok());
  const int64_t t0 = kInterval.start_ms;
  ASSERT_TRUE((*index)->Add(Row(t0 + 1000, "x", "y", 5, 0.1), 0, 10).ok());
  ASSERT_TRUE((*index)->Add(Row(t0 + 59999, "x", "y", 7, 0.2), 1, 3).ok());   // same minute
  ASSERT_TRUE((*index)->Add(Row(t0 + 60000, "x", "y", 1, 1.0), 0, 11).ok());  // next minute
  ASSERT_TRUE((*index)->Add(Row(t0 + 2000, "x", nullptr, 1, 1.0), 0, 12).ok());
  ASSERT_TRUE((*index)->Add(Row(t0 + 3000, "x", "", 1, -0.5), 0, 13).ok());
  EXPECT_EQ((*index)->rows(), 4);
  EXPECT_EQ((*index)->input_records(), 5);
  const std::vector<Snap> rows = Drain(**index);
  ASSERT_EQ(rows.size(), 4u);
  // Sorted by time, then values with null first, then "" before "y".
  EXPECT_EQ(rows[0].time, t0);
  EXPECT_EQ(rows[0].dims, (std::vector<std::string>{"x", "<null>"}));
  EXPECT_EQ(rows[1].dims, (std::vector<std::string>{"x", ""}));
  EXPECT_EQ(rows[2].dims, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(rows[2].cells[0], 2u);                 // count
  EXPECT_EQ(rows[2].cells[1], 12u);                // longSum
  EXPECT_EQ(D(rows[2].cells[2]), 0.1 + 0.2);       // exact sum, rounded once
  EXPECT_EQ(D(rows[2].cells[3]), 0.1);             // doubleMin
  EXPECT_EQ(rows[2].cells[4], 7u);                 // longMax
  EXPECT_EQ(rows[3].time, t0 + 60000);
  const std::vector<PartitionStats> stats = (*index)->partition_stats();
  ASSERT_EQ(stats.size(), 2u);
  EXPECT_EQ(stats[0].partition, 0);
  EXPECT_EQ(stats[0].records, 4);
  EXPECT_EQ(stats[0].min_offset, 10);
  EXPECT_EQ(stats[0].max_offset, 13);
  EXPECT_EQ(stats[1].records, 1);
}

// Partitions arriving interleaved and out of order: counted each on its
// own, listed by partition.
TEST(IncrementalIndex, PartitionStatsInAnyArrivalOrder) {
  auto index = IncrementalIndex::Create({TwoDims(false), kInterval});
  ASSERT_TRUE(index.ok());
  const int64_t t0 = kInterval.start_ms;
  const std::pair<int32_t, int64_t> adds[] = {{5, 40}, {5, 41}, {2, 7},  {9, 0},
                                              {2, 3},  {5, 39}, {0, 12}, {9, 1}};
  for (const auto& [partition, offset] : adds) {
    ASSERT_TRUE((*index)->Add(Row(t0, "x", "y", 1, 1), partition, offset).ok());
  }
  const std::vector<PartitionStats> stats = (*index)->partition_stats();
  ASSERT_EQ(stats.size(), 4u);
  const int32_t partitions[] = {0, 2, 5, 9};
  const int64_t records[] = {1, 2, 3, 2}, min[] = {12, 3, 39, 0}, max[] = {12, 7, 41, 1};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(stats[i].partition, partitions[i]);
    EXPECT_EQ(stats[i].records, records[i]);
    EXPECT_EQ(stats[i].min_offset, min[i]);
    EXPECT_EQ(stats[i].max_offset, max[i]);
  }
  (*index)->Clear();
  EXPECT_TRUE((*index)->partition_stats().empty());
  ASSERT_TRUE((*index)->Add(Row(t0, "x", "y", 1, 1), 3, 5).ok());
  ASSERT_EQ((*index)->partition_stats().size(), 1u);
  EXPECT_EQ((*index)->partition_stats()[0].partition, 3);
  EXPECT_EQ((*index)->partition_stats()[0].records, 1);
}

TEST(IncrementalIndex, WithoutRollupKeepsEveryRowOrderedByPartitionAndOffset) {
  auto index = IncrementalIndex::Create({TwoDims(false), kInterval});
  ASSERT_TRUE(index.ok());
  const int64_t t0 = kInterval.start_ms;
  ASSERT_TRUE((*index)->Add(Row(t0 + 5, "x", "y", 1, 1), 2, 7).ok());
  ASSERT_TRUE((*index)->Add(Row(t0 + 9, "x", "y", 2, 2), 0, 8).ok());
  ASSERT_TRUE((*index)->Add(Row(t0 + 1, "x", "y", 3, 3), 2, 6).ok());
  EXPECT_EQ((*index)->rows(), 3);
  const std::vector<Snap> rows = Drain(**index);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].partition, 0);
  EXPECT_EQ(rows[0].offset, 8);
  EXPECT_EQ(rows[1].offset, 6);
  EXPECT_EQ(rows[2].offset, 7);
  for (const Snap& r : rows) EXPECT_EQ(r.cells[0], 1u);
}

// Five dimensions of 9,000 values each take 14 bits apiece in the snapshot's
// sort key: 70 bits, so the fifth id starts a second word. Rows come out in
// (time, values, partition, offset) order with their own values.
TEST(IncrementalIndex, SnapshotOrdersIdsPackedOverSeveralKeyWords) {
  Schema schema;
  schema.dimensions = {"a", "b", "c", "d", "e"};
  schema.metrics = {{MetricType::kCount, "n", ""}};
  schema.rollup = false;
  auto index = IncrementalIndex::Create({schema, kInterval});
  ASSERT_TRUE(index.ok());
  constexpr int kRows = 9000;
  using Key = std::tuple<int64_t, std::vector<std::string>, int32_t, int64_t>;
  std::vector<Key> expected;
  for (int i = 0; i < kRows; ++i) {
    InputRow row;
    row.timestamp_ms = kInterval.start_ms + (i % 3) * 1000;
    std::vector<std::string> values;
    for (int d = 0; d < 5; ++d) {
      // Many values per dimension; e's depend on the row only through
      // i / 2, so rows tie on it in pairs.
      const int v = d < 4 ? (i * (7919 + 2 * d)) % kRows : (i / 2) * 2 % kRows;
      char text[16];
      std::snprintf(text, sizeof(text), "v%05d", v);
      values.push_back(text);
    }
    for (const std::string& v : values) {  // the row holds views of them
      DimValue dim;
      dim.present = true;
      dim.text = v;
      row.dims.push_back(dim);
    }
    row.metrics.resize(1);
    const int32_t partition = i % 2;
    ASSERT_TRUE((*index)->Add(row, partition, i).ok());
    expected.emplace_back(row.timestamp_ms, values, partition, i);
  }
  std::sort(expected.begin(), expected.end());
  const std::vector<Snap> rows = Drain(**index);
  ASSERT_EQ(rows.size(), expected.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const Key got{rows[i].time, rows[i].dims, rows[i].partition, rows[i].offset};
    ASSERT_EQ(got, expected[i]) << "row " << i;
  }
}

TEST(IncrementalIndex, MetricEdgeCases) {
  auto index = IncrementalIndex::Create({TwoDims(true), kInterval});
  ASSERT_TRUE(index.ok());
  const int64_t t = kInterval.start_ms;
  // longSum wraps around; doubleMin orders -0.0 below +0.0.
  ASSERT_TRUE((*index)->Add(Row(t, "a", "b", std::numeric_limits<int64_t>::max(), 0.0), 0, 1).ok());
  ASSERT_TRUE((*index)->Add(Row(t, "a", "b", 2, -0.0), 0, 2).ok());
  InputRow absent = Row(t, "a", "b", 0, 0);
  for (MetricInput& m : absent.metrics) m.present = false;
  ASSERT_TRUE((*index)->Add(absent, 0, 3).ok());
  const std::vector<Snap> rows = Drain(**index);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].cells[0], 3u);
  EXPECT_EQ(static_cast<int64_t>(rows[0].cells[1]), std::numeric_limits<int64_t>::min() + 1);
  EXPECT_TRUE(std::signbit(D(rows[0].cells[3])));  // -0.0
  EXPECT_EQ(static_cast<int64_t>(rows[0].cells[4]), std::numeric_limits<int64_t>::max());
}

// Without rollup too, a row stores each metric's input, or for an absent
// one the metric's identity (count: 1).
TEST(IncrementalIndex, EveryMetricTypeStoresItsInputOrItsIdentity) {
  Schema s;
  s.dimensions = {"a"};
  s.metrics = {{MetricType::kCount, "n", ""},        {MetricType::kLongSum, "ls", "x"},
               {MetricType::kLongMin, "lmin", "x"},  {MetricType::kLongMax, "lmax", "x"},
               {MetricType::kDoubleSum, "ds", "y"},  {MetricType::kDoubleMin, "dmin", "y"},
               {MetricType::kDoubleMax, "dmax", "y"}};
  s.query_granularity = Granularity(Granularity::Unit::kMinute);
  s.rollup = false;
  auto index = IncrementalIndex::Create({s, kInterval});
  ASSERT_TRUE(index.ok());
  InputRow row;
  row.timestamp_ms = kInterval.start_ms;
  row.dims.resize(1);
  row.metrics.resize(7);
  ASSERT_TRUE((*index)->Add(row, 0, 1).ok());  // every input absent
  for (int m : {0, 1, 2, 3}) {
    row.metrics[m].present = true;
    row.metrics[m].long_value = -7;
  }
  for (int m : {4, 5, 6}) {
    row.metrics[m].present = true;
    row.metrics[m].double_value = 2.5;
  }
  ASSERT_TRUE((*index)->Add(row, 0, 2).ok());
  const std::vector<Snap> rows = Drain(**index);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].cells[0], 1u);
  EXPECT_EQ(rows[0].cells[1], 0u);
  EXPECT_EQ(static_cast<int64_t>(rows[0].cells[2]), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(static_cast<int64_t>(rows[0].cells[3]), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(D(rows[0].cells[4]), 0.0);
  EXPECT_FALSE(std::signbit(D(rows[0].cells[4])));
  EXPECT_EQ(D(rows[0].cells[5]), std::numeric_limits<double>::infinity());
  EXPECT_EQ(D(rows[0].cells[6]), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(rows[1].cells[0], 1u);  // count reads no input
  for (int m : {1, 2, 3}) EXPECT_EQ(static_cast<int64_t>(rows[1].cells[m]), -7) << m;
  for (int m : {4, 5, 6}) EXPECT_EQ(D(rows[1].cells[m]), 2.5) << m;
}

// Rows whose every dimension is null: their sort keys still have an id
// word (ASan caught the snapshot packing past the keys without one).
TEST(IncrementalIndex, SnapshotOfRowsWhoseEveryDimensionIsNull) {
  for (bool rollup : {false, true}) {
    auto index = IncrementalIndex::Create({TwoDims(rollup), kInterval});
    ASSERT_TRUE(index.ok());
    const int64_t t = kInterval.start_ms;
    ASSERT_TRUE((*index)->Add(Row(t + 60000, nullptr, nullptr, 1, 1.0), 0, 1).ok());
    ASSERT_TRUE((*index)->Add(Row(t, nullptr, nullptr, 2, 2.0), 0, 2).ok());
    const std::vector<Snap> rows = Drain(**index);
    ASSERT_EQ(rows.size(), 2u) << rollup;
    EXPECT_EQ(rows[0].time, t);
    EXPECT_EQ(rows[1].time, t + 60000);
    for (const Snap& row : rows) {
      EXPECT_EQ(row.dims, (std::vector<std::string>{"<null>", "<null>"}));
    }
  }
}

// The hashes PrefetchRow gives (here from another index of the schema, as
// the task's read-ahead may) make Add store exactly the rows it stores
// without them.
TEST(IncrementalIndex, AddWithPrefetchedHashesAddsTheSameRows) {
  for (bool rollup : {false, true}) {
    auto plain = IncrementalIndex::Create({TwoDims(rollup), kInterval});
    auto hashed = IncrementalIndex::Create({TwoDims(rollup), kInterval});
    auto other = IncrementalIndex::Create({TwoDims(rollup), kInterval});
    ASSERT_TRUE(plain.ok() && hashed.ok() && other.ok());
    const int64_t t = kInterval.start_ms;
    const std::vector<InputRow> rows = {
        Row(t, "a", "b", 1, 1.0), Row(t + 1, "a", nullptr, 2, 2.0),
        Row(t + 2, "a-value-longer-than-twenty-three-bytes", "b", 3, 3.0),
        Row(t + 3, nullptr, nullptr, 4, 4.0), Row(t + 4, "a", "b", 5, 5.0),
        Row(t + 70000, "c", "a", 6, 6.0)};
    for (size_t i = 0; i < rows.size(); ++i) {
      ASSERT_TRUE((*plain)->Add(rows[i], 0, static_cast<int64_t>(i)).ok());
      std::vector<uint64_t> hashes(rows[i].dims.size(), 0);
      ASSERT_TRUE((*other)->PrefetchRow(rows[i], hashes.data()));
      ASSERT_TRUE((*hashed)->Add(rows[i], 0, static_cast<int64_t>(i), hashes.data()).ok());
    }
    const std::vector<Snap> a = Drain(**plain);
    const std::vector<Snap> b = Drain(**hashed);
    ASSERT_EQ(a.size(), b.size()) << rollup;
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].time, b[i].time);
      EXPECT_EQ(a[i].dims, b[i].dims);
      EXPECT_EQ(a[i].cells, b[i].cells);
      EXPECT_EQ(a[i].offset, b[i].offset);
    }
    EXPECT_EQ((*plain)->estimated_bytes(), (*hashed)->estimated_bytes());
  }
}

// PrefetchRow does nothing for a row Add would not take with hashes.
TEST(IncrementalIndex, PrefetchRowRefusesOtherShapesAndDiscovery) {
  auto index = IncrementalIndex::Create({TwoDims(false), kInterval});
  ASSERT_TRUE(index.ok());
  InputRow wrong = Row(kInterval.start_ms, "a", "b", 1, 1.0);
  wrong.dims.pop_back();
  uint64_t hashes[2] = {0, 0};
  EXPECT_FALSE((*index)->PrefetchRow(wrong, hashes));
  EXPECT_EQ(hashes[0], 0u);
  Schema discovering = TwoDims(false);
  discovering.dimensions.clear();
  auto discovery = IncrementalIndex::Create({discovering, kInterval});
  ASSERT_TRUE(discovery.ok());
  InputRow row;
  row.timestamp_ms = kInterval.start_ms;
  row.metrics.resize(5);
  row.discovered = {{"a", "x"}};
  EXPECT_FALSE((*discovery)->PrefetchRow(row, hashes));
}

TEST(IncrementalIndex, RefusesRowsItCannotHold) {
  auto index = IncrementalIndex::Create({TwoDims(true), kInterval});
  ASSERT_TRUE(index.ok());
  EXPECT_EQ((*index)->Add(Row(kInterval.end_ms, "a", "b", 1, 1), 0, 1).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*index)->Add(Row(kInterval.start_ms - 1, "a", "b", 1, 1), 0, 1).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*index)->Add(Row(kInterval.start_ms, "a", "b", 1, 1), -1, 1).code(),
            absl::StatusCode::kInvalidArgument);
  InputRow wrong = Row(kInterval.start_ms, "a", "b", 1, 1);
  wrong.dims.pop_back();
  EXPECT_EQ((*index)->Add(wrong, 0, 1).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE((*index)->empty());
  EXPECT_EQ((*index)->rows(), 0);
  EXPECT_FALSE(IncrementalIndex::Create({TwoDims(true), Interval{5, 5}}).ok());
}

TEST(IncrementalIndex, DiscoveredDimensionsComeOutSortedByName) {
  Schema s;
  s.metrics = {{MetricType::kCount, "n", ""}};
  auto index = IncrementalIndex::Create({s, kInterval});
  ASSERT_TRUE(index.ok());
  InputRow row;
  row.timestamp_ms = kInterval.start_ms;
  row.metrics.resize(1);
  row.discovered = {{"zeta", "1"}, {"alpha", "2"}};
  ASSERT_TRUE((*index)->Add(row, 0, 0).ok());
  // Twenty more dimensions force the rows to be laid out again.
  std::vector<std::string> names;
  for (int i = 0; i < 20; ++i) names.push_back("d" + std::to_string(100 + i));
  for (int i = 0; i < 20; ++i) {
    row.discovered = {{names[i], "v"}, {"zeta", "dropped"}, {"zeta", "3"}};
    ASSERT_TRUE((*index)->Add(row, 0, i + 1).ok());
  }
  row.discovered = {{"zeta", "1"}, {"alpha", "2"}};
  ASSERT_TRUE((*index)->Add(row, 0, 100).ok());  // rolls up into the first row
  for (const char* reserved : {"", "__time", "timestamp", "n"}) {
    row.discovered = {{"fresh", "x"}, {reserved, "x"}};
    EXPECT_EQ((*index)->Add(row, 0, 200).code(), absl::StatusCode::kInvalidArgument) << reserved;
  }
  EXPECT_EQ((*index)->rows(), 21);
  std::unique_ptr<SortedRun> run = (*index)->Snapshot();
  ASSERT_EQ(run->dimensions().size(), 22u);
  EXPECT_EQ(run->dimensions().front(), "alpha");
  EXPECT_EQ(run->dimensions().back(), "zeta");
  EXPECT_TRUE(std::is_sorted(run->dimensions().begin(), run->dimensions().end()));
  // A name repeated in a record keeps its last value; the earlier one is not
  // even in the dictionary.
  EXPECT_EQ(run->dictionary(21), (std::vector<absl::string_view>{"1", "3"}));
  const std::vector<Snap> rows = Drain(**index);
  EXPECT_EQ(rows[0].cells[0], 1u);
  int merged = 0;
  for (const Snap& r : rows) merged += r.cells[0] == 2;
  EXPECT_EQ(merged, 1);
}

// A producer cannot push a segment past the format's dimension limit: the
// index refuses a row that would add a discovered dimension beyond 8192
// (OUT_OF_RANGE, nothing added) and goes on taking rows.
TEST(IncrementalIndex, DiscoveredDimensionsAreBoundedPerSegment) {
  Schema s;
  s.metrics = {{MetricType::kCount, "n", ""}};
  auto index = IncrementalIndex::Create({s, kInterval});
  ASSERT_TRUE(index.ok());
  InputRow row;
  row.timestamp_ms = kInterval.start_ms;
  row.metrics.resize(1);
  std::vector<std::string> names;
  for (int i = 0; i < 8192 + 10; ++i) names.push_back("f" + std::to_string(i));
  // 8 rows of 1024 new names each: exactly 8192, each name repeated once.
  for (int r = 0; r < 8; ++r) {
    row.discovered.clear();
    for (int i = 0; i < 1024; ++i) {
      row.discovered.emplace_back(names[r * 1024 + i], "v");
      row.discovered.emplace_back(names[r * 1024 + i], "w");
    }
    ASSERT_TRUE((*index)->Add(row, 0, r).ok()) << r;
  }
  // Known names and one new one: the whole row is refused.
  row.discovered = {{names[0], "x"}, {names[8192], "x"}, {names[8193], "x"}};
  const absl::Status refused = (*index)->Add(row, 0, 8);
  EXPECT_EQ(refused.code(), absl::StatusCode::kOutOfRange) << refused;
  EXPECT_EQ(refused.message(),
            "dimension \"f8192\" would be discovered dimension 8193 of the segment, beyond the "
            "limit of 8192");
  EXPECT_EQ((*index)->rows(), 8);
  // Rows with known names still go in.
  row.discovered = {{names[0], "x"}, {names[8191], "y"}};
  ASSERT_TRUE((*index)->Add(row, 0, 9).ok());
  EXPECT_EQ((*index)->rows(), 9);
  EXPECT_EQ((*index)->Snapshot()->dimensions().size(), 8192u);
}

// Rows arrive in overlapping ascending runs (Kafka fetch batches of several
// partitions); the snapshot merges the runs and must order rows exactly as a
// full sort would: by time, then dimension values, then partition and offset.
TEST(IncrementalIndex, SnapshotOrdersRowsThatArriveInInterleavedRuns) {
  for (int runs : {1, 2, 7, 40, 2000}) {
    auto index = IncrementalIndex::Create({TwoDims(false), kInterval});
    ASSERT_TRUE(index.ok());
    const int per_run = 4000 / runs;
    std::vector<int64_t> times;
    for (int r = 0; r < runs; ++r) {
      for (int k = 0; k < per_run; ++k) {
        // Equal times across runs too, told apart by the dimension value.
        const int64_t t = kInterval.start_ms + (k * runs + r) / 2;
        const std::string a = (r % 2 == 0) ? "even" : "odd";
        ASSERT_TRUE((*index)->Add(Row(t, a.c_str(), "b", k, 1.0), r % 4, k * runs + r).ok());
        times.push_back(t);
      }
    }
    const std::vector<Snap> rows = Drain(**index);
    ASSERT_EQ(rows.size(), times.size()) << runs << " runs";
    for (size_t i = 1; i < rows.size(); ++i) {
      const Snap& x = rows[i - 1];
      const Snap& y = rows[i];
      const auto key = [](const Snap& s) {
        return std::make_tuple(s.time, s.dims[0], s.dims[1], s.partition, s.offset);
      };
      ASSERT_LT(key(x), key(y)) << runs << " runs, row " << i;
    }
  }
}

// Without a query granularity rows are sorted by time alone (a radix sort
// on the time since the earliest row) and rows of equal time by the rest:
// the order must be a full sort's, for shuffled arrivals with many equal
// times, in an interval of an hour and in one of 60 days (times spanning
// more than 32 bits of milliseconds, sorted the other way).
TEST(IncrementalIndex, SnapshotWithoutGranularityOrdersRowsAsAFullSort) {
  for (int64_t length : {kHour, int64_t{60} * 24 * kHour}) {
    Schema schema = TwoDims(false);
    schema.query_granularity = Granularity(Granularity::Unit::kNone);
    const Interval interval{kInterval.start_ms, kInterval.start_ms + length};
    auto index = IncrementalIndex::Create({schema, interval});
    ASSERT_TRUE(index.ok());
    uint64_t state = 7;
    auto next = [&state]() {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      return state >> 33;
    };
    const char* values[] = {"x", "y", "z", nullptr};
    for (int i = 0; i < 6000; ++i) {
      // A few hundred distinct times (many rows share one), or spread over
      // the whole interval.
      const int64_t t = interval.start_ms + (i % 3 == 0 ? static_cast<int64_t>(next() % 300)
                                                        : static_cast<int64_t>(next()) % length);
      ASSERT_TRUE((*index)
                      ->Add(Row(t, values[next() % 4], values[next() % 4], i, 1.0),
                            static_cast<int32_t>(next() % 3), i)
                      .ok());
    }
    const std::vector<Snap> rows = Drain(**index);
    ASSERT_EQ(rows.size(), 6000u);
    const auto key = [](const Snap& s) {
      // Null ("<null>", id 0) sorts before every value.
      return std::make_tuple(s.time, s.dims[0] != "<null>", s.dims[0], s.dims[1] != "<null>",
                             s.dims[1], s.partition, s.offset);
    };
    for (size_t i = 1; i < rows.size(); ++i) {
      ASSERT_LT(key(rows[i - 1]), key(rows[i])) << length << ", row " << i;
    }
  }
}

// Without rollup a row that allocates nothing leaves the count as it was;
// each thing a row allocates (a rows chunk, a partition, a value) shows at
// once.
TEST(IncrementalIndex, EstimatedBytesFollowEachAllocationWithoutRollup) {
  auto index = IncrementalIndex::Create({TwoDims(false), kInterval});
  ASSERT_TRUE(index.ok());
  const int64_t t0 = kInterval.start_ms;
  ASSERT_TRUE((*index)->Add(Row(t0, "a", "b", 1, 1), 0, 0).ok());
  const int64_t one_chunk = (*index)->estimated_bytes();
  for (int i = 1; i < 4096; ++i) {  // 4096 rows to a chunk
    ASSERT_TRUE((*index)->Add(Row(t0 + i, "a", "b", 1, 1), 0, i).ok());
  }
  EXPECT_EQ((*index)->estimated_bytes(), one_chunk);
  ASSERT_TRUE((*index)->Add(Row(t0, "a", "b", 1, 1), 0, 4096).ok());
  const int64_t two_chunks = (*index)->estimated_bytes();
  EXPECT_GE(two_chunks - one_chunk, 4096 * 4 * (2 + 2 + 2 * 5 + 3));  // a chunk of rows
  ASSERT_TRUE((*index)->Add(Row(t0, "a", "b", 1, 1), 1, 0).ok());
  const int64_t two_partitions = (*index)->estimated_bytes();
  EXPECT_GT(two_partitions, two_chunks);
  ASSERT_TRUE((*index)->Add(Row(t0, "a", "c", 1, 1), 1, 1).ok());
  EXPECT_GT((*index)->estimated_bytes(), two_partitions);
}

TEST(IncrementalIndex, EstimatedBytesGrowWithDataAndClearFreesThem) {
  auto index = IncrementalIndex::Create({TwoDims(true), kInterval});
  ASSERT_TRUE(index.ok());
  const int64_t empty = (*index)->estimated_bytes();
  std::vector<std::string> values;
  for (int i = 0; i < 20000; ++i) values.push_back("value-" + std::to_string(i) + std::string(40, 'x'));
  for (int i = 0; i < 20000; ++i) {
    ASSERT_TRUE((*index)->Add(Row(kInterval.start_ms + i, values[i].c_str(), "b", i, i * 0.5), 0, i).ok());
  }
  const int64_t full = (*index)->estimated_bytes();
  // At least the raw strings, the row slots and the dictionary entries (a
  // hash slot of 25 bytes and a 16-byte view per value: counted as values
  // are interned, not summed on each call).
  EXPECT_GT(full - empty, 20000 * (46 + 40 + 25 + 16));
  EXPECT_LT(full, 20000 * 400);  // and not absurdly more
  (*index)->Clear();
  EXPECT_EQ((*index)->rows(), 0);
  EXPECT_LE((*index)->estimated_bytes(), empty);
  ASSERT_TRUE((*index)->Add(Row(kInterval.start_ms, "a", "b", 1, 1), 0, 1).ok());
  EXPECT_EQ(Drain(**index).size(), 1u);
}

}  // namespace
}  // namespace segment
}  // namespace sluice
