// Row timestamps: epoch milliseconds from a JSON string or number in one of
// the schema's timestamp formats. Exact (decimal digits are never rounded
// through a double) and bounded to the years -9999..9999.
#ifndef SLUICE_COMMON_SEGMENT_TIMESTAMP_H_
#define SLUICE_COMMON_SEGMENT_TIMESTAMP_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/segment/schema.h"

namespace sluice {
namespace segment {

// 9999-12-31T23:59:59.999Z and -9999-01-01T00:00:00.000Z.
inline constexpr int64_t kMaxTimestampMs = 253402300799999;
inline constexpr int64_t kMinTimestampMs = -377705116800000;

enum class DecimalResult { kOk, kNotANumber, kOutOfRange };

// floor(number * 10^scale) for the text of a decimal number ("-12", "1.5",
// "1e3", "+7" when `allow_plus`), exactly.
DecimalResult ScaledDecimalFloor(absl::string_view text, int scale, bool allow_plus,
                                 int64_t* out);

// A JSON number token (as written in the record) in `format`. INVALID_ARGUMENT
// with the reason when the format wants a string (iso) or the value is out of
// range.
absl::StatusOr<int64_t> TimestampFromNumber(absl::string_view token, TimestampFormat format);

// An integer (a Kafka timestamp) in `format`: what TimestampFromNumber gives
// for its decimal text, value and error alike, without writing the text.
absl::StatusOr<int64_t> TimestampFromInteger(int64_t n, TimestampFormat format);

// A JSON string value in `format`: an ISO-8601 instant (iso, auto) or the
// decimal text of a number (auto, millis, posix, micros, nanos).
absl::StatusOr<int64_t> TimestampFromString(absl::string_view text, TimestampFormat format);

}  // namespace segment
}  // namespace sluice

#endif  // SLUICE_COMMON_SEGMENT_TIMESTAMP_H_
