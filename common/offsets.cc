#include "common/offsets.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/spec.h"

namespace sluice {

OffsetMap FromProto(const google::protobuf::Map<int32_t, int64_t>& map) {
  return OffsetMap(map.begin(), map.end());
}

void ToProto(const OffsetMap& offsets, google::protobuf::Map<int32_t, int64_t>* out) {
  out->clear();
  for (const auto& [partition, offset] : offsets) (*out)[partition] = offset;
}

std::string EncodeOffsets(const OffsetMap& offsets) {
  std::string out = "{";
  bool first = true;
  for (const auto& [partition, offset] : offsets) {
    absl::StrAppend(&out, first ? "" : ",", "\"", partition, "\":", offset);
    first = false;
  }
  out += "}";
  return out;
}

namespace {

class Parser {
 public:
  explicit Parser(absl::string_view text) : text_(text) {}

  absl::StatusOr<OffsetMap> Parse() {
    OffsetMap out;
    SkipSpace();
    if (!Eat('{')) return Error("expected '{'");
    SkipSpace();
    if (Eat('}')) return Finish(out);
    while (true) {
      SkipSpace();
      if (!Eat('"')) return Error("expected a quoted partition");
      const size_t close = text_.find('"', pos_);
      if (close == absl::string_view::npos) return Error("unterminated partition");
      int32_t partition;
      if (!absl::SimpleAtoi(text_.substr(pos_, close - pos_), &partition)) {
        return Error("bad partition");
      }
      pos_ = close + 1;
      SkipSpace();
      if (!Eat(':')) return Error("expected ':'");
      SkipSpace();
      size_t end = pos_;
      while (end < text_.size() && (text_[end] == '-' || absl::ascii_isdigit(text_[end]))) ++end;
      int64_t offset;
      if (!absl::SimpleAtoi(text_.substr(pos_, end - pos_), &offset)) return Error("bad offset");
      pos_ = end;
      if (!out.emplace(partition, offset).second) return Error("duplicate partition");
      SkipSpace();
      if (Eat('}')) return Finish(out);
      if (!Eat(',')) return Error("expected ',' or '}'");
    }
  }

 private:
  absl::StatusOr<OffsetMap> Finish(OffsetMap out) {
    SkipSpace();
    if (pos_ != text_.size()) return Error("trailing characters");
    return out;
  }
  void SkipSpace() {
    while (pos_ < text_.size() && absl::ascii_isspace(text_[pos_])) ++pos_;
  }
  bool Eat(char c) {
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  absl::Status Error(absl::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat("offset map \"", text_, "\": ", what, " at character ", pos_));
  }

  absl::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

absl::StatusOr<OffsetMap> DecodeOffsets(absl::string_view text) { return Parser(text).Parse(); }

std::string FormatOffsets(const OffsetMap& offsets) {
  std::string out = "{";
  bool first = true;
  for (const auto& [partition, offset] : offsets) {
    absl::StrAppend(&out, first ? "" : ", ", partition, ":");
    if (offset == kEndOfPartition) {
      out += "END";
    } else {
      absl::StrAppend(&out, offset);
    }
    first = false;
  }
  out += "}";
  return out;
}

OffsetMap MaxOffsets(const OffsetMap& a, const OffsetMap& b) {
  OffsetMap out = a;
  for (const auto& [partition, offset] : b) {
    auto [it, inserted] = out.emplace(partition, offset);
    if (!inserted) it->second = std::max(it->second, offset);
  }
  return out;
}

OffsetMap Restrict(const OffsetMap& offsets, const OffsetMap& partitions) {
  OffsetMap out;
  for (const auto& [partition, unused] : partitions) {
    auto it = offsets.find(partition);
    if (it != offsets.end()) out.emplace(partition, it->second);
  }
  return out;
}

bool ContainsEndOfPartition(const OffsetMap& offsets) {
  return std::any_of(offsets.begin(), offsets.end(),
                     [](const auto& entry) { return entry.second == kEndOfPartition; });
}

}  // namespace sluice
