// gRPC credentials from certificate files: TLS for servers and clients, and
// mutual TLS when a CA is given.
//
//   tls::TlsOptions tls{.cert_path = FLAGS_tls_cert, .key_path = FLAGS_tls_key,
//                       .ca_path = FLAGS_tls_ca};
//   SLUICE_ASSIGN_OR_RETURN(auto server_creds, tls::MakeServerCredentials(tls));
//   builder.AddListeningPort(listen, server_creds, &port);
//   SLUICE_ASSIGN_OR_RETURN(auto channel_creds, tls::MakeChannelCredentials(tls));
//   auto channel = grpc::CreateChannel("sluice-supervisor.sluice.svc:7070", channel_creds);
//
// What each combination means:
//   nothing                 server and client are plaintext (insecure)
//   server: cert+key        TLS; clients are not asked for a certificate
//   server: cert+key+ca     mutual TLS: clients must present a certificate
//                           signed by a CA in `ca_path`, else the handshake fails
//   client: ca              TLS; the server's certificate must chain to `ca_path`
//                           and name the host dialled (DNS or IP SAN)
//   client: cert+key+ca     the same, presenting the client certificate
//   client: cert+key        presenting a certificate, verifying the server
//                           against the system's default roots
// The files are read and checked once, here: a missing or unreadable file, a
// file without PEM data, a key that does not belong to the certificate, or a
// certificate outside its validity period is a clear error at startup rather
// than a failed handshake later. Certificates are not reloaded: restart the
// process after rotating them.
#ifndef SLUICE_COMMON_TLS_CREDENTIALS_H_
#define SLUICE_COMMON_TLS_CREDENTIALS_H_

#include <grpcpp/security/credentials.h>
#include <grpcpp/security/server_credentials.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace sluice {
namespace tls {

struct TlsOptions {
  // PEM certificate chain of this process (leaf first).
  std::string cert_path;
  // PEM private key of the leaf certificate (not encrypted).
  std::string key_path;
  // PEM CA certificates that peers' certificates must chain to.
  std::string ca_path;

  bool enabled() const { return !cert_path.empty() || !key_path.empty() || !ca_path.empty(); }
};

// The checked contents of the files named by TlsOptions ("" where no path).
struct TlsMaterial {
  std::string cert_chain;
  std::string private_key;
  std::string ca_bundle;
};

// Reads and checks the files. INVALID_ARGUMENT for a cert without its key
// (or the reverse), data that is not PEM, or a key that does not match the
// certificate; NOT_FOUND / PERMISSION_DENIED for files that cannot be read;
// FAILED_PRECONDITION for a certificate that has expired or is not yet valid.
// Every message names the option and the path.
absl::StatusOr<TlsMaterial> LoadTlsMaterial(const TlsOptions& options);

// Credentials for a server. A CA without cert and key is INVALID_ARGUMENT (a
// TLS server needs its own certificate); otherwise as LoadTlsMaterial.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const TlsOptions& options);

// Credentials for a client channel; errors as LoadTlsMaterial.
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> MakeChannelCredentials(
    const TlsOptions& options);

}  // namespace tls
}  // namespace sluice

#endif  // SLUICE_COMMON_TLS_CREDENTIALS_H_
