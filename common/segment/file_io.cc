#include "common/segment/file_io.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/file_util.h"

namespace sluice {
namespace segment {
namespace {

constexpr size_t kBufferSize = 1 << 20;

std::atomic<uint64_t> temp_counter{0};

std::string DirName(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string BaseName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

absl::Status SyncDirectory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, "open directory", dir);
  const int rc = ::fsync(fd);
  const int error = errno;
  ::close(fd);
  if (rc != 0) return ErrnoStatus(error, "fsync directory", dir);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<AtomicFile>> AtomicFile::Create(const std::string& path) {
  const std::string temp = absl::StrCat(DirName(path), "/", kTempFilePrefix, BaseName(path), ".",
                                        ::getpid(), ".", temp_counter.fetch_add(1));
  const int fd = ::open(temp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus(errno, "create", temp);
  return std::unique_ptr<AtomicFile>(new AtomicFile(path, temp, fd));
}

AtomicFile::AtomicFile(std::string path, std::string temp_path, int fd)
    : path_(std::move(path)), temp_path_(std::move(temp_path)), fd_(fd) {
  buffer_.reserve(kBufferSize);
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(temp_path_.c_str());
}

absl::Status AtomicFile::ReadAt(uint64_t offset, size_t length, std::string* out) {
  if (offset > size_ || length > size_ - offset) {
    return absl::OutOfRangeError(absl::StrCat("read of ", length, " bytes at ", offset,
                                              " beyond the ", size_, " bytes of ", temp_path_));
  }
  if (absl::Status s = Flush(); !s.ok()) return s;
  out->resize(length);
  size_t done = 0;
  while (done < length) {
    const ssize_t n = ::pread(fd_, &(*out)[done], length - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus(errno, "read", temp_path_);
    if (n == 0) return absl::DataLossError(absl::StrCat(temp_path_, " ended early"));
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::Status AtomicFile::Flush() {
  size_t done = 0;
  while (done < buffer_.size()) {
    const ssize_t n = ::write(fd_, buffer_.data() + done, buffer_.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, "write", temp_path_);
    }
    done += static_cast<size_t>(n);
  }
  buffer_.clear();
  return absl::OkStatus();
}

absl::Status AtomicFile::Append(absl::string_view data) {
  if (committed_) return absl::FailedPreconditionError("file already committed");
  size_ += data.size();
  if (buffer_.size() + data.size() > kBufferSize) {
    if (absl::Status s = Flush(); !s.ok()) return s;
    if (data.size() >= kBufferSize) {
      buffer_.assign(data.data(), data.size());
      return Flush();
    }
  }
  buffer_.append(data.data(), data.size());
  return absl::OkStatus();
}

absl::Status AtomicFile::WriteAt(uint64_t offset, absl::string_view data) {
  if (offset + data.size() > size_) {
    return absl::InvalidArgumentError("WriteAt past the bytes appended");
  }
  if (absl::Status s = Flush(); !s.ok()) return s;
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::pwrite(fd_, data.data() + done, data.size() - done,
                               static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, "write", temp_path_);
    }
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::Status AtomicFile::Commit() {
  if (committed_) return absl::FailedPreconditionError("file already committed");
  if (absl::Status s = Flush(); !s.ok()) return s;
  if (::fsync(fd_) != 0) return ErrnoStatus(errno, "fsync", temp_path_);
  if (::close(fd_) != 0) {
    fd_ = -1;
    return ErrnoStatus(errno, "close", temp_path_);
  }
  fd_ = -1;
  if (::rename(temp_path_.c_str(), path_.c_str()) != 0) return ErrnoStatus(errno, "rename to", path_);
  committed_ = true;
  return SyncDirectory(DirName(path_));
}

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
