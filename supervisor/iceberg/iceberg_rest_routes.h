// The Iceberg REST catalog protocol (the Apache Iceberg REST OpenAPI spec),
// read-only, on the supervisor's HTTP endpoint under /iceberg/
// (docs/iceberg.md "REST catalog"): an HttpHandler turning requests into
// IcebergRestCatalog calls and their results into the spec's JSON
// (ConfigResponse, ListNamespacesResponse, GetNamespaceResponse,
// ListTablesResponse, LoadTableResult, ErrorModel).
//
//   GET  /iceberg/v1/config
//   GET  /iceberg/v1/namespaces                       (pageToken, pageSize, parent)
//   GET  /iceberg/v1/namespaces/{ns}       HEAD too
//   GET  /iceberg/v1/namespaces/{ns}/tables           (pageToken, pageSize)
//   GET  /iceberg/v1/namespaces/{ns}/tables/{table}   HEAD too
//
// Every other method is refused (403 ForbiddenException: the catalog is
// read-only), changing nothing. Path segments and query values are
// percent-decoded, names checked (ValidateIcebergRestName): 400 otherwise.
#ifndef SLUICE_SUPERVISOR_ICEBERG_ICEBERG_REST_ROUTES_H_
#define SLUICE_SUPERVISOR_ICEBERG_ICEBERG_REST_ROUTES_H_

#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "common/metrics/http_routes.h"
#include "supervisor/iceberg/iceberg_rest_catalog.h"

namespace sluice::supervisor {

// Where the catalog is mounted: its URI is http://<metrics address>/iceberg.
inline constexpr char kIcebergRestPrefix[] = "/iceberg/";

// What a write is told.
inline constexpr char kIcebergRestReadOnly[] =
    "this catalog is read-only: sluice commits its tables itself; write through the SQL catalog "
    "(catalog 'sluice' in the metadata store, docs/iceberg.md) instead";

// "%41b" -> "Ab"; nullopt for a bad escape. '+' is a space when
// `plus_is_space` (query values).
std::optional<std::string> PercentDecode(absl::string_view in, bool plus_is_space);

class IcebergRestHandler : public metrics::HttpHandler {
 public:
  explicit IcebergRestHandler(IcebergRestCatalog catalog) : catalog_(std::move(catalog)) {}

  metrics::HttpResponse Handle(const metrics::HttpRequest& request) override;
  // 401 NotAuthorizedException / 403 ForbiddenException as ErrorModel JSON.
  metrics::HttpResponse Refusal(int status, absl::string_view message) override;

 private:
  IcebergRestCatalog catalog_;
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_ICEBERG_ICEBERG_REST_ROUTES_H_
