// ioConfig.topicPattern: an RE2 regular expression matched against whole
// Kafka topic names. RE2 runs in time linear in the topic's length, so no
// pattern a spec holds can make the supervisor backtrack; patterns RE2
// cannot run that way (backreferences, lookarounds) are refused.
#ifndef SLUICE_COMMON_TOPIC_PATTERN_H_
#define SLUICE_COMMON_TOPIC_PATTERN_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace re2 {
class RE2;
}

namespace sluice {

// The longest pattern a spec may hold (proto limit and ValidateTopicPattern).
inline constexpr size_t kMaxTopicPatternBytes = 1024;

class TopicPattern {
 public:
  // INVALID_ARGUMENT (naming ioConfig.topicPattern) for an empty, too long
  // or malformed pattern.
  static absl::StatusOr<TopicPattern> Create(absl::string_view pattern);

  // The whole name matches (as if anchored with ^...$).
  bool Matches(absl::string_view topic) const;
  // The topics of `topics` that match, in the given order.
  std::vector<std::string> Filter(const std::vector<std::string>& topics) const;
  const std::string& pattern() const { return pattern_; }

 private:
  TopicPattern(std::string pattern, std::shared_ptr<const re2::RE2> re)
      : pattern_(std::move(pattern)), re_(std::move(re)) {}

  std::string pattern_;
  // Shared by copies: RE2 is thread-safe for matching.
  std::shared_ptr<const re2::RE2> re_;
};

absl::Status ValidateTopicPattern(absl::string_view pattern);

}  // namespace sluice

#endif  // SLUICE_COMMON_TOPIC_PATTERN_H_
