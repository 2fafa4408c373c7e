// What Iceberg records about one Parquet data file (its manifest entry's
// data_file): counts, sizes and bounds per field id. Produced by
// WriteParquetDataFile (parquet_file_writer.h), consumed by WriteManifest.
#ifndef SLUICE_ICEBERG_DATA_FILE_H_
#define SLUICE_ICEBERG_DATA_FILE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace sluice {
namespace iceberg {

struct ColumnMetrics {
  int64_t column_size = 0;  // compressed bytes of the column chunk
  int64_t value_count = 0;  // values including nulls (list: element slots)
  int64_t null_value_count = 0;
  std::optional<int64_t> nan_value_count;  // doubles only
  // Iceberg's single-value serialization (little-endian 8 bytes for
  // timestamptz/long/double, UTF-8 for strings, cut to 16 characters; an
  // upper bound cut so is rounded up). None: no non-null value, a list, or
  // no upper bound possible.
  std::optional<std::string> lower_bound;
  std::optional<std::string> upper_bound;
};

struct DataFile {
  int64_t record_count = 0;
  int64_t file_size_in_bytes = 0;
  // Hours/days/months/years since 1970 of every row's time.
  std::optional<int32_t> partition_value;
  // By field id (a list's element id).
  std::map<int32_t, ColumnMetrics> columns;
  // The same, as the library returned it: what WriteManifest records (the
  // fields above are for reading; changing them does not reach a manifest).
  std::string metrics_json;
};

}  // namespace iceberg
}  // namespace sluice

#endif  // SLUICE_ICEBERG_DATA_FILE_H_
