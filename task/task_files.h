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
// and JSON helpers for the protobuf messages stored there.
#ifndef SLUICE_TASK_TASK_FILES_H_
#define SLUICE_TASK_TASK_FILES_H_

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

  std::string dir;
};

// Removes every entry of `dir` whose name is not in `keep`.
absl::Status RemoveAllBut(const std::string& dir, const std::set<std::string>& keep);


}  // namespace sluice::task

#endif  // SLUICE_TASK_TASK_FILES_H_
