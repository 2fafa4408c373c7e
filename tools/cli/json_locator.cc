#include "tools/cli/json_locator.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace sluice {
namespace sluicectl {
namespace {

// Deep enough for any spec; bounds recursion on hostile input.
constexpr int kMaxDepth = 200;

class Scanner {
 public:
  explicit Scanner(absl::string_view text) : text_(text) {}

  absl::StatusOr<JsonLayout> Run() {
    SkipSpace();
    JsonPath path;
    if (!Value(path, 0)) return status_;
    SkipSpace();
    if (pos_ < text_.size()) {
      Fail("unexpected text after the JSON value");
      return status_;
    }
    return std::move(layout_);
  }

 private:
  TextPosition Position() const { return {line_, column_}; }

  bool Fail(absl::string_view what) {
    if (status_.ok()) {
      status_ = absl::InvalidArgumentError(absl::StrCat(line_, ":", column_, ": ", what));
    }
    return false;
  }

  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return text_[pos_]; }

  void Advance() {
    if (text_[pos_] == '\n') {
      ++line_;
      column_ = 1;
    } else {
      ++column_;
    }
    ++pos_;
  }

  void SkipSpace() {
    while (!AtEnd() && (Peek() == ' ' || Peek() == '\t' || Peek() == '\n' || Peek() == '\r')) {
      Advance();
    }
  }

  bool Expect(char c, absl::string_view what) {
    if (AtEnd() || Peek() != c) {
      return Fail(AtEnd() ? absl::StrCat(what, ", found the end of the file")
                          : absl::StrCat(what, ", found '", std::string(1, Peek()), "'"));
    }
    Advance();
    return true;
  }

  bool String(std::string* out) {
    if (!Expect('"', "expected '\"'")) return false;
    while (true) {
      if (AtEnd()) return Fail("unterminated string");
      const char c = Peek();
      if (c == '"') {
        Advance();
        return true;
      }
      if (static_cast<unsigned char>(c) < 0x20) return Fail("control character in a string");
      if (c == '\\') {
        Advance();
        if (AtEnd()) return Fail("unterminated string");
        const char e = Peek();
        if (e == 'u') {
          Advance();
          for (int i = 0; i < 4; ++i) {
            if (AtEnd() || !absl::ascii_isxdigit(Peek())) return Fail("bad \\u escape");
            Advance();
          }
          if (out != nullptr) out->push_back('?');
          continue;
        }
        if (std::string("\"\\/bfnrt").find(e) == std::string::npos) {
          return Fail(absl::StrCat("bad escape \\", std::string(1, e)));
        }
        if (out != nullptr) out->push_back(e);
        Advance();
        continue;
      }
      if (out != nullptr) out->push_back(c);
      Advance();
    }
  }

  bool Number() {
    if (Peek() == '-') Advance();
    if (AtEnd() || !absl::ascii_isdigit(Peek())) return Fail("bad number");
    if (Peek() == '0') {
      Advance();
    } else {
      while (!AtEnd() && absl::ascii_isdigit(Peek())) Advance();
    }
    if (!AtEnd() && Peek() == '.') {
      Advance();
      if (AtEnd() || !absl::ascii_isdigit(Peek()))
        return Fail("bad number: digits expected after '.'");
      while (!AtEnd() && absl::ascii_isdigit(Peek())) Advance();
    }
    if (!AtEnd() && (Peek() == 'e' || Peek() == 'E')) {
      Advance();
      if (!AtEnd() && (Peek() == '+' || Peek() == '-')) Advance();
      if (AtEnd() || !absl::ascii_isdigit(Peek())) return Fail("bad number: exponent expected");
      while (!AtEnd() && absl::ascii_isdigit(Peek())) Advance();
    }
    return true;
  }

  bool Literal(absl::string_view word) {
    if (text_.substr(pos_, word.size()) != word) {
      return Fail("expected a value (object, array, string, number, true, false or null)");
    }
    for (size_t i = 0; i < word.size(); ++i) Advance();
    return true;
  }

  bool Value(JsonPath& path, int depth) {
    if (depth > kMaxDepth) return Fail("nested too deeply");
    if (AtEnd()) return Fail("expected a value, found the end of the file");
    layout_.kinds[path] = Peek() == '{'                    ? JsonKind::kObject
                          : Peek() == '['                  ? JsonKind::kArray
                          : Peek() == '"'                  ? JsonKind::kString
                          : Peek() == 't' || Peek() == 'f' ? JsonKind::kBool
                          : Peek() == 'n'                  ? JsonKind::kNull
                                                           : JsonKind::kNumber;
    switch (Peek()) {
      case '{':
        return Object(path, depth);
      case '[':
        return Array(path, depth);
      case '"':
        return String(nullptr);
      case 't':
        return Literal("true");
      case 'f':
        return Literal("false");
      case 'n':
        return Literal("null");
      default:
        if (Peek() == '-' || absl::ascii_isdigit(Peek())) return Number();
        return Fail(absl::StrCat("expected a value, found '", std::string(1, Peek()), "'"));
    }
  }

  bool Object(JsonPath& path, int depth) {
    Advance();  // '{'
    layout_.object_keys[path];
    SkipSpace();
    if (!AtEnd() && Peek() == '}') {
      Advance();
      return true;
    }
    while (true) {
      SkipSpace();
      if (!AtEnd() && Peek() == '}') return Fail("trailing comma before '}'");
      const TextPosition key_position = Position();
      std::string key;
      if (!AtEnd() && Peek() != '"') return Fail("expected a quoted key");
      if (!String(&key)) return false;
      layout_.object_keys[path].push_back(key);
      path.push_back(key);
      layout_.positions.emplace(path, key_position);
      SkipSpace();
      if (!Expect(':', absl::StrCat("expected ':' after key \"", key, "\""))) return false;
      SkipSpace();
      if (!Value(path, depth + 1)) return false;
      path.pop_back();
      SkipSpace();
      if (AtEnd()) return Fail("expected ',' or '}', found the end of the file");
      if (Peek() == ',') {
        Advance();
        continue;
      }
      return Expect('}', "expected ',' or '}' after a value");
    }
  }

  bool Array(JsonPath& path, int depth) {
    Advance();  // '['
    SkipSpace();
    if (!AtEnd() && Peek() == ']') {
      Advance();
      return true;
    }
    for (int index = 0;; ++index) {
      SkipSpace();
      if (!AtEnd() && Peek() == ']') return Fail("trailing comma before ']'");
      path.push_back(absl::StrCat(index));
      layout_.positions.emplace(path, Position());
      if (!Value(path, depth + 1)) return false;
      path.pop_back();
      SkipSpace();
      if (AtEnd()) return Fail("expected ',' or ']', found the end of the file");
      if (Peek() == ',') {
        Advance();
        continue;
      }
      return Expect(']', "expected ',' or ']' after an array element");
    }
  }

  absl::string_view text_;
  size_t pos_ = 0;
  int line_ = 1;
  int column_ = 1;
  absl::Status status_;
  JsonLayout layout_;
};

}  // namespace

absl::StatusOr<JsonLayout> LocateJson(absl::string_view text) { return Scanner(text).Run(); }

}  // namespace sluicectl
}  // namespace sluice
