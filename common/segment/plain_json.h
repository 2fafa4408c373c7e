// A strict one-pass scanner for the plain case of a JSON record value, used
// by the row parser (row_parser.cc) to read the fields a spec uses without
// simdjson's structural index of the whole record: strings, numbers,
// literals and nested values are checked against RFC 8259 (and strings as
// UTF-8) while they are stepped over.
//
// Every function returns nullptr where what it reads is not strictly valid
// JSON (or deeper than kMaxPlainDepth): the row parser then hands the record
// to simdjson, which decides what it is. So the scanner never decides an
// error; it only accepts, and only what any JSON parser accepts.
//
// `end` is the end of the record; the functions read up to 16 bytes past a
// position before `end` (the row parser's simdjson padding covers them).
// ReadNumber and ScanPlainString, the row parser's readers of the values it
// uses, also need a NUL at `end` (the row parser writes it into its padded
// copy of the record): it stops their loops, which then check no bounds.
#ifndef SLUICE_COMMON_SEGMENT_PLAIN_JSON_H_
#define SLUICE_COMMON_SEGMENT_PLAIN_JSON_H_

#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace sluice {
namespace segment {
namespace plain_json {

#if defined(__GNUC__)
#define SLUICE_PLAIN_JSON_INLINE inline __attribute__((always_inline))
#else
#define SLUICE_PLAIN_JSON_INLINE inline
#endif

// Nesting beyond this goes to simdjson (whose own limit is far higher).
constexpr int kMaxPlainDepth = 64;

inline bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

inline const char* SkipSpace(const char* p, const char* end) {
  // The usual case first: no whitespace (every byte above ' ' is none).
  if (p < end && static_cast<unsigned char>(*p) > ' ') return p;
  while (p < end && IsSpace(*p)) ++p;
  return p;
}

// One UTF-8 sequence whose lead byte (>= 0x80) is at p: the byte after it,
// or nullptr for an invalid one (overlong, surrogate, beyond U+10FFFF,
// truncated).
inline const char* Utf8Sequence(const char* p, const char* end) {
  const unsigned char* u = reinterpret_cast<const unsigned char*>(p);
  const unsigned char lead = u[0];
  long n;
  uint32_t cp;
  if (lead >= 0xC2 && lead <= 0xDF) {
    n = 2;
    cp = lead & 0x1F;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    n = 3;
    cp = lead & 0x0F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    n = 4;
    cp = lead & 0x07;
  } else {
    return nullptr;
  }
  if (end - p < n) return nullptr;
  for (long i = 1; i < n; ++i) {
    if ((u[i] & 0xC0) != 0x80) return nullptr;
    cp = (cp << 6) | (u[i] & 0x3F);
  }
  if (n == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) return nullptr;
  if (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) return nullptr;
  return p + n;
}

#if defined(__SSE2__)
// Of the 16 bytes at p, a bit for each that ends a plain run of string
// content: a quote, a backslash, a control character or a non-ASCII byte
// (its high bit).
SLUICE_PLAIN_JSON_INLINE int StringStopMask(const char* p) {
  const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i quote = _mm_cmpeq_epi8(x, _mm_set1_epi8('"'));
  const __m128i backslash = _mm_cmpeq_epi8(x, _mm_set1_epi8('\\'));
  const __m128i control = _mm_cmpeq_epi8(_mm_max_epu8(x, _mm_set1_epi8(0x1F)), _mm_set1_epi8(0x1F));
  return _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(quote, backslash), _mm_or_si128(control, x)));
}
#endif

inline bool IsHex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// A string whose content starts at p (after its opening quote): the position
// of its closing quote, or nullptr. *escaped is set when it holds an escape
// (each checked: \" \\ \/ \b \f \n \r \t \uXXXX).
inline const char* ScanString(const char* p, const char* end, bool* escaped) {
  for (;;) {
#if defined(__SSE2__)
    // 16 bytes at a time to the next quote, backslash, control character or
    // non-ASCII byte.
    for (;;) {
      if (p >= end) return nullptr;
      const int mask = StringStopMask(p);
      if (mask != 0) {
        p += __builtin_ctz(static_cast<unsigned>(mask));
        break;
      }
      p += 16;
    }
#endif
    if (p >= end) return nullptr;
    const unsigned char c = static_cast<unsigned char>(*p);
    if (c == '"') return p;
    if (c == '\\') {
      *escaped = true;
      if (end - p < 2) return nullptr;
      switch (p[1]) {
        case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
          p += 2;
          break;
        case 'u':
          if (end - p < 6 || !IsHex(p[2]) || !IsHex(p[3]) || !IsHex(p[4]) || !IsHex(p[5])) {
            return nullptr;
          }
          p += 6;
          break;
        default:
          return nullptr;
      }
      continue;
    }
    if (c < 0x20) return nullptr;
    if (c >= 0x80) {
      p = Utf8Sequence(p, end);
      if (p == nullptr) return nullptr;
      continue;
    }
    ++p;
  }
}

inline bool IsDigit(char c) { return static_cast<unsigned char>(c - '0') <= 9; }

// A number starting at p: the byte after it, or nullptr. *is_integer: no
// fraction and no exponent.
inline const char* ScanNumber(const char* p, const char* end, bool* is_integer) {
  if (p < end && *p == '-') ++p;
  if (p >= end) return nullptr;
  if (*p == '0') {
    ++p;
  } else if (*p >= '1' && *p <= '9') {
    while (p < end && IsDigit(*p)) ++p;
  } else {
    return nullptr;
  }
  *is_integer = true;
  if (p < end && *p == '.') {
    *is_integer = false;
    ++p;
    if (p >= end || !IsDigit(*p)) return nullptr;
    while (p < end && IsDigit(*p)) ++p;
  }
  if (p < end && (*p == 'e' || *p == 'E')) {
    *is_integer = false;
    ++p;
    if (p < end && (*p == '+' || *p == '-')) ++p;
    if (p >= end || !IsDigit(*p)) return nullptr;
    while (p < end && IsDigit(*p)) ++p;
  }
  return p;
}

// A number token at p, checked as ScanNumber checks it and read in the same
// pass: the byte after it, or nullptr. *is_integer as ScanNumber says.
// *exact: the value is cheap to get exactly, and then *integer (at most 18
// digits) or *real is it: a decimal whose digits make at most 2^53 and whose
// power of ten is within 10^-22..10^22 is one multiplication or division of
// two exact doubles, so rounded correctly, as any correct parser rounds it.
// *exact false for any other number (the caller then reads it another way).
// Needs the byte at `end` readable and none of "0-9 . e E + -" (the caller's
// NUL sentinel): it ends the token, so no digit needs a bounds check.
SLUICE_PLAIN_JSON_INLINE const char* ReadNumber(const char* p, const char* end,
                                                bool* is_integer, bool* exact,
                                                int64_t* integer, double* real) {
  const bool negative = *p == '-';
  if (negative) ++p;
  uint64_t mantissa = 0;
  int digits = 0;
  if (*p == '0') {
    ++p;
    digits = 1;
  } else if (*p >= '1' && *p <= '9') {
    // Unsigned arithmetic: past 19 digits it wraps (defined), and any
    // count of digits beyond 18 is not exact anyway.
    for (; IsDigit(*p); ++p) {
      mantissa = mantissa * 10 + static_cast<uint64_t>(*p - '0');
      ++digits;
    }
  } else {
    return nullptr;  // the sentinel included: nothing after a '-'
  }
  if (*p != '.' && *p != 'e' && *p != 'E') {
    *is_integer = true;
    *exact = digits <= 18;
    if (*exact) {  // (beyond, the mantissa may have wrapped: no value)
      const int64_t magnitude = static_cast<int64_t>(mantissa);
      *integer = negative ? -magnitude : magnitude;
    }
    return p;
  }
  *is_integer = false;
  int exponent = 0;
  if (*p == '.') {
    ++p;
    if (!IsDigit(*p)) return nullptr;
    for (; IsDigit(*p); ++p) {
      mantissa = mantissa * 10 + static_cast<uint64_t>(*p - '0');
      ++digits;
      --exponent;
    }
  }
  if (*p == 'e' || *p == 'E') {
    ++p;
    const bool negative_exponent = *p == '-';
    if (*p == '+' || *p == '-') ++p;
    if (!IsDigit(*p)) return nullptr;
    int e = 0;
    for (; IsDigit(*p); ++p) {
      // Capped: beyond 10^22 either way nothing is exact (at most 18
      // fraction digits move the power).
      if (e < 100000) e = e * 10 + (*p - '0');
    }
    exponent += negative_exponent ? -e : e;
  }
  *exact = digits <= 18 && mantissa <= (uint64_t{1} << 53) && exponent >= -22 && exponent <= 22;
  if (*exact) {
    static constexpr double kPowers[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                         1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                         1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    double value = static_cast<double>(mantissa);
    value = exponent < 0 ? value / kPowers[-exponent] : value * kPowers[exponent];
    *real = negative ? -value : value;
  }
  return p;
}

// A string whose content starts at p and holds no escape: its closing
// quote, or nullptr for any other (an escape, a control character, invalid
// UTF-8, no closing quote before `end`). Needs 16 readable bytes past `end`
// and a control character at `end` (the caller's NUL sentinel), which stops
// the scan, so no position needs a bounds check.
SLUICE_PLAIN_JSON_INLINE const char* ScanPlainString(const char* p, const char* end) {
  for (;;) {
#if defined(__SSE2__)
    for (;;) {
      const int mask = StringStopMask(p);
      if (mask != 0) {
        p += __builtin_ctz(static_cast<unsigned>(mask));
        break;
      }
      p += 16;
    }
#else
    while (static_cast<unsigned char>(*p) >= 0x20 && static_cast<unsigned char>(*p) < 0x80 &&
           *p != '"' && *p != '\\') {
      ++p;
    }
#endif
    const unsigned char c = static_cast<unsigned char>(*p);
    if (c == '"') return p < end ? p : nullptr;
    if (c < 0x80) return nullptr;  // a backslash or a control character (the sentinel)
    p = Utf8Sequence(p, end);
    if (p == nullptr) return nullptr;
  }
}

// The literal `word` (true, false, null) at p: the byte after it, or nullptr.
inline const char* ScanLiteral(const char* p, const char* end, const char* word, long size) {
  if (end - p < size || std::memcmp(p, word, static_cast<size_t>(size)) != 0) return nullptr;
  return p + size;
}

// Any value starting at p (p < end, not whitespace), at nesting `depth`:
// the byte after it, or nullptr.
inline const char* SkipValue(const char* p, const char* end, int depth) {
  switch (*p) {
    case '"': {
      bool escaped = false;
      const char* q = ScanString(p + 1, end, &escaped);
      return q == nullptr ? nullptr : q + 1;
    }
    case '{': {
      if (depth >= kMaxPlainDepth) return nullptr;
      p = SkipSpace(p + 1, end);
      if (p >= end) return nullptr;
      if (*p == '}') return p + 1;
      for (;;) {
        if (*p != '"') return nullptr;
        bool escaped = false;
        p = ScanString(p + 1, end, &escaped);
        if (p == nullptr) return nullptr;
        p = SkipSpace(p + 1, end);
        if (p >= end || *p != ':') return nullptr;
        p = SkipSpace(p + 1, end);
        if (p >= end) return nullptr;
        p = SkipValue(p, end, depth + 1);
        if (p == nullptr) return nullptr;
        p = SkipSpace(p, end);
        if (p >= end) return nullptr;
        if (*p == '}') return p + 1;
        if (*p != ',') return nullptr;
        p = SkipSpace(p + 1, end);
        if (p >= end) return nullptr;
      }
    }
    case '[': {
      if (depth >= kMaxPlainDepth) return nullptr;
      p = SkipSpace(p + 1, end);
      if (p >= end) return nullptr;
      if (*p == ']') return p + 1;
      for (;;) {
        p = SkipValue(p, end, depth + 1);
        if (p == nullptr) return nullptr;
        p = SkipSpace(p, end);
        if (p >= end) return nullptr;
        if (*p == ']') return p + 1;
        if (*p != ',') return nullptr;
        p = SkipSpace(p + 1, end);
        if (p >= end) return nullptr;
      }
    }
    case 't':
      return ScanLiteral(p, end, "true", 4);
    case 'f':
      return ScanLiteral(p, end, "false", 5);
    case 'n':
      return ScanLiteral(p, end, "null", 4);
    default: {
      bool is_integer;
      return ScanNumber(p, end, &is_integer);
    }
  }
}

}  // namespace plain_json
}  // namespace segment
}  // namespace sluice

#endif  // SLUICE_COMMON_SEGMENT_PLAIN_JSON_H_
