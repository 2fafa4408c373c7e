#include "task/task_files.h"

#include "common/file_util.h"
#include "common/status_macros.h"

namespace sluice::task {

absl::Status RemoveAllBut(const std::string& dir, const std::set<std::string>& keep) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> names, ListDirectory(dir));
  for (const std::string& name : names) {
    if (keep.count(name) == 0) SLUICE_RETURN_IF_ERROR(RemoveAll(absl::StrCat(dir, "/", name)));
  }
  return absl::OkStatus();
}

}  // namespace sluice::task
