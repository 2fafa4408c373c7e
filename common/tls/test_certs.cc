#include "common/tls/test_certs.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace sluice {
namespace tls {
namespace {

std::string Quote(const std::string& s) { return absl::StrCat("'", s, "'"); }

// Runs `command` through the shell, its output going to <dir>/openssl.log.
absl::Status Run(const std::string& dir, const std::string& command) {
  std::string log = dir + "/openssl.log";
  int rc = std::system(absl::StrCat(command, " >>", Quote(log), " 2>&1").c_str());
  if (rc == 0) return absl::OkStatus();
  std::ifstream in(log);
  std::ostringstream text;
  text << in.rdbuf();
  return absl::InternalError(
      absl::StrCat("openssl failed (", rc, "): ", command, "\n", text.str()));
}

}  // namespace

absl::StatusOr<TestCa> MakeTestCa(const std::string& dir, const std::string& name) {
  TestCa ca{dir + "/" + name + ".pem", dir + "/" + name + ".key"};
  SLUICE_RETURN_IF_ERROR(
      Run(dir, absl::StrCat("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 "
                            "-nodes -days 1 -subj /CN=",
                            name, " -keyout ", Quote(ca.key_path), " -out ", Quote(ca.cert_path),
                            " -addext basicConstraints=critical,CA:TRUE"
                            " -addext keyUsage=critical,keyCertSign,cRLSign")));
  return ca;
}

absl::StatusOr<TestCert> MakeTestCert(const std::string& dir, const TestCa& ca,
                                      const std::string& name, int days, const std::string& sans) {
  TestCert cert{dir + "/" + name + ".pem", dir + "/" + name + ".key"};
  std::string csr = dir + "/" + name + ".csr";
  std::string ext = dir + "/" + name + ".ext";
  {
    std::ofstream out(ext);
    out << "basicConstraints=CA:FALSE\n"
           "keyUsage=critical,digitalSignature\n"
           "extendedKeyUsage=serverAuth,clientAuth\n"
           "subjectAltName="
        << sans << "\n";
    if (!out) return absl::InternalError("cannot write " + ext);
  }
  SLUICE_RETURN_IF_ERROR(
      Run(dir, absl::StrCat("openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
                            "-subj /CN=",
                            name, " -keyout ", Quote(cert.key_path), " -out ", Quote(csr))));
  SLUICE_RETURN_IF_ERROR(
      Run(dir, absl::StrCat("openssl x509 -req -in ", Quote(csr), " -CA ", Quote(ca.cert_path),
                            " -CAkey ", Quote(ca.key_path), " -days ", days, " -extfile ",
                            Quote(ext), " -out ", Quote(cert.cert_path))));
  return cert;
}

}  // namespace tls
}  // namespace sluice
