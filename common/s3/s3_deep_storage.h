// Deep storage in an S3 bucket (AWS S3 or an S3-compatible server):
// s3://bucket/prefix, keys below the prefix.
//
// Integrity: every upload request carries x-amz-checksum-sha256 (the server
// recomputes it and refuses the request on a mismatch, BadDigest), and every
// object records the SHA-256 of the whole file in its metadata
// (x-amz-meta-sluice-sha256), which LocalPathForRead compares with what it
// downloaded, as it compares the size. A mismatch is DATA_LOSS.
//
// No overwrite: a PUT (and the CompleteMultipartUpload of a large file) is
// conditional, If-None-Match: *, so a server that supports conditional writes
// (AWS S3 since 2024) refuses to replace an object (412, ALREADY_EXISTS).
// Before uploading, Push also asks for the key (HEAD) and refuses an existing
// one; for a server that ignores If-None-Match this leaves a window between
// the HEAD and the PUT, which is safe because deep-storage keys are unique
// per writer (the task adds its id and an attempt nonce): no two writers push
// the same key. An existing object with the same size and SHA-256 is the
// same push answered late (its answer was lost and it was sent again), and
// Push returns OK for it.
//
// Files above multipart_threshold_bytes go up in parts (each part retried
// on its own); a failed multipart upload is aborted so no parts linger.
#ifndef SLUICE_COMMON_S3_S3_DEEP_STORAGE_H_
#define SLUICE_COMMON_S3_S3_DEEP_STORAGE_H_

#include <memory>
#include <string>
#include <vector>

#include "common/deep_storage.h"
#include "common/s3/s3_client.h"
#include "common/s3/s3_options.h"

namespace sluice::s3 {

// The user metadata header holding the hex SHA-256 of the whole object.
inline constexpr char kSha256MetadataHeader[] = "x-amz-meta-sluice-sha256";

class S3DeepStorage : public DeepStorage {
 public:
  // `uri` is s3://bucket[/prefix]. `options.credentials` must be set.
  // Nothing is contacted yet.
  static absl::StatusOr<std::unique_ptr<S3DeepStorage>> Open(const std::string& uri,
                                                             const S3Options& options);

  absl::StatusOr<std::string> Push(const std::string& local_path, const std::string& key) override;
  absl::StatusOr<DeepStorageFileInfo> Stat(const std::string& uri) override;
  absl::StatusOr<std::string> LocalPathForRead(const std::string& uri,
                                               const std::string& scratch_dir) override;
  absl::Status Delete(const std::string& uri) override;
  absl::StatusOr<std::vector<DeepStorageFileInfo>> List(const std::string& key_prefix) override;
  std::string UriForKey(const std::string& key) const override;

  const S3Client& client() const { return *client_; }
  // The object key (prefix included) of a deep-storage key.
  std::string ObjectKey(const std::string& key) const;

 private:
  S3DeepStorage(S3Location location, std::unique_ptr<S3Client> client)
      : location_(std::move(location)), client_(std::move(client)) {}

  // The object key of a URI of this store; INVALID_ARGUMENT for other URIs.
  absl::StatusOr<std::string> ObjectKeyForUri(const std::string& uri) const;
  // OK if the object at `object_key` is this exact content (size and
  // SHA-256), ALREADY_EXISTS if it is other content, NOT_FOUND if absent.
  absl::Status CheckExisting(const std::string& object_key, int64_t size,
                             const std::string& sha256_hex) const;
  absl::Status PutSingle(const std::string& object_key, const std::string& contents,
                         const std::string& sha256_hex) const;
  absl::Status PutMultipart(const std::string& local_path, const std::string& object_key,
                            int64_t size, const std::string& sha256_hex) const;

  const S3Location location_;
  const std::unique_ptr<S3Client> client_;
};

}  // namespace sluice::s3

#endif  // SLUICE_COMMON_S3_S3_DEEP_STORAGE_H_
