// Writes one Parquet data file of an Iceberg table from columns in memory:
// zstd, dictionary-encoded strings, column statistics, Parquet field ids =
// the table's field ids, a fixed created_by and nothing time- or
// random-dependent, so equal input gives byte-identical files. Returns the
// file's bytes (the caller stores them) and its DataFile metrics.
#ifndef SLUICE_ICEBERG_PARQUET_FILE_WRITER_H_
#define SLUICE_ICEBERG_PARQUET_FILE_WRITER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "iceberg/append_plan.h"
#include "iceberg/data_file.h"

namespace sluice {
namespace iceberg {

// One column's values, named like its table field. Build with the
// functions below; `validity` empty means no nulls, else one byte per row
// (0 = null).
struct Column {
  std::string name;
  std::vector<int64_t> int64_values;   // timestamptz (micros), long
  std::vector<double> double_values;   // double
  std::vector<uint64_t> list_offsets;  // list<string>: rows + 1, into the elements
  std::vector<uint64_t> string_offsets;  // string: rows + 1; list: elements + 1
  std::string string_bytes;
  std::vector<uint8_t> validity;
  // string: set when string_offsets/string_bytes hold a dictionary; row r's
  // value is entry dictionary_ids[r].
  std::vector<uint32_t> dictionary_ids;
};

Column Int64Column(std::string name, std::vector<int64_t> values,
                   std::vector<uint8_t> validity = {});
Column DoubleColumn(std::string name, std::vector<double> values,
                    std::vector<uint8_t> validity = {});
Column StringColumn(std::string name, absl::Span<const std::optional<std::string>> values);
// A string column as a dictionary and the entry each row holds (rows
// sharing a value share its entry: the writer checks and copies each entry
// once). Rows whose validity byte is 0 are null; their id is ignored.
Column DictionaryStringColumn(std::string name, absl::Span<const absl::string_view> dictionary,
                              std::vector<uint32_t> ids, std::vector<uint8_t> validity = {});
Column StringListColumn(std::string name,
                        absl::Span<const std::optional<std::vector<std::string>>> values);

struct WrittenDataFile {
  std::string bytes;
  DataFile file;
};

// Every column must name a field of plan.schema of the matching type and
// hold row_count rows; fields without a column read as null (they must be
// optional). Every row's time must fall in one partition of the plan's
// spec (its value is file.partition_value).
absl::StatusOr<WrittenDataFile> WriteParquetDataFile(const AppendPlan& plan,
                                                     absl::Span<const Column> columns,
                                                     uint64_t row_count);

}  // namespace iceberg
}  // namespace sluice

#endif  // SLUICE_ICEBERG_PARQUET_FILE_WRITER_H_
