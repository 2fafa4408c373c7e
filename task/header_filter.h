// The header filter of a task (ioConfig.headerBasedFilterConfig): a Druid
// dimension filter whose dimensions are header names (without the header
// column prefix), evaluated on a record's headers before its value is parsed.
// A header that is absent or has no value is null; of a repeated name the last
// one counts. Values are decoded per the config's encoding first.
//
//   SLUICE_ASSIGN_OR_RETURN(auto filter, HeaderFilter::Create(spec.header_based_filter_config()));
//   std::string error;
//   switch (filter.Evaluate(meta, &error)) { kPass, kSkip (thrown away), kBadHeader }
//
// Reuses its buffers. One per thread (the read loop).
#ifndef SLUICE_TASK_HEADER_FILTER_H_
#define SLUICE_TASK_HEADER_FILTER_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/segment/dim_filter.h"
#include "common/segment/header_decoding.h"
#include "sluice/v1/spec.pb.h"
#include "task/kafka_consumer.h"

namespace sluice::task {

class HeaderFilter {
 public:
  enum class Outcome { kPass, kSkip, kBadHeader };

  // INVALID_ARGUMENT naming the field (ioConfig.headerBasedFilterConfig...)
  // for a filter that does not compile or an unknown encoding.
  static absl::StatusOr<HeaderFilter> Create(const v1::HeaderBasedFilterConfig& config);

  // kBadHeader with *error set when a header the filter reads does not
  // decode (invalid UTF-8).
  Outcome Evaluate(const KafkaEnvelope& meta, std::string* error);

 private:
  HeaderFilter(segment::DimFilterMatcher matcher, segment::HeaderEncoding encoding)
      : matcher_(std::move(matcher)), encoding_(encoding) {}

  segment::DimFilterMatcher matcher_;
  segment::HeaderEncoding encoding_;
  // Reused per record: one per filter dimension.
  std::vector<std::optional<absl::string_view>> values_;
  std::vector<std::string> scratch_;
};

}  // namespace sluice::task

#endif  // SLUICE_TASK_HEADER_FILTER_H_
