#include "iceberg/parquet_file_writer.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "iceberg/ffi/sluice_iceberg.h"
#include "iceberg/table_metadata.h"

namespace sluice {
namespace iceberg {
namespace {

using ::testing::HasSubstr;

// 2024-02-29T13:00:00Z in microseconds.
constexpr int64_t kT0 = 1709211600000000;
constexpr int64_t kHourMicros = 3600000000;

std::string LongBytes(int64_t v) {
  std::string out(8, '\0');
  std::memcpy(out.data(), &v, 8);  // x86-64: little-endian, as Iceberg
  return out;
}

std::string DoubleBytes(double v) {
  std::string out(8, '\0');
  std::memcpy(out.data(), &v, 8);
  return out;
}

AppendPlan Plan() {
  NewTableOptions options;
  options.table_uuid = "9c12d441-03fe-4693-9a96-a0705ddf69c1";
  options.location = "file:///tmp/wiki";
  options.last_updated_ms = 1709211600000;
  options.fields = {{"__time", FieldType::kTimestamptz, true},
                    {"page", FieldType::kString},
                    {"tags", FieldType::kStringList},
                    {"added", FieldType::kLong},
                    {"ratio", FieldType::kDouble}};
  options.time_column = "__time";
  options.partitioning = TimePartitioning::kDay;
  absl::StatusOr<std::string> metadata = NewTableMetadata(options);
  EXPECT_TRUE(metadata.ok()) << metadata.status();
  absl::StatusOr<AppendPlan> plan = PlanAppend(*metadata, options.fields);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return *plan;
}

std::vector<Column> SampleColumns() {
  std::vector<Column> columns;
  columns.push_back(Int64Column("__time", {kT0, kT0 + kHourMicros, kT0 + 2 * kHourMicros}));
  const std::vector<std::optional<std::string>> pages = {
      std::string("Main_Page"), std::nullopt, std::string("A_very_long_page_title_of_the_wiki")};
  columns.push_back(StringColumn("page", pages));
  const std::vector<std::optional<std::vector<std::string>>> tags = {
      std::vector<std::string>{"a", "b"}, std::nullopt, std::vector<std::string>{}};
  columns.push_back(StringListColumn("tags", tags));
  columns.push_back(Int64Column("added", {5, -7, 0}, {1, 1, 0}));
  columns.push_back(DoubleColumn("ratio", {0.5, std::nan(""), -2.25}));
  return columns;
}

TEST(ParquetFileWriterTest, EqualInputGivesByteIdenticalFiles) {
  const AppendPlan plan = Plan();
  absl::StatusOr<WrittenDataFile> a = WriteParquetDataFile(plan, SampleColumns(), 3);
  absl::StatusOr<WrittenDataFile> b = WriteParquetDataFile(plan, SampleColumns(), 3);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(a->bytes, b->bytes);
  EXPECT_EQ(a->file.metrics_json, b->file.metrics_json);
  ASSERT_GT(a->bytes.size(), 8u);
  EXPECT_EQ(a->bytes.substr(0, 4), "PAR1");
  EXPECT_EQ(a->bytes.substr(a->bytes.size() - 4), "PAR1");
  EXPECT_THAT(a->bytes, HasSubstr("sluice-iceberg"));  // the fixed created_by

  std::vector<Column> other = SampleColumns();
  other[3].int64_values[0] = 6;
  absl::StatusOr<WrittenDataFile> c = WriteParquetDataFile(plan, other, 3);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_NE(a->bytes, c->bytes);
}

// A dictionary column is the same file as the plain column of its values:
// only the way the values cross to the writer differs. Entries no row uses
// (the unused null slot, "Zebra") do not widen the bounds.
TEST(ParquetFileWriterTest, DictionaryColumnIsTheSameFileAsItsValues) {
  const AppendPlan plan = Plan();
  std::vector<Column> plain = SampleColumns();
  std::vector<Column> dictionary = SampleColumns();
  const std::vector<absl::string_view> entries = {"", "A_very_long_page_title_of_the_wiki",
                                                  "Main_Page", "Zebra"};
  dictionary[1] = DictionaryStringColumn("page", entries, {2, 0, 1}, {1, 0, 1});
  absl::StatusOr<WrittenDataFile> a = WriteParquetDataFile(plan, plain, 3);
  absl::StatusOr<WrittenDataFile> b = WriteParquetDataFile(plan, dictionary, 3);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(a->bytes, b->bytes);
  EXPECT_EQ(a->file.metrics_json, b->file.metrics_json);
  const ColumnMetrics& page = b->file.columns.at(plan.schema.FindByName("page")->id);
  EXPECT_EQ(page.lower_bound, "A_very_long_page");  // truncated to 16 characters
  EXPECT_EQ(page.upper_bound, "Main_Page");
  EXPECT_EQ(page.null_value_count, 1);

  // An id past the dictionary is refused by the library, naming the column.
  dictionary[1] = DictionaryStringColumn("page", entries, {2, 0, 4});
  absl::StatusOr<WrittenDataFile> bad = WriteParquetDataFile(plan, dictionary, 3);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument) << bad.status();
  EXPECT_THAT(bad.status().message(), HasSubstr("dictionary id 4 of row 2"));
  // One id per row.
  dictionary[1] = DictionaryStringColumn("page", entries, {2, 0});
  EXPECT_EQ(WriteParquetDataFile(plan, dictionary, 3).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// Over many rows with nulls (the library hands a dictionary column to the
// writer a chunk of rows at a time, and pages fill up): still the same file
// as the plain column of its values.
TEST(ParquetFileWriterTest, LargeDictionaryColumnWithNullsIsTheSameFileAsItsValues) {
  const AppendPlan plan = Plan();
  constexpr int kRows = 50000;
  std::vector<std::string> owned;
  for (int e = 0; e < 3000; ++e) owned.push_back("page-" + std::to_string(e * 7919 % 100003));
  std::vector<absl::string_view> entries = {""};
  entries.insert(entries.end(), owned.begin(), owned.end());
  std::vector<int64_t> times;
  std::vector<uint32_t> ids;
  std::vector<uint8_t> validity;
  std::vector<std::optional<std::string>> values;
  for (int i = 0; i < kRows; ++i) {
    times.push_back(kT0 + i);
    const bool null = i % 7 == 3;
    const uint32_t id = null ? 0 : 1 + static_cast<uint32_t>((i * 2654435761u) % 3000);
    ids.push_back(id);
    validity.push_back(null ? 0 : 1);
    values.push_back(null ? std::nullopt : std::optional<std::string>(owned[id - 1]));
  }
  std::vector<Column> plain, dictionary;
  plain.push_back(Int64Column("__time", times));
  plain.push_back(StringColumn("page", values));
  dictionary.push_back(Int64Column("__time", times));
  dictionary.push_back(DictionaryStringColumn("page", entries, ids, validity));
  absl::StatusOr<WrittenDataFile> a = WriteParquetDataFile(plan, plain, kRows);
  absl::StatusOr<WrittenDataFile> b = WriteParquetDataFile(plan, dictionary, kRows);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(a->bytes, b->bytes);
  EXPECT_EQ(a->file.metrics_json, b->file.metrics_json);
  EXPECT_EQ(b->file.columns.at(plan.schema.FindByName("page")->id).null_value_count,
            (kRows + 3) / 7);
}

TEST(ParquetFileWriterTest, MetricsAndBounds) {
  const AppendPlan plan = Plan();
  absl::StatusOr<WrittenDataFile> written = WriteParquetDataFile(plan, SampleColumns(), 3);
  ASSERT_TRUE(written.ok()) << written.status();
  const DataFile& f = written->file;
  EXPECT_EQ(f.record_count, 3);
  EXPECT_EQ(f.file_size_in_bytes, static_cast<int64_t>(written->bytes.size()));
  ASSERT_TRUE(f.partition_value.has_value());
  EXPECT_EQ(*f.partition_value, 19782);  // days since 1970 of 2024-02-29

  const int32_t time_id = plan.schema.FindByName("__time")->id;
  const ColumnMetrics& time = f.columns.at(time_id);
  EXPECT_EQ(time.value_count, 3);
  EXPECT_EQ(time.null_value_count, 0);
  EXPECT_GT(time.column_size, 0);
  EXPECT_EQ(time.lower_bound, LongBytes(kT0));
  EXPECT_EQ(time.upper_bound, LongBytes(kT0 + 2 * kHourMicros));

  const ColumnMetrics& page = f.columns.at(plan.schema.FindByName("page")->id);
  EXPECT_EQ(page.null_value_count, 1);
  // Bounds keep 16 characters; the upper one is rounded up at its last.
  EXPECT_EQ(page.lower_bound, "A_very_long_page");
  EXPECT_EQ(page.upper_bound, "Main_Page");

  const ColumnMetrics& added = f.columns.at(plan.schema.FindByName("added")->id);
  EXPECT_EQ(added.null_value_count, 1);
  EXPECT_EQ(added.lower_bound, LongBytes(-7));
  EXPECT_EQ(added.upper_bound, LongBytes(5));

  const ColumnMetrics& ratio = f.columns.at(plan.schema.FindByName("ratio")->id);
  EXPECT_EQ(ratio.nan_value_count, 1);
  EXPECT_EQ(ratio.lower_bound, DoubleBytes(-2.25));
  EXPECT_EQ(ratio.upper_bound, DoubleBytes(0.5));

  // A list's metrics are its element's: 2 elements + a null list + an
  // empty list = 4 slots, 2 of them without a value; no bounds.
  const Field* tags = plan.schema.FindByName("tags");
  ASSERT_EQ(f.columns.count(tags->id), 0u);
  const ColumnMetrics& element = f.columns.at(tags->element_id);
  EXPECT_EQ(element.value_count, 4);
  EXPECT_EQ(element.null_value_count, 2);
  EXPECT_FALSE(element.lower_bound.has_value());
}

TEST(ParquetFileWriterTest, TruncatedUpperBoundIsRoundedUp) {
  const AppendPlan plan = Plan();
  const std::vector<std::optional<std::string>> pages = {std::string("abcdefghijklmnopqrstuvwxyz")};
  std::vector<Column> columns = {Int64Column("__time", {kT0}), StringColumn("page", pages)};
  absl::StatusOr<WrittenDataFile> written = WriteParquetDataFile(plan, columns, 1);
  ASSERT_TRUE(written.ok()) << written.status();
  const ColumnMetrics& page = written->file.columns.at(plan.schema.FindByName("page")->id);
  EXPECT_EQ(page.lower_bound, "abcdefghijklmnop");
  EXPECT_EQ(page.upper_bound, "abcdefghijklmnoq");
}

TEST(ParquetFileWriterTest, RowsOfTwoPartitionsAreRefused) {
  const AppendPlan plan = Plan();
  std::vector<Column> columns = {Int64Column("__time", {kT0, kT0 + 24 * kHourMicros})};
  absl::StatusOr<WrittenDataFile> written = WriteParquetDataFile(plan, columns, 2);
  EXPECT_EQ(written.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(written.status().message(), HasSubstr("more than one day partition"));
}

TEST(ParquetFileWriterTest, PartitionValueOfEachGranularity) {
  struct Case {
    TimePartitioning partitioning;
    int32_t value;  // of 2024-02-29T13:00:00Z
  };
  for (const Case& c : {Case{TimePartitioning::kHour, 19782 * 24 + 13},
                        Case{TimePartitioning::kDay, 19782},
                        Case{TimePartitioning::kMonth, 54 * 12 + 1},
                        Case{TimePartitioning::kYear, 54}}) {
    NewTableOptions options;
    options.table_uuid = "9c12d441-03fe-4693-9a96-a0705ddf69c1";
    options.location = "file:///tmp/t";
    options.fields = {{"__time", FieldType::kTimestamptz, true}};
    options.time_column = "__time";
    options.partitioning = c.partitioning;
    absl::StatusOr<AppendPlan> plan = PlanAppend(*NewTableMetadata(options), options.fields);
    ASSERT_TRUE(plan.ok()) << plan.status();
    absl::StatusOr<WrittenDataFile> written =
        WriteParquetDataFile(*plan, {Int64Column("__time", {kT0})}, 1);
    ASSERT_TRUE(written.ok()) << written.status();
    EXPECT_EQ(written->file.partition_value, c.value) << TimePartitioningName(c.partitioning);
  }
}

TEST(ParquetFileWriterTest, BadColumnsAreRefused) {
  const AppendPlan plan = Plan();
  std::vector<Column> unknown = {Int64Column("__time", {kT0}), Int64Column("nope", {1})};
  EXPECT_THAT(WriteParquetDataFile(plan, unknown, 1).status().message(),
              HasSubstr("\"nope\" is not in the table schema"));
  std::vector<Column> short_column = {Int64Column("__time", {kT0, kT0})};
  EXPECT_THAT(WriteParquetDataFile(plan, short_column, 3).status().message(),
              HasSubstr("int64_values has 2 entries, expected 3"));
  std::vector<Column> no_time = {Int64Column("added", {1})};
  EXPECT_THAT(WriteParquetDataFile(plan, no_time, 1).status().message(),
              HasSubstr("required column \"__time\" has no values"));
  std::vector<Column> empty = {Int64Column("__time", {})};
  EXPECT_THAT(WriteParquetDataFile(plan, empty, 0).status().message(),
              HasSubstr("at least one row"));
  std::vector<Column> null_time = {Int64Column("__time", {kT0}, {0})};
  EXPECT_THAT(WriteParquetDataFile(plan, null_time, 1).status().message(),
              HasSubstr("required but has a null"));
}

TEST(ParquetFileWriterTest, OversizedStringIsRefusedByTheWrapper) {
  const AppendPlan plan = Plan();
  const std::vector<std::optional<std::string>> pages = {std::string((1 << 20) + 1, 'x')};
  std::vector<Column> columns = {Int64Column("__time", {kT0}), StringColumn("page", pages)};
  absl::Status status = WriteParquetDataFile(plan, columns, 1).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(status.message(), HasSubstr("1048577 bytes, more than the limit of 1048576"));
}

TEST(ParquetFileWriterTest, TooManyRowsOrListElementsAreRefused) {
  const AppendPlan plan = Plan();
  absl::Status status = WriteParquetDataFile(plan, {}, 50000001).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(status.message(), HasSubstr("50000001 rows, more than the limit of 50000000"));

  const std::vector<std::optional<std::vector<std::string>>> tags = {
      std::vector<std::string>(10001, "t")};
  std::vector<Column> columns = {Int64Column("__time", {kT0}), StringListColumn("tags", tags)};
  status = WriteParquetDataFile(plan, columns, 1).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(status.message(), HasSubstr("a list of 10001 elements, more than the limit of 10000"));
}

// The library checks the same limits when called directly.
TEST(ParquetFileWriterTest, TooManyRowsAreRefusedByTheLibrary) {
  const char* request =
      R"({"schema":{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"n","required":false,"type":"long"}]}})";
  SluiceIcebergBytes file{}, metrics{}, error{};
  EXPECT_EQ(sluice_iceberg_write_parquet(request, nullptr, 0, 50000001, &file, &metrics, &error),
            SLUICE_ICEBERG_LIMIT_EXCEEDED);
  EXPECT_THAT(std::string(reinterpret_cast<const char*>(error.data), error.len),
              HasSubstr("more than the limit of 50000000"));
  sluice_iceberg_bytes_free(error);
}

TEST(ParquetFileWriterTest, OversizedStringIsRefusedByTheLibrary) {
  const std::string big((1 << 20) + 1, 'x');
  const uint64_t offsets[] = {0, big.size()};
  SluiceIcebergColumn column{};
  column.string_offsets = offsets;
  column.string_offset_count = 2;
  column.string_bytes = reinterpret_cast<const uint8_t*>(big.data());
  column.string_byte_count = big.size();
  const char* request =
      R"({"schema":{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"s","required":false,"type":"string"}]}})";
  SluiceIcebergBytes file{}, metrics{}, error{};
  const int32_t code =
      sluice_iceberg_write_parquet(request, &column, 1, 1, &file, &metrics, &error);
  EXPECT_EQ(code, SLUICE_ICEBERG_LIMIT_EXCEEDED);
  EXPECT_THAT(std::string(reinterpret_cast<const char*>(error.data), error.len),
              HasSubstr("more than the limit of 1048576"));
  EXPECT_EQ(file.data, nullptr);
  sluice_iceberg_bytes_free(file);
  sluice_iceberg_bytes_free(metrics);
  sluice_iceberg_bytes_free(error);
}

TEST(ParquetFileWriterTest, PanicInsideTheLibraryBecomesAnError) {
  SluiceIcebergBytes error{};
  EXPECT_EQ(sluice_iceberg_test_panic(&error), SLUICE_ICEBERG_INTERNAL);
  EXPECT_THAT(std::string(reinterpret_cast<const char*>(error.data), error.len),
              HasSubstr("panic in sluice_iceberg: test panic"));
  sluice_iceberg_bytes_free(error);
}

TEST(ParquetFileWriterTest, InvalidUtf8IsRefused) {
  const AppendPlan plan = Plan();
  const std::vector<std::optional<std::string>> pages = {std::string("\xff\xfe")};
  std::vector<Column> columns = {Int64Column("__time", {kT0}), StringColumn("page", pages)};
  EXPECT_THAT(WriteParquetDataFile(plan, columns, 1).status().message(),
              HasSubstr("not valid UTF-8"));
}

}  // namespace
}  // namespace iceberg
}  // namespace sluice
