// Deep storage in a local (or shared, e.g. NFS / ReadWriteMany volume)
// directory.
#ifndef SLUICE_COMMON_LOCAL_DEEP_STORAGE_H_
#define SLUICE_COMMON_LOCAL_DEEP_STORAGE_H_

#include <memory>
#include <string>
#include <vector>

#include "common/deep_storage.h"

namespace sluice {

class LocalDeepStorage : public DeepStorage {
 public:
  // `root` is an absolute directory; created (with parents) if missing.
  static absl::StatusOr<std::unique_ptr<LocalDeepStorage>> Open(const std::string& root);

  absl::StatusOr<std::string> Push(const std::string& local_path, const std::string& key) override;
  absl::StatusOr<DeepStorageFileInfo> Stat(const std::string& uri) override;
  absl::StatusOr<std::string> LocalPathForRead(const std::string& uri,
                                               const std::string& scratch_dir) override;
  absl::Status Delete(const std::string& uri) override;
  absl::StatusOr<std::vector<DeepStorageFileInfo>> List(const std::string& key_prefix) override;
  std::string UriForKey(const std::string& key) const override;

  const std::string& root() const { return root_; }

 private:
  explicit LocalDeepStorage(std::string root) : root_(std::move(root)) {}

  // The file path of a URI of this store; INVALID_ARGUMENT for other URIs.
  absl::StatusOr<std::string> PathForUri(const std::string& uri) const;

  const std::string root_;
};

}  // namespace sluice

#endif  // SLUICE_COMMON_LOCAL_DEEP_STORAGE_H_
