// Deep storage: where segment files go once built. Two implementations: a
// local (or shared) directory, file:///path, the default
// (local_deep_storage.h), and an S3 bucket, s3://bucket/prefix
// (s3/s3_deep_storage.h). OpenDeepStorage (open_deep_storage.h) picks one by
// the URI.
//
// Keys are relative paths of validated components ([A-Za-z0-9._:+-], no "."
// or ".." components). A push never overwrites: pushing to an existing key is
// ALREADY_EXISTS, so callers make keys unique (the task adds its id and an
// attempt nonce) and a published file is never replaced by a late zombie.
#ifndef SLUICE_COMMON_DEEP_STORAGE_H_
#define SLUICE_COMMON_DEEP_STORAGE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace sluice {

struct DeepStorageFileInfo {
  std::string uri;
  int64_t size_bytes = 0;
};

class DeepStorage {
 public:
  virtual ~DeepStorage() = default;

  // Copies the local file to `key` durably (the data is on stable storage when
  // this returns OK) and returns its URI. ALREADY_EXISTS if the key exists;
  // UNAVAILABLE for transient failures (retry).
  virtual absl::StatusOr<std::string> Push(const std::string& local_path,
                                           const std::string& key) = 0;

  // Size of the object at `uri`; NOT_FOUND if absent.
  virtual absl::StatusOr<DeepStorageFileInfo> Stat(const std::string& uri) = 0;

  // A local path to read the object from: the file itself for a local store,
  // a downloaded copy under `scratch_dir` otherwise.
  virtual absl::StatusOr<std::string> LocalPathForRead(const std::string& uri,
                                                       const std::string& scratch_dir) = 0;

  // Deletes the object; OK if it does not exist.
  virtual absl::Status Delete(const std::string& uri) = 0;

  // URIs of every object whose key starts with `key_prefix` (a directory-like
  // prefix such as "wiki/"), sorted.
  virtual absl::StatusOr<std::vector<DeepStorageFileInfo>> List(
      const std::string& key_prefix) = 0;

  // The URI a key has (whether or not it exists).
  virtual std::string UriForKey(const std::string& key) const = 0;
};

// The bytes of the object at `uri`, read through LocalPathForRead; a copy
// downloaded under `scratch_dir` to read it is removed afterwards (never the
// object itself, which a local deep storage may keep under that directory).
absl::StatusOr<std::string> ReadDeepStorageObject(DeepStorage& storage, const std::string& uri,
                                                  const std::string& scratch_dir);

// INVALID_ARGUMENT unless `key` is a relative path of safe components.
absl::Status ValidateDeepStorageKey(absl::string_view key);

}  // namespace sluice

#endif  // SLUICE_COMMON_DEEP_STORAGE_H_
