#include "common/local_deep_storage.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/fault_injection.h"
#include "common/file_util.h"
#include "common/status_macros.h"

namespace sluice {
namespace {

constexpr char kFileScheme[] = "file://";

std::string ParentDir(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

// Copies src to a new file dst (O_EXCL) and fsyncs it.
absl::Status CopyFileDurably(const std::string& src, const std::string& dst) {
  const int in = ::open(src.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return ErrnoStatus(errno, "cannot open", src);
  const int out = ::open(dst.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (out < 0) {
    const int err = errno;
    ::close(in);
    return ErrnoStatus(err, "cannot create", dst);
  }
  absl::Status status;
  char buf[1 << 17];
  while (status.ok()) {
    const ssize_t n = ::read(in, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      status = ErrnoStatus(errno, "cannot read", src);
      break;
    }
    if (n == 0) break;
    ssize_t done = 0;
    while (done < n) {
      const ssize_t w = ::write(out, buf + done, static_cast<size_t>(n - done));
      if (w < 0) {
        if (errno == EINTR) continue;
        status = ErrnoStatus(errno, "cannot write", dst);
        break;
      }
      done += w;
    }
  }
  if (status.ok() && ::fsync(out) != 0) status = ErrnoStatus(errno, "cannot fsync", dst);
  ::close(in);
  if (::close(out) != 0 && status.ok()) status = ErrnoStatus(errno, "cannot close", dst);
  return status;
}

absl::Status ListInto(const std::string& dir, const std::string& rel,
                      std::vector<std::string>* out) {
  absl::StatusOr<std::vector<std::string>> names = ListDirectory(dir);
  if (absl::IsNotFound(names.status())) return absl::OkStatus();
  if (!names.ok()) return names.status();
  for (const std::string& name : *names) {
    if (absl::StrContains(name, ".pushing.")) continue;
    const std::string path = dir + "/" + name;
    const std::string child_rel = rel.empty() ? name : rel + "/" + name;
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      SLUICE_RETURN_IF_ERROR(ListInto(path, child_rel, out));
    } else if (S_ISREG(st.st_mode)) {
      out->push_back(child_rel);
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<LocalDeepStorage>> LocalDeepStorage::Open(const std::string& root) {
  if (root.empty() || root[0] != '/') {
    return absl::InvalidArgumentError(
        absl::StrCat("deep storage directory \"", root, "\" must be an absolute path"));
  }
  std::string clean = root;
  while (clean.size() > 1 && clean.back() == '/') clean.pop_back();
  SLUICE_RETURN_IF_ERROR(MakeDirs(clean));
  return std::unique_ptr<LocalDeepStorage>(new LocalDeepStorage(clean));
}

std::string LocalDeepStorage::UriForKey(const std::string& key) const {
  return absl::StrCat(kFileScheme, root_, "/", key);
}

absl::StatusOr<std::string> LocalDeepStorage::PathForUri(const std::string& uri) const {
  const std::string prefix = absl::StrCat(kFileScheme, root_, "/");
  if (!absl::StartsWith(uri, prefix)) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", uri, "\" is not in deep storage ", kFileScheme, root_));
  }
  const std::string key = uri.substr(prefix.size());
  SLUICE_RETURN_IF_ERROR(ValidateDeepStorageKey(key));
  return absl::StrCat(root_, "/", key);
}

absl::StatusOr<std::string> LocalDeepStorage::Push(const std::string& local_path,
                                                   const std::string& key) {
  static std::atomic<uint64_t> counter{0};
  SLUICE_RETURN_IF_ERROR(ValidateDeepStorageKey(key));
  // A transient store failure (UNAVAILABLE), for the fault tests: nothing is
  // written, as when an object store refuses the upload.
  SLUICE_RETURN_IF_ERROR(SLUICE_FAULT_POINT("deep_storage.push"));
  const std::string final_path = absl::StrCat(root_, "/", key);
  const std::string dir = ParentDir(final_path);
  SLUICE_RETURN_IF_ERROR(MakeDirs(dir));
  if (PathExists(final_path)) {
    return absl::AlreadyExistsError(absl::StrCat("deep storage already has ", key));
  }
  const std::string tmp = absl::StrCat(final_path, ".pushing.", ::getpid(), ".", counter++);
  absl::Status status = CopyFileDurably(local_path, tmp);
  // link() fails with EEXIST instead of replacing: never overwrite.
  if (status.ok() && ::link(tmp.c_str(), final_path.c_str()) != 0) {
    status = ErrnoStatus(errno, "cannot publish", final_path);
  }
  ::unlink(tmp.c_str());
  SLUICE_RETURN_IF_ERROR(status);
  SLUICE_RETURN_IF_ERROR(SyncDir(dir));
  return UriForKey(key);
}

absl::StatusOr<DeepStorageFileInfo> LocalDeepStorage::Stat(const std::string& uri) {
  SLUICE_ASSIGN_OR_RETURN(std::string path, PathForUri(uri));
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return ErrnoStatus(errno, "cannot stat", path);
  if (!S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(path, " is not a regular file"));
  }
  return DeepStorageFileInfo{uri, static_cast<int64_t>(st.st_size)};
}

absl::StatusOr<std::string> LocalDeepStorage::LocalPathForRead(const std::string& uri,
                                                               const std::string& /*scratch*/) {
  SLUICE_ASSIGN_OR_RETURN(std::string path, PathForUri(uri));
  if (!PathExists(path)) return absl::NotFoundError(absl::StrCat("no such object: ", uri));
  return path;
}

absl::Status LocalDeepStorage::Delete(const std::string& uri) {
  SLUICE_ASSIGN_OR_RETURN(std::string path, PathForUri(uri));
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return ErrnoStatus(errno, "cannot delete", path);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<DeepStorageFileInfo>> LocalDeepStorage::List(
    const std::string& key_prefix) {
  // List the deepest directory the prefix names fully, then filter.
  std::string dir_rel;
  const size_t slash = key_prefix.rfind('/');
  if (slash != std::string::npos) {
    dir_rel = key_prefix.substr(0, slash);
    SLUICE_RETURN_IF_ERROR(ValidateDeepStorageKey(dir_rel));
  }
  std::vector<std::string> keys;
  SLUICE_RETURN_IF_ERROR(
      ListInto(dir_rel.empty() ? root_ : absl::StrCat(root_, "/", dir_rel), dir_rel, &keys));
  std::sort(keys.begin(), keys.end());
  std::vector<DeepStorageFileInfo> out;
  for (const std::string& key : keys) {
    if (!absl::StartsWith(key, key_prefix)) continue;
    struct stat st;
    const std::string path = absl::StrCat(root_, "/", key);
    if (::stat(path.c_str(), &st) != 0) continue;
    out.push_back(DeepStorageFileInfo{UriForKey(key), static_cast<int64_t>(st.st_size)});
  }
  return out;
}

}  // namespace sluice
