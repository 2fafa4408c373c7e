// libFuzzer target: any bytes as a segment or spill file. The reader must
// never crash or read out of bounds: it either refuses the bytes (DATA_LOSS)
// or everything it accepted decodes. The checksum check is off so that the
// fuzzer's mutations reach the structure checks behind it.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "common/segment/segment_reader.h"

namespace {

using namespace sluice::segment;

void Check(bool condition) {
  if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  SegmentReader::Options options;
  options.verify_checksum = false;
  auto reader =
      SegmentReader::FromBytes(std::string(reinterpret_cast<const char*>(data), size), options);
  if (!reader.ok()) {
    Check(reader.status().code() == absl::StatusCode::kDataLoss);
    return 0;
  }
  SegmentReader& r = **reader;
  // Every row, every dimension value, every metric.
  RowCursor cursor(&r);
  uint64_t rows = 0;
  while (true) {
    absl::StatusOr<bool> more = cursor.Next();
    if (!more.ok() || !*more) break;
    for (size_t d = 0; d < r.num_dimensions(); ++d) (void)cursor.dimension(d);
    for (size_t m = 0; m < r.header().schema.metrics.size(); ++m) {
      if (IsLongMetric(r.header().schema.metrics[m].type)) {
        (void)cursor.long_metric(m);
      } else {
        (void)cursor.double_metric(m);
      }
    }
    ++rows;
  }
  Check(rows <= r.num_rows());
  // The bitmap index of the first value of each dimension.
  if (r.header().kind == FileKind::kSegment) {
    for (size_t d = 0; d < r.num_dimensions(); ++d) {
      std::optional<absl::string_view> first;
      if (!r.dictionary(d).empty()) first = r.dictionary(d)[0];
      auto bitmap = r.RowsWithValue(r.header().dimensions[d], first);
      if (bitmap.ok()) Check(bitmap->cardinality() <= r.num_rows());
    }
  }
  const absl::Status verified = r.Verify();
  Check(verified.ok() || verified.code() == absl::StatusCode::kDataLoss);
  return 0;
}
