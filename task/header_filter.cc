#include "task/header_filter.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace sluice::task {

absl::StatusOr<HeaderFilter> HeaderFilter::Create(const v1::HeaderBasedFilterConfig& config) {
  if (!config.has_filter()) {
    return absl::InvalidArgumentError("ioConfig.headerBasedFilterConfig.filter is required");
  }
  SLUICE_ASSIGN_OR_RETURN(
      segment::DimFilterMatcher matcher,
      segment::DimFilterMatcher::Create(config.filter(), "ioConfig.headerBasedFilterConfig.filter"));
  absl::StatusOr<segment::HeaderEncoding> encoding =
      segment::ParseHeaderEncoding(config.encoding());
  if (!encoding.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ioConfig.headerBasedFilterConfig.encoding: ", encoding.status().message()));
  }
  HeaderFilter filter(std::move(matcher), *encoding);
  filter.values_.resize(filter.matcher_.dimensions().size());
  filter.scratch_.resize(filter.matcher_.dimensions().size());
  return filter;
}

HeaderFilter::Outcome HeaderFilter::Evaluate(const KafkaEnvelope& meta, std::string* error) {
  const std::vector<std::string>& names = matcher_.dimensions();
  for (size_t d = 0; d < names.size(); ++d) {
    values_[d].reset();
    // The last header of that name counts.
    for (size_t h = meta.headers.size(); h-- > 0;) {
      const KafkaHeader& header = meta.headers[h];
      if (header.name != names[d]) continue;
      if (header.has_value) {
        absl::string_view text;
        if (!segment::DecodeHeader(encoding_, header.value, &scratch_[d], &text)) {
          *error = absl::StrCat("header \"", names[d].substr(0, 64), "\" is not valid ",
                                segment::HeaderEncodingName(encoding_),
                                " (ioConfig.headerBasedFilterConfig.encoding)");
          return Outcome::kBadHeader;
        }
        values_[d] = text;
      }
      break;
    }
  }
  return matcher_.Matches(values_) ? Outcome::kPass : Outcome::kSkip;
}

}  // namespace sluice::task
