// A spill or segment file read as a SortedRun for the merge.
#ifndef SLUICE_COMMON_SEGMENT_FILE_RUN_H_
#define SLUICE_COMMON_SEGMENT_FILE_RUN_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/segment/segment_reader.h"
#include "common/segment/sorted_run.h"

namespace sluice {
namespace segment {

// Opens `path` (checksum verified) as a run. Errors as SegmentReader::Open.
absl::StatusOr<std::unique_ptr<SortedRun>> OpenFileRun(const std::string& path);
// A run over an open reader (which it takes over).
std::unique_ptr<SortedRun> FileRun(std::unique_ptr<SegmentReader> reader, std::string description);

}  // namespace segment
}  // namespace sluice

#endif  // SLUICE_COMMON_SEGMENT_FILE_RUN_H_
