// Real segment files for supervisor tests: built with common/segment from
// seeded random rows, pushed to deep storage, described as a task would
// publish them.
#ifndef SLUICE_SUPERVISOR_TESTING_SEGMENT_FILES_H_
#define SLUICE_SUPERVISOR_TESTING_SEGMENT_FILES_H_

#include <map>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "common/deep_storage.h"
#include "sluice/v1/supervisor_service.pb.h"

namespace sluice::supervisor::testing {

// Builds a segment of `rows` input records for `allocated` (its interval must
// be one hour), pushes it to `deep` under `key` and returns the descriptor a
// task would publish (id, interval, version, partition, rows, size, checksum,
// path, provenance). `work_dir` holds the local file. The provenance is
// `sequence_ranges` (partition -> [start, end) of the sequence that built
// it, as the publish request will say) when given, else the rows' own
// offsets (partition 0, offsets from 100).
absl::StatusOr<v1::SegmentDescriptor> PushSegment(
    DeepStorage* deep, const std::string& work_dir, const std::string& key,
    const std::string& datasource, const v1::AllocateSegmentResponse& allocated, int rows = 50,
    const std::map<int32_t, std::pair<int64_t, int64_t>>& sequence_ranges = {});

// The start of the hour the test rows fall in (2026-11-30T02:00:00Z).
int64_t SegmentHourStartMs();

}  // namespace sluice::supervisor::testing

#endif  // SLUICE_SUPERVISOR_TESTING_SEGMENT_FILES_H_
