#include "supervisor/iceberg/iceberg_rest_catalog.h"

#include <simdjson.h>

#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/file_util.h"
#include "common/status_macros.h"

namespace sluice::supervisor {
namespace {

constexpr char kMetadataSuffix[] = ".metadata.json";

bool ValidName(absl::string_view name) { return ValidateIcebergRestName("", name).ok(); }

// The page's names (those sluice serves) and the token of the next page:
// `fetched` holds up to page_size + 1 names, the extra one only telling that
// there is more.
IcebergNamePage MakePage(std::vector<std::string> fetched, int page_size) {
  IcebergNamePage page;
  if (static_cast<int>(fetched.size()) > page_size) {
    fetched.resize(page_size);
    // Opaque and plain ASCII whatever the name holds: the last name, in hex.
    page.next_page_token = absl::BytesToHexString(fetched.back());
  }
  for (std::string& name : fetched) {
    if (ValidName(name)) page.names.push_back(std::move(name));
  }
  return page;
}

}  // namespace

absl::Status ValidateIcebergRestName(absl::string_view what, absl::string_view name) {
  if (name.empty() || name.size() > 255) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be 1 to 255 characters (got ", name.size(), ")"));
  }
  bool ok = absl::ascii_isalpha(static_cast<unsigned char>(name[0]));
  for (char c : name) ok = ok && (absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_');
  if (!ok) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " must start with a letter and hold only letters, digits and '_' (a single-level "
              "name: this catalog has no nested namespaces)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<IcebergRestCatalog> IcebergRestCatalog::Create(IcebergRestCatalogOptions options) {
  if (options.store == nullptr || options.storage == nullptr || options.max_page_size < 1 ||
      options.max_namespace_properties < 1 || options.max_metadata_bytes < 1) {
    return absl::InvalidArgumentError(
        "Iceberg REST catalog: a store, deep storage and positive limits are required");
  }
  return IcebergRestCatalog(std::move(options));
}

// The name a page token says to start after ("" for none).
absl::StatusOr<std::string> AfterName(const std::string& page_token) {
  if (page_token.size() % 2 != 0 || page_token.size() > 2 * 255 ||
      page_token.find_first_not_of("0123456789abcdef") != std::string::npos) {
    return absl::InvalidArgumentError("pageToken is not one this catalog gave");
  }
  return absl::HexStringToBytes(page_token);
}

absl::StatusOr<int> IcebergRestCatalog::PageSize(int page_size) const {
  if (page_size == 0) return options_.max_page_size;
  if (page_size < 0 || page_size > options_.max_page_size) {
    return absl::InvalidArgumentError(
        absl::StrCat("pageSize must be 1 to ", options_.max_page_size, " (got ", page_size, ")"));
  }
  return page_size;
}

absl::StatusOr<IcebergNamePage> IcebergRestCatalog::ListNamespaces(const std::string& page_token,
                                                                   int page_size) {
  SLUICE_ASSIGN_OR_RETURN(const int size, PageSize(page_size));
  SLUICE_ASSIGN_OR_RETURN(const std::string after, AfterName(page_token));
  std::vector<std::string> fetched;
  SLUICE_RETURN_IF_ERROR(options_.store->InTransaction([&](StoreTxn& txn) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(fetched, txn.IcebergNamespaces(after, size + 1));
    return absl::OkStatus();
  }));
  return MakePage(std::move(fetched), size);
}

absl::StatusOr<std::map<std::string, std::string>> IcebergRestCatalog::NamespaceProperties(
    const std::string& table_namespace) {
  SLUICE_RETURN_IF_ERROR(ValidateIcebergRestName("the namespace", table_namespace));
  std::optional<std::map<std::string, std::string>> properties;
  SLUICE_RETURN_IF_ERROR(options_.store->InTransaction([&](StoreTxn& txn) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(properties, txn.IcebergNamespaceProperties(
                                            table_namespace, options_.max_namespace_properties));
    return absl::OkStatus();
  }));
  if (!properties.has_value()) {
    return absl::NotFoundError(absl::StrCat("namespace does not exist: ", table_namespace));
  }
  return *std::move(properties);
}

absl::StatusOr<IcebergNamePage> IcebergRestCatalog::ListTables(const std::string& table_namespace,
                                                               const std::string& page_token,
                                                               int page_size) {
  SLUICE_RETURN_IF_ERROR(ValidateIcebergRestName("the namespace", table_namespace));
  SLUICE_ASSIGN_OR_RETURN(const int size, PageSize(page_size));
  SLUICE_ASSIGN_OR_RETURN(const std::string after, AfterName(page_token));
  std::vector<std::string> fetched;
  bool namespace_exists = false;
  SLUICE_RETURN_IF_ERROR(options_.store->InTransaction([&](StoreTxn& txn) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(auto properties,
                            txn.IcebergNamespaceProperties(table_namespace, /*limit=*/1));
    namespace_exists = properties.has_value();
    if (!namespace_exists) return absl::OkStatus();
    SLUICE_ASSIGN_OR_RETURN(fetched, txn.IcebergTableNames(table_namespace, after, size + 1));
    return absl::OkStatus();
  }));
  if (!namespace_exists) {
    return absl::NotFoundError(absl::StrCat("namespace does not exist: ", table_namespace));
  }
  return MakePage(std::move(fetched), size);
}

absl::StatusOr<std::string> IcebergRestCatalog::Location(const std::string& table_namespace,
                                                         const std::string& table_name) {
  SLUICE_RETURN_IF_ERROR(ValidateIcebergRestName("the namespace", table_namespace));
  SLUICE_RETURN_IF_ERROR(ValidateIcebergRestName("the table name", table_name));
  std::optional<std::string> location;
  bool namespace_exists = true;
  SLUICE_RETURN_IF_ERROR(options_.store->InTransaction([&](StoreTxn& txn) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(location, txn.IcebergMetadataLocation(table_namespace, table_name));
    if (location.has_value()) return absl::OkStatus();
    SLUICE_ASSIGN_OR_RETURN(auto properties,
                            txn.IcebergNamespaceProperties(table_namespace, /*limit=*/1));
    namespace_exists = properties.has_value();
    return absl::OkStatus();
  }));
  if (!namespace_exists) {
    return absl::NotFoundError(absl::StrCat("namespace does not exist: ", table_namespace));
  }
  if (!location.has_value()) {
    return absl::NotFoundError(
        absl::StrCat("table does not exist: ", table_namespace, ".", table_name));
  }
  return *std::move(location);
}

absl::Status IcebergRestCatalog::TableExists(const std::string& table_namespace,
                                             const std::string& table_name) {
  return Location(table_namespace, table_name).status();
}

absl::StatusOr<IcebergLoadedTable> IcebergRestCatalog::LoadTable(const std::string& table_namespace,
                                                                 const std::string& table_name) {
  SLUICE_ASSIGN_OR_RETURN(std::string location, Location(table_namespace, table_name));
  const std::string table = absl::StrCat(table_namespace, ".", table_name);
  // Only a metadata document inside this deep storage, named as Iceberg
  // names them, with no path part that could lead elsewhere.
  const std::string root = options_.storage->UriForKey("");
  absl::string_view key = location;
  if (!absl::ConsumePrefix(&key, root) || !absl::EndsWith(key, kMetadataSuffix) ||
      !ValidateDeepStorageKey(key).ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "table ", table, ": its metadata location is not a *.metadata.json file of the "
        "supervisor's deep storage; this catalog serves only such tables"));
  }
  absl::StatusOr<DeepStorageFileInfo> info = options_.storage->Stat(location);
  if (absl::IsNotFound(info.status())) {  // the catalog names a file that is gone: not the client's
    return absl::FailedPreconditionError(
        absl::StrCat("table ", table, ": its metadata document is missing from deep storage"));
  }
  if (!info.ok()) return info.status();
  if (info->size_bytes > options_.max_metadata_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("table ", table, ": its metadata document has ", info->size_bytes,
                     " bytes, more than the ", options_.max_metadata_bytes, " this catalog serves"));
  }
  absl::StatusOr<std::string> bytes =
      ReadDeepStorageObject(*options_.storage, location, options_.scratch_dir);
  if (!bytes.ok()) return bytes.status();
  if (static_cast<int64_t>(bytes->size()) > options_.max_metadata_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("table ", table, ": its metadata document is larger than the ",
                     options_.max_metadata_bytes, " bytes this catalog serves"));
  }
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  simdjson::padded_string padded(bytes->data(), bytes->size());
  if (parser.parse(padded).get(doc) != simdjson::SUCCESS ||
      doc.type() != simdjson::dom::element_type::OBJECT) {
    return absl::FailedPreconditionError(
        absl::StrCat("table ", table, ": its metadata document is not a JSON object"));
  }
  return IcebergLoadedTable{std::move(location), *std::move(bytes)};
}

}  // namespace sluice::supervisor
