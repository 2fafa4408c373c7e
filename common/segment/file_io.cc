#include "common/segment/file_io.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/file_util.h"

namespace sluice {
namespace segment {

absl::StatusOr<MappedFile> MappedFile::Open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, "open", path);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int error = errno;
    ::close(fd);
    return ErrnoStatus(error, "stat", path);
  }
  MappedFile file;
  file.size_ = static_cast<size_t>(st.st_size);
  if (file.size_ > 0) {
    // Readers go over every byte (the checksum): map it all at once rather
    // than page fault by page fault.
    void* addr = ::mmap(nullptr, file.size_, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    if (addr == MAP_FAILED) {
      const int error = errno;
      ::close(fd);
      return ErrnoStatus(error, "mmap", path);
    }
    file.addr_ = addr;
  }
  ::close(fd);
  return file;
}

void MappedFile::ReleasePages(uint64_t offset, uint64_t length) const {
  if (addr_ == nullptr || offset >= size_) return;
  length = std::min<uint64_t>(length, size_ - offset);
  static const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t begin = (offset + page - 1) / page * page;  // whole pages only
  const uint64_t end = (offset + length) / page * page;
  if (end <= begin) return;
  // The mapping is read-only: a released page is read again from the file.
  ::madvise(static_cast<char*>(addr_) + begin, end - begin, MADV_DONTNEED);
}

MappedFile::~MappedFile() {
  if (addr_ != nullptr) ::munmap(addr_, size_);
}

MappedFile::MappedFile(MappedFile&& other) noexcept : addr_(other.addr_), size_(other.size_) {
  other.addr_ = nullptr;
  other.size_ = 0;
}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    if (addr_ != nullptr) ::munmap(addr_, size_);
    addr_ = other.addr_;
    size_ = other.size_;
    other.addr_ = nullptr;
    other.size_ = 0;
  }
  return *this;
}

absl::StatusOr<std::string> ReadFileToString(const std::string& path) {
  absl::StatusOr<MappedFile> file = MappedFile::Open(path);
  if (!file.ok()) return file.status();
  return std::string(file->data());
}

}  // namespace segment
}  // namespace sluice
