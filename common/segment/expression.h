// The subset of Druid's expression language a transformSpec transform uses
// (sluice.v1.Transform.expression), compiled once and evaluated per row.
//
//   SLUICE_ASSIGN_OR_RETURN(Expression e,
//       Expression::Compile("concat(lower(page), '@', \"user-name\")"));
//   e.fields();        // {"page", "user-name"}: the input fields it reads
//   ExprScratch scratch;
//   ExprValue out = e.Eval(values_of_fields, row_time_ms, &scratch);
//
// Grammar: an expression is a function call, a field name (identifier
// [A-Za-z_$][A-Za-z0-9_$]*, or any name in double quotes, with the escapes
// of string literals), a 'string' literal (escapes \' \" \\ \n \t \r \uXXXX), a number
// literal (an optional '-', digits, optional fraction and exponent) or __time
// (the row's timestamp in epoch millis). Functions (names case-insensitive):
//   concat(x, ...)        the arguments as strings, joined; null if any is null
//   lower(s), upper(s)    ASCII letters only (other bytes unchanged); null stays null
//   substring(s, i, n)    n characters (code points) from the 0-based index i;
//                         n = -1: to the end. Null if s is null, i is negative
//                         or not below the length, or i / n are not numbers.
//   timestamp_format(t[, 'pattern'[, 'tz']])
//                         t (epoch millis) formatted with a Joda pattern, by
//                         default ISO-8601 (yyyy-MM-dd'T'HH:mm:ss.SSSZZ, "Z"
//                         for UTC); tz: UTC (the default), a fixed offset
//                         (+05:30, -08:00, +0530, -08) or an IANA zone name.
//                         pattern and tz must be string literals. Null if t
//                         is null or not a number.
// Pattern letters: y (yy: two digits), M (MMM short / MMMM full month name), d,
// D (day of year), E (EEE short / EEEE full weekday), a (AM/PM), H, k, h, K,
// m, s, S (fraction of second), Z (+0000; ZZ +05:30), 'quoted text', '' (a quote).
// Other ASCII letters are refused at compile time.
//
// Values: a JSON number reads as a number (its JSON text), a string as a
// string, true/false as "true"/"false", arrays and objects as their JSON
// text, null or an absent field as null. A runtime failure (a non-number
// where a number is needed) yields null, as in Druid.
//
// Size: every value an evaluation builds (each call's result, intermediate
// ones included) is at most kMaxValueBytes (format_limits.h), and all the
// values it builds together at most the caller's budget (by default
// kMaxRowValueBytes). Eval checks before it appends, so it never holds more:
// concat(a, a, ..., a) over a 50 KB field is refused, not built to 100 MB.
//
// Copyable and movable; Eval is const and thread-safe given distinct scratches.
#ifndef SLUICE_COMMON_SEGMENT_EXPRESSION_H_
#define SLUICE_COMMON_SEGMENT_EXPRESSION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace sluice {
namespace segment {

// Bound on the text, as in the proto.
inline constexpr size_t kMaxExpressionBytes = 4096;
// Nesting of calls; deeper expressions are refused at compile time.
inline constexpr int kMaxExpressionDepth = 64;

struct ExprValue {
  enum class Type : uint8_t { kNull, kString, kNumber };
  Type type = Type::kNull;
  // A number's decimal text; a string's bytes.
  absl::string_view text;

  bool is_null() const { return type == Type::kNull; }
  static ExprValue Null() { return ExprValue(); }
  static ExprValue String(absl::string_view s) { return ExprValue{Type::kString, s}; }
  static ExprValue Number(absl::string_view s) { return ExprValue{Type::kNumber, s}; }
};

// Buffers an evaluation writes into; the views Eval returns point into them
// (or into the inputs) until the next Eval with the same scratch.
struct ExprScratch {
  std::vector<std::string> buffers;
};

class Expression {
 public:
  // INVALID_ARGUMENT "<what> at column <n>" (1-based) for text that does not
  // parse, an unknown function, a wrong argument count, a pattern or time
  // zone that is not a string literal or not valid.
  static absl::StatusOr<Expression> Compile(absl::string_view text);

  Expression(const Expression&) = default;
  Expression& operator=(const Expression&) = default;
  Expression(Expression&&) = default;
  Expression& operator=(Expression&&) = default;
  ~Expression();

  // The distinct input fields the expression reads, in first-use order
  // (__time is not one of them).
  const std::vector<std::string>& fields() const { return fields_; }
  bool reads_time() const { return reads_time_; }

  // fields[i]: the value of fields()[i]; time_ms: the row's timestamp.
  // `budget`: the bytes the evaluation may build in all, decreased by what it
  // builds (shared by several evaluations, e.g. the transforms of one row);
  // null: kMaxRowValueBytes for this evaluation alone. INVALID_ARGUMENT
  // "<function> builds a value of more than <kMaxValueBytes> bytes (the
  // limit)" or "<function> builds more than the <budget> bytes left to build"
  // as soon as a value would pass either bound; nothing beyond them is
  // allocated.
  absl::StatusOr<ExprValue> Eval(absl::Span<const ExprValue> fields, int64_t time_ms,
                                 ExprScratch* scratch, size_t* budget = nullptr) const;

  struct Node;

 private:
  Expression() = default;

  std::vector<std::string> fields_;
  bool reads_time_ = false;
  // Immutable once compiled, so copies share it.
  std::shared_ptr<const std::vector<Node>> nodes_;
};

// A number value as an int64 (a fraction is truncated toward zero), or false
// when `text` is not a finite number within the int64 range. Used for
// timestamp_format's millis and substring's index/length; numeric strings
// count too, as in Druid.
bool ExprValueToLong(const ExprValue& value, int64_t* out);

}  // namespace segment
}  // namespace sluice

#endif  // SLUICE_COMMON_SEGMENT_EXPRESSION_H_
