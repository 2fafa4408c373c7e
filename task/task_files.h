// Layout of a task's directory, <data_dir>/tasks/<task id>/:
//
//   spec.json           the TaskSpec from RunTask (restore reads it back)
//   sequences.json      the sequence list (SequenceList::Save)
//   restore_point.json  offsets and spills of the last persist
//   spills/             spill files named by the restore point, and the segment
//                       files built directly from memory that it names
//   segments/           segment files built for publishing
//   final_status.json   the TaskStatus of a finished task (not restored)
//
// Every path under it is built here: the layers above pass file names (a
// restore point holds names, never paths), and TaskFiles joins them.
#ifndef SLUICE_TASK_TASK_FILES_H_
#define SLUICE_TASK_TASK_FILES_H_

#include <cstdint>
#include <set>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace sluice::task {

struct TaskFiles {
  explicit TaskFiles(std::string task_dir) : dir(std::move(task_dir)) {}

  std::string spec() const { return absl::StrCat(dir, "/spec.json"); }
  std::string sequences() const { return absl::StrCat(dir, "/sequences.json"); }
  std::string restore_point() const { return absl::StrCat(dir, "/restore_point.json"); }
  std::string final_status() const { return absl::StrCat(dir, "/final_status.json"); }
  std::string spill_dir() const { return absl::StrCat(dir, "/spills"); }
  std::string segment_dir() const { return absl::StrCat(dir, "/segments"); }
  // A file of the spill directory (a spill or a directly built segment
  // file), by its name.
  std::string spill(const std::string& name) const { return absl::StrCat(dir, "/spills/", name); }
  // The segment file the publisher builds of a sequence's interval.
  std::string built_segment(int32_t sequence_id, int64_t interval_start_ms) const {
    return absl::StrCat(dir, "/segments/", sequence_id, "_", interval_start_ms, ".sluice");
  }

  // Names in the spill directory, numbered per task (the restore point's
  // next_spill_number): a spill, and a segment file built directly.
  static std::string SpillName(int32_t sequence_id, int64_t interval_start_ms, int64_t number) {
    return absl::StrCat(sequence_id, "_", interval_start_ms, "_", number, ".spill");
  }
  static std::string BuiltFileName(int32_t sequence_id, int64_t interval_start_ms,
                                   int64_t number) {
    return absl::StrCat(sequence_id, "_", interval_start_ms, "_", number, ".sluice");
  }

  std::string dir;
};

// Removes every entry of `dir` whose name is not in `keep`.
absl::Status RemoveAllBut(const std::string& dir, const std::set<std::string>& keep);


}  // namespace sluice::task

#endif  // SLUICE_TASK_TASK_FILES_H_
