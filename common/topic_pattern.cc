#include "common/topic_pattern.h"

#include <re2/re2.h>

#include "absl/strings/str_cat.h"

namespace sluice {
namespace {

absl::Status Invalid(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("ioConfig.topicPattern ", what));
}

}  // namespace

absl::StatusOr<TopicPattern> TopicPattern::Create(absl::string_view pattern) {
  if (pattern.empty()) return Invalid("is empty");
  if (pattern.size() > kMaxTopicPatternBytes) {
    return Invalid(absl::StrCat("is ", pattern.size(), " bytes, more than ",
                                kMaxTopicPatternBytes));
  }
  RE2::Options options;
  options.set_log_errors(false);
  // Bounds the compiled program (RE2's default, said explicitly): a pattern
  // like (a{1000}){1000} is refused instead of taking memory.
  options.set_max_mem(8 << 20);
  auto re = std::make_shared<const RE2>(re2::StringPiece(pattern.data(), pattern.size()),
                                        options);
  if (!re->ok()) {
    return Invalid(absl::StrCat("\"", pattern, "\" is not an RE2 regular expression: ",
                                re->error()));
  }
  return TopicPattern(std::string(pattern), std::move(re));
}

bool TopicPattern::Matches(absl::string_view topic) const {
  return RE2::FullMatch(re2::StringPiece(topic.data(), topic.size()), *re_);
}

std::vector<std::string> TopicPattern::Filter(const std::vector<std::string>& topics) const {
  std::vector<std::string> out;
  for (const std::string& topic : topics) {
    if (Matches(topic)) out.push_back(topic);
  }
  return out;
}

absl::Status ValidateTopicPattern(absl::string_view pattern) {
  return TopicPattern::Create(pattern).status();
}

}  // namespace sluice
