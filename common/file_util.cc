#include "common/file_util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <glog/logging.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace sluice {

absl::Status ErrnoStatus(int err, absl::string_view what, absl::string_view path) {
  const std::string message = absl::StrCat(what, " ", path, ": ", strerror(err));
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      return absl::NotFoundError(message);
    case EEXIST:
      return absl::AlreadyExistsError(message);
    case EACCES:
    case EPERM:
    case EROFS:
      return absl::PermissionDeniedError(message);
    case ENOSPC:
    case EDQUOT:
      // Worth a retry once space is freed (RESOURCE_EXHAUSTED in
      // docs/architecture.md, "What each status code means").
      return absl::ResourceExhaustedError(message);
    case EIO:
    case EAGAIN:
    case EINTR:
    case EMFILE:
    case ENFILE:
      return absl::UnavailableError(message);
    case EINVAL:
    case ENAMETOOLONG:
    case EISDIR:
      return absl::InvalidArgumentError(message);
    default:
      return absl::InternalError(message);
  }
}

bool PathExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

absl::Status MakeDirs(const std::string& path) {
  if (path.empty()) return absl::InvalidArgumentError("empty directory path");
  std::string partial;
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t next = path.find('/', pos);
    if (next == std::string::npos) next = path.size();
    partial = path.substr(0, next);
    pos = next + 1;
    if (partial.empty()) continue;
    if (::mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST) {
      return ErrnoStatus(errno, "cannot create directory", partial);
    }
  }
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return ErrnoStatus(errno, "cannot stat", path);
  if (!S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(path, " exists and is not a directory"));
  }
  return absl::OkStatus();
}

absl::Status SyncDir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, "cannot open directory", dir);
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) return ErrnoStatus(err, "cannot fsync directory", dir);
  return absl::OkStatus();
}

namespace {

std::string ParentDir(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

absl::Status WriteAll(int fd, absl::string_view data, const std::string& path) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, "cannot write", path);
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status MakePrivateDir(const std::string& path) {
  if (absl::Status made = MakeDirs(path); !made.ok()) return made;
  if (::chmod(path.c_str(), 0700) != 0) {
    const int err = errno;
    if (err != EPERM) return ErrnoStatus(err, "cannot chmod 0700", path);
    LOG(WARNING) << "cannot make " << path << " private (mode 0700): " << strerror(err);
  }
  return absl::OkStatus();
}

namespace {

constexpr size_t kAtomicFileBuffer = 1 << 20;

// Temporary names skipped because a file of that name exists (left by a
// crashed process that had the same pid) before Create gives up.
constexpr int kMaxTempNameAttempts = 1000;

std::atomic<uint64_t> temp_counter{0};

std::string BaseName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

absl::StatusOr<std::unique_ptr<AtomicFile>> AtomicFile::Create(const std::string& path) {
  const std::string prefix =
      absl::StrCat(ParentDir(path), "/", kTempFilePrefix, BaseName(path), ".", ::getpid(), ".");
  for (int attempt = 0;; ++attempt) {
    const std::string temp = absl::StrCat(prefix, temp_counter.fetch_add(1));
    const int fd = ::open(temp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) return std::unique_ptr<AtomicFile>(new AtomicFile(path, temp, fd));
    if (errno != EEXIST || attempt + 1 >= kMaxTempNameAttempts) {
      // Named by the file the caller asked for; the temporary name is ours.
      return ErrnoStatus(errno, "cannot create", path);
    }
  }
}

AtomicFile::AtomicFile(std::string path, std::string temp_path, int fd)
    : path_(std::move(path)), temp_path_(std::move(temp_path)), fd_(fd) {}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(temp_path_.c_str());
}

absl::Status AtomicFile::Flush() {
  const absl::Status written = WriteAll(fd_, buffer_, temp_path_);
  buffer_.clear();
  return written;
}

absl::Status AtomicFile::Append(absl::string_view data) {
  if (committed_) return absl::FailedPreconditionError("file already committed");
  size_ += data.size();
  if (buffer_.size() + data.size() > kAtomicFileBuffer) {
    SLUICE_RETURN_IF_ERROR(Flush());
    if (data.size() >= kAtomicFileBuffer) return WriteAll(fd_, data, temp_path_);
  }
  buffer_.append(data.data(), data.size());
  return absl::OkStatus();
}

absl::Status AtomicFile::WriteAt(uint64_t offset, absl::string_view data) {
  if (offset + data.size() > size_) {
    return absl::InvalidArgumentError("WriteAt past the bytes appended");
  }
  SLUICE_RETURN_IF_ERROR(Flush());
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::pwrite(fd_, data.data() + done, data.size() - done,
                               static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, "cannot write", temp_path_);
    }
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::Status AtomicFile::ReadAt(uint64_t offset, size_t length, std::string* out) {
  if (offset > size_ || length > size_ - offset) {
    return absl::OutOfRangeError(absl::StrCat("read of ", length, " bytes at ", offset,
                                              " beyond the ", size_, " bytes of ", temp_path_));
  }
  SLUICE_RETURN_IF_ERROR(Flush());
  out->resize(length);
  size_t done = 0;
  while (done < length) {
    const ssize_t n = ::pread(fd_, &(*out)[done], length - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus(errno, "cannot read", temp_path_);
    if (n == 0) return absl::DataLossError(absl::StrCat(temp_path_, " ended early"));
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::Status AtomicFile::Commit() {
  if (committed_) return absl::FailedPreconditionError("file already committed");
  SLUICE_RETURN_IF_ERROR(Flush());
  if (::fsync(fd_) != 0) return ErrnoStatus(errno, "cannot fsync", temp_path_);
  const int closed = ::close(fd_);
  fd_ = -1;
  if (closed != 0) return ErrnoStatus(errno, "cannot close", temp_path_);
  if (::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    return ErrnoStatus(errno, "cannot rename onto", path_);
  }
  committed_ = true;
  return SyncDir(ParentDir(path_));
}

absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents) {
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<AtomicFile> file, AtomicFile::Create(path));
  SLUICE_RETURN_IF_ERROR(file->Append(contents));
  return file->Commit();
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, "cannot open", path);
  std::string out;
  char buf[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      return ErrnoStatus(err, "cannot read", path);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

absl::StatusOr<std::vector<std::string>> ListDirectory(const std::string& path) {
  DIR* dir = ::opendir(path.c_str());
  if (dir == nullptr) return ErrnoStatus(errno, "cannot open directory", path);
  std::vector<std::string> names;
  errno = 0;
  while (struct dirent* entry = ::readdir(dir)) {
    const std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  const int error = errno;
  ::closedir(dir);
  if (error != 0) return ErrnoStatus(error, "cannot read directory", path);
  std::sort(names.begin(), names.end());
  return names;
}

absl::Status RemoveAll(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return absl::OkStatus();
    return ErrnoStatus(errno, "cannot stat", path);
  }
  if (S_ISDIR(st.st_mode)) {
    absl::StatusOr<std::vector<std::string>> names = ListDirectory(path);
    if (!names.ok()) return names.status();
    for (const std::string& name : *names) {
      SLUICE_RETURN_IF_ERROR(RemoveAll(path + "/" + name));
    }
    if (::rmdir(path.c_str()) != 0 && errno != ENOENT) {
      return ErrnoStatus(errno, "cannot remove directory", path);
    }
    return absl::OkStatus();
  }
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return ErrnoStatus(errno, "cannot remove", path);
  }
  return absl::OkStatus();
}

}  // namespace sluice
