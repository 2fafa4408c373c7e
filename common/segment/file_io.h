// Files for segments and spills: atomic creation (temporary file beside the
// target, fsync, rename, fsync of the directory, so a crash never leaves a
// half-written file under the final name) and read-only memory mapping.
#ifndef SLUICE_COMMON_SEGMENT_FILE_IO_H_
#define SLUICE_COMMON_SEGMENT_FILE_IO_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace sluice {
namespace segment {

// Prefix of temporary files; directory listings skip names starting with '.'.
inline constexpr char kTempFilePrefix[] = ".tmp-";

// A file written through a temporary file and renamed into place by Commit().
// Destroying it before Commit() removes the temporary file. Not thread-safe;
// neither copyable nor movable.
class AtomicFile {
 public:
  // Fails (NOT_FOUND, PERMISSION_DENIED, ...) if the directory of `path`
  // cannot hold a new file.
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

// A whole file mapped read-only. Movable, not copyable.
class MappedFile {
 public:
  static absl::StatusOr<MappedFile> Open(const std::string& path);
  MappedFile() = default;
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  absl::string_view data() const {
    return absl::string_view(static_cast<const char*>(addr_), size_);
  }
  // Unmaps the whole pages within [offset, offset + length) from this
  // process (they stay in the page cache; a later read maps them again), so
  // bytes read once stop counting in the process's resident set.
  void ReleasePages(uint64_t offset, uint64_t length) const;

 private:
  void* addr_ = nullptr;
  size_t size_ = 0;
};

absl::StatusOr<std::string> ReadFileToString(const std::string& path);

}  // namespace segment
}  // namespace sluice

#endif  // SLUICE_COMMON_SEGMENT_FILE_IO_H_
