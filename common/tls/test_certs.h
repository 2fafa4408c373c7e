// Throwaway certificates for tests, made with the `openssl` command at test
// time (no key is ever committed). EC P-256 keys; every leaf certificate is
// good for both server and client authentication and by default names
// localhost and 127.0.0.1, so tests can dial 127.0.0.1:<port> over TLS.
//
//   SLUICE_ASSIGN_OR_RETURN(TestCa ca, MakeTestCa(dir, "ca"));
//   SLUICE_ASSIGN_OR_RETURN(TestCert server, MakeTestCert(dir, ca, "server"));
//   tls::TlsOptions opts{server.cert_path, server.key_path, ca.cert_path};
#ifndef SLUICE_COMMON_TLS_TEST_CERTS_H_
#define SLUICE_COMMON_TLS_TEST_CERTS_H_

#include <string>

#include "absl/status/statusor.h"

namespace sluice {
namespace tls {

struct TestCa {
  std::string cert_path;
  std::string key_path;
};

struct TestCert {
  std::string cert_path;
  std::string key_path;
};

// A self-signed CA valid for a day: <dir>/<name>.pem and <dir>/<name>.key.
absl::StatusOr<TestCa> MakeTestCa(const std::string& dir, const std::string& name);

// A leaf certificate signed by `ca`, CN=<name>, with subject alternative
// names `sans` (openssl syntax): <dir>/<name>.pem and <dir>/<name>.key.
// `days` < 0 makes one that has already expired.
inline constexpr char kLoopbackSans[] = "DNS:localhost,IP:127.0.0.1";
absl::StatusOr<TestCert> MakeTestCert(const std::string& dir, const TestCa& ca,
                                      const std::string& name, int days = 1,
                                      const std::string& sans = kLoopbackSans);

}  // namespace tls
}  // namespace sluice

#endif  // SLUICE_COMMON_TLS_TEST_CERTS_H_
