// Tests of iceberg_catalog_rows.h, the Iceberg SQL catalog rows: the compare-
// and-swap of a table's metadata location and the REST catalog's paged reads;
// on SQLite, and on PostgreSQL in the _postgresql_test target.
#include "supervisor/store/iceberg_catalog_rows.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "supervisor/store/store_test_fixture.h"

namespace sluice::supervisor {
namespace {

using store_testing::TestBackend;
using IcebergCatalogRowsTest = store_testing::StoreTest;

TEST_P(IcebergCatalogRowsTest, IcebergCatalogTablesComeWithVersion8AndSwapLikeTheSqlCatalog) {
  {
    auto old = Open(/*target_version=*/7);
    ASSERT_TRUE(old.ok()) << old.status();
    EXPECT_FALSE((*old)
                     ->InTransaction([](StoreTxn& txn) {
                       return txn.IcebergMetadataLocation("sluice", "wiki").status();
                     })
                     .ok());
  }
  auto store = Open();
  ASSERT_TRUE(store.ok()) << store.status();
  auto swap = [&](std::optional<std::string> expected, const std::string& next) {
    bool swapped = false;
    EXPECT_TRUE((*store)
                    ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                      SLUICE_ASSIGN_OR_RETURN(swapped, txn.SwapIcebergMetadataLocation(
                                                           "sluice", "wiki", expected, next));
                      return absl::OkStatus();
                    })
                    .ok());
    return swapped;
  };
  EXPECT_TRUE(swap(std::nullopt, "file:///t/metadata/00000-a.metadata.json"));
  EXPECT_FALSE(swap(std::nullopt, "file:///t/metadata/00000-b.metadata.json"));  // exists
  EXPECT_FALSE(swap("file:///t/metadata/00009-x.metadata.json", "file:///t/m/2"));
  EXPECT_TRUE(swap("file:///t/metadata/00000-a.metadata.json",
                   "file:///t/metadata/00001-c.metadata.json"));
  auto db = Raw();
  ASSERT_TRUE(db.ok()) << db.status();
  EXPECT_EQ(*(*db)->QueryText("SELECT catalog_name || '|' || table_namespace || '|' || table_name "
                              "|| '|' || metadata_location || '|' || previous_metadata_location "
                              "|| '|' || iceberg_type FROM iceberg_tables"),
            "sluice|sluice|wiki|file:///t/metadata/00001-c.metadata.json|"
            "file:///t/metadata/00000-a.metadata.json|TABLE");
  EXPECT_EQ(*(*db)->QueryText("SELECT catalog_name || '|' || namespace || '|' || property_key || "
                              "'|' || property_value FROM iceberg_namespace_properties"),
            "sluice|sluice|exists|true");
  // The DDL a SQL catalog runs itself finds the tables already there: the
  // columns it inserts and reads exist (a pyiceberg-style row).
  ASSERT_TRUE((*db)
                  ->Exec("INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, "
                         "metadata_location, previous_metadata_location, iceberg_type) VALUES "
                         "('other', 'default', 't', NULL, NULL, 'TABLE')")
                  .ok());
}

// What the Iceberg REST catalog reads: namespaces (with properties or
// tables), their properties and their tables, of catalog 'sluice' only,
// sorted and paged; views and other catalogs' rows are not listed.
TEST_P(IcebergCatalogRowsTest, IcebergCatalogListsNamespacesAndTablesOfCatalogSluicePaged) {
  auto store = Open();
  ASSERT_TRUE(store.ok()) << store.status();
  auto db = Raw();
  ASSERT_TRUE(db.ok()) << db.status();
  for (const char* row :
       {"('sluice', 'b', 't2', 'file:///x', NULL, 'TABLE')",
        "('sluice', 'b', 't1', 'file:///x', NULL, NULL)",
        "('sluice', 'b', 'v1', 'file:///x', NULL, 'VIEW')",
        "('sluice', 'c', 't3', 'file:///x', NULL, 'TABLE')",
        "('other', 'z', 't9', 'file:///x', NULL, 'TABLE')"}) {
    ASSERT_TRUE((*db)->Exec(absl::StrCat("INSERT INTO iceberg_tables (catalog_name, "
                                         "table_namespace, table_name, metadata_location, "
                                         "previous_metadata_location, iceberg_type) VALUES ",
                                         row))
                    .ok());
  }
  for (const char* row : {"('sluice', 'a', 'exists', 'true')", "('sluice', 'b', 'owner', 'me')",
                          "('sluice', 'b', 'exists', 'true')", "('other', 'y', 'exists', 'true')"}) {
    ASSERT_TRUE((*db)->Exec(absl::StrCat("INSERT INTO iceberg_namespace_properties (catalog_name, "
                                         "namespace, property_key, property_value) VALUES ",
                                         row))
                    .ok());
  }
  std::vector<std::string> all, page, after_a, tables, tables_after_t1, none;
  std::optional<std::map<std::string, std::string>> props_b, props_c, props_y, props_b1;
  ASSERT_TRUE((*store)
                  ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                    SLUICE_ASSIGN_OR_RETURN(all, txn.IcebergNamespaces("", 100));
                    SLUICE_ASSIGN_OR_RETURN(page, txn.IcebergNamespaces("", 2));
                    SLUICE_ASSIGN_OR_RETURN(after_a, txn.IcebergNamespaces("a", 100));
                    SLUICE_ASSIGN_OR_RETURN(props_b, txn.IcebergNamespaceProperties("b", 100));
                    SLUICE_ASSIGN_OR_RETURN(props_b1, txn.IcebergNamespaceProperties("b", 1));
                    SLUICE_ASSIGN_OR_RETURN(props_c, txn.IcebergNamespaceProperties("c", 100));
                    SLUICE_ASSIGN_OR_RETURN(props_y, txn.IcebergNamespaceProperties("y", 100));
                    SLUICE_ASSIGN_OR_RETURN(tables, txn.IcebergTableNames("b", "", 100));
                    SLUICE_ASSIGN_OR_RETURN(tables_after_t1, txn.IcebergTableNames("b", "t1", 1));
                    SLUICE_ASSIGN_OR_RETURN(none, txn.IcebergTableNames("z", "", 100));
                    return absl::OkStatus();
                  })
                  .ok());
  EXPECT_EQ(all, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(page, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(after_a, (std::vector<std::string>{"b", "c"}));
  ASSERT_TRUE(props_b.has_value());
  EXPECT_EQ(*props_b, (std::map<std::string, std::string>{{"exists", "true"}, {"owner", "me"}}));
  ASSERT_TRUE(props_b1.has_value());
  EXPECT_EQ(props_b1->size(), 1u);
  ASSERT_TRUE(props_c.has_value());  // a namespace with a table only
  EXPECT_TRUE(props_c->empty());
  EXPECT_FALSE(props_y.has_value());  // another catalog's
  EXPECT_EQ(tables, (std::vector<std::string>{"t1", "t2"}));
  EXPECT_EQ(tables_after_t1, (std::vector<std::string>{"t2"}));
  EXPECT_TRUE(none.empty());
}

INSTANTIATE_TEST_SUITE_P(Backends, IcebergCatalogRowsTest, ::testing::ValuesIn(testing::TestBackends()),
                         store_testing::BackendTestName);

}  // namespace
}  // namespace sluice::supervisor
