// Small POSIX file helpers with absl::Status errors: the one atomic file
// writer (AtomicFile: temp + fsync + rename + fsync of the directory, used by
// WriteFileAtomically, spills and segment files), directory creation,
// listing, reads.
#ifndef SLUICE_COMMON_FILE_UTIL_H_
#define SLUICE_COMMON_FILE_UTIL_H_

#include <cstdint>
#include <memory>
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

// Prefix of the temporary files AtomicFile writes beside their target:
// `<dir>/.tmp-<name>.<pid>.<n>`. Directory listings that skip names starting
// with '.' never see them; the spill directory's cleanup removes leftovers.
inline constexpr char kTempFilePrefix[] = ".tmp-";

// A file written through a temporary file beside `path` and renamed into
// place by Commit(), so a crash never leaves a half-written file under the
// final name. Destroying it before Commit() removes the temporary file. Not
// thread-safe; neither copyable nor movable.
class AtomicFile {
 public:
  // Fails (NOT_FOUND, PERMISSION_DENIED, ...) if the directory of `path`
  // cannot hold a new file. A temporary name left by a crashed process with
  // the same pid (a restarted container) is skipped, never reused.
  static absl::StatusOr<std::unique_ptr<AtomicFile>> Create(const std::string& path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // Appends (buffered).
  absl::Status Append(absl::string_view data);
  // Overwrites bytes already appended, at `offset`.
  absl::Status WriteAt(uint64_t offset, absl::string_view data);
  // Reads back `length` bytes appended at `offset`.
  absl::Status ReadAt(uint64_t offset, size_t length, std::string* out);
  // Bytes appended so far.
  uint64_t size() const { return size_; }
  // Flushes, fsyncs, renames over `path` and fsyncs the directory.
  absl::Status Commit();

  const std::string& path() const { return path_; }

 private:
  AtomicFile(std::string path, std::string temp_path, int fd);
  absl::Status Flush();

  std::string path_;
  std::string temp_path_;
  int fd_;
  bool committed_ = false;
  uint64_t size_ = 0;
  std::string buffer_;
};

// Replaces `path` with `contents` atomically and durably, through one
// AtomicFile: a crash leaves either the old or the new contents.
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
