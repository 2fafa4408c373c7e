// The read side of the Iceberg catalog the metadata store holds (catalog
// 'sluice', docs/iceberg.md "The catalog"), for the REST catalog the
// supervisor serves (iceberg_rest_routes.h): namespaces, their properties,
// their tables, and a table's current metadata document. Plain C++ on the
// store and deep storage; it never writes.
//
// A table's metadata is read only from its catalog row's metadata_location,
// and only when that is a "*.metadata.json" file of this supervisor's deep
// storage (a key of safe path parts), never from anything a request names.
#ifndef SLUICE_SUPERVISOR_ICEBERG_ICEBERG_REST_CATALOG_H_
#define SLUICE_SUPERVISOR_ICEBERG_ICEBERG_REST_CATALOG_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/deep_storage.h"
#include "supervisor/store/metadata_store.h"

namespace sluice::supervisor {

struct IcebergRestCatalogOptions {
  // Not owned; must outlive the catalog.
  MetadataStore* store = nullptr;
  DeepStorage* storage = nullptr;
  // Where a metadata document on S3 is downloaded to while it is read.
  std::string scratch_dir = "/tmp";
  // The most names one listing page holds (the default and the cap of a
  // client's pageSize).
  int max_page_size = 1000;
  // The most properties a namespace answer holds.
  int max_namespace_properties = 1000;
  // The largest metadata document served (the writer's own JSON limit).
  int64_t max_metadata_bytes = int64_t{64} << 20;
};

// One page of a listing; next_page_token is empty on the last page, else
// opaque (the page's last name in lower-case hex).
struct IcebergNamePage {
  std::vector<std::string> names;
  std::string next_page_token;
};

struct IcebergLoadedTable {
  std::string metadata_location;
  // The document as stored (validated as a JSON object, not re-encoded).
  std::string metadata_json;
};

// INVALID_ARGUMENT (naming `what`) unless `name` is a namespace or table name
// sluice serves: 1-255 characters of [A-Za-z0-9_], starting with a letter
// (the rule of icebergTable's names). Other names in the catalog (another
// writer's) are not listed and not served.
absl::Status ValidateIcebergRestName(absl::string_view what, absl::string_view name);

class IcebergRestCatalog {
 public:
  // INVALID_ARGUMENT without a store or deep storage.
  static absl::StatusOr<IcebergRestCatalog> Create(IcebergRestCatalogOptions options);

  // `page_token`: "" for the first page, else a next_page_token given
  // before (INVALID_ARGUMENT for anything else); `page_size` 0 for
  // max_page_size, otherwise 1..max_page_size (INVALID_ARGUMENT beyond).
  absl::StatusOr<IcebergNamePage> ListNamespaces(const std::string& page_token, int page_size);
  // NOT_FOUND for a namespace the catalog does not have.
  absl::StatusOr<std::map<std::string, std::string>> NamespaceProperties(
      const std::string& table_namespace);
  // NOT_FOUND for a namespace the catalog does not have.
  absl::StatusOr<IcebergNamePage> ListTables(const std::string& table_namespace,
                                             const std::string& page_token, int page_size);
  // OK when the catalog has the table, NOT_FOUND when not (the namespace
  // missing says so). Reads no file.
  absl::Status TableExists(const std::string& table_namespace, const std::string& table_name);
  // The table's current metadata. NOT_FOUND (table or namespace missing),
  // FAILED_PRECONDITION when the location is not one this catalog serves or
  // the document is not a JSON object, RESOURCE_EXHAUSTED past
  // max_metadata_bytes, deep storage's errors reading it.
  absl::StatusOr<IcebergLoadedTable> LoadTable(const std::string& table_namespace,
                                               const std::string& table_name);

 private:
  explicit IcebergRestCatalog(IcebergRestCatalogOptions options) : options_(std::move(options)) {}

  absl::StatusOr<int> PageSize(int page_size) const;
  // The table's metadata_location (NOT_FOUND naming the table, or its
  // namespace when that is missing too).
  absl::StatusOr<std::string> Location(const std::string& table_namespace,
                                       const std::string& table_name);

  IcebergRestCatalogOptions options_;
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_ICEBERG_ICEBERG_REST_CATALOG_H_
