#include "iceberg/parquet_file_writer.h"

#include <simdjson.h>

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "iceberg/ffi_call.h"
#include "iceberg/limits.h"

namespace sluice {
namespace iceberg {
namespace {

absl::Status CheckString(const std::string& column, size_t size) {
  if (size > kMaxStringBytes) {
    return absl::ResourceExhaustedError(absl::StrCat("column \"", column, "\": a string of ", size,
                                                     " bytes, more than the limit of ",
                                                     kMaxStringBytes));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> Unhex(std::string_view hex) {
  if (hex.size() % 2 != 0) return absl::InternalError("odd-length hex bound");
  std::string out(hex.size() / 2, '\0');
  for (size_t i = 0; i < out.size(); ++i) {
    auto digit = [](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      return -1;
    };
    const int hi = digit(hex[2 * i]), lo = digit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return absl::InternalError("bad hex bound");
    out[i] = static_cast<char>(hi * 16 + lo);
  }
  return out;
}

absl::StatusOr<DataFile> ParseMetrics(absl::string_view json) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  simdjson::padded_string padded(json.data(), json.size());
  if (auto err = parser.parse(padded).get(doc)) {
    return absl::InternalError(absl::StrCat("data file metrics: ", simdjson::error_message(err)));
  }
  DataFile file;
  file.metrics_json = std::string(json);
  if (doc["record_count"].get(file.record_count) ||
      doc["file_size_in_bytes"].get(file.file_size_in_bytes)) {
    return absl::InternalError("data file metrics lack counts");
  }
  int64_t partition = 0;
  if (doc["partition_value"].get(partition) == simdjson::SUCCESS) {
    file.partition_value = static_cast<int32_t>(partition);
  }
  simdjson::dom::object columns;
  if (doc["columns"].get(columns)) return absl::InternalError("data file metrics lack columns");
  for (auto [key, value] : columns) {
    ColumnMetrics m;
    if (value["column_size"].get(m.column_size) || value["value_count"].get(m.value_count) ||
        value["null_value_count"].get(m.null_value_count)) {
      return absl::InternalError("column metrics lack counts");
    }
    int64_t nans = 0;
    if (value["nan_value_count"].get(nans) == simdjson::SUCCESS) m.nan_value_count = nans;
    std::string_view hex;
    if (value["lower_bound"].get(hex) == simdjson::SUCCESS) {
      SLUICE_ASSIGN_OR_RETURN(m.lower_bound, Unhex(hex));
    }
    if (value["upper_bound"].get(hex) == simdjson::SUCCESS) {
      SLUICE_ASSIGN_OR_RETURN(m.upper_bound, Unhex(hex));
    }
    file.columns[std::stoi(std::string(key))] = std::move(m);
  }
  return file;
}

}  // namespace

Column Int64Column(std::string name, std::vector<int64_t> values, std::vector<uint8_t> validity) {
  Column c;
  c.name = std::move(name);
  c.int64_values = std::move(values);
  c.validity = std::move(validity);
  return c;
}

Column DoubleColumn(std::string name, std::vector<double> values, std::vector<uint8_t> validity) {
  Column c;
  c.name = std::move(name);
  c.double_values = std::move(values);
  c.validity = std::move(validity);
  return c;
}

Column StringColumn(std::string name, absl::Span<const std::optional<std::string>> values) {
  Column c;
  c.name = std::move(name);
  c.string_offsets.reserve(values.size() + 1);
  c.string_offsets.push_back(0);
  bool any_null = false;
  for (const auto& v : values) {
    if (v.has_value()) c.string_bytes += *v;
    any_null |= !v.has_value();
    c.string_offsets.push_back(c.string_bytes.size());
  }
  if (any_null) {
    for (const auto& v : values) c.validity.push_back(v.has_value() ? 1 : 0);
  }
  return c;
}

Column DictionaryStringColumn(std::string name, absl::Span<const absl::string_view> dictionary,
                              std::vector<uint32_t> ids, std::vector<uint8_t> validity) {
  Column c;
  c.name = std::move(name);
  c.string_offsets.reserve(dictionary.size() + 1);
  c.string_offsets.push_back(0);
  for (absl::string_view entry : dictionary) {
    c.string_bytes.append(entry.data(), entry.size());
    c.string_offsets.push_back(c.string_bytes.size());
  }
  c.dictionary_ids = std::move(ids);
  c.validity = std::move(validity);
  return c;
}

Column StringListColumn(std::string name,
                        absl::Span<const std::optional<std::vector<std::string>>> values) {
  Column c;
  c.name = std::move(name);
  c.list_offsets.push_back(0);
  c.string_offsets.push_back(0);
  bool any_null = false;
  for (const auto& row : values) {
    if (row.has_value()) {
      for (const std::string& e : *row) {
        c.string_bytes += e;
        c.string_offsets.push_back(c.string_bytes.size());
      }
    }
    any_null |= !row.has_value();
    c.list_offsets.push_back(c.string_offsets.size() - 1);
  }
  if (any_null) {
    for (const auto& v : values) c.validity.push_back(v.has_value() ? 1 : 0);
  }
  return c;
}

absl::StatusOr<WrittenDataFile> WriteParquetDataFile(const AppendPlan& plan,
                                                     absl::Span<const Column> columns,
                                                     uint64_t row_count) {
  if (row_count > kMaxRowsPerDataFile) {
    return absl::ResourceExhaustedError(absl::StrCat(
        row_count, " rows, more than the limit of ", kMaxRowsPerDataFile, " per data file"));
  }
  TableSchema file_schema;
  file_schema.schema_id = plan.schema.schema_id;
  std::vector<SluiceIcebergColumn> ffi_columns;
  ffi_columns.reserve(columns.size());
  const auto rows = static_cast<size_t>(row_count);
  for (const Column& c : columns) {
    const Field* field = plan.schema.FindByName(c.name);
    if (field == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("column \"", c.name, "\" is not in the table schema (plan the append with it)"));
    }
    for (const Field& f : file_schema.fields) {
      if (f.name == c.name) {
        return absl::InvalidArgumentError(absl::StrCat("column \"", c.name, "\" given twice"));
      }
    }
    file_schema.fields.push_back(*field);
    auto wrong_length = [&](absl::string_view what, size_t got, size_t want) {
      return absl::InvalidArgumentError(absl::StrCat("column \"", c.name, "\" (",
                                                     FieldTypeName(field->type), "): ", what, " has ",
                                                     got, " entries, expected ", want));
    };
    if (!c.validity.empty() && c.validity.size() != rows) {
      return wrong_length("validity", c.validity.size(), rows);
    }
    SluiceIcebergColumn fc{};
    switch (field->type) {
      case FieldType::kTimestamptz:
      case FieldType::kLong:
        if (c.int64_values.size() != rows) {
          return wrong_length("int64_values", c.int64_values.size(), rows);
        }
        fc.int64_values = c.int64_values.data();
        break;
      case FieldType::kDouble:
        if (c.double_values.size() != rows) {
          return wrong_length("double_values", c.double_values.size(), rows);
        }
        fc.double_values = c.double_values.data();
        break;
      case FieldType::kStringList:
        if (c.list_offsets.size() != rows + 1) {
          return wrong_length("list_offsets", c.list_offsets.size(), rows + 1);
        }
        for (size_t r = 0; r < rows; ++r) {
          if (c.list_offsets[r + 1] >= c.list_offsets[r] &&
              c.list_offsets[r + 1] - c.list_offsets[r] > kMaxListElements) {
            return absl::ResourceExhaustedError(
                absl::StrCat("column \"", c.name, "\": a list of ",
                             c.list_offsets[r + 1] - c.list_offsets[r],
                             " elements, more than the limit of ", kMaxListElements));
          }
        }
        fc.list_offsets = c.list_offsets.data();
        [[fallthrough]];
      case FieldType::kString:
        if (field->type == FieldType::kString && !c.dictionary_ids.empty()) {
          if (c.dictionary_ids.size() != rows) {
            return wrong_length("dictionary_ids", c.dictionary_ids.size(), rows);
          }
          if (c.string_offsets.empty()) return wrong_length("string_offsets", 0, 1);
          fc.dictionary_ids = c.dictionary_ids.data();
        } else if (field->type == FieldType::kString && c.string_offsets.size() != rows + 1) {
          return wrong_length("string_offsets", c.string_offsets.size(), rows + 1);
        }
        for (size_t i = 0; i + 1 < c.string_offsets.size(); ++i) {
          if (c.string_offsets[i + 1] >= c.string_offsets[i]) {
            SLUICE_RETURN_IF_ERROR(
                CheckString(c.name, c.string_offsets[i + 1] - c.string_offsets[i]));
          }
        }
        fc.string_offsets = c.string_offsets.data();
        fc.string_offset_count = c.string_offsets.size();
        fc.string_bytes = reinterpret_cast<const uint8_t*>(c.string_bytes.data());
        fc.string_byte_count = c.string_bytes.size();
        break;
    }
    fc.validity = c.validity.empty() ? nullptr : c.validity.data();
    ffi_columns.push_back(fc);
  }
  for (const Field& f : plan.schema.fields) {
    if (f.required && file_schema.FindByName(f.name) == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("required column \"", f.name, "\" has no values"));
    }
  }
  const std::string request =
      absl::StrCat("{\"schema\":", TableSchemaToJson(file_schema),
                   ",\"partition_spec\":", plan.partition_spec_json, "}");
  FfiBytes file_bytes, metrics, error;
  SLUICE_RETURN_IF_ERROR(FfiStatus(
      sluice_iceberg_write_parquet(request.c_str(), ffi_columns.data(), ffi_columns.size(),
                                   row_count, file_bytes.out(), metrics.out(), error.out()),
      error, "writing a Parquet data file"));
  WrittenDataFile written;
  written.bytes = file_bytes.str();
  SLUICE_ASSIGN_OR_RETURN(written.file, ParseMetrics(metrics.view()));
  return written;
}

}  // namespace iceberg
}  // namespace sluice
