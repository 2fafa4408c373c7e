#include "common/time_util.h"

#include <cstdlib>
#include <cstring>

#include "absl/base/config.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace sluice {

// Howard Hinnant's days_from_civil / civil_from_days (public domain
// algorithms, written out here from their description).
int64_t DaysFromCivil(int64_t y, int m, int d) {
  y -= m <= 2;
  const int64_t era = FloorDiv(y, 400);
  const int64_t yoe = y - era * 400;                                  // [0, 399]
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;  // [0, 365]
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;         // [0, 146096]
  return era * 146097 + doe - 719468;
}

CivilDate CivilFromDays(int64_t z) {
  z += 719468;
  const int64_t era = FloorDiv(z, 146097);
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int d = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  const int m = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  return CivilDate{yoe + era * 400 + (m <= 2), m, d};
}

namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Reads exactly n digits at text[*pos].
bool ReadDigits(absl::string_view text, size_t* pos, int n, int* out) {
  if (*pos + n > text.size()) return false;
  int v = 0;
  for (int i = 0; i < n; ++i) {
    const char c = text[*pos + i];
    if (!IsDigit(c)) return false;
    v = v * 10 + (c - '0');
  }
  *pos += n;
  *out = v;
  return true;
}

int DaysInMonth(int64_t year, int month) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (month == 2) {
    const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    return leap ? 29 : 28;
  }
  return kDays[month - 1];
}

absl::Status BadInstant(absl::string_view text, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("not an ISO-8601 instant (", why, "): \"",
                   text.substr(0, 64), "\""));
}

}  // namespace

// Read without the general parser's branches, and the day number of the last
// date seen is kept per thread (records of a stream share their date).
bool ParseCanonicalIsoInstant(absl::string_view text, int64_t* out) {
  static_assert(ABSL_IS_LITTLE_ENDIAN, "the word masks below are little-endian");
  if (text.size() != 24) return false;
  // Three 8-byte words, checked a word at a time: the separators where they
  // belong ("YYYY-MM-" "DDTHH:MM" ":SS.sssZ"), and every other byte a digit
  // (with the separators replaced by '0', each byte's high nibble is 3 and
  // adding 6 keeps it 3).
  static constexpr uint64_t kSepMask[3] = {0xff0000ff00000000, 0x0000ff0000ff0000,
                                           0xff000000ff0000ff};
  static constexpr char kSeparators[3][9] = {"\0\0\0\0-\0\0-", "\0\0T\0\0:\0\0",
                                             ":\0\0.\0\0\0Z"};
  auto bad_word = [](uint64_t word, int i) {
    uint64_t separators;
    std::memcpy(&separators, kSeparators[i], 8);
    const uint64_t digits = (word & ~kSepMask[i]) | (0x3030303030303030 & kSepMask[i]);
    return ((word & kSepMask[i]) ^ separators) |
           ((digits & 0xf0f0f0f0f0f0f0f0) ^ 0x3030303030303030) |
           (((digits + 0x0606060606060606) & 0xf0f0f0f0f0f0f0f0) ^ 0x3030303030303030);
  };
  uint64_t w[3];
  std::memcpy(w, text.data(), 24);
  const char* t = text.data();
  auto two = [t](int at) { return (t[at] - '0') * 10 + (t[at + 1] - '0'); };

  // The minute (the first 16 bytes, "YYYY-MM-DDTHH:MM") last read in full:
  // instants in order mostly share it, and then only the seconds word is
  // read. Only a minute that passed every check below is kept.
  struct LastMinute {
    uint64_t words[2] = {0, 0};
    bool set = false;
    int64_t minute_ms = 0;
  };
  static thread_local LastMinute last;
  int64_t minute_ms;
  if (last.set && last.words[0] == w[0] && last.words[1] == w[1]) {
    minute_ms = last.minute_ms;
  } else {
    if ((bad_word(w[0], 0) | bad_word(w[1], 1)) != 0) return false;
    const int hour = two(11), minute = two(14);
    if (hour > 23 || minute > 59) return false;
    const int year = two(0) * 100 + two(2);
    const int month = two(5), day = two(8);
    if (month < 1 || month > 12 || day < 1 || day > DaysInMonth(year, month)) return false;
    minute_ms = (DaysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60) * 1000;
    last.words[0] = w[0];
    last.words[1] = w[1];
    last.set = true;
    last.minute_ms = minute_ms;
  }
  if (bad_word(w[2], 2) != 0) return false;
  const int second = two(17);
  if (second > 59) return false;
  const int millis = (t[20] - '0') * 100 + (t[21] - '0') * 10 + (t[22] - '0');
  *out = minute_ms + second * 1000 + millis;
  return true;
}

absl::StatusOr<int64_t> ParseIsoInstantMillis(absl::string_view text) {
  if (int64_t ms; ParseCanonicalIsoInstant(text, &ms)) return ms;
  size_t pos = 0;
  int year, month, day;
  bool negative_year = false;
  if (!text.empty() && (text[0] == '+' || text[0] == '-')) {
    negative_year = text[0] == '-';
    pos = 1;
  }
  if (!ReadDigits(text, &pos, 4, &year)) return BadInstant(text, "year");
  if (pos >= text.size() || text[pos] != '-') return BadInstant(text, "expected '-' after year");
  ++pos;
  if (!ReadDigits(text, &pos, 2, &month) || month < 1 || month > 12) {
    return BadInstant(text, "month");
  }
  if (pos >= text.size() || text[pos] != '-') return BadInstant(text, "expected '-' after month");
  ++pos;
  const int64_t y = negative_year ? -year : year;
  if (!ReadDigits(text, &pos, 2, &day) || day < 1 || day > DaysInMonth(y, month)) {
    return BadInstant(text, "day");
  }
  int hour = 0, minute = 0, second = 0;
  int64_t millis = 0;
  int64_t offset_minutes = 0;
  if (pos < text.size() && (text[pos] == 'T' || text[pos] == 't' || text[pos] == ' ')) {
    ++pos;
    if (!ReadDigits(text, &pos, 2, &hour) || hour > 24) return BadInstant(text, "hour");
    if (pos >= text.size() || text[pos] != ':') return BadInstant(text, "expected ':' after hour");
    ++pos;
    if (!ReadDigits(text, &pos, 2, &minute) || minute > 59) return BadInstant(text, "minute");
    if (pos < text.size() && text[pos] == ':') {
      ++pos;
      // 60 is accepted for a leap second and folds into the next minute.
      if (!ReadDigits(text, &pos, 2, &second) || second > 60) return BadInstant(text, "second");
      if (pos < text.size() && (text[pos] == '.' || text[pos] == ',')) {
        ++pos;
        int digits = 0;
        int64_t frac = 0;
        while (pos < text.size() && IsDigit(text[pos])) {
          if (digits < 3) frac = frac * 10 + (text[pos] - '0');
          ++digits;
          ++pos;
        }
        if (digits == 0 || digits > 9) return BadInstant(text, "fraction of a second");
        for (int i = digits; i < 3; ++i) frac *= 10;
        millis = frac;
      }
    }
    if (hour == 24 && (minute != 0 || second != 0 || millis != 0)) {
      return BadInstant(text, "hour");
    }
    if (pos < text.size()) {
      const char z = text[pos];
      if (z == 'Z' || z == 'z') {
        ++pos;
      } else if (z == '+' || z == '-') {
        ++pos;
        int oh = 0, om = 0;
        if (!ReadDigits(text, &pos, 2, &oh) || oh > 23) return BadInstant(text, "zone offset");
        if (pos < text.size() && text[pos] == ':') ++pos;
        if (pos < text.size()) {
          if (!ReadDigits(text, &pos, 2, &om) || om > 59) return BadInstant(text, "zone offset");
        }
        offset_minutes = (z == '-' ? -1 : 1) * (oh * 60 + om);
      }
    }
  }
  if (pos != text.size()) return BadInstant(text, "unexpected trailing characters");
  const int64_t days = DaysFromCivil(y, month, day);
  const int64_t seconds = days * 86400 + hour * 3600 + minute * 60 + second -
                          offset_minutes * 60;
  return seconds * 1000 + millis;
}

std::string FormatIsoInstant(int64_t epoch_ms) {
  const int64_t days = FloorDiv(epoch_ms, 86400000);
  const int64_t ms_of_day = epoch_ms - days * 86400000;
  const CivilDate date = CivilFromDays(days);
  const int64_t h = ms_of_day / 3600000;
  const int64_t m = (ms_of_day / 60000) % 60;
  const int64_t s = (ms_of_day / 1000) % 60;
  const int64_t ms = ms_of_day % 1000;
  return absl::StrFormat("%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", date.year, date.month,
                         date.day, h, m, s, ms);
}

absl::StatusOr<absl::Duration> ParseIsoDuration(absl::string_view text) {
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(
        "not an ISO-8601 duration (", why, "): \"", text.substr(0, 64),
        "\"; examples: PT1H, PT10M, PT0.5S, P1D"));
  };
  size_t pos = 0;
  if (text.empty() || (text[0] != 'P' && text[0] != 'p')) return bad("must start with 'P'");
  ++pos;
  bool in_time = false;
  bool any = false;
  absl::Duration total = absl::ZeroDuration();
  // Order of designators that may appear, to refuse "PT1S1H" and repeats.
  int last_rank = -1;
  while (pos < text.size()) {
    if (text[pos] == 'T' || text[pos] == 't') {
      if (in_time) return bad("repeated 'T'");
      in_time = true;
      ++pos;
      if (pos == text.size()) return bad("'T' without hours, minutes or seconds");
      continue;
    }
    const size_t start = pos;
    while (pos < text.size() && (IsDigit(text[pos]) || text[pos] == '.' || text[pos] == ',')) ++pos;
    if (start == pos) return bad("expected a number");
    if (pos == text.size()) return bad("number without a unit");
    std::string number(text.substr(start, pos - start));
    for (char& c : number) {
      if (c == ',') c = '.';
    }
    char* end = nullptr;
    const double value = std::strtod(number.c_str(), &end);
    if (end != number.c_str() + number.size() || !(value >= 0) || value > 1e12) {
      return bad("bad number");
    }
    const char unit = static_cast<char>(text[pos] & ~0x20);  // upper case
    ++pos;
    int rank;
    absl::Duration unit_duration;
    if (!in_time) {
      switch (unit) {
        case 'Y':
        case 'M':
          return bad("years and months have no fixed length; use days or weeks");
        case 'W': rank = 0; unit_duration = absl::Hours(24 * 7); break;
        case 'D': rank = 1; unit_duration = absl::Hours(24); break;
        default: return bad("unknown date unit");
      }
    } else {
      switch (unit) {
        case 'H': rank = 2; unit_duration = absl::Hours(1); break;
        case 'M': rank = 3; unit_duration = absl::Minutes(1); break;
        case 'S': rank = 4; unit_duration = absl::Seconds(1); break;
        default: return bad("unknown time unit");
      }
    }
    if (rank <= last_rank) return bad("units out of order or repeated");
    last_rank = rank;
    if (number.find('.') != std::string::npos && pos != text.size()) {
      return bad("only the last number may have a fraction");
    }
    total += unit_duration * value;
    any = true;
  }
  if (!any) return bad("no value");
  return total;
}

std::string FormatIsoDuration(absl::Duration d) {
  if (d <= absl::ZeroDuration()) return "PT0S";
  const int64_t total_ms = absl::ToInt64Milliseconds(d);
  int64_t rest = total_ms;
  const int64_t days = rest / 86400000;
  rest %= 86400000;
  const int64_t hours = rest / 3600000;
  rest %= 3600000;
  const int64_t minutes = rest / 60000;
  rest %= 60000;
  const int64_t seconds = rest / 1000;
  const int64_t millis = rest % 1000;
  std::string out = "P";
  if (days) absl::StrAppend(&out, days, "D");
  if (hours || minutes || seconds || millis) {
    out += "T";
    if (hours) absl::StrAppend(&out, hours, "H");
    if (minutes) absl::StrAppend(&out, minutes, "M");
    if (seconds || millis) {
      if (millis) {
        std::string frac = absl::StrFormat("%03d", millis);
        while (!frac.empty() && frac.back() == '0') frac.pop_back();
        absl::StrAppend(&out, seconds, ".", frac, "S");
      } else {
        absl::StrAppend(&out, seconds, "S");
      }
    }
  }
  if (out == "P") out = "PT0S";
  return out;
}

}  // namespace sluice
