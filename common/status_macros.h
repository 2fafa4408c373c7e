// Early-return helpers for absl::Status / absl::StatusOr (the pinned Abseil
// LTS has no status_macros.h of its own).
#ifndef SLUICE_COMMON_STATUS_MACROS_H_
#define SLUICE_COMMON_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define SLUICE_STATUS_CONCAT_INNER_(a, b) a##b
#define SLUICE_STATUS_CONCAT_(a, b) SLUICE_STATUS_CONCAT_INNER_(a, b)

// Returns the status of `expr` from the enclosing function if it is not OK.
#define SLUICE_RETURN_IF_ERROR(expr)                        \
  do {                                                      \
    ::absl::Status sluice_status_ = (expr);                 \
    if (!sluice_status_.ok()) return sluice_status_;        \
  } while (0)

// `lhs = value of expr` when `expr` (an absl::StatusOr) is OK; returns its
// status otherwise. `lhs` may declare a variable: SLUICE_ASSIGN_OR_RETURN(auto x, F());
#define SLUICE_ASSIGN_OR_RETURN(lhs, expr)                                   \
  SLUICE_ASSIGN_OR_RETURN_IMPL_(SLUICE_STATUS_CONCAT_(sluice_statusor_, __LINE__), \
                                lhs, expr)

#define SLUICE_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                                  \
  if (!statusor.ok()) return std::move(statusor).status(); \
  lhs = *std::move(statusor)

namespace sluice {

// Returns `status` with `context + ": "` prepended to its message (same code).
inline absl::Status Annotate(const absl::Status& status, absl::string_view context) {
  if (status.ok()) return status;
  return absl::Status(status.code(),
                      std::string(context) + ": " + std::string(status.message()));
}

}  // namespace sluice

#endif  // SLUICE_COMMON_STATUS_MACROS_H_
