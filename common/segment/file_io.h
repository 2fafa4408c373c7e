// Files for segments and spills: read-only memory mapping. They are written
// with common/file_util.h's AtomicFile (temporary file beside the target,
// fsync, rename, fsync of the directory), which this header makes visible to
// the segment library.
#ifndef SLUICE_COMMON_SEGMENT_FILE_IO_H_
#define SLUICE_COMMON_SEGMENT_FILE_IO_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/file_util.h"

namespace sluice {
namespace segment {

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
