#include "common/segment/incremental_index.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>
#include <utility>

#include <xxhash.h>

#include "absl/base/attributes.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "common/segment/string_sort.h"

namespace sluice {
namespace segment {
namespace {

inline void Put64(uint32_t* p, uint64_t v) { std::memcpy(p, &v, 8); }
inline uint64_t Get64(const uint32_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline uint64_t Bits(double d) {
  uint64_t v;
  std::memcpy(&v, &d, 8);
  return v;
}
inline double Double(uint64_t bits) {
  double d;
  std::memcpy(&d, &bits, 8);
  return d;
}

constexpr size_t kInitialDiscoveredCapacity = 8;

// Sorts `v` by `less`, a strict total order. Rows reach an index in
// ascending runs (one per Kafka fetch batch of a partition, times rising
// within it), so the runs are found and merged pairwise: n log(runs)
// comparisons instead of n log(n). Many short runs (an order with no such
// structure) go to std::sort. The result is the same either way.
template <typename Less>
void SortByRuns(std::vector<uint32_t>* v, Less less) {
  const size_t n = v->size();
  std::vector<size_t> bounds = {0};  // run r is [bounds[r], bounds[r + 1])
  for (size_t i = 1; i < n; ++i) {
    if (less((*v)[i], (*v)[i - 1])) bounds.push_back(i);
  }
  bounds.push_back(n);
  if (bounds.size() <= 2) return;  // one run: sorted already
  if (bounds.size() - 1 > n / 64) {
    std::sort(v->begin(), v->end(), less);
    return;
  }
  std::vector<uint32_t> buffer(n);
  std::vector<uint32_t>* from = v;
  std::vector<uint32_t>* to = &buffer;
  while (bounds.size() > 2) {
    std::vector<size_t> merged = {0};
    for (size_t r = 0; r + 1 < bounds.size(); r += 2) {
      const size_t begin = bounds[r], middle = bounds[r + 1];
      const size_t end = r + 2 < bounds.size() ? bounds[r + 2] : middle;
      std::merge(from->begin() + begin, from->begin() + middle, from->begin() + middle,
                 from->begin() + end, to->begin() + begin, less);
      merged.push_back(end);
    }
    bounds.swap(merged);
    std::swap(from, to);
  }
  if (from != v) v->swap(buffer);
}

// Orders `perm` (row numbers, ascending) by `less` (a strict total order
// whose first criterion is row r's time, times[r * stride], ascending) when the rows' times span
// at most 32 bits: a stable least-significant-digit radix sort of
// (time - min, row) pairs on the time's 11-bit digits, then each run of equal
// times ordered by `less` (rare without a query granularity). n log(runs)
// comparisons of the merge of runs were most of a snapshot's row sort.
// Returns false (perm untouched) when the times span more.
template <typename Less>
bool SortByTime(const uint64_t* times, size_t stride, std::vector<uint32_t>* perm, Less less) {
  const size_t n = perm->size();
  if (n == 0) return true;
  uint64_t lo = times[0], hi = times[0];
  for (size_t r = 0; r < n; ++r) {
    lo = std::min(lo, times[r * stride]);
    hi = std::max(hi, times[r * stride]);
  }
  const uint64_t span = hi - lo;
  if (span > std::numeric_limits<uint32_t>::max()) return false;
  constexpr int kBits = 11;
  constexpr uint64_t kMask = (uint64_t{1} << kBits) - 1;
  int passes = 0;
  for (uint64_t v = span; v != 0; v >>= kBits) ++passes;
  std::vector<uint64_t> a(n), b(n);
  for (size_t i = 0; i < n; ++i) a[i] = (times[(*perm)[i] * stride] - lo) << 32 | (*perm)[i];
  std::vector<uint32_t> counts(size_t{1} << kBits);
  for (int pass = 0; pass < passes; ++pass) {
    const int shift = 32 + kBits * pass;
    std::fill(counts.begin(), counts.end(), 0);
    for (uint64_t x : a) ++counts[(x >> shift) & kMask];
    uint32_t sum = 0;
    for (uint32_t& c : counts) {
      const uint32_t here = c;
      c = sum;
      sum += here;
    }
    for (uint64_t x : a) b[counts[(x >> shift) & kMask]++] = x;
    a.swap(b);
  }
  for (size_t i = 0; i < n;) {
    size_t j = i + 1;
    while (j < n && (a[j] >> 32) == (a[i] >> 32)) ++j;
    for (size_t k = i; k < j; ++k) (*perm)[k] = static_cast<uint32_t>(a[k]);
    if (j - i > 1) std::sort(perm->begin() + i, perm->begin() + j, less);
    i = j;
  }
  return true;
}

}  // namespace

// Copies of dimension values (and discovered names) in large blocks, so the
// views in dictionaries stay valid while the index lives.
class IncrementalIndex::Arena {
 public:
  absl::string_view Copy(absl::string_view s) {
    if (s.size() > left_) NewBlock(s.size());
    ValueDictionary::Copy(cursor_, s.data(), s.size());  // nothing for an empty one
    const absl::string_view out(cursor_, s.size());
    cursor_ += s.size();
    left_ -= s.size();
    return out;
  }
  size_t allocated() const { return allocated_; }

 private:
  static constexpr size_t kBlockSize = 64 << 10;
  void NewBlock(size_t at_least) {
    const size_t size = std::max(kBlockSize, at_least);
    blocks_.emplace_back(new char[size]);
    cursor_ = blocks_.back().get();
    left_ = size;
    allocated_ += size;
  }
  std::vector<std::unique_ptr<char[]>> blocks_;
  char* cursor_ = nullptr;
  size_t left_ = 0;
  size_t allocated_ = 0;
};

size_t IncrementalIndex::RowHash::operator()(uint32_t row) const {
  // Computed once per row (KeyHash) and kept, so growing the table does not
  // read every row again.
  return index->hashes_[row];
}

uint64_t IncrementalIndex::KeyHash(uint32_t row) const {
  const uint32_t* r = RowAt(row);
  return XXH3_64bits(r, key_units_ * sizeof(uint32_t));
}

bool IncrementalIndex::RowEq::operator()(uint32_t a, uint32_t b) const {
  return std::memcmp(index->RowAt(a), index->RowAt(b), index->key_units_ * sizeof(uint32_t)) == 0;
}

IncrementalIndex::IncrementalIndex(const IndexOptions& options)
    : schema_(options.schema),
      interval_(options.interval),
      discover_(options.schema.discover_dimensions()),
      rollup_(options.schema.rollup),
      arena_(new Arena),
      segment_dimensions_(options.segment_dimensions),
      rollup_set_(0, RowHash{this}, RowEq{this}) {
  if (discover_ && segment_dimensions_ == nullptr) {
    segment_dimensions_ = std::make_shared<SegmentDimensions>();
  }
  for (const MetricSpec& m : schema_.metrics) {
    metric_names_.insert(m.name);
    sum_slot_.push_back(m.type == MetricType::kDoubleSum ? static_cast<int>(num_sums_++) : -1);
    metric_inputs_.push_back(MetricInputOf(m.type));
  }
  if (!discover_) {
    for (const std::string& d : schema_.dimensions) {
      dim_by_name_.emplace(d, dims_.size());
      dims_.push_back(d);
    }
    dicts_.resize(dims_.size());
  }
  RecountDictionaryBytes();
  Layout(discover_ ? kInitialDiscoveredCapacity : dims_.size());
  RecountBytes();
}

IncrementalIndex::~IncrementalIndex() = default;

IncrementalIndex::MetricInputUse IncrementalIndex::MetricInputOf(MetricType type) {
  MetricInputUse use;
  use.reads_input = type != MetricType::kCount;
  switch (type) {
    case MetricType::kCount: use.absent = 1; break;
    case MetricType::kLongSum: use.absent = 0; break;
    case MetricType::kLongMin:
      use.absent = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
      break;
    case MetricType::kLongMax:
      use.absent = static_cast<uint64_t>(std::numeric_limits<int64_t>::min());
      break;
    case MetricType::kDoubleSum:
      use.reads_double = true;
      use.absent = Bits(0.0);
      break;
    case MetricType::kDoubleMin:
      use.reads_double = true;
      use.absent = Bits(std::numeric_limits<double>::infinity());
      break;
    case MetricType::kDoubleMax:
      use.reads_double = true;
      use.absent = Bits(-std::numeric_limits<double>::infinity());
      break;
  }
  return use;
}

absl::StatusOr<std::unique_ptr<IncrementalIndex>> IncrementalIndex::Create(
    const IndexOptions& options) {
  if (absl::Status s = ValidateSchema(options.schema); !s.ok()) return s;
  if (options.interval.start_ms >= options.interval.end_ms) {
    return absl::InvalidArgumentError("the index interval is empty");
  }
  return std::unique_ptr<IncrementalIndex>(new IncrementalIndex(options));
}

void IncrementalIndex::Layout(size_t dim_capacity) {
  const size_t old_stride = stride_;
  const size_t old_key_units = key_units_;
  const size_t old_metrics_at = metrics_at_;
  dim_capacity_ = dim_capacity;
  key_units_ = 2 + dim_capacity;
  metrics_at_ = key_units_;
  extra_at_ = metrics_at_ + 2 * schema_.metrics.size();
  stride_ = extra_at_ + (rollup_ ? (num_sums_ + 31) / 32 : 3);
  if (chunks_.empty()) return;
  // Re-lay the rows out with the wider key (new dimensions are null).
  std::vector<std::unique_ptr<uint32_t[]>> old = std::move(chunks_);
  chunks_.clear();
  for (size_t c = 0; c < old.size(); ++c) {
    chunks_.emplace_back(new uint32_t[size_t{kRowsPerChunk} * stride_]());
  }
  for (uint32_t row = 0; row < rows_; ++row) {
    const uint32_t* from = old[row / kRowsPerChunk].get() + size_t{row % kRowsPerChunk} * old_stride;
    uint32_t* to = RowAt(row);
    std::memcpy(to, from, old_key_units * sizeof(uint32_t));
    std::memcpy(to + metrics_at_, from + old_metrics_at,
                (old_stride - old_metrics_at) * sizeof(uint32_t));
  }
  if (rollup_) {
    // Keys are wider now: hash them again.
    rollup_set_.clear();
    rollup_set_.reserve(rows_);
    for (uint32_t row = 0; row < rows_; ++row) {
      hashes_[row] = KeyHash(row);
      rollup_set_.insert(row);
    }
  }
}

void IncrementalIndex::RecountDictionaryBytes() {
  dictionary_bytes_ = 0;
  for (const ValueDictionary& d : dicts_) dictionary_bytes_ += d.capacity_bytes();
  for (const std::string& d : dims_) dictionary_bytes_ += static_cast<int64_t>(d.capacity()) + 64;
}

ABSL_ATTRIBUTE_NOINLINE uint32_t IncrementalIndex::InternNew(size_t dim,
                                                             absl::string_view value,
                                                             uint64_t hash) {
  ValueDictionary& dict = dicts_[dim];
  const int64_t before = dict.capacity_bytes();
  const size_t arena_before = arena_->allocated();
  const uint32_t id = dict.Insert(arena_->Copy(value), hash);
  const int64_t grown = dict.capacity_bytes() - before;
  dictionary_bytes_ += grown;
  // What RecountBytes would add: the dictionary's growth and the arena's.
  estimated_bytes_ += grown + static_cast<int64_t>(arena_->allocated() - arena_before);
  return id;
}

absl::StatusOr<size_t> IncrementalIndex::DiscoveredDimension(absl::string_view name) {
  auto it = dim_by_name_.find(name);
  if (it != dim_by_name_.end()) return it->second;
  if (dims_.size() >= kMaxDimensions) {
    return absl::ResourceExhaustedError(
        absl::StrCat("more than ", kMaxDimensions, " discovered dimensions"));
  }
  const size_t d = dims_.size();
  dims_.emplace_back(name);
  dim_by_name_.emplace(dims_.back(), d);
  segment_dimensions_->Add(name);
  dicts_.emplace_back();
  dim_stamp_.push_back(0);
  RecountDictionaryBytes();
  if (dims_.size() > dim_capacity_) Layout(std::max(dims_.size(), 2 * dim_capacity_));
  RecountBytes();
  return d;
}

bool IncrementalIndex::PrefetchRow(const InputRow& row, uint64_t* hashes) const {
  const size_t n = dims_.size();
  if (discover_ || row.dims.size() != n) return false;
  const DimValue* values = row.dims.data();
  const ValueDictionary* dicts = dicts_.data();
  for (size_t d = 0; d < n; ++d) {
    if (!values[d].present) continue;
    const uint64_t hash = ValueDictionary::Hash(values[d].text);
    hashes[d] = hash;
    dicts[d].Prefetch(hash);
  }
  return true;
}

absl::Status IncrementalIndex::Add(const InputRow& row, int32_t partition, int64_t offset,
                                   const uint64_t* hashes) {
  const int64_t t = row.timestamp_ms;
  if (t < interval_.start_ms || t >= interval_.end_ms) {
    return absl::InvalidArgumentError(absl::StrCat(
        "row time ", t, " is outside the index interval [", interval_.start_ms, ", ",
        interval_.end_ms, ")"));
  }
  const int64_t time = schema_.query_granularity.Truncate(t);
  if (time < interval_.start_ms) {
    return absl::InvalidArgumentError(absl::StrCat(
        "query granularity ", schema_.query_granularity.Name(), " truncates row time ", t,
        " to before the index interval"));
  }
  if (partition < 0 || offset < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("negative partition or offset: ", partition, "/", offset));
  }
  if (!discover_ && row.dims.size() != dims_.size()) {
    return absl::InvalidArgumentError(absl::StrCat("row has ", row.dims.size(),
                                                   " dimension values, the schema ",
                                                   dims_.size()));
  }
  if (row.metrics.size() != schema_.metrics.size()) {
    return absl::InvalidArgumentError(absl::StrCat("row has ", row.metrics.size(),
                                                   " metric inputs, the schema ",
                                                   schema_.metrics.size()));
  }
  if (rows_ == std::numeric_limits<uint32_t>::max()) {
    return absl::ResourceExhaustedError("an index holds at most 2^32 - 1 rows");
  }
  // Discovered names first: a new dimension may widen every row.
  absl::InlinedVector<size_t, 16> discovered;
  if (discover_) {
    for (const auto& [name, value] : row.discovered) {
      if (name.empty() || name == kTimeColumn || name == schema_.timestamp_column ||
          metric_names_.contains(name)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "\"", name, "\" cannot be a discovered dimension (empty, reserved or a metric)"));
      }
    }
    // A row that would bring the segment past its bound is refused whole
    // before any name is added.
    // Only a row with more fields than the bound has room left can pass it.
    if (segment_dimensions_->size() + row.discovered.size() > segment_dimensions_->max()) {
      new_names_.clear();
      for (const auto& [name, value] : row.discovered) {
        if (dim_by_name_.contains(name) || segment_dimensions_->Contains(name)) continue;
        if (!new_names_.insert(name).second) continue;  // repeated in the row
        if (segment_dimensions_->size() + new_names_.size() > segment_dimensions_->max()) {
          return absl::OutOfRangeError(absl::StrCat(
              "dimension \"", absl::string_view(name).substr(0, 64),
              "\" would be discovered dimension ", segment_dimensions_->size() + new_names_.size(),
              " of the segment, beyond the limit of ", segment_dimensions_->max()));
        }
      }
    }
    for (const auto& [name, value] : row.discovered) {
      absl::StatusOr<size_t> d = DiscoveredDimension(name);
      if (!d.ok()) return d.status();
      discovered.push_back(*d);
    }
  }
  if (rows_ / kRowsPerChunk >= chunks_.size()) {
    chunks_.emplace_back(new uint32_t[size_t{kRowsPerChunk} * stride_]);
    bytes_stale_ = true;
  }

  // Build the row in the next free slot.
  uint32_t* r = RowAt(rows_);
  Put64(r, static_cast<uint64_t>(time));
  if (discover_) {
    std::memset(r + 2, 0, dim_capacity_ * sizeof(uint32_t));
    ++stamp_;
    for (size_t i = row.discovered.size(); i-- > 0;) {  // the last of a repeated name wins
      const size_t d = discovered[i];
      if (dim_stamp_[d] == stamp_) continue;
      dim_stamp_[d] = stamp_;
      const absl::string_view value = row.discovered[i].second;
      r[2 + d] = Intern(d, value, ValueDictionary::Hash(value));
    }
  } else {
    // Every value's slot is fetched before the first lookup, so the cache
    // misses of the large dictionaries (pages, users) overlap instead of
    // following one another; a caller that ran PrefetchRow a record ahead
    // has had them on their way since.
    const size_t n = dims_.size();
    const DimValue* values = row.dims.data();
    if (hashes == nullptr) {
      value_hashes_.resize(n);
      PrefetchRow(row, value_hashes_.data());  // the row's shape was checked above
      hashes = value_hashes_.data();
    }
    for (size_t d = 0; d < n; ++d) {  // dim_capacity_ == n: every id written
      r[2 + d] = values[d].present ? Intern(d, values[d].text, hashes[d]) : 0;
    }
  }
  uint32_t* metrics = r + metrics_at_;
  const MetricInputUse* uses = metric_inputs_.data();
  const MetricInput* inputs = row.metrics.data();
  for (size_t m = 0, count = metric_inputs_.size(); m < count; ++m) {
    const MetricInputUse& use = uses[m];
    uint64_t v = use.absent;
    if (use.reads_input && inputs[m].present) {
      v = use.reads_double ? Bits(inputs[m].double_value)
                           : static_cast<uint64_t>(inputs[m].long_value);
    }
    Put64(metrics + 2 * m, v);
  }
  if (rollup_) {
    for (size_t i = extra_at_; i < stride_; ++i) r[i] = 0;
  } else {
    r[extra_at_] = static_cast<uint32_t>(partition);
    Put64(r + extra_at_ + 1, static_cast<uint64_t>(offset));
  }

  if (rollup_) {
    // Grown by doubling (as resize by one would), not checked and resized
    // on every row.
    if (hashes_.size() <= rows_) hashes_.resize(std::max<size_t>(2 * hashes_.size(), 1024));
    hashes_[rows_] = XXH3_64bits(r, key_units_ * sizeof(uint32_t));  // KeyHash(rows_)
    auto [it, inserted] = rollup_set_.insert(rows_);
    if (inserted) {
      ++rows_;
    } else {
      Aggregate(RowAt(*it), r);
    }
  } else {
    ++rows_;
  }
  ++input_records_;
  PartitionStats& stats = StatsOf(partition);
  if (stats.records == 0) stats.min_offset = stats.max_offset = offset;
  ++stats.records;
  stats.min_offset = std::min(stats.min_offset, offset);
  stats.max_offset = std::max(stats.max_offset, offset);
  if (rollup_ || bytes_stale_) RecountBytes();
  return absl::OkStatus();
}

PartitionStats& IncrementalIndex::StatsOfNew(int32_t partition) {
  auto it = std::lower_bound(
      partitions_.begin(), partitions_.end(), partition,
      [](const PartitionStats& s, int32_t p) { return s.partition < p; });
  if (it == partitions_.end() || it->partition != partition) {
    PartitionStats stats;
    stats.partition = partition;
    it = partitions_.insert(it, stats);
    bytes_stale_ = true;
  }
  last_partition_ = static_cast<size_t>(it - partitions_.begin());
  return *it;
}

void IncrementalIndex::Aggregate(uint32_t* into, const uint32_t* from) {
  uint32_t* a = into + metrics_at_;
  const uint32_t* b = from + metrics_at_;
  for (size_t m = 0; m < schema_.metrics.size(); ++m) {
    const uint64_t x = Get64(a + 2 * m);
    const uint64_t y = Get64(b + 2 * m);
    uint64_t v = x;
    switch (schema_.metrics[m].type) {
      case MetricType::kCount:
      case MetricType::kLongSum:
        v = x + y;  // wraps around
        break;
      case MetricType::kLongMin:
        v = static_cast<int64_t>(y) < static_cast<int64_t>(x) ? y : x;
        break;
      case MetricType::kLongMax:
        v = static_cast<int64_t>(y) > static_cast<int64_t>(x) ? y : x;
        break;
      case MetricType::kDoubleMin:
        v = TotalOrderKey(Double(y)) < TotalOrderKey(Double(x)) ? y : x;
        break;
      case MetricType::kDoubleMax:
        v = TotalOrderKey(Double(y)) > TotalOrderKey(Double(x)) ? y : x;
        break;
      case MetricType::kDoubleSum: {
        const int k = sum_slot_[m];
        uint32_t& flags = into[extra_at_ + k / 32];
        const uint32_t bit = uint32_t{1} << (k % 32);
        if (!(flags & bit)) {
          sums_.emplace_back(Double(x));
          v = sums_.size() - 1;
          flags |= bit;
        }
        ExactSum& sum = sums_[v];
        const size_t before = sum.HeapBytes();
        sum.Add(Double(y));
        sums_heap_bytes_ += static_cast<int64_t>(sum.HeapBytes()) - static_cast<int64_t>(before);
        break;
      }
    }
    Put64(a + 2 * m, v);
  }
}

void IncrementalIndex::RecountBytes() {
  bytes_stale_ = false;
  int64_t bytes = sizeof(*this);
  bytes += static_cast<int64_t>(chunks_.size()) * kRowsPerChunk * stride_ * sizeof(uint32_t);
  bytes += static_cast<int64_t>(rollup_set_.capacity()) * (sizeof(uint32_t) + 1);
  bytes += static_cast<int64_t>(hashes_.capacity() * sizeof(uint64_t));
  bytes += dictionary_bytes_;  // dictionaries and dimension names
  bytes += static_cast<int64_t>(arena_->allocated());
  bytes += static_cast<int64_t>(sums_.capacity() * sizeof(ExactSum)) + sums_heap_bytes_;
  bytes += static_cast<int64_t>(partitions_.size()) * 64;
  estimated_bytes_ = bytes;
}

std::vector<PartitionStats> IncrementalIndex::partition_stats() const {
  return partitions_;
}

void IncrementalIndex::Clear() {
  // Rebuild from scratch so every container gives its memory back.
  dims_.clear();
  dim_by_name_ = {};
  dicts_ = std::vector<ValueDictionary>();
  arena_.reset(new Arena);
  dim_stamp_ = {};
  stamp_ = 0;
  std::vector<std::unique_ptr<uint32_t[]>>().swap(chunks_);
  rows_ = 0;
  input_records_ = 0;
  rollup_set_ = absl::flat_hash_set<uint32_t, RowHash, RowEq>(0, RowHash{this}, RowEq{this});
  std::vector<uint64_t>().swap(hashes_);
  sums_ = {};
  sums_heap_bytes_ = 0;
  partitions_ = {};
  last_partition_ = 0;
  stride_ = key_units_ = 0;
  if (!discover_) {
    for (const std::string& d : schema_.dimensions) {
      dim_by_name_.emplace(d, dims_.size());
      dims_.push_back(d);
    }
    dicts_.resize(dims_.size());
  }
  RecountDictionaryBytes();
  Layout(discover_ ? kInitialDiscoveredCapacity : dims_.size());
  RecountBytes();
}

// A sorted snapshot: dictionaries sorted (ids remapped), rows ordered by
// (time, dimension values[, partition, offset]).
class IncrementalIndex::Run : public SortedRun {
 public:
  explicit Run(const IncrementalIndex* index) : index_(index) {
    const size_t dims = index->dims_.size();
    // Output dimension order: the schema's, or by name when discovered.
    order_.resize(dims);
    std::iota(order_.begin(), order_.end(), 0);
    if (index->discover_) {
      std::sort(order_.begin(), order_.end(),
                [&](size_t a, size_t b) { return index->dims_[a] < index->dims_[b]; });
    }
    for (size_t d : order_) names_.push_back(index->dims_[d]);
    remap_.resize(dims);
    dictionaries_.resize(dims);
    for (size_t o = 0; o < dims; ++o) {
      const size_t d = order_[o];
      const std::vector<absl::string_view>& values = index->dicts_[d].values();
      std::vector<uint32_t> by_value(values.size());
      std::iota(by_value.begin(), by_value.end(), 0);
      SortStringIndexes(values, &by_value);
      std::vector<uint32_t>& remap = remap_[d];
      remap.assign(values.size() + 1, 0);
      std::vector<absl::string_view>& sorted = dictionaries_[o];
      sorted.reserve(values.size());
      for (uint32_t i = 0; i < by_value.size(); ++i) {
        remap[by_value[i] + 1] = i + 1;
        sorted.push_back(values[by_value[i]]);
      }
    }
    partitions_ = index->partition_stats();

    // Sort keys: time (sign flipped), then the remapped ids. Each id takes the bits its dictionary needs
    // (ids 0..n), packed from a word's high bits down and never across
    // words, so that comparing words compares the ids in order: ten
    // dimensions of the wiki rows take two words instead of five.
    const uint32_t rows = index->rows_;
    fields_.resize(dims);
    size_t id_words = 0;
    int used = 64;  // bits taken in the current id word
    for (size_t o = 0; o < dims; ++o) {
      int width = 0;
      for (uint64_t n = dictionaries_[o].size(); n != 0; n >>= 1) ++width;
      IdField& f = fields_[o];
      if (width == 0) continue;  // no values: every id is 0 (null)
      if (used + width > 64) {
        ++id_words;
        used = 0;
      }
      f.word = static_cast<uint32_t>(id_words - 1);
      f.shift = static_cast<uint32_t>(64 - used - width);
      f.mask = (uint64_t{1} << width) - 1;  // width <= 33
      used += width;
    }
    // A dimension without values keeps word 0 and shift 0 (its id, always
    // 0, ORed in and read back as 0): there is one id word whenever there
    // is a dimension, also when none has a value.
    key_words_ = 1 + std::max<size_t>(id_words, dims == 0 ? 0 : 1);
    keys_.assign(size_t{rows} * key_words_, 0);
    // Per output dimension, flat: where its id is in a row, its old id ->
    // sorted id map, and where the sorted id goes in the key.
    struct Packing {
      size_t at;
      const uint32_t* remap;
      size_t word;
      uint32_t shift;
    };
    std::vector<Packing> packing;
    for (size_t o = 0; o < dims; ++o) {
      packing.push_back({2 + order_[o], remap_[order_[o]].data(), 1 + size_t{fields_[o].word},
                         fields_[o].shift});
    }
    for (uint32_t row = 0; row < rows; ++row) {
      const uint32_t* r = index->RowAt(row);
      uint64_t* k = &keys_[size_t{row} * key_words_];
      k[0] = Get64(r) ^ (uint64_t{1} << 63);
      for (const Packing& p : packing) k[p.word] |= uint64_t{p.remap[r[p.at]]} << p.shift;
    }
    perm_.resize(rows);
    std::iota(perm_.begin(), perm_.end(), 0);
    const size_t kw = key_words_;
    const uint64_t* keys = keys_.data();
    // With rollup off, rows with equal keys (rare with many values) are
    // ordered by partition and offset, read from the rows rather than kept
    // in every key.
    const bool rollup = index->rollup_;
    const size_t extra_at = index->extra_at_;
    auto less = [kw, keys, rollup, extra_at, index](uint32_t a, uint32_t b) {
      const uint64_t* x = keys + size_t{a} * kw;
      const uint64_t* y = keys + size_t{b} * kw;
      for (size_t i = 0; i < kw; ++i) {
        if (x[i] != y[i]) return x[i] < y[i];
      }
      if (!rollup) {
        const uint32_t* ra = index->RowAt(a);
        const uint32_t* rb = index->RowAt(b);
        if (ra[extra_at] != rb[extra_at]) return ra[extra_at] < rb[extra_at];
        const uint64_t oa = Get64(ra + extra_at + 1), ob = Get64(rb + extra_at + 1);
        if (oa != ob) return oa < ob;
      }
      return a < b;
    };
    // Without a query granularity times rarely repeat: sorted by time alone
    // (radix), ties by the rest. With one (most rows share a truncated time),
    // the merge of the ascending runs rows arrive in.
    bool sorted = false;
    if (index->schema_.query_granularity.unit() == Granularity::Unit::kNone) {
      sorted = SortByTime(keys, kw, &perm_, less);
    }
    if (!sorted) SortByRuns(&perm_, less);
    if (rows > 0) {
      min_time_ = static_cast<int64_t>(keys_[size_t{perm_.front()} * kw] ^ (uint64_t{1} << 63));
      max_time_ = static_cast<int64_t>(keys_[size_t{perm_.back()} * kw] ^ (uint64_t{1} << 63));
    }
    ids_.resize(dims);
    cells_.resize(index->schema_.metrics.size());  // exact: null but for exact_slots_
    if (rollup) {
      for (size_t m = 0; m < cells_.size(); ++m) {
        if (index->sum_slot_[m] >= 0) exact_slots_.emplace_back(m, index->sum_slot_[m]);
      }
    }
    row_.ids = ids_.data();
    row_.cells = cells_.data();
  }

  std::string Describe() const override { return "in-memory index"; }
  bool keeps_dictionaries() const override { return true; }
  const Schema& schema() const override { return index_->schema_; }
  Interval interval() const override { return index_->interval_; }
  const std::vector<std::string>& dimensions() const override { return names_; }
  const std::vector<absl::string_view>& dictionary(size_t d) const override {
    return dictionaries_[d];
  }
  const std::vector<PartitionStats>& partitions() const override { return partitions_; }
  uint64_t input_records() const override { return index_->input_records_; }
  uint64_t rows() const override { return index_->rows_; }
  int64_t min_time() const override { return min_time_; }
  int64_t max_time() const override { return max_time_; }

  absl::StatusOr<bool> Next() override {
    if (next_ >= perm_.size()) return false;
    const IncrementalIndex& index = *index_;
    const uint32_t row = perm_[next_++];
    const uint32_t* r = index.RowAt(row);
    row_.time = static_cast<int64_t>(Get64(r));
    // The sorted ids are in the sort key already.
    const uint64_t* key = &keys_[size_t{row} * key_words_ + 1];
    for (size_t o = 0; o < ids_.size(); ++o) {
      const IdField& f = fields_[o];
      ids_[o] = static_cast<uint32_t>((key[f.word] >> f.shift) & f.mask);
    }
    const uint32_t* metrics = r + index.metrics_at_;
    for (size_t m = 0; m < cells_.size(); ++m) cells_[m].bits = Get64(metrics + 2 * m);
    for (const auto& [m, k] : exact_slots_) {
      MetricCell& cell = cells_[m];
      cell.exact = (r[index.extra_at_ + k / 32] >> (k % 32)) & 1 ? &index.sums_[cell.bits] : nullptr;
    }
    if (!index.rollup_) {
      row_.partition = static_cast<int32_t>(r[index.extra_at_]);
      row_.offset = static_cast<int64_t>(Get64(r + index.extra_at_ + 1));
    }
    return true;
  }
  const RunRow& row() const override { return row_; }

 private:
  const IncrementalIndex* index_;
  std::vector<size_t> order_;   // output position -> internal dimension
  std::vector<std::string> names_;
  std::vector<std::vector<uint32_t>> remap_;  // internal dimension: old id -> sorted id
  std::vector<std::vector<absl::string_view>> dictionaries_;  // by output position
  std::vector<PartitionStats> partitions_;
  // Where output dimension o's sorted id sits in a key's id words.
  struct IdField {
    uint32_t word = 0;
    uint32_t shift = 0;
    uint64_t mask = 0;
  };
  std::vector<IdField> fields_;
  size_t key_words_ = 0;
  std::vector<uint64_t> keys_;
  std::vector<uint32_t> perm_;
  int64_t min_time_ = 0, max_time_ = 0;
  size_t next_ = 0;
  std::vector<uint32_t> ids_;
  std::vector<MetricCell> cells_;
  // With rollup: (metric, its doubleSum number) of each doubleSum metric,
  // whose cell may hold an exact sum.
  std::vector<std::pair<size_t, int>> exact_slots_;
  RunRow row_;
};

std::unique_ptr<SortedRun> IncrementalIndex::Snapshot() const {
  return std::make_unique<Run>(this);
}

}  // namespace segment
}  // namespace sluice
