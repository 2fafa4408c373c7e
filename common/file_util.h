// Small POSIX file helpers with absl::Status errors: durable atomic writes
// (temp + fsync + rename + fsync of the directory), directory creation.
#ifndef SLUICE_COMMON_FILE_UTIL_H_
#define SLUICE_COMMON_FILE_UTIL_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace sluice {

// Creates `path` and its parents (mode 0755). OK if it exists as a directory.
absl::Status MakeDirs(const std::string& path);

// MakeDirs, then mode 0700 on `path` itself: a data directory only its
// owner can enter. A directory this process may not chmod (e.g. a volume
// root owned by root) is left as it is with a warning.
absl::Status MakePrivateDir(const std::string& path);

// Replaces `path` with `contents` atomically and durably: writes
// `path.tmp.<pid>.<n>`, fsyncs it, renames it over `path`, fsyncs the parent
// directory. A crash leaves either the old or the new contents.
absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents);

// Whole file; NOT_FOUND if it does not exist.
absl::StatusOr<std::string> ReadFile(const std::string& path);

// fsync of a directory (makes renames and creations in it durable).
absl::Status SyncDir(const std::string& dir);

// The names in directory `path` (not "." and ".."), sorted. NOT_FOUND if it
// does not exist.
absl::StatusOr<std::vector<std::string>> ListDirectory(const std::string& path);

// Removes a file or a directory tree; OK if absent.
absl::Status RemoveAll(const std::string& path);

bool PathExists(const std::string& path);

// An absl::Status for a failed system call: errno mapped to a code
// (ENOENT -> NOT_FOUND, EEXIST -> ALREADY_EXISTS, ENOSPC -> RESOURCE_EXHAUSTED,
// EIO -> UNAVAILABLE,
// EACCES -> PERMISSION_DENIED, ...), message "<what> <path>: <strerror>".
absl::Status ErrnoStatus(int err, absl::string_view what, absl::string_view path);

}  // namespace sluice

#endif  // SLUICE_COMMON_FILE_UTIL_H_
