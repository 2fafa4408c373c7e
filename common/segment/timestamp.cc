#include "common/segment/timestamp.h"

#include "absl/strings/str_cat.h"
#include "common/time_util.h"

namespace sluice {
namespace segment {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

absl::Status OutOfRange(absl::string_view text) {
  return absl::InvalidArgumentError(absl::StrCat(
      "timestamp ", text.substr(0, 40), " is outside the years -9999..9999"));
}

absl::StatusOr<int64_t> Checked(int64_t ms, absl::string_view text) {
  if (ms < kMinTimestampMs || ms > kMaxTimestampMs) return OutOfRange(text);
  return ms;
}

absl::Status NotANumber(absl::string_view text, TimestampFormat format) {
  return absl::InvalidArgumentError(absl::StrCat("expected a number (", TimestampFormatName(format),
                                                 "), got \"", text.substr(0, 40), "\""));
}

// Epoch milliseconds from a number's text in a numeric format (or auto).
absl::StatusOr<int64_t> FromNumberText(absl::string_view text, TimestampFormat format,
                                       bool allow_plus) {
  int scale = 0;
  switch (format) {
    case TimestampFormat::kMillis: scale = 0; break;
    case TimestampFormat::kPosix: scale = 3; break;
    case TimestampFormat::kMicros: scale = -3; break;
    case TimestampFormat::kNanos: scale = -6; break;
    case TimestampFormat::kAuto: {
      // Millis when |n| >= 10^11 (after 1973-03-03 as millis), else seconds.
      int64_t as_millis;
      switch (ScaledDecimalFloor(text, 0, allow_plus, &as_millis)) {
        case DecimalResult::kNotANumber: return NotANumber(text, format);
        case DecimalResult::kOutOfRange: return OutOfRange(text);
        case DecimalResult::kOk: break;
      }
      if (as_millis >= 100000000000 || as_millis <= -100000000000) {
        return Checked(as_millis, text);
      }
      scale = 3;
      break;
    }
    case TimestampFormat::kIso:
      return absl::InvalidArgumentError(
          absl::StrCat("expected an ISO-8601 string, got the number ", text.substr(0, 40)));
  }
  int64_t ms;
  switch (ScaledDecimalFloor(text, scale, allow_plus, &ms)) {
    case DecimalResult::kNotANumber: return NotANumber(text, format);
    case DecimalResult::kOutOfRange: return OutOfRange(text);
    case DecimalResult::kOk: break;
  }
  return Checked(ms, text);
}

}  // namespace

DecimalResult ScaledDecimalFloor(absl::string_view text, int scale, bool allow_plus,
                                 int64_t* out) {
  size_t i = 0;
  bool negative = false;
  if (i < text.size() && (text[i] == '-' || (allow_plus && text[i] == '+'))) {
    negative = text[i] == '-';
    ++i;
  }
  // Digits d[0..n) with `int_digits` of them before the decimal point.
  const size_t digits_begin = i;
  while (i < text.size() && IsDigit(text[i])) ++i;
  const size_t int_digits = i - digits_begin;
  size_t frac_begin = i, frac_digits = 0;
  if (i < text.size() && text[i] == '.') {
    frac_begin = ++i;
    while (i < text.size() && IsDigit(text[i])) ++i;
    frac_digits = i - frac_begin;
  }
  if (int_digits + frac_digits == 0) return DecimalResult::kNotANumber;
  int64_t exponent = 0;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    bool exp_negative = false;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) exp_negative = text[i++] == '-';
    const size_t exp_begin = i;
    while (i < text.size() && IsDigit(text[i])) {
      if (exponent < 100000) exponent = exponent * 10 + (text[i] - '0');
      ++i;
    }
    if (i == exp_begin) return DecimalResult::kNotANumber;
    if (exp_negative) exponent = -exponent;
  }
  if (i != text.size()) return DecimalResult::kNotANumber;

  const int64_t n = static_cast<int64_t>(int_digits + frac_digits);
  auto digit = [&](int64_t k) -> int {
    return k < static_cast<int64_t>(int_digits) ? text[digits_begin + k] - '0'
                                                 : text[frac_begin + (k - int_digits)] - '0';
  };
  // value = int(d) * 10^(int_digits - n + exponent); scaled by 10^scale.
  const int64_t shift = static_cast<int64_t>(int_digits) - n + exponent + scale;
  // Keep the digits that land at or above the units place.
  const int64_t keep = shift >= 0 ? n : n + shift;
  unsigned __int128 value = 0;
  const unsigned __int128 kLimit = static_cast<unsigned __int128>(1) << 64;
  for (int64_t k = 0; k < keep; ++k) {
    value = value * 10 + digit(k);
    if (value >= kLimit) return DecimalResult::kOutOfRange;
  }
  bool dropped_nonzero = false;
  for (int64_t k = keep < 0 ? 0 : keep; k < n; ++k) {
    if (digit(k) != 0) dropped_nonzero = true;
  }
  for (int64_t k = 0; k < shift && value != 0; ++k) {
    value *= 10;
    if (value >= kLimit) return DecimalResult::kOutOfRange;
  }
  if (negative) {
    if (dropped_nonzero) value += 1;  // floor of a negative number
    if (value > (static_cast<unsigned __int128>(1) << 63)) return DecimalResult::kOutOfRange;
    *out = static_cast<int64_t>(-static_cast<__int128>(value));
  } else {
    if (value > static_cast<unsigned __int128>(INT64_MAX)) return DecimalResult::kOutOfRange;
    *out = static_cast<int64_t>(value);
  }
  return DecimalResult::kOk;
}

absl::StatusOr<int64_t> TimestampFromNumber(absl::string_view token, TimestampFormat format) {
  return FromNumberText(token, format, /*allow_plus=*/false);
}

absl::StatusOr<int64_t> TimestampFromInteger(int64_t n, TimestampFormat format) {
  // The text only for an error message, as TimestampFromNumber words it.
  auto out_of_range = [n] { return OutOfRange(absl::StrCat(n)); };
  auto scaled = [&](int64_t factor) -> absl::StatusOr<int64_t> {
    int64_t ms;
    if (__builtin_mul_overflow(n, factor, &ms)) return out_of_range();
    if (ms < kMinTimestampMs || ms > kMaxTimestampMs) return out_of_range();
    return ms;
  };
  // floor(n / divisor): ScaledDecimalFloor rounds toward negative infinity.
  auto floored = [&](int64_t divisor) -> absl::StatusOr<int64_t> {
    int64_t ms = n / divisor;
    if (n % divisor != 0 && n < 0) --ms;
    if (ms < kMinTimestampMs || ms > kMaxTimestampMs) return out_of_range();
    return ms;
  };
  switch (format) {
    case TimestampFormat::kMillis: return scaled(1);
    case TimestampFormat::kPosix: return scaled(1000);
    case TimestampFormat::kMicros: return floored(1000);
    case TimestampFormat::kNanos: return floored(1000000);
    case TimestampFormat::kAuto:
      // Millis when |n| >= 10^11 (after 1973-03-03 as millis), else seconds.
      return n >= 100000000000 || n <= -100000000000 ? scaled(1) : scaled(1000);
    case TimestampFormat::kIso:
      return absl::InvalidArgumentError(
          absl::StrCat("expected an ISO-8601 string, got the number ", n));
  }
  return absl::InvalidArgumentError("unknown timestamp format");
}

absl::StatusOr<int64_t> TimestampFromString(absl::string_view text, TimestampFormat format) {
  if (text.empty()) return absl::InvalidArgumentError("timestamp is an empty string");
  if (format == TimestampFormat::kIso || format == TimestampFormat::kAuto) {
    absl::StatusOr<int64_t> ms = ParseIsoInstantMillis(text);
    if (ms.ok()) return Checked(*ms, text);
    // auto also takes a number written as a string.
    const bool numeric = text.find_first_not_of("0123456789+-.eE") == absl::string_view::npos;
    if (format == TimestampFormat::kIso || !numeric) return ms.status();
  }
  return FromNumberText(text, format, /*allow_plus=*/true);
}

}  // namespace segment
}  // namespace sluice
