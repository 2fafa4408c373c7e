// The Iceberg SQL catalog (catalog_name 'sluice', docs/iceberg.md): the
// compare-and-swap of a table's metadata location, and the reads of the REST
// catalog (tables iceberg_tables, iceberg_namespace_properties). Typed
// statements over one open transaction; StoreTxn (metadata_store.h) offers
// them.
#ifndef SLUICE_SUPERVISOR_STORE_ICEBERG_CATALOG_ROWS_H_
#define SLUICE_SUPERVISOR_STORE_ICEBERG_CATALOG_ROWS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "supervisor/store/sql.h"

namespace sluice::supervisor {

class IcebergCatalogRows {
 public:
  explicit IcebergCatalogRows(SqlConnection* db) : db_(db) {}

  // ---- the Iceberg SQL catalog (catalog_name 'sluice', docs/iceberg.md) ----
  // The table's metadata_location; nullopt when the catalog has no such table.
  absl::StatusOr<std::optional<std::string>> IcebergMetadataLocation(
      const std::string& table_namespace, const std::string& table_name);
  // The catalog's compare-and-swap: points the table at `next` (and
  // previous_metadata_location at `expected`) when it still points at
  // `expected`; with `expected` nullopt, inserts the table (iceberg_type
  // 'TABLE') when the catalog has none and records the namespace (property
  // "exists" = "true", as pyiceberg does) when missing. False: another
  // writer moved (or created) the table first; nothing was changed.
  absl::StatusOr<bool> SwapIcebergMetadataLocation(const std::string& table_namespace,
                                                   const std::string& table_name,
                                                   const std::optional<std::string>& expected,
                                                   const std::string& next);

  // Reads for the Iceberg REST catalog (supervisor/iceberg/iceberg_rest_catalog.h),
  // of catalog 'sluice' only. Names sort as the database compares them;
  // `after` (exclusive; "" = from the first) and `limit` page through them.
  // The namespaces: those with a property row or a table.
  absl::StatusOr<std::vector<std::string>> IcebergNamespaces(const std::string& after, int limit);
  // The namespace's properties (at most `limit`, by key); nullopt when the
  // catalog has neither a property row nor a table in that namespace.
  absl::StatusOr<std::optional<std::map<std::string, std::string>>> IcebergNamespaceProperties(
      const std::string& table_namespace, int limit);
  // The names of the namespace's tables (iceberg_type 'TABLE' or NULL, as
  // rows of older catalogs have; views are not tables).
  absl::StatusOr<std::vector<std::string>> IcebergTableNames(const std::string& table_namespace,
                                                             const std::string& after, int limit);

 private:
  SqlConnection* db_;
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_STORE_ICEBERG_CATALOG_ROWS_H_
