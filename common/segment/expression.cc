#include "common/segment/expression.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/civil_time.h"
#include "absl/time/time.h"
#include "common/segment/format_limits.h"
#include "common/status_macros.h"

namespace sluice {
namespace segment {
namespace {

// One piece of a compiled timestamp pattern: literal text, or a field
// (letter) repeated `count` times.
struct PatternPart {
  char letter = 0;  // 0: literal
  int count = 0;
  std::string literal;
};

constexpr char kFunctions[] = "concat, lower, upper, substring, timestamp_format";

}  // namespace

struct Expression::Node {
  enum class Kind : uint8_t {
    kField, kTime, kLiteral, kConcat, kLower, kUpper, kSubstring, kTimestampFormat
  };
  Kind kind = Kind::kLiteral;
  int field = 0;  // kField: index into fields_
  ExprValue::Type literal_type = ExprValue::Type::kNull;
  std::string literal;
  std::vector<int> args;  // node indexes
  // kTimestampFormat.
  bool iso = true;  // no pattern: ISO-8601
  std::vector<PatternPart> pattern;
  absl::TimeZone zone = absl::UTCTimeZone();
  std::string zone_id = "UTC";
};

namespace {

using Node = Expression::Node;

absl::Status ErrorAt(size_t offset, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(what, " at column ", offset + 1));
}

bool IsIdentStart(char c) { return absl::ascii_isalpha(c) || c == '_' || c == '$'; }
bool IsIdentChar(char c) { return absl::ascii_isalnum(c) || c == '_' || c == '$'; }

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// "+05:30", "-08:00", "+0530", "-08" as seconds east of UTC.
bool ParseFixedOffset(absl::string_view tz, int* seconds) {
  if (tz.size() < 3 || (tz[0] != '+' && tz[0] != '-')) return false;
  absl::string_view rest = tz.substr(1);
  auto two = [](absl::string_view s, int* v) {
    if (s.size() != 2 || !absl::ascii_isdigit(s[0]) || !absl::ascii_isdigit(s[1])) return false;
    *v = (s[0] - '0') * 10 + (s[1] - '0');
    return true;
  };
  int hours = 0;
  int minutes = 0;
  if (!two(rest.substr(0, 2), &hours)) return false;
  rest.remove_prefix(2);
  if (!rest.empty() && rest[0] == ':') rest.remove_prefix(1);
  if (!rest.empty() && !two(rest, &minutes)) return false;
  if (hours > 23 || minutes > 59) return false;
  *seconds = (tz[0] == '-' ? -1 : 1) * (hours * 3600 + minutes * 60);
  return true;
}

std::string OffsetText(int seconds, bool colon) {
  const char sign = seconds < 0 ? '-' : '+';
  const int abs = seconds < 0 ? -seconds : seconds;
  char buf[16];
  std::snprintf(buf, sizeof(buf), colon ? "%c%02d:%02d" : "%c%02d%02d", sign, abs / 3600,
                (abs / 60) % 60);
  return buf;
}

// An IANA zone name: segments of [A-Za-z0-9_+-] starting with a letter,
// joined by '/'. Anything else (a path, "localtime") is refused before the
// zone database is asked, so a spec can only name files of that database.
bool IsZoneName(absl::string_view tz) {
  if (tz.empty() || tz.size() > 64 || tz == "localtime") return false;
  bool segment_start = true;
  for (char c : tz) {
    if (c == '/') {
      if (segment_start) return false;
      segment_start = true;
      continue;
    }
    if (segment_start && !absl::ascii_isalpha(c)) return false;
    if (!absl::ascii_isalnum(c) && c != '_' && c != '+' && c != '-') return false;
    segment_start = false;
  }
  return !segment_start;
}

absl::Status CompileTimeZone(absl::string_view tz, size_t offset, Node* node) {
  int seconds = 0;
  if (tz == "UTC" || tz == "GMT" || tz == "Z") {
    node->zone = absl::UTCTimeZone();
    node->zone_id = "UTC";
  } else if (ParseFixedOffset(tz, &seconds)) {
    node->zone = absl::FixedTimeZone(seconds);
    node->zone_id = seconds == 0 ? "UTC" : OffsetText(seconds, true);
  } else if (IsZoneName(tz) && absl::LoadTimeZone(std::string(tz), &node->zone)) {
    node->zone_id = std::string(tz);
  } else {
    return ErrorAt(offset, absl::StrCat("unknown time zone '", tz,
                                        "' (UTC, a fixed offset like +05:30, or an IANA name)"));
  }
  return absl::OkStatus();
}

absl::Status CompilePattern(absl::string_view pattern, size_t offset, Node* node) {
  node->iso = false;
  for (size_t i = 0; i < pattern.size();) {
    const char c = pattern[i];
    if (c == '\'') {
      // 'text', with '' for a quote (inside or outside quoted text).
      PatternPart part;
      if (i + 1 < pattern.size() && pattern[i + 1] == '\'') {
        part.literal = "'";
        i += 2;
      } else {
        size_t j = i + 1;
        for (;;) {
          if (j >= pattern.size()) {
            return ErrorAt(offset, "unterminated quoted text in the timestamp pattern");
          }
          if (pattern[j] == '\'') {
            if (j + 1 < pattern.size() && pattern[j + 1] == '\'') {
              part.literal.push_back('\'');
              j += 2;
              continue;
            }
            break;
          }
          part.literal.push_back(pattern[j++]);
        }
        i = j + 1;
      }
      node->pattern.push_back(std::move(part));
      continue;
    }
    if (absl::ascii_isalpha(c)) {
      static constexpr absl::string_view kLetters = "yMdDEaHkhKmsSZ";
      if (kLetters.find(c) == absl::string_view::npos) {
        return ErrorAt(offset, absl::StrCat("timestamp pattern letter '", std::string(1, c),
                                            "' is not supported (supported: y M d D E a H k h K "
                                            "m s S Z and 'quoted text')"));
      }
      size_t j = i;
      while (j < pattern.size() && pattern[j] == c) ++j;
      PatternPart part;
      part.letter = c;
      part.count = static_cast<int>(j - i);
      node->pattern.push_back(std::move(part));
      i = j;
      continue;
    }
    PatternPart part;
    part.literal = std::string(1, c);
    node->pattern.push_back(std::move(part));
    ++i;
  }
  return absl::OkStatus();
}

void AppendPadded(int64_t value, int width, std::string* out) {
  if (value < 0) {
    out->push_back('-');
    value = -value;
  }
  std::string digits = absl::StrCat(value);
  if (static_cast<int>(digits.size()) < width) out->append(width - digits.size(), '0');
  out->append(digits);
}

constexpr const char* kMonths[] = {"January", "February", "March",     "April",
                                   "May",     "June",     "July",      "August",
                                   "September", "October", "November", "December"};
constexpr const char* kWeekdays[] = {"Monday", "Tuesday", "Wednesday", "Thursday",
                                     "Friday", "Saturday", "Sunday"};

int WeekdayIndex(absl::Weekday w) {
  switch (w) {
    case absl::Weekday::monday: return 0;
    case absl::Weekday::tuesday: return 1;
    case absl::Weekday::wednesday: return 2;
    case absl::Weekday::thursday: return 3;
    case absl::Weekday::friday: return 4;
    case absl::Weekday::saturday: return 5;
    case absl::Weekday::sunday: return 6;
  }
  return 0;
}

void FormatTime(const Node& node, int64_t ms, std::string* out) {
  out->clear();
  const absl::TimeZone::CivilInfo info = node.zone.At(absl::FromUnixMillis(ms));
  const absl::CivilSecond cs = info.cs;
  const int millis = static_cast<int>(((ms % 1000) + 1000) % 1000);
  if (node.iso) {
    AppendPadded(cs.year(), 4, out);
    absl::StrAppend(out, "-");
    AppendPadded(cs.month(), 2, out);
    absl::StrAppend(out, "-");
    AppendPadded(cs.day(), 2, out);
    absl::StrAppend(out, "T");
    AppendPadded(cs.hour(), 2, out);
    absl::StrAppend(out, ":");
    AppendPadded(cs.minute(), 2, out);
    absl::StrAppend(out, ":");
    AppendPadded(cs.second(), 2, out);
    absl::StrAppend(out, ".");
    AppendPadded(millis, 3, out);
    absl::StrAppend(out, info.offset == 0 ? "Z" : OffsetText(info.offset, true));
    return;
  }
  for (const PatternPart& p : node.pattern) {
    switch (p.letter) {
      case 0: out->append(p.literal); break;
      case 'y':
        if (p.count == 2) {
          AppendPadded(((cs.year() % 100) + 100) % 100, 2, out);
        } else {
          AppendPadded(cs.year(), p.count, out);
        }
        break;
      case 'M':
        if (p.count >= 4) {
          out->append(kMonths[cs.month() - 1]);
        } else if (p.count == 3) {
          out->append(kMonths[cs.month() - 1], 3);
        } else {
          AppendPadded(cs.month(), p.count, out);
        }
        break;
      case 'd': AppendPadded(cs.day(), p.count, out); break;
      case 'D': AppendPadded(absl::GetYearDay(absl::CivilDay(cs)), p.count, out); break;
      case 'E': {
        const char* name = kWeekdays[WeekdayIndex(absl::GetWeekday(absl::CivilDay(cs)))];
        if (p.count >= 4) {
          out->append(name);
        } else {
          out->append(name, 3);
        }
        break;
      }
      case 'a': out->append(cs.hour() < 12 ? "AM" : "PM"); break;
      case 'H': AppendPadded(cs.hour(), p.count, out); break;
      case 'k': AppendPadded(cs.hour() == 0 ? 24 : cs.hour(), p.count, out); break;
      case 'h': AppendPadded(cs.hour() % 12 == 0 ? 12 : cs.hour() % 12, p.count, out); break;
      case 'K': AppendPadded(cs.hour() % 12, p.count, out); break;
      case 'm': AppendPadded(cs.minute(), p.count, out); break;
      case 's': AppendPadded(cs.second(), p.count, out); break;
      case 'S': {
        // The first `count` digits of the fraction (millisecond precision).
        std::string digits;
        AppendPadded(millis, 3, &digits);
        if (p.count <= 3) {
          out->append(digits, 0, p.count);
        } else {
          out->append(digits);
          out->append(p.count - 3, '0');
        }
        break;
      }
      case 'Z':
        if (p.count >= 3) {
          out->append(node.zone_id);
        } else {
          out->append(OffsetText(info.offset, p.count == 2));
        }
        break;
    }
  }
}

// Recursive-descent parser over the expression text.
class ExpressionParser {
 public:
  ExpressionParser(absl::string_view text, std::vector<Node>* nodes,
                   std::vector<std::string>* fields, bool* reads_time)
      : text_(text), nodes_(nodes), fields_(fields), reads_time_(reads_time) {}

  absl::Status ParseAll() {
    SLUICE_ASSIGN_OR_RETURN(int root, ParseExpr(1));
    SkipSpace();
    if (pos_ < text_.size()) return ErrorAt(pos_, "unexpected text after the expression");
    root_ = root;
    return absl::OkStatus();
  }
  int root() const { return root_; }

 private:
  void SkipSpace() {
    while (pos_ < text_.size() && absl::ascii_isspace(text_[pos_])) ++pos_;
  }

  int Add(Node node) {
    nodes_->push_back(std::move(node));
    return static_cast<int>(nodes_->size()) - 1;
  }

  int FieldNode(const std::string& name) {
    if (name == "__time") {
      *reads_time_ = true;
      Node node;
      node.kind = Node::Kind::kTime;
      return Add(std::move(node));
    }
    Node node;
    node.kind = Node::Kind::kField;
    size_t i = 0;
    while (i < fields_->size() && (*fields_)[i] != name) ++i;
    if (i == fields_->size()) fields_->push_back(name);
    node.field = static_cast<int>(i);
    return Add(std::move(node));
  }

  // A quoted run starting at pos_ (the quote); escapes per the header.
  absl::StatusOr<std::string> Quoted(char quote) {
    const size_t start = pos_;
    ++pos_;
    std::string out;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      char c = text_[pos_];
      if (c != '\\') {
        out.push_back(c);
        ++pos_;
        continue;
      }
      if (pos_ + 1 >= text_.size()) break;
      const char e = text_[pos_ + 1];
      switch (e) {
        case '\\': case '\'': case '"': out.push_back(e); pos_ += 2; break;
        case 'n': out.push_back('\n'); pos_ += 2; break;
        case 't': out.push_back('\t'); pos_ += 2; break;
        case 'r': out.push_back('\r'); pos_ += 2; break;
        case 'u': {
          uint32_t cp = 0;
          absl::string_view hex = text_.substr(pos_ + 2, 4);
          if (hex.size() != 4 || !absl::SimpleHexAtoi(hex, &cp) ||
              hex.find_first_of("+-xX") != absl::string_view::npos) {
            return ErrorAt(pos_, "\\u must be followed by 4 hex digits");
          }
          AppendUtf8(cp, &out);
          pos_ += 6;
          break;
        }
        default:
          return ErrorAt(pos_, absl::StrCat("unknown escape \\", std::string(1, e)));
      }
    }
    if (pos_ >= text_.size()) {
      return ErrorAt(start, quote == '\'' ? "unterminated string literal"
                                          : "unterminated quoted field name");
    }
    ++pos_;  // the closing quote
    return out;
  }

  absl::StatusOr<int> ParseExpr(int depth) {
    SkipSpace();
    if (depth > kMaxExpressionDepth) {
      return ErrorAt(pos_, absl::StrCat("calls nested more than ", kMaxExpressionDepth,
                                        " levels deep"));
    }
    if (pos_ >= text_.size()) return ErrorAt(pos_, "expected an expression, got the end");
    const size_t start = pos_;
    const char c = text_[pos_];
    if (c == '\'') {
      SLUICE_ASSIGN_OR_RETURN(std::string s, Quoted('\''));
      Node node;
      node.literal_type = ExprValue::Type::kString;
      node.literal = std::move(s);
      return Add(std::move(node));
    }
    if (c == '"') {
      SLUICE_ASSIGN_OR_RETURN(std::string name, Quoted('"'));
      if (name.empty()) return ErrorAt(start, "empty field name");
      return FieldNode(name);
    }
    if (absl::ascii_isdigit(c) || c == '-' || c == '.') return Number();
    if (IsIdentStart(c)) {
      while (pos_ < text_.size() && IsIdentChar(text_[pos_])) ++pos_;
      std::string name(text_.substr(start, pos_ - start));
      SkipSpace();
      if (pos_ < text_.size() && text_[pos_] == '(') return Call(name, start, depth);
      return FieldNode(name);
    }
    return ErrorAt(start, absl::StrCat("unexpected '", std::string(1, c), "'"));
  }

  absl::StatusOr<int> Number() {
    const size_t start = pos_;
    if (text_[pos_] == '-') ++pos_;
    auto digits = [&] {
      size_t n = 0;
      while (pos_ < text_.size() && absl::ascii_isdigit(text_[pos_])) ++pos_, ++n;
      return n;
    };
    size_t n = digits();
    if (pos_ < text_.size() && text_[pos_] == '.') {
      ++pos_;
      n += digits();
    }
    if (n == 0) return ErrorAt(start, "malformed number");
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
      if (digits() == 0) return ErrorAt(start, "malformed number");
    }
    if (pos_ < text_.size() && IsIdentChar(text_[pos_])) {
      return ErrorAt(start, "malformed number");
    }
    Node node;
    node.literal_type = ExprValue::Type::kNumber;
    node.literal = std::string(text_.substr(start, pos_ - start));
    return Add(std::move(node));
  }

  // A string literal argument (pattern, time zone): its text and column.
  absl::StatusOr<std::string> LiteralArg(int arg, absl::string_view what, size_t at) {
    const Node& n = (*nodes_)[arg];
    if (n.kind != Node::Kind::kLiteral || n.literal_type != ExprValue::Type::kString) {
      return ErrorAt(at, absl::StrCat("the ", what, " of timestamp_format must be a 'string' "
                                                    "literal"));
    }
    return n.literal;
  }

  absl::StatusOr<int> Call(const std::string& name, size_t start, int depth) {
    const std::string lower = absl::AsciiStrToLower(name);
    Node node;
    size_t min_args = 1;
    size_t max_args = 1;
    if (lower == "concat") {
      node.kind = Node::Kind::kConcat;
      max_args = SIZE_MAX;
    } else if (lower == "lower") {
      node.kind = Node::Kind::kLower;
    } else if (lower == "upper") {
      node.kind = Node::Kind::kUpper;
    } else if (lower == "substring") {
      node.kind = Node::Kind::kSubstring;
      min_args = max_args = 3;
    } else if (lower == "timestamp_format") {
      node.kind = Node::Kind::kTimestampFormat;
      max_args = 3;
    } else {
      return ErrorAt(start, absl::StrCat("unknown function ", name, " (supported: ", kFunctions,
                                         ")"));
    }
    ++pos_;  // '('
    std::vector<size_t> columns;
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == ')') {
      ++pos_;
    } else {
      for (;;) {
        SkipSpace();
        columns.push_back(pos_);
        SLUICE_ASSIGN_OR_RETURN(int arg, ParseExpr(depth + 1));
        node.args.push_back(arg);
        SkipSpace();
        if (pos_ < text_.size() && text_[pos_] == ',') {
          ++pos_;
          continue;
        }
        if (pos_ < text_.size() && text_[pos_] == ')') {
          ++pos_;
          break;
        }
        return ErrorAt(pos_, pos_ < text_.size() ? "expected ',' or ')'"
                                                 : "expected ')', got the end");
      }
    }
    if (node.args.size() < min_args || node.args.size() > max_args) {
      std::string expected =
          min_args == max_args ? absl::StrCat(min_args)
          : max_args == SIZE_MAX ? absl::StrCat("at least ", min_args)
                                 : absl::StrCat(min_args, " to ", max_args);
      const bool plural = min_args > 1 || (max_args > 1 && max_args != SIZE_MAX);
      return ErrorAt(start, absl::StrCat(lower, " takes ", expected, " argument",
                                         plural ? "s" : "", " (got ", node.args.size(), ")"));
    }
    if (node.kind == Node::Kind::kTimestampFormat) {
      if (node.args.size() >= 2) {
        SLUICE_ASSIGN_OR_RETURN(std::string pattern, LiteralArg(node.args[1], "pattern",
                                                                columns[1]));
        SLUICE_RETURN_IF_ERROR(CompilePattern(pattern, columns[1], &node));
      }
      if (node.args.size() == 3) {
        SLUICE_ASSIGN_OR_RETURN(std::string tz, LiteralArg(node.args[2], "time zone",
                                                           columns[2]));
        SLUICE_RETURN_IF_ERROR(CompileTimeZone(tz, columns[2], &node));
      }
      node.args.resize(1);
    }
    return Add(std::move(node));
  }

  absl::string_view text_;
  size_t pos_ = 0;
  std::vector<Node>* nodes_;
  std::vector<std::string>* fields_;
  bool* reads_time_;
  int root_ = 0;
};

// Byte offset of code point `index` of `s`, or s.size() when there are fewer.
size_t CodePointOffset(absl::string_view s, int64_t index) {
  size_t i = 0;
  for (; i < s.size() && index > 0; ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) {
      // The start of a code point: skip it and its continuation bytes.
      size_t j = i + 1;
      while (j < s.size() && (static_cast<unsigned char>(s[j]) & 0xC0) == 0x80) ++j;
      i = j - 1;
      --index;
    }
  }
  return i;
}

const char* FunctionName(Node::Kind kind) {
  switch (kind) {
    case Node::Kind::kConcat: return "concat";
    case Node::Kind::kLower: return "lower";
    case Node::Kind::kUpper: return "upper";
    case Node::Kind::kSubstring: return "substring";
    case Node::Kind::kTimestampFormat: return "timestamp_format";
    default: return "an expression";
  }
}

// One evaluation: its fields, its byte budget and the first size error.
// After an error every call returns null, which unwinds the evaluation (a
// null argument makes every function null).
struct EvalContext {
  absl::Span<const ExprValue> fields;
  int64_t time_ms = 0;
  ExprScratch* scratch = nullptr;
  size_t budget_total = 0;
  size_t* budget = nullptr;
  std::string error;

  // Whether `node`'s value may grow from `size` to `size + more` bytes;
  // charges `more` to the budget.
  bool Grow(const Node& node, size_t size, size_t more) {
    if (!error.empty()) return false;
    if (more > kMaxValueBytes - size) {
      error = absl::StrCat(FunctionName(node.kind), " builds a value of more than ",
                           kMaxValueBytes, " bytes (the limit)");
      return false;
    }
    if (more > *budget) {
      error = absl::StrCat(FunctionName(node.kind), " builds more than the ", budget_total,
                           " bytes left to build");
      return false;
    }
    *budget -= more;
    return true;
  }
};

ExprValue EvalNode(const std::vector<Node>& nodes, int index, EvalContext* ctx) {
  const Node& node = nodes[index];
  std::string& buffer = ctx->scratch->buffers[index];
  const absl::Span<const ExprValue> fields = ctx->fields;
  const int64_t time_ms = ctx->time_ms;
  switch (node.kind) {
    case Node::Kind::kField:
      return fields[node.field];
    case Node::Kind::kTime:
      buffer = absl::StrCat(time_ms);
      return ExprValue::Number(buffer);
    case Node::Kind::kLiteral:
      return ExprValue{node.literal_type, node.literal};
    case Node::Kind::kConcat: {
      buffer.clear();
      for (int arg : node.args) {
        ExprValue v = EvalNode(nodes, arg, ctx);
        if (v.is_null()) return ExprValue::Null();
        if (!ctx->Grow(node, buffer.size(), v.text.size())) return ExprValue::Null();
        buffer.append(v.text.data(), v.text.size());
      }
      return ExprValue::String(buffer);
    }
    case Node::Kind::kLower:
    case Node::Kind::kUpper: {
      ExprValue v = EvalNode(nodes, node.args[0], ctx);
      if (v.is_null()) return v;
      if (!ctx->Grow(node, 0, v.text.size())) return ExprValue::Null();
      buffer.assign(v.text.data(), v.text.size());
      if (node.kind == Node::Kind::kLower) {
        absl::AsciiStrToLower(&buffer);
      } else {
        absl::AsciiStrToUpper(&buffer);
      }
      return ExprValue::String(buffer);
    }
    case Node::Kind::kSubstring: {
      ExprValue s = EvalNode(nodes, node.args[0], ctx);
      if (s.is_null()) return s;
      int64_t start = 0;
      int64_t length = 0;
      if (!ExprValueToLong(EvalNode(nodes, node.args[1], ctx), &start) ||
          !ExprValueToLong(EvalNode(nodes, node.args[2], ctx), &length) ||
          start < 0) {
        return ExprValue::Null();
      }
      const size_t begin = CodePointOffset(s.text, start);
      if (begin >= s.text.size()) return ExprValue::Null();
      absl::string_view rest = s.text.substr(begin);
      if (length >= 0) rest = rest.substr(0, CodePointOffset(rest, length));
      // The argument's view may live in a child's buffer: copy.
      if (!ctx->Grow(node, 0, rest.size())) return ExprValue::Null();
      buffer.assign(rest.data(), rest.size());
      return ExprValue::String(buffer);
    }
    case Node::Kind::kTimestampFormat: {
      int64_t ms = 0;
      if (!ExprValueToLong(EvalNode(nodes, node.args[0], ctx), &ms)) {
        return ExprValue::Null();
      }
      // absl::Time covers the whole int64 millis range; the civil year fits.
      // The text is bounded by the pattern (at most kMaxExpressionBytes
      // letters); charged after it is written.
      FormatTime(node, ms, &buffer);
      if (!ctx->Grow(node, 0, buffer.size())) return ExprValue::Null();
      return ExprValue::String(buffer);
    }
  }
  return ExprValue::Null();
}

}  // namespace

bool ExprValueToLong(const ExprValue& value, int64_t* out) {
  if (value.is_null()) return false;
  absl::string_view text = value.text;
  if (absl::SimpleAtoi(text, out)) return true;
  double d = 0;
  if (!absl::SimpleAtod(text, &d) || !std::isfinite(d)) return false;
  if (!(d > -9223372036854775808.0 && d < 9223372036854775808.0)) return false;
  *out = static_cast<int64_t>(d);
  return true;
}

Expression::~Expression() = default;

absl::StatusOr<Expression> Expression::Compile(absl::string_view text) {
  if (text.size() > kMaxExpressionBytes) {
    return absl::InvalidArgumentError(absl::StrCat("an expression of ", text.size(),
                                                   " bytes, beyond the limit of ",
                                                   kMaxExpressionBytes));
  }
  auto nodes = std::make_shared<std::vector<Node>>();
  Expression e;
  ExpressionParser parser(text, nodes.get(), &e.fields_, &e.reads_time_);
  SLUICE_RETURN_IF_ERROR(parser.ParseAll());
  // Children are added before their parents, so the root is the last node.
  if (parser.root() != static_cast<int>(nodes->size()) - 1) {
    return absl::InternalError("expression root is not the last node");
  }
  e.nodes_ = std::move(nodes);
  return e;
}

absl::StatusOr<ExprValue> Expression::Eval(absl::Span<const ExprValue> fields, int64_t time_ms,
                                           ExprScratch* scratch, size_t* budget) const {
  if (scratch->buffers.size() < nodes_->size()) scratch->buffers.resize(nodes_->size());
  size_t own_budget = kMaxRowValueBytes;
  EvalContext ctx;
  ctx.fields = fields;
  ctx.time_ms = time_ms;
  ctx.scratch = scratch;
  ctx.budget = budget != nullptr ? budget : &own_budget;
  ctx.budget_total = *ctx.budget;
  ExprValue out = EvalNode(*nodes_, static_cast<int>(nodes_->size()) - 1, &ctx);
  if (!ctx.error.empty()) return absl::InvalidArgumentError(std::move(ctx.error));
  return out;
}

}  // namespace segment
}  // namespace sluice
