#include "common/json_int64.h"

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace sluice {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;

bool Is64BitInteger(const FieldDescriptor& field) {
  switch (field.type()) {
    case FieldDescriptor::TYPE_INT64:
    case FieldDescriptor::TYPE_UINT64:
    case FieldDescriptor::TYPE_SINT64:
    case FieldDescriptor::TYPE_FIXED64:
    case FieldDescriptor::TYPE_SFIXED64:
      return true;
    default:
      return false;
  }
}

// The printer uses json_name; a proto name is accepted too. (Debian's
// protobuf has no Descriptor::FindFieldByJsonName.)
const FieldDescriptor* FieldByJsonName(const Descriptor& message, const std::string& key) {
  for (int i = 0; i < message.field_count(); ++i) {
    if (message.field(i)->json_name() == key) return message.field(i);
  }
  return message.FindFieldByName(key);
}

// What a JSON value stands for, which decides how it is copied.
struct Slot {
  // A message value (null: copy verbatim, e.g. a well-known type).
  const Descriptor* message = nullptr;
  // The value of a map field: an object whose values are `map_value`.
  const FieldDescriptor* map_value = nullptr;
  // A 64-bit integer: a quoted value loses its quotes.
  bool int64 = false;
};

Slot SlotOf(const FieldDescriptor& field) {
  Slot slot;
  if (field.is_map()) {
    slot.map_value = field.message_type()->FindFieldByName("value");
  } else if (field.type() == FieldDescriptor::TYPE_MESSAGE) {
    const Descriptor* type = field.message_type();
    if (!absl::StartsWith(type->full_name(), "google.protobuf.")) slot.message = type;
  } else {
    slot.int64 = Is64BitInteger(field);
  }
  return slot;
}

// A recursive-descent copier over well-formed JSON (the printer's output).
class Rewriter {
 public:
  explicit Rewriter(absl::string_view in) : in_(in) {}

  absl::Status Value(const Slot& slot) {
    Whitespace();
    if (pos_ >= in_.size()) return Error("unexpected end");
    const char c = in_[pos_];
    if (c == '{') {
      if (slot.map_value != nullptr) return Object(nullptr, slot.map_value);
      return Object(slot.message, nullptr);
    }
    // A repeated field: each element has the field's slot.
    if (c == '[') return Array(slot);
    if (c == '"') {
      std::string s;
      const size_t start = pos_;
      if (!String(&s)) return Error("bad string");
      if (slot.int64 && !s.empty() && s.find_first_not_of("-0123456789") == std::string::npos) {
        out_ += s;
      } else {
        absl::StrAppend(&out_, in_.substr(start, pos_ - start));
      }
      return absl::OkStatus();
    }
    // A number, true, false or null: copied.
    const size_t start = pos_;
    while (pos_ < in_.size() && in_[pos_] != ',' && in_[pos_] != '}' && in_[pos_] != ']' &&
           !IsSpace(in_[pos_])) {
      ++pos_;
    }
    if (pos_ == start) return Error("expected a value");
    absl::StrAppend(&out_, in_.substr(start, pos_ - start));
    return absl::OkStatus();
  }

  bool AtEnd() {
    Whitespace();
    return pos_ == in_.size();
  }
  std::string Take() { return std::move(out_); }

 private:
  static bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

  void Whitespace() {
    while (pos_ < in_.size() && IsSpace(in_[pos_])) out_ += in_[pos_++];
  }

  absl::Status Error(absl::string_view what) const {
    return absl::InternalError(absl::StrCat("rewriting JSON numbers: ", what, " at byte ", pos_));
  }

  // Copies a string literal; `*raw` gets its text without the quotes.
  bool String(std::string* raw) {
    if (in_[pos_] != '"') return false;
    size_t i = pos_ + 1;
    while (i < in_.size() && in_[i] != '"') i += in_[i] == '\\' ? 2 : 1;
    if (i >= in_.size()) return false;
    *raw = std::string(in_.substr(pos_ + 1, i - pos_ - 1));
    pos_ = i + 1;
    return true;
  }

  // `message`: the fields of a message; `map_value`: every value has that
  // type; both null: copied without rewriting.
  absl::Status Object(const Descriptor* message, const FieldDescriptor* map_value) {
    out_ += in_[pos_++];  // {
    Whitespace();
    if (pos_ < in_.size() && in_[pos_] == '}') {
      out_ += in_[pos_++];
      return absl::OkStatus();
    }
    while (true) {
      Whitespace();
      std::string key;
      const size_t start = pos_;
      if (pos_ >= in_.size() || !String(&key)) return Error("expected a key");
      absl::StrAppend(&out_, in_.substr(start, pos_ - start));
      Whitespace();
      if (pos_ >= in_.size() || in_[pos_] != ':') return Error("expected ':'");
      out_ += in_[pos_++];
      Slot slot;
      if (map_value != nullptr) {
        slot = SlotOf(*map_value);
      } else if (message != nullptr) {
        const FieldDescriptor* field = FieldByJsonName(*message, key);
        if (field != nullptr) slot = SlotOf(*field);
      }
      if (absl::Status s = Value(slot); !s.ok()) return s;
      Whitespace();
      if (pos_ >= in_.size()) return Error("unterminated object");
      const char c = in_[pos_++];
      out_ += c;
      if (c == '}') return absl::OkStatus();
      if (c != ',') return Error("expected ',' or '}'");
    }
  }

  absl::Status Array(const Slot& element) {
    out_ += in_[pos_++];  // [
    Whitespace();
    if (pos_ < in_.size() && in_[pos_] == ']') {
      out_ += in_[pos_++];
      return absl::OkStatus();
    }
    while (true) {
      if (absl::Status s = Value(element); !s.ok()) return s;
      Whitespace();
      if (pos_ >= in_.size()) return Error("unterminated array");
      const char c = in_[pos_++];
      out_ += c;
      if (c == ']') return absl::OkStatus();
      if (c != ',') return Error("expected ',' or ']'");
    }
  }

  absl::string_view in_;
  size_t pos_ = 0;
  std::string out_;
};

}  // namespace

absl::StatusOr<std::string> Int64FieldsAsNumbers(absl::string_view json,
                                                 const Descriptor& type) {
  Rewriter rewriter(json);
  Slot top;
  if (!absl::StartsWith(type.full_name(), "google.protobuf.")) top.message = &type;
  if (absl::Status s = rewriter.Value(top); !s.ok()) return s;
  if (!rewriter.AtEnd()) return absl::InternalError("rewriting JSON numbers: trailing text");
  return rewriter.Take();
}

}  // namespace sluice
