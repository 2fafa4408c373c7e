// A SegmentAllocator for unit tests: every (sequence, interval) gets segment
// "wiki_<start ms>_<sequence>", version "v1", exactly the interval asked for.
#ifndef SLUICE_TASK_TESTING_INTERVAL_ALLOCATOR_H_
#define SLUICE_TASK_TESTING_INTERVAL_ALLOCATOR_H_

#include <string>

#include "absl/strings/str_cat.h"
#include "task/open_segments.h"

namespace sluice::testing {

class IntervalAllocator : public task::SegmentAllocator {
 public:
  absl::StatusOr<v1::AllocateSegmentResponse> Allocate(const std::string& sequence_name,
                                                       int64_t start_ms,
                                                       int64_t end_ms) override {
    v1::AllocateSegmentResponse response;
    response.set_segment_id(absl::StrCat("wiki_", start_ms, "_", sequence_name));
    response.set_version("v1");
    response.mutable_interval()->set_start_ms(start_ms);
    response.mutable_interval()->set_end_ms(end_ms);
    return response;
  }
};

}  // namespace sluice::testing

#endif  // SLUICE_TASK_TESTING_INTERVAL_ALLOCATOR_H_
