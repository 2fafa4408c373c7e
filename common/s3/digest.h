// SHA-256 for S3 payload signing and integrity checks (OpenSSL's EVP).
#ifndef SLUICE_COMMON_S3_DIGEST_H_
#define SLUICE_COMMON_S3_DIGEST_H_

#include <string>

#include "absl/strings/string_view.h"

typedef struct evp_md_ctx_st EVP_MD_CTX;

namespace sluice::s3 {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void Update(absl::string_view data);
  // The 32-byte digest; the hasher starts over afterwards.
  std::string Finish();

 private:
  EVP_MD_CTX* ctx_;
};

// The raw 32-byte digest of `data`.
std::string Sha256Of(absl::string_view data);
// Lowercase hex (x-amz-content-sha256) and base64 (x-amz-checksum-sha256).
std::string HexOf(absl::string_view bytes);
std::string Base64Of(absl::string_view bytes);

}  // namespace sluice::s3

#endif  // SLUICE_COMMON_S3_DIGEST_H_
