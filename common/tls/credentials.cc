#include "common/tls/credentials.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace sluice {
namespace tls {
namespace {

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using BioPtr = std::unique_ptr<BIO, BioFree>;
using X509Ptr = std::unique_ptr<X509, X509Free>;
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;

// "tls_cert \"/etc/sluice/tls/tls.crt\"": how messages name a file.
std::string Describe(absl::string_view option, absl::string_view path) {
  return absl::StrCat(option, " \"", path, "\"");
}

// The reason of the most recent OpenSSL error (clears the queue).
std::string OpenSslError() {
  unsigned long err = ERR_peek_last_error();
  ERR_clear_error();
  if (err == 0) return "no PEM data";
  const char* reason = ERR_reason_error_string(err);
  return reason != nullptr ? reason : absl::StrCat("OpenSSL error ", err);
}

absl::StatusOr<std::string> ReadFile(absl::string_view option, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    int err = errno;
    return absl::Status(absl::ErrnoToStatusCode(err),
                        absl::StrCat("cannot read ", Describe(option, path), ": ", strerror(err)));
  }
  std::ostringstream contents;
  contents << in.rdbuf();
  if (in.bad()) {
    return absl::InvalidArgumentError(absl::StrCat("cannot read ", Describe(option, path)));
  }
  return contents.str();
}

BioPtr MemBio(const std::string& pem) {
  return BioPtr(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

// Every certificate in a PEM file; INVALID_ARGUMENT when there is none.
absl::StatusOr<std::vector<X509Ptr>> ParseCertificates(absl::string_view option,
                                                       const std::string& path,
                                                       const std::string& pem) {
  BioPtr bio = MemBio(pem);
  std::vector<X509Ptr> certs;
  while (X509* cert = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    certs.emplace_back(cert);
  }
  // Reading stops with "no start line" at the end of the data; anything
  // else (a truncated or corrupt block) is an error.
  unsigned long err = ERR_peek_last_error();
  bool clean_end = ERR_GET_LIB(err) == ERR_LIB_PEM && ERR_GET_REASON(err) == PEM_R_NO_START_LINE;
  if (certs.empty() || (err != 0 && !clean_end)) {
    std::string reason = certs.empty() && clean_end ? "no PEM certificate" : OpenSslError();
    ERR_clear_error();
    return absl::InvalidArgumentError(
        absl::StrCat(Describe(option, path), " is not a PEM certificate file: ", reason));
  }
  ERR_clear_error();
  return certs;
}

// Refuses to prompt for a pass phrase: encrypted keys fail to load.
int NoPassword(char*, int, int, void*) { return -1; }

absl::StatusOr<PkeyPtr> ParsePrivateKey(const std::string& path, const std::string& pem) {
  BioPtr bio = MemBio(pem);
  PkeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, NoPassword, nullptr));
  if (key == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        Describe("tls_key", path), " is not an unencrypted PEM private key: ", OpenSslError()));
  }
  return key;
}

std::string AsnTimeToString(const ASN1_TIME* t) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  ASN1_TIME_print(bio.get(), t);
  char* data = nullptr;
  long len = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, len);
}

absl::Status CheckValidity(const std::string& path, X509* cert) {
  if (X509_cmp_current_time(X509_get0_notAfter(cert)) < 0) {
    return absl::FailedPreconditionError(absl::StrCat("the certificate in ",
                                                      Describe("tls_cert", path), " expired on ",
                                                      AsnTimeToString(X509_get0_notAfter(cert))));
  }
  if (X509_cmp_current_time(X509_get0_notBefore(cert)) > 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("the certificate in ", Describe("tls_cert", path), " is not valid before ",
                     AsnTimeToString(X509_get0_notBefore(cert))));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<TlsMaterial> LoadTlsMaterial(const TlsOptions& options) {
  if (options.cert_path.empty() != options.key_path.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("tls_cert and tls_key go together; got only ",
                                                   options.cert_path.empty()
                                                       ? Describe("tls_key", options.key_path)
                                                       : Describe("tls_cert", options.cert_path)));
  }
  TlsMaterial material;
  if (!options.cert_path.empty()) {
    SLUICE_ASSIGN_OR_RETURN(material.cert_chain, ReadFile("tls_cert", options.cert_path));
    SLUICE_ASSIGN_OR_RETURN(material.private_key, ReadFile("tls_key", options.key_path));
    SLUICE_ASSIGN_OR_RETURN(std::vector<X509Ptr> chain,
                            ParseCertificates("tls_cert", options.cert_path, material.cert_chain));
    SLUICE_ASSIGN_OR_RETURN(PkeyPtr key, ParsePrivateKey(options.key_path, material.private_key));
    if (X509_check_private_key(chain[0].get(), key.get()) != 1) {
      ERR_clear_error();
      return absl::InvalidArgumentError(absl::StrCat(Describe("tls_key", options.key_path),
                                                     " does not match the certificate in ",
                                                     Describe("tls_cert", options.cert_path)));
    }
    SLUICE_RETURN_IF_ERROR(CheckValidity(options.cert_path, chain[0].get()));
  }
  if (!options.ca_path.empty()) {
    SLUICE_ASSIGN_OR_RETURN(material.ca_bundle, ReadFile("tls_ca", options.ca_path));
    SLUICE_RETURN_IF_ERROR(
        ParseCertificates("tls_ca", options.ca_path, material.ca_bundle).status());
  }
  return material;
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const TlsOptions& options) {
  if (!options.enabled()) return grpc::InsecureServerCredentials();
  if (options.cert_path.empty() && options.key_path.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a TLS server needs tls_cert and tls_key; got only ", Describe("tls_ca", options.ca_path)));
  }
  SLUICE_ASSIGN_OR_RETURN(TlsMaterial material, LoadTlsMaterial(options));
  grpc::SslServerCredentialsOptions ssl(
      material.ca_bundle.empty() ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
                                 : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  ssl.pem_root_certs = material.ca_bundle;
  ssl.pem_key_cert_pairs.push_back({material.private_key, material.cert_chain});
  return grpc::SslServerCredentials(ssl);
}

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> MakeChannelCredentials(
    const TlsOptions& options) {
  if (!options.enabled()) return grpc::InsecureChannelCredentials();
  SLUICE_ASSIGN_OR_RETURN(TlsMaterial material, LoadTlsMaterial(options));
  grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = material.ca_bundle;  // "" = the default roots
  ssl.pem_private_key = material.private_key;
  ssl.pem_cert_chain = material.cert_chain;
  return grpc::SslCredentials(ssl);
}

}  // namespace tls
}  // namespace sluice
