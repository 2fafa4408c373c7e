#include "common/segment/merger.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <map>
#include <string>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "common/segment/format_limits.h"

namespace sluice {
namespace segment {
namespace {

bool SameMetrics(const Schema& a, const Schema& b) {
  if (a.metrics.size() != b.metrics.size()) return false;
  for (size_t m = 0; m < a.metrics.size(); ++m) {
    if (a.metrics[m].type != b.metrics[m].type || a.metrics[m].name != b.metrics[m].name ||
        a.metrics[m].field != b.metrics[m].field) {
      return false;
    }
  }
  return true;
}

absl::Status CheckCompatible(const SortedRun& run, const Schema& schema, const Interval& interval) {
  const Schema& s = run.schema();
  if (s.rollup != schema.rollup || s.query_granularity != schema.query_granularity ||
      s.timestamp_column != schema.timestamp_column ||
      s.timestamp_format != schema.timestamp_format || s.dimensions != schema.dimensions ||
      s.dimension_exclusions != schema.dimension_exclusions || !SameMetrics(s, schema)) {
    return absl::FailedPreconditionError(
        absl::StrCat(run.Describe(), " was built with a different schema"));
  }
  const Interval i = run.interval();
  if (i.start_ms != interval.start_ms || i.end_ms != interval.end_ms) {
    return absl::FailedPreconditionError(absl::StrCat(
        run.Describe(), " covers [", i.start_ms, ", ", i.end_ms, "), not [", interval.start_ms,
        ", ", interval.end_ms, ")"));
  }
  if (!schema.discover_dimensions() && run.dimensions() != schema.dimensions) {
    return absl::FailedPreconditionError(
        absl::StrCat(run.Describe(), " has other dimension columns than the schema"));
  }
  return absl::OkStatus();
}

// Combines the metric cells of rows with equal keys (rollup on).
class Combiner {
 public:
  explicit Combiner(const Schema& schema) : schema_(schema) {
    const size_t n = schema.metrics.size();
    cells_.resize(n);
    sums_.resize(n);
    exact_.resize(n);
  }

  void Start(const MetricCell* cells) {
    for (size_t m = 0; m < cells_.size(); ++m) {
      cells_[m].bits = cells[m].bits;
      exact_[m] = cells[m].exact != nullptr;
      if (exact_[m]) sums_[m] = *cells[m].exact;
    }
  }

  void Merge(const MetricCell* cells) {
    for (size_t m = 0; m < cells_.size(); ++m) {
      uint64_t& x = cells_[m].bits;
      const uint64_t y = cells[m].bits;
      switch (schema_.metrics[m].type) {
        case MetricType::kCount:
        case MetricType::kLongSum:
          x += y;
          break;
        case MetricType::kLongMin:
          if (static_cast<int64_t>(y) < static_cast<int64_t>(x)) x = y;
          break;
        case MetricType::kLongMax:
          if (static_cast<int64_t>(y) > static_cast<int64_t>(x)) x = y;
          break;
        case MetricType::kDoubleMin:
          if (TotalOrderKey(AsDouble(y)) < TotalOrderKey(AsDouble(x))) x = y;
          break;
        case MetricType::kDoubleMax:
          if (TotalOrderKey(AsDouble(y)) > TotalOrderKey(AsDouble(x))) x = y;
          break;
        case MetricType::kDoubleSum:
          if (!exact_[m]) {
            sums_[m] = ExactSum(AsDouble(x));
            exact_[m] = true;
          }
          if (cells[m].exact != nullptr) {
            sums_[m].Add(*cells[m].exact);
          } else {
            sums_[m].Add(AsDouble(y));
          }
          break;
      }
    }
  }

  const MetricCell* Finish() {
    for (size_t m = 0; m < cells_.size(); ++m) cells_[m].exact = exact_[m] ? &sums_[m] : nullptr;
    return cells_.data();
  }

 private:
  static double AsDouble(uint64_t bits) {
    double d;
    std::memcpy(&d, &bits, sizeof(d));
    return d;
  }
  const Schema& schema_;
  std::vector<MetricCell> cells_;
  std::vector<ExactSum> sums_;
  std::vector<bool> exact_;
};

// The current row of each run with ids translated to the output dictionaries.
struct Head {
  int64_t time = 0;
  std::vector<uint32_t> ids;
  int32_t partition = 0;
  int64_t offset = 0;
};

// Moves heap[i] down a binary min-heap of indexes ordered by `less` until
// neither child sorts before it.
template <typename Less>
void SiftDown(std::vector<size_t>* heap, size_t i, const Less& less) {
  std::vector<size_t>& h = *heap;
  const size_t n = h.size();
  while (true) {
    size_t smallest = i;
    const size_t l = 2 * i + 1, r = l + 1;
    if (l < n && less(h[l], h[smallest])) smallest = l;
    if (r < n && less(h[r], h[smallest])) smallest = r;
    if (smallest == i) return;
    std::swap(h[i], h[smallest]);
    i = smallest;
  }
}

// Merges dimension `d`'s dictionaries of the runs that have it (k-way, over
// a heap of the runs' next values) into `*bytes` and `*values` (views into
// it; into the run's own dictionary for a single run that keeps it), and
// fills those runs' local id -> output id maps in `*remap`.
absl::Status MergeDictionaries(const std::vector<SortedRun*>& runs,
                               const std::vector<std::vector<size_t>>& position, size_t d,
                               std::string* bytes, std::vector<absl::string_view>* values,
                               std::vector<std::vector<std::vector<uint32_t>>>* remap) {
  struct Input {
    size_t run;
    size_t local;  // the dimension's index in the run
    const std::vector<absl::string_view>* dict;
    size_t next = 0;
  };
  std::vector<Input> inputs;
  for (size_t r = 0; r < runs.size(); ++r) {
    for (size_t l = 0; l < position[r].size(); ++l) {
      if (position[r][l] != d) continue;
      if (absl::Status s = runs[r]->LoadDictionary(l); !s.ok()) return s;
      inputs.push_back({r, l, &runs[r]->dictionary(l)});
      (*remap)[r][l].assign(inputs.back().dict->size() + 1, 0);
    }
  }
  bytes->clear();
  if (inputs.size() == 1 && runs[inputs[0].run]->keeps_dictionaries()) {
    // One run that keeps its dictionary while the merge runs (an index's
    // persist or direct build): its values as they are, not copied.
    Input& in = inputs[0];
    std::vector<uint32_t>& map = (*remap)[in.run][in.local];
    for (size_t i = 0; i < in.dict->size(); ++i) map[i + 1] = static_cast<uint32_t>(i + 1);
    *values = *in.dict;
    return absl::OkStatus();
  }
  std::vector<size_t> ends;  // end of each output value in *bytes
  // At most every input value once: room for all of them up front, so the
  // appends below never move the bytes (the copies of a growing string
  // were a tenth of the merge of a segment's dictionaries).
  {
    size_t values_in = 0, bytes_in = 0;
    for (const Input& in : inputs) {
      values_in += in.dict->size();
      for (absl::string_view v : *in.dict) bytes_in += v.size();
    }
    bytes->reserve(bytes_in);
    ends.reserve(values_in);
  }
  if (inputs.size() == 1) {  // one run (a persist): its values as they are
    Input& in = inputs[0];
    std::vector<uint32_t>& map = (*remap)[in.run][in.local];
    for (size_t i = 0; i < in.dict->size(); ++i) {
      bytes->append((*in.dict)[i].data(), (*in.dict)[i].size());
      ends.push_back(bytes->size());
      map[i + 1] = static_cast<uint32_t>(i + 1);
    }
  } else {
    // A min-heap of inputs by their next value; the top is replaced in place
    // and sifted down (one pass per value instead of a pop and a push).
    auto value = [&](size_t i) { return (*inputs[i].dict)[inputs[i].next]; };
    auto less = [&](size_t a, size_t b) {
      const int c = value(a).compare(value(b));
      return c != 0 ? c < 0 : a < b;
    };
    std::vector<size_t> heap;
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!inputs[i].dict->empty()) heap.push_back(i);
    }
    auto sift_down = [&](size_t i) { SiftDown(&heap, i, less); };
    for (size_t i = heap.size() / 2; i-- > 0;) sift_down(i);
    size_t last_begin = 0;  // start of the last output value
    while (!heap.empty()) {
      Input& in = inputs[heap[0]];
      const absl::string_view v = (*in.dict)[in.next];
      if (ends.empty() || absl::string_view(*bytes).substr(last_begin) != v) {
        last_begin = bytes->size();
        bytes->append(v.data(), v.size());
        ends.push_back(bytes->size());
      }
      (*remap)[in.run][in.local][in.next + 1] = static_cast<uint32_t>(ends.size());
      if (++in.next == in.dict->size()) {
        heap[0] = heap.back();
        heap.pop_back();
      }
      if (!heap.empty()) sift_down(0);
    }
  }
  for (const Input& in : inputs) runs[in.run]->ReleaseDictionary(in.local);
  bytes->shrink_to_fit();
  values->resize(ends.size());
  for (size_t i = 0; i < ends.size(); ++i) {
    const size_t begin = i == 0 ? 0 : ends[i - 1];
    (*values)[i] = absl::string_view(bytes->data() + begin, ends[i] - begin);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<WrittenFile> MergeRuns(const std::vector<SortedRun*>& runs, MergeOptions options) {
  FileHeader& header = options.header;
  const Schema& schema = header.schema;
  const Interval interval = header.metadata.interval;
  uint64_t input_records = 0;
  for (SortedRun* run : runs) {
    if (absl::Status s = CheckCompatible(*run, schema, interval); !s.ok()) return s;
    input_records += run->input_records();
  }
  if (input_records == 0) return absl::FailedPreconditionError("no rows to merge");

  // Output dimensions: the schema's, or every discovered one by name.
  std::vector<std::string> dims = schema.dimensions;
  if (schema.discover_dimensions()) {
    for (SortedRun* run : runs) dims.insert(dims.end(), run->dimensions().begin(), run->dimensions().end());
    std::sort(dims.begin(), dims.end());
    dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
  }
  const size_t num_dims = dims.size();
  // The format's limit, before any dictionary is merged: a file past it can
  // never be written, so building again cannot help.
  if (num_dims > kMaxDimensions) {
    return absl::FailedPreconditionError(
        absl::StrCat("the runs hold ", num_dims, " distinct dimensions together, beyond the "
                     "format's limit of ", kMaxDimensions, ": this segment cannot be built"));
  }
  // position[r][d]: output position of dimension d of run r.
  std::map<absl::string_view, size_t> dim_position;
  for (size_t d = 0; d < num_dims; ++d) dim_position[dims[d]] = d;
  std::vector<std::vector<size_t>> position(runs.size());
  for (size_t r = 0; r < runs.size(); ++r) {
    for (const std::string& name : runs[r]->dimensions()) {
      position[r].push_back(dim_position.at(name));
    }
  }
  // Output dictionaries (the sorted union of the runs' sorted dictionaries)
  // and, per run dimension, local id -> output id. One dimension at a time:
  // runs in files hold only that dimension's dictionary meanwhile, and the
  // union is copied out so that theirs can go.
  std::vector<std::string> dictionary_bytes(num_dims);
  std::vector<std::vector<absl::string_view>> dictionaries(num_dims);
  std::vector<std::vector<std::vector<uint32_t>>> remap(runs.size());
  for (size_t r = 0; r < runs.size(); ++r) remap[r].resize(position[r].size());
  for (size_t d = 0; d < num_dims; ++d) {
    if (absl::Status s = MergeDictionaries(runs, position, d, &dictionary_bytes[d],
                                           &dictionaries[d], &remap);
        !s.ok()) {
      return s;
    }
  }

  // Partition statistics; overlapping offset ranges mean the same records twice.
  std::map<int32_t, std::vector<PartitionStats>> by_partition;
  for (SortedRun* run : runs) {
    for (const PartitionStats& p : run->partitions()) by_partition[p.partition].push_back(p);
  }
  header.partitions.clear();
  for (auto& [partition, list] : by_partition) {
    std::sort(list.begin(), list.end(), [](const PartitionStats& a, const PartitionStats& b) {
      return a.min_offset < b.min_offset;
    });
    PartitionStats total = list[0];
    for (size_t i = 1; i < list.size(); ++i) {
      if (list[i].min_offset <= list[i - 1].max_offset) {
        return absl::FailedPreconditionError(absl::StrCat(
            "two runs hold records of partition ", partition, " in overlapping offset ranges [",
            list[i - 1].min_offset, ", ", list[i - 1].max_offset, "] and [", list[i].min_offset,
            ", ", list[i].max_offset, "]"));
      }
      total.records += list[i].records;
      total.max_offset = list[i].max_offset;
    }
    header.partitions.push_back(total);
  }
  if (header.kind == FileKind::kSegment) {
    // Ranges sorted by (partition, start, end). A partition has one range (a
    // sequence's) or, in a compacted segment, several disjoint ones, each
    // with the rows the caller says it holds (the files compacted say so).
    // An empty range (a sequence that read nothing of the partition) sorts
    // before the range starting where it is, so the two are no overlap.
    std::vector<PartitionRange>& ranges = header.metadata.provenance.ranges;
    std::sort(ranges.begin(), ranges.end(), [](const PartitionRange& a, const PartitionRange& b) {
      return std::make_tuple(a.partition, a.start_offset, a.end_offset) <
             std::make_tuple(b.partition, b.start_offset, b.end_offset);
    });
    for (size_t i = 0; i < ranges.size(); ++i) {
      if (ranges[i].start_offset > ranges[i].end_offset) {
        return absl::InvalidArgumentError(
            absl::StrCat("provenance range of partition ", ranges[i].partition, " is reversed"));
      }
      if (i > 0 && ranges[i].partition == ranges[i - 1].partition &&
          ranges[i].start_offset < ranges[i - 1].end_offset) {
        return absl::InvalidArgumentError(absl::StrCat(
            "provenance ranges [", ranges[i - 1].start_offset, ", ", ranges[i - 1].end_offset,
            ") and [", ranges[i].start_offset, ", ", ranges[i].end_offset, ") of partition ",
            ranges[i].partition, " overlap"));
      }
    }
    for (size_t i = 0; i < ranges.size();) {
      size_t j = i;
      while (j < ranges.size() && ranges[j].partition == ranges[i].partition) ++j;
      auto stats = std::find_if(header.partitions.begin(), header.partitions.end(),
                                [&](const PartitionStats& p) { return p.partition == ranges[i].partition; });
      const int64_t records = stats == header.partitions.end() ? 0 : stats->records;
      if (j - i == 1) {
        ranges[i].rows = records;
      } else {
        int64_t claimed = 0;
        for (size_t k = i; k < j; ++k) claimed += ranges[k].rows;
        if (claimed != records) {
          return absl::FailedPreconditionError(absl::StrCat(
              "the provenance ranges of partition ", ranges[i].partition, " claim ", claimed,
              " rows, the runs hold ", records, " records of it"));
        }
      }
      i = j;
    }
    for (const PartitionStats& p : header.partitions) {
      auto first = std::find_if(ranges.begin(), ranges.end(),
                                [&](const PartitionRange& r) { return r.partition == p.partition; });
      auto last = first;
      while (last != ranges.end() && std::next(last) != ranges.end() &&
             std::next(last)->partition == p.partition) {
        ++last;
      }
      if (first == ranges.end() || p.min_offset < first->start_offset ||
          p.max_offset >= last->end_offset) {
        return absl::FailedPreconditionError(absl::StrCat(
            "records of partition ", p.partition, " at offsets ", p.min_offset, "..",
            p.max_offset, " are outside the segment's provenance ranges"));
      }
    }
  }
  header.dimensions = dims;
  header.input_records = input_records;

  absl::StatusOr<std::unique_ptr<SegmentWriter>> writer =
      SegmentWriter::Create(options.path, header, dictionaries, options.zstd_level);
  if (!writer.ok()) return writer.status();
  // The writer has written the dictionaries; only their sizes matter now.
  std::vector<size_t> cardinality(num_dims);
  for (size_t d = 0; d < num_dims; ++d) cardinality[d] = dictionaries[d].size();
  std::vector<std::vector<absl::string_view>>().swap(dictionaries);
  std::vector<std::string>().swap(dictionary_bytes);

  // The k-way merge over a binary heap of run indexes.
  std::vector<Head> heads(runs.size());
  // A run with every output dimension, in order, and the output dictionaries
  // (typically a single run) needs no translation.
  std::vector<bool> identity(runs.size());
  for (size_t r = 0; r < runs.size(); ++r) {
    bool same = position[r].size() == num_dims;
    for (size_t d = 0; same && d < num_dims; ++d) {
      same = position[r][d] == d && remap[r][d].size() == cardinality[d] + 1;
    }
    identity[r] = same;
    heads[r].ids.assign(num_dims, 0);
  }
  // Per run dimension: its output position and local id -> output id map,
  // flat (the nested vectors were three loads per id and row); `covers`:
  // the run has every output dimension, so no id is left null.
  struct Translation {
    size_t position;
    const uint32_t* map;
  };
  std::vector<std::vector<Translation>> translations(runs.size());
  std::vector<bool> covers(runs.size());
  for (size_t r = 0; r < runs.size(); ++r) {
    for (size_t d = 0; d < position[r].size(); ++d) {
      translations[r].push_back({position[r][d], remap[r][d].data()});
    }
    covers[r] = position[r].size() == num_dims;  // positions are distinct
  }
  auto load = [&](size_t r) {
    const RunRow& row = runs[r]->row();
    Head& h = heads[r];
    h.time = row.time;
    if (identity[r]) {
      // No dimensions (discovery found none): no bytes, and no pointer to
      // hand memcpy.
      if (num_dims > 0) std::memcpy(h.ids.data(), row.ids, num_dims * sizeof(uint32_t));
    } else {
      uint32_t* ids = h.ids.data();
      if (!covers[r]) std::fill(h.ids.begin(), h.ids.end(), 0);
      const uint32_t* in = row.ids;
      for (const Translation& t : translations[r]) ids[t.position] = t.map[*in++];
    }
    h.partition = row.partition;
    h.offset = row.offset;
  };
  const bool rollup = schema.rollup;
  // One run in the output's own ids (the direct build of a sequence that
  // never spilled, a persist): its rows are the output rows, in order, with
  // no heap and no copy of each key. With rollup too: a run's keys are
  // distinct already (SortedRun), so there is nothing to combine (and the
  // writer refuses a repeated key).
  if (runs.size() == 1 && identity[0]) {
    SortedRun& run = *runs[0];
    for (;;) {
      absl::StatusOr<bool> more = run.Next();
      if (!more.ok()) return more.status();
      if (!*more) break;
      const RunRow& row = run.row();
      if (absl::Status s =
              (*writer)->AddRow(row.time, row.ids, row.cells, row.partition, row.offset);
          !s.ok()) {
        return s;
      }
    }
    return (*writer)->Finish();
  }
  // <0, 0, >0 as head a sorts before, with, after head b.
  auto compare_keys = [&](const Head& a, const Head& b) -> int {
    if (a.time != b.time) return a.time < b.time ? -1 : 1;
    for (size_t d = 0; d < num_dims; ++d) {
      if (a.ids[d] != b.ids[d]) return a.ids[d] < b.ids[d] ? -1 : 1;
    }
    if (!rollup) {
      if (a.partition != b.partition) return a.partition < b.partition ? -1 : 1;
      if (a.offset != b.offset) return a.offset < b.offset ? -1 : 1;
    }
    return 0;
  };
  auto before = [&](size_t a, size_t b) {
    const int c = compare_keys(heads[a], heads[b]);
    return c != 0 ? c < 0 : a < b;
  };
  std::vector<size_t> heap;
  auto sift_down = [&](size_t i) { SiftDown(&heap, i, before); };
  // Advances the top run and restores the heap.
  auto advance_top = [&]() -> absl::Status {
    const size_t r = heap[0];
    absl::StatusOr<bool> more = runs[r]->Next();
    if (!more.ok()) return more.status();
    if (*more) {
      load(r);
    } else {
      heap[0] = heap.back();
      heap.pop_back();
    }
    if (!heap.empty()) sift_down(0);
    return absl::OkStatus();
  };
  for (size_t r = 0; r < runs.size(); ++r) {
    absl::StatusOr<bool> more = runs[r]->Next();
    if (!more.ok()) return more.status();
    if (*more) {
      load(r);
      heap.push_back(r);
    }
  }
  for (size_t i = heap.size() / 2; i-- > 0;) sift_down(i);

  Combiner combiner(schema);
  Head out;
  while (!heap.empty()) {
    const size_t r = heap[0];
    if (!rollup) {
      const RunRow& row = runs[r]->row();
      if (absl::Status s = (*writer)->AddRow(heads[r].time, heads[r].ids.data(), row.cells,
                                             row.partition, row.offset);
          !s.ok()) {
        return s;
      }
      if (absl::Status s = advance_top(); !s.ok()) return s;
      continue;
    }
    out.time = heads[r].time;
    out.ids = heads[r].ids;
    combiner.Start(runs[r]->row().cells);
    if (absl::Status s = advance_top(); !s.ok()) return s;
    while (!heap.empty() && compare_keys(heads[heap[0]], out) == 0) {
      combiner.Merge(runs[heap[0]]->row().cells);
      if (absl::Status s = advance_top(); !s.ok()) return s;
    }
    if (absl::Status s = (*writer)->AddRow(out.time, out.ids.data(), combiner.Finish(), 0, 0);
        !s.ok()) {
      return s;
    }
  }
  return (*writer)->Finish();
}

}  // namespace segment
}  // namespace sluice
