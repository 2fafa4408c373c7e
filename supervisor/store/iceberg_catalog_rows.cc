#include "supervisor/store/iceberg_catalog_rows.h"

#include "common/status_macros.h"

namespace sluice::supervisor {

// ---- the Iceberg SQL catalog ----

namespace {
constexpr char kIcebergCatalog[] = "sluice";
}  // namespace

absl::StatusOr<std::optional<std::string>> IcebergCatalogRows::IcebergMetadataLocation(
    const std::string& table_namespace, const std::string& table_name) {
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db_->Prepare("SELECT metadata_location FROM iceberg_tables WHERE catalog_name = ? "
                           "AND table_namespace = ? AND table_name = ?"));
  q.Bind(1, kIcebergCatalog).Bind(2, table_namespace).Bind(3, table_name);
  SLUICE_ASSIGN_OR_RETURN(bool row, q.Step());
  if (!row) return std::optional<std::string>();
  if (q.IsNull(0)) return std::optional<std::string>(std::string());
  return std::optional<std::string>(q.Text(0));
}

absl::StatusOr<bool> IcebergCatalogRows::SwapIcebergMetadataLocation(
    const std::string& table_namespace, const std::string& table_name,
    const std::optional<std::string>& expected, const std::string& next) {
  if (expected.has_value()) {
    SLUICE_ASSIGN_OR_RETURN(
        auto q, db_->Prepare("UPDATE iceberg_tables SET metadata_location = ?1, "
                             "previous_metadata_location = ?2 WHERE catalog_name = ?3 AND "
                             "table_namespace = ?4 AND table_name = ?5 AND "
                             "metadata_location = ?2"));
    q.Bind(1, next).Bind(2, *expected).Bind(3, kIcebergCatalog).Bind(4, table_namespace).Bind(
        5, table_name);
    SLUICE_RETURN_IF_ERROR(q.Run());
    return q.Changes() == 1;
  }
  SLUICE_ASSIGN_OR_RETURN(std::optional<std::string> current,
                          IcebergMetadataLocation(table_namespace, table_name));
  if (current.has_value()) return false;
  {
    SLUICE_ASSIGN_OR_RETURN(
        auto q, db_->Prepare("INSERT INTO iceberg_namespace_properties (catalog_name, namespace, "
                             "property_key, property_value) VALUES (?, ?, 'exists', 'true') "
                             "ON CONFLICT (catalog_name, namespace, property_key) DO NOTHING"));
    q.Bind(1, kIcebergCatalog).Bind(2, table_namespace);
    SLUICE_RETURN_IF_ERROR(q.Run());
  }
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db_->Prepare("INSERT INTO iceberg_tables (catalog_name, table_namespace, "
                           "table_name, metadata_location, previous_metadata_location, "
                           "iceberg_type) VALUES (?, ?, ?, ?, NULL, 'TABLE')"));
  q.Bind(1, kIcebergCatalog).Bind(2, table_namespace).Bind(3, table_name).Bind(4, next);
  SLUICE_RETURN_IF_ERROR(q.Run());
  return true;
}

absl::StatusOr<std::vector<std::string>> IcebergCatalogRows::IcebergNamespaces(const std::string& after,
                                                                    int limit) {
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db_->Prepare("SELECT n FROM (SELECT namespace AS n FROM iceberg_namespace_properties "
                           "WHERE catalog_name = ?1 UNION SELECT table_namespace AS n FROM "
                           "iceberg_tables WHERE catalog_name = ?1) AS names WHERE n > ?2 "
                           "ORDER BY n LIMIT ?3"));
  q.Bind(1, kIcebergCatalog).Bind(2, after).Bind(3, limit);
  std::vector<std::string> names;
  for (;;) {
    SLUICE_ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) break;
    names.push_back(q.Text(0));
  }
  return names;
}

absl::StatusOr<std::optional<std::map<std::string, std::string>>>
IcebergCatalogRows::IcebergNamespaceProperties(const std::string& table_namespace, int limit) {
  std::map<std::string, std::string> properties;
  {
    SLUICE_ASSIGN_OR_RETURN(
        auto q, db_->Prepare("SELECT property_key, property_value FROM "
                             "iceberg_namespace_properties WHERE catalog_name = ? AND namespace = ? "
                             "ORDER BY property_key LIMIT ?"));
    q.Bind(1, kIcebergCatalog).Bind(2, table_namespace).Bind(3, limit);
    for (;;) {
      SLUICE_ASSIGN_OR_RETURN(bool row, q.Step());
      if (!row) break;
      properties[q.Text(0)] = q.Text(1);
    }
  }
  if (properties.empty()) {
    SLUICE_ASSIGN_OR_RETURN(
        auto q, db_->Prepare("SELECT 1 FROM iceberg_tables WHERE catalog_name = ? AND "
                             "table_namespace = ? LIMIT 1"));
    q.Bind(1, kIcebergCatalog).Bind(2, table_namespace);
    SLUICE_ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) return std::optional<std::map<std::string, std::string>>();
  }
  return std::optional<std::map<std::string, std::string>>(std::move(properties));
}

absl::StatusOr<std::vector<std::string>> IcebergCatalogRows::IcebergTableNames(
    const std::string& table_namespace, const std::string& after, int limit) {
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db_->Prepare("SELECT table_name FROM iceberg_tables WHERE catalog_name = ? AND "
                           "table_namespace = ? AND (iceberg_type IS NULL OR iceberg_type = "
                           "'TABLE') AND table_name > ? ORDER BY table_name LIMIT ?"));
  q.Bind(1, kIcebergCatalog).Bind(2, table_namespace).Bind(3, after).Bind(4, limit);
  std::vector<std::string> names;
  for (;;) {
    SLUICE_ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) break;
    names.push_back(q.Text(0));
  }
  return names;
}

}  // namespace sluice::supervisor
