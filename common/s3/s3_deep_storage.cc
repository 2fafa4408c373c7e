#include "common/s3/s3_deep_storage.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/file_util.h"
#include "common/s3/digest.h"
#include "common/s3/s3_xml.h"
#include "common/status_macros.h"

namespace sluice::s3 {
namespace {

constexpr char kScheme[] = "s3://";

// Reads `length` bytes at `offset` of `fd`.
absl::StatusOr<std::string> ReadRange(int fd, const std::string& path, int64_t offset,
                                      int64_t length) {
  std::string out(static_cast<size_t>(length), '\0');
  int64_t done = 0;
  while (done < length) {
    const ssize_t n = ::pread(fd, out.data() + done, static_cast<size_t>(length - done),
                              static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, "cannot read", path);
    }
    if (n == 0) return absl::DataLossError(absl::StrCat(path, " shrank while being pushed"));
    done += n;
  }
  return out;
}

// Hex SHA-256 of the whole file, read in 1 MiB pieces.
absl::StatusOr<std::string> FileSha256Hex(int fd, const std::string& path, int64_t size) {
  Sha256 hasher;
  constexpr int64_t kChunk = int64_t{1} << 20;
  for (int64_t offset = 0; offset < size; offset += kChunk) {
    SLUICE_ASSIGN_OR_RETURN(std::string chunk,
                            ReadRange(fd, path, offset, std::min(kChunk, size - offset)));
    hasher.Update(chunk);
  }
  return HexOf(hasher.Finish());
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  int Release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<S3DeepStorage>> S3DeepStorage::Open(const std::string& uri,
                                                                   const S3Options& options) {
  SLUICE_ASSIGN_OR_RETURN(S3Location location, ParseS3Uri(uri));
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<S3Client> client,
                          S3Client::Create(options, location.bucket));
  return std::unique_ptr<S3DeepStorage>(new S3DeepStorage(std::move(location), std::move(client)));
}

std::string S3DeepStorage::ObjectKey(const std::string& key) const {
  return location_.prefix.empty() ? key : absl::StrCat(location_.prefix, "/", key);
}

std::string S3DeepStorage::UriForKey(const std::string& key) const {
  return absl::StrCat(kScheme, location_.bucket, "/", ObjectKey(key));
}

absl::StatusOr<std::string> S3DeepStorage::ObjectKeyForUri(const std::string& uri) const {
  const std::string root = UriForKey("");
  absl::string_view key = uri;
  if (!absl::ConsumePrefix(&key, root)) {
    return absl::InvalidArgumentError(absl::StrCat("\"", uri, "\" is not in deep storage ", root));
  }
  SLUICE_RETURN_IF_ERROR(ValidateDeepStorageKey(key));
  return ObjectKey(std::string(key));
}

absl::Status S3DeepStorage::CheckExisting(const std::string& object_key, int64_t size,
                                          const std::string& sha256_hex) const {
  S3Request head;
  head.method = "HEAD";
  head.key = object_key;
  SLUICE_ASSIGN_OR_RETURN(S3Response response, client_->Call(head));
  int64_t existing_size = -1;
  if (!absl::SimpleAtoi(response.Header("content-length"), &existing_size)) existing_size = -1;
  if (existing_size == size && response.Header(kSha256MetadataHeader) == sha256_hex) {
    return absl::OkStatus();
  }
  return absl::AlreadyExistsError(
      absl::StrCat("deep storage already has s3://", location_.bucket, "/", object_key,
                   " with other content (", existing_size, " bytes)"));
}

absl::Status S3DeepStorage::PutSingle(const std::string& object_key, const std::string& contents,
                                      const std::string& sha256_hex) const {
  S3Request put;
  put.method = "PUT";
  put.key = object_key;
  put.body = contents;
  put.headers = {
      {"If-None-Match", "*"},
      {"x-amz-checksum-sha256", Base64Of(Sha256Of(contents))},
      {kSha256MetadataHeader, sha256_hex},
      {"Content-Type", "application/octet-stream"},
  };
  return client_->Call(put).status();
}

absl::Status S3DeepStorage::PutMultipart(const std::string& local_path,
                                         const std::string& object_key, int64_t size,
                                         const std::string& sha256_hex) const {
  const Fd fd(::open(local_path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return ErrnoStatus(errno, "cannot open", local_path);

  S3Request create;
  create.method = "POST";
  create.key = object_key;
  create.query = {{"uploads", ""}};
  create.headers = {
      {"x-amz-checksum-algorithm", "SHA256"},
      {kSha256MetadataHeader, sha256_hex},
      {"Content-Type", "application/octet-stream"},
  };
  SLUICE_ASSIGN_OR_RETURN(S3Response created, client_->Call(create));
  const std::string upload_id = XmlText(created.body, "UploadId").value_or("");
  if (upload_id.empty()) {
    return absl::InternalError(absl::StrCat(client_->Describe(create),
                                            ": CreateMultipartUpload answered no UploadId"));
  }

  const int64_t part_size = client_->options().part_size_bytes;
  std::string complete_xml = "<CompleteMultipartUpload>";
  absl::Status status;
  int part_number = 0;
  for (int64_t offset = 0; offset < size && status.ok(); offset += part_size) {
    ++part_number;
    absl::StatusOr<std::string> part =
        ReadRange(fd.get(), local_path, offset, std::min(part_size, size - offset));
    if (!part.ok()) {
      status = part.status();
      break;
    }
    const std::string checksum = Base64Of(Sha256Of(*part));
    S3Request upload;
    upload.method = "PUT";
    upload.key = object_key;
    upload.query = {{"partNumber", absl::StrCat(part_number)}, {"uploadId", upload_id}};
    upload.body = *part;
    upload.headers = {{"x-amz-checksum-sha256", checksum}};
    absl::StatusOr<S3Response> uploaded = client_->Call(upload);
    if (!uploaded.ok()) {
      status = uploaded.status();
      break;
    }
    const std::string etag = uploaded->Header("etag");
    if (etag.empty()) {
      status = absl::InternalError(
          absl::StrCat(client_->Describe(upload), ": UploadPart answered no ETag"));
      break;
    }
    absl::StrAppend(&complete_xml, "<Part><PartNumber>", part_number, "</PartNumber><ETag>",
                    XmlEscape(etag), "</ETag><ChecksumSHA256>", checksum,
                    "</ChecksumSHA256></Part>");
  }
  absl::StrAppend(&complete_xml, "</CompleteMultipartUpload>");

  if (status.ok()) {
    S3Request complete;
    complete.method = "POST";
    complete.key = object_key;
    complete.query = {{"uploadId", upload_id}};
    complete.body = complete_xml;
    complete.headers = {{"If-None-Match", "*"}, {"Content-Type", "application/xml"}};
    absl::StatusOr<S3Response> completed = client_->Call(complete);
    if (!completed.ok()) {
      status = completed.status();
    } else if (completed->body.find("<Error>") != std::string::npos) {
      // CompleteMultipartUpload can fail after answering 200.
      S3Response as_error = *completed;
      as_error.http_status = 500;
      status = S3Client::StatusForResponse(as_error, client_->Describe(complete));
    }
    if (status.ok()) return status;
  }
  // Best effort: parts of an abandoned upload cost storage until aborted (a
  // bucket lifecycle rule for incomplete uploads catches what this misses).
  S3Request abort;
  abort.method = "DELETE";
  abort.key = object_key;
  abort.query = {{"uploadId", upload_id}};
  client_->Call(abort).IgnoreError();
  return status;
}

absl::StatusOr<std::string> S3DeepStorage::Push(const std::string& local_path,
                                                const std::string& key) {
  SLUICE_RETURN_IF_ERROR(ValidateDeepStorageKey(key));
  const std::string object_key = ObjectKey(key);
  struct stat st;
  if (::stat(local_path.c_str(), &st) != 0) return ErrnoStatus(errno, "cannot stat", local_path);
  const int64_t size = static_cast<int64_t>(st.st_size);

  std::string contents;
  std::string sha256_hex;
  const bool multipart = size > client_->options().multipart_threshold_bytes;
  if (multipart) {
    const Fd fd(::open(local_path.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) return ErrnoStatus(errno, "cannot open", local_path);
    SLUICE_ASSIGN_OR_RETURN(sha256_hex, FileSha256Hex(fd.get(), local_path, size));
  } else {
    SLUICE_ASSIGN_OR_RETURN(contents, ReadFile(local_path));
    if (static_cast<int64_t>(contents.size()) != size) {
      return absl::DataLossError(absl::StrCat(local_path, " changed size while being pushed"));
    }
    sha256_hex = HexOf(Sha256Of(contents));
  }

  // Refuse an existing key before sending anything (see the header on why
  // this is safe where If-None-Match is not honored).
  absl::Status existing = CheckExisting(object_key, size, sha256_hex);
  if (existing.ok()) return UriForKey(key);
  if (!absl::IsNotFound(existing)) return existing;

  absl::Status status = multipart ? PutMultipart(local_path, object_key, size, sha256_hex)
                                  : PutSingle(object_key, contents, sha256_hex);
  if (absl::IsAlreadyExists(status)) {
    // 412: the key exists now. Ours, if a retried request had landed before.
    status = CheckExisting(object_key, size, sha256_hex);
  }
  SLUICE_RETURN_IF_ERROR(status);
  return UriForKey(key);
}

absl::StatusOr<DeepStorageFileInfo> S3DeepStorage::Stat(const std::string& uri) {
  SLUICE_ASSIGN_OR_RETURN(std::string object_key, ObjectKeyForUri(uri));
  S3Request head;
  head.method = "HEAD";
  head.key = object_key;
  absl::StatusOr<S3Response> response = client_->Call(head);
  if (absl::IsNotFound(response.status())) {
    return absl::NotFoundError(absl::StrCat("no such object: ", uri));
  }
  SLUICE_RETURN_IF_ERROR(response.status());
  DeepStorageFileInfo info{uri, 0};
  if (!absl::SimpleAtoi(response->Header("content-length"), &info.size_bytes)) {
    return absl::InternalError(absl::StrCat(client_->Describe(head), ": no Content-Length"));
  }
  return info;
}

absl::StatusOr<std::string> S3DeepStorage::LocalPathForRead(const std::string& uri,
                                                            const std::string& scratch_dir) {
  static std::atomic<uint64_t> counter{0};
  SLUICE_ASSIGN_OR_RETURN(std::string object_key, ObjectKeyForUri(uri));
  SLUICE_RETURN_IF_ERROR(MakeDirs(scratch_dir));
  const size_t slash = object_key.rfind('/');
  const std::string base = slash == std::string::npos ? object_key : object_key.substr(slash + 1);
  const std::string path =
      absl::StrCat(scratch_dir, "/", base, ".s3-download.", ::getpid(), ".", counter++);
  Fd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  if (fd.get() < 0) return ErrnoStatus(errno, "cannot create", path);

  S3Request get;
  get.method = "GET";
  get.key = object_key;
  get.download_fd = fd.get();
  absl::StatusOr<S3Response> response = client_->Call(get);
  absl::Status status = response.status();
  if (absl::IsNotFound(status)) status = absl::NotFoundError(absl::StrCat("no such object: ", uri));
  if (status.ok()) {
    int64_t expected_size = -1;
    if (!absl::SimpleAtoi(response->Header("content-length"), &expected_size)) expected_size = -1;
    const std::string expected_sha = response->Header(kSha256MetadataHeader);
    const std::string actual_sha = HexOf(response->body_sha256);
    if (expected_size != response->body_bytes) {
      status = absl::DataLossError(absl::StrCat(uri, ": downloaded ", response->body_bytes,
                                                " bytes, the server announced ", expected_size));
    } else if (expected_sha.empty()) {
      status = absl::DataLossError(absl::StrCat(
          uri, " has no ", kSha256MetadataHeader, " metadata to verify it against"));
    } else if (expected_sha != actual_sha) {
      status = absl::DataLossError(absl::StrCat(uri, ": SHA-256 of the download is ", actual_sha,
                                                ", the object was stored with ", expected_sha));
    } else if (::fsync(fd.get()) != 0) {
      status = ErrnoStatus(errno, "cannot fsync", path);
    }
  }
  ::close(fd.Release());
  if (!status.ok()) {
    ::unlink(path.c_str());
    return status;
  }
  return path;
}

absl::Status S3DeepStorage::Delete(const std::string& uri) {
  SLUICE_ASSIGN_OR_RETURN(std::string object_key, ObjectKeyForUri(uri));
  S3Request del;
  del.method = "DELETE";
  del.key = object_key;
  absl::Status status = client_->Call(del).status();
  if (absl::IsNotFound(status)) return absl::OkStatus();
  return status;
}

absl::StatusOr<std::vector<DeepStorageFileInfo>> S3DeepStorage::List(
    const std::string& key_prefix) {
  const size_t slash = key_prefix.rfind('/');
  if (slash != std::string::npos) {
    SLUICE_RETURN_IF_ERROR(ValidateDeepStorageKey(key_prefix.substr(0, slash)));
  }
  const std::string object_prefix =
      location_.prefix.empty() ? key_prefix : absl::StrCat(location_.prefix, "/", key_prefix);
  const std::string root_prefix = location_.prefix.empty() ? "" : location_.prefix + "/";
  std::vector<DeepStorageFileInfo> out;
  std::string token;
  while (true) {
    S3Request list;
    list.method = "GET";
    list.query = {{"list-type", "2"}, {"prefix", object_prefix}};
    if (!token.empty()) list.query.emplace_back("continuation-token", token);
    SLUICE_ASSIGN_OR_RETURN(S3Response response, client_->Call(list));
    SLUICE_ASSIGN_OR_RETURN(ListPage page, ParseListObjectsV2(response.body));
    for (const ListedObject& object : page.objects) {
      absl::string_view key = object.key;
      if (!absl::ConsumePrefix(&key, root_prefix) || !absl::StartsWith(key, key_prefix)) continue;
      if (!ValidateDeepStorageKey(key).ok()) continue;  // not written by sluice
      out.push_back(DeepStorageFileInfo{UriForKey(std::string(key)), object.size_bytes});
    }
    if (!page.truncated) break;
    token = page.next_continuation_token;
  }
  std::sort(out.begin(), out.end(), [](const DeepStorageFileInfo& a, const DeepStorageFileInfo& b) {
    return a.uri < b.uri;
  });
  return out;
}

}  // namespace sluice::s3
