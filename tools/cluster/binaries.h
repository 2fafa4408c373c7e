// Where the sluice binaries are, for programs that start them: tests (Bazel
// runfiles), the demo and the benchmark (their own runfiles, or bazel-bin).
#ifndef SLUICE_TOOLS_CLUSTER_BINARIES_H_
#define SLUICE_TOOLS_CLUSTER_BINARIES_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace sluice {
namespace cluster {

// Workspace-relative paths of the binaries a process cluster runs.
inline constexpr char kDevBrokerBinary[] = "tools/sluice-devbroker";
inline constexpr char kSupervisorBinary[] = "supervisor/sluice-supervisor";
inline constexpr char kTaskBinary[] = "task/sluice-task";

// The path of the executable `workspace_relative_path` (e.g.
// "task/sluice-task"), looked up in order in: the test's runfiles
// ($TEST_SRCDIR), $RUNFILES_DIR, the running program's own runfiles tree
// (<program>.runfiles, present when the binary lists it in `data`),
// $BUILD_WORKSPACE_DIRECTORY/bazel-bin (bazel run) and ./bazel-bin. NOT_FOUND
// names every place tried.
absl::StatusOr<std::string> FindSluiceBinary(absl::string_view workspace_relative_path);

}  // namespace cluster
}  // namespace sluice

#endif  // SLUICE_TOOLS_CLUSTER_BINARIES_H_
