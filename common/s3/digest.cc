#include "common/s3/digest.h"

#include <openssl/evp.h>

#include "absl/strings/escaping.h"

namespace sluice::s3 {

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) { EVP_DigestInit_ex(ctx_, EVP_sha256(), nullptr); }

Sha256::~Sha256() { EVP_MD_CTX_free(ctx_); }

void Sha256::Update(absl::string_view data) { EVP_DigestUpdate(ctx_, data.data(), data.size()); }

std::string Sha256::Finish() {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx_, out, &len);
  EVP_DigestInit_ex(ctx_, EVP_sha256(), nullptr);
  return std::string(reinterpret_cast<const char*>(out), len);
}

std::string Sha256Of(absl::string_view data) {
  Sha256 hasher;
  hasher.Update(data);
  return hasher.Finish();
}

std::string HexOf(absl::string_view bytes) { return absl::BytesToHexString(bytes); }

std::string Base64Of(absl::string_view bytes) { return absl::Base64Escape(bytes); }

}  // namespace sluice::s3
