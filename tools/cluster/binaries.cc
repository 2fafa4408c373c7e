#include "tools/cluster/binaries.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace sluice {
namespace cluster {
namespace {

constexpr char kWorkspace[] = "sluice";

bool IsExecutableFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

std::string Env(const char* name) {
  const char* value = getenv(name);
  return value != nullptr ? value : "";
}

std::string SelfExe() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
}

}  // namespace

absl::StatusOr<std::string> FindSluiceBinary(absl::string_view workspace_relative_path) {
  const std::string rel(workspace_relative_path);
  std::vector<std::string> candidates;
  if (!Env("TEST_SRCDIR").empty()) {
    candidates.push_back(absl::StrCat(Env("TEST_SRCDIR"), "/", kWorkspace, "/", rel));
  }
  if (!Env("RUNFILES_DIR").empty()) {
    candidates.push_back(absl::StrCat(Env("RUNFILES_DIR"), "/", kWorkspace, "/", rel));
  }
  if (const std::string self = SelfExe(); !self.empty()) {
    candidates.push_back(absl::StrCat(self, ".runfiles/", kWorkspace, "/", rel));
  }
  if (!Env("BUILD_WORKSPACE_DIRECTORY").empty()) {
    candidates.push_back(absl::StrCat(Env("BUILD_WORKSPACE_DIRECTORY"), "/bazel-bin/", rel));
  }
  candidates.push_back(absl::StrCat("bazel-bin/", rel));
  for (const std::string& path : candidates) {
    if (IsExecutableFile(path)) return path;
  }
  return absl::NotFoundError(absl::StrCat("cannot find the binary ", rel,
                                          " (build it with bazel, or list it in `data`); tried ",
                                          absl::StrJoin(candidates, ", ")));
}

}  // namespace cluster
}  // namespace sluice
