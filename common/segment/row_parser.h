// Parses a Kafka record value (a JSON object) into an InputRow, per a Schema.
//
//   SLUICE_ASSIGN_OR_RETURN(auto parser, RowParser::Create(schema));
//   InputRow row;
//   ParseError error = parser->Parse(record_value, &row);
//   if (!error.ok()) { count error.kind, keep error.message as a sample }
//   else index->Add(row, partition, offset);
//
// Reads a plain record in one pass (plain_json.h), anything else with
// simdjson's on-demand API; both give the same row or error. Fields the schema does not use are skipped
// without being fully validated (on-demand only checks the structure of what
// it skips), so a record with a malformed unused field may still parse.
// Dimension values: strings as they are (unescaped), numbers and booleans as
// their JSON text, arrays and objects as their raw JSON text; null is absent.
// Metric inputs: JSON numbers or numeric strings; long metrics truncate
// fractions toward zero; non-finite strings ("NaN", "Infinity") are accepted
// by double metrics.
//
// One RowParser per thread: Parse reuses its buffers, and the views in the
// row it fills (into `value` or the parser's buffers) stay valid until the
// next Parse and while `value` is.

#ifndef SLUICE_COMMON_SEGMENT_ROW_PARSER_H_
#define SLUICE_COMMON_SEGMENT_ROW_PARSER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/segment/input_row.h"
#include "common/segment/record_envelope.h"
#include "common/segment/row_transform.h"
#include "common/segment/schema.h"

namespace sluice {
namespace segment {

enum class ParseErrorKind : uint8_t {
  kNone = 0,
  kNotJson,       // not a JSON object (or malformed JSON in a field used)
  kNoTimestamp,   // timestamp field missing or null
  kBadTimestamp,  // timestamp of the wrong type, unparseable or out of range
  kBadNumber,     // a metric input that is not a number, or out of range
  kValueTooLarge, // a dimension value, array or row beyond format_limits.h
  kBadHeader,     // kafka input format: a header name or value that does not decode
};

// "NOT_JSON", "NO_TIMESTAMP", "BAD_TIMESTAMP", "BAD_NUMBER", "VALUE_TOO_LARGE",
// "BAD_HEADER" (as in
// sluice.v1.ParseErrorSample.kind); "" for kNone.
const char* ParseErrorKindName(ParseErrorKind kind);

struct ParseError {
  ParseErrorKind kind = ParseErrorKind::kNone;
  // Why, naming the field: e.g. "metric \"added\" (field \"added\"): not a number: \"abc\"".
  std::string message;

  bool ok() const { return kind == ParseErrorKind::kNone; }
  // INVALID_ARGUMENT "<KIND>: <message>" (OK when ok()).
  absl::Status ToStatus() const;
};

class RowParser {
 public:
  // INVALID_ARGUMENT if the schema does not validate.
  static absl::StatusOr<std::unique_ptr<RowParser>> Create(const Schema& schema);
  // The same, applying a transformSpec to every row (row_transform.h): its
  // outputs replace the record fields of their names, and a row its filter
  // rejects comes back with InputRow::thrown_away set (and nothing else
  // meaningful: do not index it). A record that does not parse is a parse
  // error even when the filter would have rejected it.
  static absl::StatusOr<std::unique_ptr<RowParser>> Create(const Schema& schema,
                                                           const RowTransform& transform);
  ~RowParser();
  RowParser(const RowParser&) = delete;
  RowParser& operator=(const RowParser&) = delete;

  // Fills `row` (resetting what it held) from one record value.
  ParseError Parse(absl::string_view value, InputRow* row);
  // The same, with the record's envelope columns as fields of the row beside
  // the value's (record_envelope.h): a listed dimension, a metric input or
  // the timestamp column may name one, discovery takes them (except those
  // excluded), and a non-null field of the value of the same name wins. Their
  // values are held to the same limits (format_limits.h) as the value's.
  ParseError Parse(absl::string_view value, const RecordEnvelope& envelope, InputRow* row);

  const Schema& schema() const;

  // Whether Parse may read the text of a field or envelope column `name`:
  // false when the spec reads it as the row time only (not a dimension,
  // discovered, a metric input, a transform or filter input), as for the
  // Kafka timestamp column whose number RecordEnvelope::timestamp_ms then
  // gives the row time.
  bool ReadsColumnText(absl::string_view name) const;

  // Records read in one pass without simdjson (plain_json.h): strictly valid
  // JSON with no escape, array or object in a field the spec uses, numbers
  // read exactly, and no parse error. Anything else is read with simdjson as
  // before, so rows, errors and messages are the same either way. Off
  // (set_plain_scan(false)): every record goes to simdjson (for tests that
  // compare the two). plain_records(): how many records the one pass took.
  void set_plain_scan(bool on);
  int64_t plain_records() const;

 private:
  struct Impl;
  explicit RowParser(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace segment
}  // namespace sluice

#endif  // SLUICE_COMMON_SEGMENT_ROW_PARSER_H_
