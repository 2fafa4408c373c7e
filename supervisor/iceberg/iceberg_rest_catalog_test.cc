// The read-only Iceberg REST catalog: IcebergRestCatalog on a real store
// (SQLite, and PostgreSQL in the _postgresql variant) and local deep
// storage, then the protocol over real HTTP on the endpoint the supervisor
// serves it on, behind the same bearer tokens and roles as /metrics.
#include "supervisor/iceberg/iceberg_rest_catalog.h"

#include <arpa/inet.h>
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/auth/token_store.h"
#include "common/file_util.h"
#include "common/local_deep_storage.h"
#include "common/metrics/http_routes.h"
#include "common/metrics/registry.h"
#include "common/service_start.h"
#include "common/status_macros.h"
#include "supervisor/iceberg/iceberg_rest_routes.h"
#include "supervisor/testing/test_util.h"

namespace sluice::supervisor {
namespace {

// A snapshot id past 2^53: it must come back exactly as stored.
constexpr char kMetadata[] =
    R"({"format-version":2,"table-uuid":"0a1b","location":"x","current-snapshot-id":)"
    R"(9007199254740993,"snapshots":[{"snapshot-id":9007199254740993}],"properties":{"a":"\u00e9"}})";

class IcebergRestCatalogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = testing::OpenTestStore(dir_.path());
    auto storage = LocalDeepStorage::Open(dir_.path() + "/deep");
    ASSERT_TRUE(storage.ok()) << storage.status();
    storage_ = *std::move(storage);
    location_ = Put("iceberg/sluice/wiki/metadata/00001-abc.metadata.json", kMetadata);
    ASSERT_TRUE(Swap("sluice", "wiki", location_));
    ASSERT_TRUE(Swap("sluice", "edits", Put("iceberg/sluice/edits/metadata/00000-x.metadata.json",
                                            "{}")));
    auto catalog = IcebergRestCatalog::Create(Options());
    ASSERT_TRUE(catalog.ok()) << catalog.status();
    catalog_ = std::make_unique<IcebergRestCatalog>(*std::move(catalog));
  }

  IcebergRestCatalogOptions Options() {
    IcebergRestCatalogOptions options;
    options.store = store_.get();
    options.storage = storage_.get();
    options.scratch_dir = dir_.path();
    return options;
  }

  // Writes `bytes` at `key` of deep storage; its URI.
  std::string Put(const std::string& key, const std::string& bytes) {
    const std::string local = dir_.path() + "/put";
    EXPECT_TRUE(WriteFileAtomically(local, bytes).ok());
    absl::StatusOr<std::string> uri = storage_->Push(local, key);
    EXPECT_TRUE(uri.ok()) << uri.status();
    return uri.ok() ? *uri : "";
  }

  // Creates or moves the table as a writer would.
  bool Swap(const std::string& ns, const std::string& table, const std::string& location) {
    bool swapped = false;
    EXPECT_TRUE(store_
                    ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                      SLUICE_ASSIGN_OR_RETURN(auto current, txn.IcebergMetadataLocation(ns, table));
                      SLUICE_ASSIGN_OR_RETURN(
                          swapped, txn.SwapIcebergMetadataLocation(ns, table, current, location));
                      return absl::OkStatus();
                    })
                    .ok());
    return swapped;
  }

  testing::TempDir dir_;
  std::unique_ptr<MetadataStore> store_;
  std::unique_ptr<DeepStorage> storage_;
  std::unique_ptr<IcebergRestCatalog> catalog_;
  std::string location_;
};

TEST_F(IcebergRestCatalogTest, ListsNamespacesAndTablesPaged) {
  ASSERT_TRUE(Swap("other", "t", Put("iceberg/other/t/metadata/00000-y.metadata.json", "{}")));
  auto all = catalog_->ListNamespaces("", 0);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->names, (std::vector<std::string>{"other", "sluice"}));
  EXPECT_EQ(all->next_page_token, "");
  auto first = catalog_->ListNamespaces("", 1);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->names, (std::vector<std::string>{"other"}));
  auto second = catalog_->ListNamespaces(first->next_page_token, 1);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->names, (std::vector<std::string>{"sluice"}));
  EXPECT_EQ(second->next_page_token, "");
  EXPECT_EQ(catalog_->ListNamespaces("", 1001).status().code(),
            absl::StatusCode::kInvalidArgument);

  auto tables = catalog_->ListTables("sluice", "", 0);
  ASSERT_TRUE(tables.ok()) << tables.status();
  EXPECT_EQ(tables->names, (std::vector<std::string>{"edits", "wiki"}));
  auto page = catalog_->ListTables("sluice", "", 1);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->names, (std::vector<std::string>{"edits"}));
  EXPECT_EQ(page->next_page_token, "6564697473");  // "edits"
  page = catalog_->ListTables("sluice", page->next_page_token, 1);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->names, (std::vector<std::string>{"wiki"}));
  EXPECT_EQ(page->next_page_token, "");
  for (const char* bad : {"edits", "656", "6564697G73", "6564697473\n"}) {
    EXPECT_EQ(catalog_->ListTables("sluice", bad, 1).status().code(),
              absl::StatusCode::kInvalidArgument)
        << bad;
  }
  EXPECT_EQ(catalog_->ListTables("nope", "", 0).status().code(), absl::StatusCode::kNotFound);

  auto properties = catalog_->NamespaceProperties("sluice");
  ASSERT_TRUE(properties.ok()) << properties.status();
  EXPECT_EQ(*properties, (std::map<std::string, std::string>{{"exists", "true"}}));
  EXPECT_EQ(catalog_->NamespaceProperties("nope").status().code(), absl::StatusCode::kNotFound);
}

TEST_F(IcebergRestCatalogTest, LoadsTheCurrentMetadataAsStored) {
  auto loaded = catalog_->LoadTable("sluice", "wiki");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->metadata_location, location_);
  EXPECT_EQ(loaded->metadata_json, kMetadata);
  EXPECT_TRUE(catalog_->TableExists("sluice", "wiki").ok());
  // A commit moves the table: the next load reads the new document.
  const std::string next = Put("iceberg/sluice/wiki/metadata/00002-def.metadata.json", "{\"n\":2}");
  ASSERT_TRUE(Swap("sluice", "wiki", next));
  loaded = catalog_->LoadTable("sluice", "wiki");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->metadata_location, next);
  EXPECT_EQ(loaded->metadata_json, "{\"n\":2}");
}

TEST_F(IcebergRestCatalogTest, RefusesBadNamesMissingTablesAndForeignLocations) {
  for (const char* bad : {"", "1abc", "a.b", "a/b", "..", "a\x1f" "b", "a b", "%2e"}) {
    EXPECT_EQ(catalog_->LoadTable(bad, "wiki").status().code(),
              absl::StatusCode::kInvalidArgument)
        << bad;
    EXPECT_EQ(catalog_->LoadTable("sluice", bad).status().code(),
              absl::StatusCode::kInvalidArgument)
        << bad;
  }
  EXPECT_EQ(catalog_->LoadTable("sluice", std::string(256, 'a')).status().code(),
            absl::StatusCode::kInvalidArgument);
  absl::Status missing = catalog_->LoadTable("sluice", "nope").status();
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StartsWith(missing.message(), "table does not exist")) << missing;
  missing = catalog_->TableExists("nope", "wiki");
  EXPECT_TRUE(absl::StartsWith(missing.message(), "namespace does not exist")) << missing;

  // The catalog's row (another writer's) names a file outside deep storage,
  // a path leading out of it, something not a metadata document: not read.
  ASSERT_TRUE(WriteFileAtomically(dir_.path() + "/secret.metadata.json", "{\"s\":1}").ok());
  const std::string root = storage_->UriForKey("");
  for (const std::string& location :
       {absl::StrCat("file://", dir_.path(), "/secret.metadata.json"),
        absl::StrCat(root, "iceberg/../../secret.metadata.json"),
        absl::StrCat(root, "iceberg/sluice/wiki/metadata/00001-abc.avro"),
        std::string("s3://bucket/x.metadata.json")}) {
    ASSERT_TRUE(Swap("sluice", "foreign", location));
    absl::Status status = catalog_->LoadTable("sluice", "foreign").status();
    EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << location << " " << status;
  }
  // Not JSON; missing; too large.
  ASSERT_TRUE(Swap("sluice", "broken", Put("iceberg/sluice/broken/metadata/1.metadata.json", "{")));
  EXPECT_EQ(catalog_->LoadTable("sluice", "broken").status().code(),
            absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(Swap("sluice", "gone", root + "iceberg/sluice/gone/metadata/1.metadata.json"));
  EXPECT_EQ(catalog_->LoadTable("sluice", "gone").status().code(),
            absl::StatusCode::kFailedPrecondition);
  IcebergRestCatalogOptions small = Options();
  small.max_metadata_bytes = 10;
  auto limited = IcebergRestCatalog::Create(small);
  ASSERT_TRUE(limited.ok());
  EXPECT_EQ(limited->LoadTable("sluice", "wiki").status().code(),
            absl::StatusCode::kResourceExhausted);
}

TEST(PercentDecodeTest, DecodesAndRefusesBadEscapes) {
  EXPECT_EQ(PercentDecode("a%41b%2fc", false), "aAb/c");
  EXPECT_EQ(PercentDecode("a+b", false), "a+b");
  EXPECT_EQ(PercentDecode("a+b", true), "a b");
  EXPECT_EQ(PercentDecode("%1F", false), std::string("\x1f"));
  EXPECT_EQ(PercentDecode("%4", false), std::nullopt);
  EXPECT_EQ(PercentDecode("%zz", false), std::nullopt);
  EXPECT_EQ(PercentDecode("abc%", false), std::nullopt);
}

// ---- over HTTP, with authentication ----

struct Reply {
  int status = 0;
  std::string head;
  std::string body;
};

// Whether two JSON documents are equal as values (member order aside).
::testing::AssertionResult JsonEq(const std::string& got, const std::string& want) {
  google::protobuf::Value a, b;
  if (!google::protobuf::util::JsonStringToMessage(got, &a).ok()) {
    return ::testing::AssertionFailure() << "not JSON: " << got;
  }
  if (!google::protobuf::util::JsonStringToMessage(want, &b).ok()) {
    return ::testing::AssertionFailure() << "bad expectation: " << want;
  }
  if (!google::protobuf::util::MessageDifferencer::Equals(a, b)) {
    return ::testing::AssertionFailure() << got << "\n  want " << want;
  }
  return ::testing::AssertionSuccess();
}

// Sends `request` (its head; "Connection: close" added) to loopback `port`
// and reads the reply to EOF.
Reply Exchange(int port, const std::string& request, const std::string& body = "") {
  Reply reply;
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return reply;
  }
  const std::string bytes = absl::StrCat(request, "Connection: close\r\n\r\n", body);
  send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
  std::string in;
  char buf[65536];
  for (ssize_t n; (n = recv(fd, buf, sizeof(buf), 0)) > 0;) in.append(buf, n);
  close(fd);
  const size_t end = in.find("\r\n\r\n");
  if (in.size() < 12 || end == std::string::npos) return reply;
  reply.status = std::stoi(in.substr(9, 3));
  reply.head = in.substr(0, end);
  reply.body = in.substr(end + 4);
  return reply;
}

class IcebergRestHttpTest : public IcebergRestCatalogTest {
 protected:
  void SetUp() override {
    IcebergRestCatalogTest::SetUp();
    auth::AuthOptions auth;
    auth.tokens_file = dir_.path() + "/tokens";
    auth.policy_file = dir_.path() + "/policy";
    std::ofstream(auth.tokens_file) << "sha256:" << auth::Sha256Hex("reader-token") << " bi\n"
                                    << "sha256:" << auth::Sha256Hex("worker-token") << " w0\n";
    std::ofstream(auth.policy_file) << "token:bi reader\n"
                                    << "token:w0 worker w0 address=w0.local:7070\n";
    ASSERT_TRUE(routes_.Add(kIcebergRestPrefix, std::make_shared<IcebergRestHandler>(
                                                    *IcebergRestCatalog::Create(Options())))
                    .ok());
    auto http = StartServiceBasics("[test]", "", "127.0.0.1:0", &registry_, auth, &routes_);
    ASSERT_TRUE(http.ok()) << http.status();
    http_ = *std::move(http);
  }
  void TearDown() override {
    http_.reset();
    routes_.Remove(kIcebergRestPrefix);
  }

  Reply Get(const std::string& path, const std::string& token = "reader-token",
            const std::string& method = "GET") {
    return Exchange(http_->port(),
                    absl::StrCat(method, " ", path, " HTTP/1.1\r\nHost: x\r\n",
                                 token.empty() ? "" : "Authorization: Bearer " + token + "\r\n"));
  }

  metrics::Registry registry_;
  metrics::HttpRoutes routes_;
  std::unique_ptr<metrics::MetricsHttpServer> http_;
};

TEST_F(IcebergRestHttpTest, ServesTheSpecsResponsesToAReader) {
  Reply config = Get("/iceberg/v1/config");
  EXPECT_EQ(config.status, 200) << config.body;
  EXPECT_TRUE(JsonEq(config.body, R"({"defaults":{},"overrides":{}})"));
  EXPECT_TRUE(absl::StrContains(config.head, "Content-Type: application/json"));
  EXPECT_EQ(Get("/iceberg/v1/config?warehouse=sluice").status, 200);
  EXPECT_EQ(Get("/iceberg/v1/config?warehouse=s3%3A%2F%2Fb").status, 400);

  EXPECT_TRUE(JsonEq(Get("/iceberg/v1/namespaces").body, R"({"namespaces":[["sluice"]]})"));
  EXPECT_TRUE(JsonEq(Get("/iceberg/v1/namespaces?parent=sluice").body, R"({"namespaces":[]})"));
  EXPECT_EQ(Get("/iceberg/v1/namespaces?parent=nope").status, 404);
  EXPECT_TRUE(JsonEq(Get("/iceberg/v1/namespaces/sluice").body,
                     R"({"namespace":["sluice"],"properties":{"exists":"true"}})"));
  EXPECT_TRUE(JsonEq(
      Get("/iceberg/v1/namespaces/sluice/tables?pageSize=1").body,
      R"({"next-page-token":"6564697473","identifiers":[{"name":"edits","namespace":["sluice"]}]})"));
  EXPECT_TRUE(JsonEq(Get("/iceberg/v1/namespaces/sluice/tables?pageSize=1&pageToken=6564697473").body,
                     R"({"identifiers":[{"name":"wiki","namespace":["sluice"]}]})"));

  Reply table = Get("/iceberg/v1/namespaces/sluice/tables/wiki");
  EXPECT_EQ(table.status, 200) << table.body;
  EXPECT_TRUE(JsonEq(table.body, absl::StrCat(R"({"config":{},"metadata-location":")", location_,
                                              R"(","metadata":)", kMetadata, "}")));
  // The document as stored, byte for byte (its ids past 2^53 exact).
  EXPECT_TRUE(absl::EndsWith(table.body, absl::StrCat(",\"metadata\":", kMetadata, "}")))
      << table.body;
  EXPECT_EQ(Get("/iceberg/v1/namespaces/sluice/tables/wiki", "reader-token", "HEAD").status, 204);
  EXPECT_EQ(Get("/iceberg/v1/namespaces/sluice", "reader-token", "HEAD").status, 204);

  Reply missing = Get("/iceberg/v1/namespaces/sluice/tables/nope");
  EXPECT_EQ(missing.status, 404);
  EXPECT_TRUE(JsonEq(missing.body,
                     R"({"error":{"code":404,"message":"table does not exist: sluice.nope",)"
                     R"("type":"NoSuchTableException"}})"));
  EXPECT_TRUE(absl::StrContains(Get("/iceberg/v1/namespaces/nope/tables").body,
                                "NoSuchNamespaceException"));
  EXPECT_EQ(Get("/iceberg/v1/namespaces/nope", "reader-token", "HEAD").status, 404);
  EXPECT_EQ(Get("/iceberg/v1/namespaces/sluice/tables/nope", "reader-token", "HEAD").status, 404);
  // /metrics still answers beside the catalog.
  EXPECT_EQ(Get("/metrics").status, 200);
}

TEST_F(IcebergRestHttpTest, RefusesOddPathsWithBadRequestAndReadsNothingOutside) {
  ASSERT_TRUE(WriteFileAtomically(dir_.path() + "/deep/x.metadata.json", "{}").ok());
  for (const char* path :
       {"/iceberg/v1/namespaces/sluice/tables/..", "/iceberg/v1/namespaces/%2e%2e/tables/wiki",
        "/iceberg/v1/namespaces/sluice/tables/..%2F..%2Fx",
        "/iceberg/v1/namespaces/sluice%1Fsub/tables", "/iceberg/v1/namespaces/slu%zzice",
        "/iceberg/v1/namespaces/sluice/tables?pageSize=0",
        "/iceberg/v1/namespaces/sluice/tables?pageToken=..%2F",
        "/iceberg/v1/namespaces/sluice/tables?pageSize=5000"}) {
    Reply reply = Get(path);
    EXPECT_EQ(reply.status, 400) << path << " " << reply.body;
    EXPECT_TRUE(absl::StrContains(reply.body, "BadRequestException")) << path;
  }
  EXPECT_EQ(Get("/iceberg/v1/namespaces/sluice/tables/wiki/extra").status, 404);
  EXPECT_EQ(Get("/iceberg/other").status, 404);
}

TEST_F(IcebergRestHttpTest, AuthenticatesLikeMetricsWithErrorModelRefusals) {
  Reply anonymous = Get("/iceberg/v1/namespaces", "");
  EXPECT_EQ(anonymous.status, 401);
  EXPECT_TRUE(absl::StrContains(anonymous.head, "WWW-Authenticate: Bearer"));
  EXPECT_TRUE(absl::StrContains(anonymous.body, R"("type":"NotAuthorizedException")"))
      << anonymous.body;
  EXPECT_EQ(Get("/iceberg/v1/namespaces", "unknown-token").status, 401);
  Reply worker = Get("/iceberg/v1/namespaces/sluice/tables/wiki", "worker-token");
  EXPECT_EQ(worker.status, 403);
  EXPECT_TRUE(absl::StrContains(worker.body, R"("type":"ForbiddenException")")) << worker.body;
  EXPECT_FALSE(absl::StrContains(worker.body, "worker-token"));
  EXPECT_FALSE(absl::StrContains(worker.body, location_));
}

TEST_F(IcebergRestHttpTest, RefusesEveryWriteAndChangesNothing) {
  const std::string body = R"({"name":"t","schema":{"type":"struct","fields":[]}})";
  for (const std::string& request :
       {absl::StrCat("POST /iceberg/v1/namespaces/sluice/tables HTTP/1.1\r\nContent-Length: ",
                     body.size(), "\r\n"),
        std::string("POST /iceberg/v1/namespaces/sluice/tables/wiki HTTP/1.1\r\nContent-Length: 0\r\n"),
        std::string("DELETE /iceberg/v1/namespaces/sluice/tables/wiki HTTP/1.1\r\n"),
        std::string("POST /iceberg/v1/namespaces HTTP/1.1\r\nContent-Length: 0\r\n"),
        std::string("DELETE /iceberg/v1/namespaces/sluice HTTP/1.1\r\n"),
        std::string("POST /iceberg/v1/tables/rename HTTP/1.1\r\nContent-Length: 0\r\n"),
        std::string("POST /iceberg/v1/transactions/commit HTTP/1.1\r\nContent-Length: 0\r\n"),
        std::string("POST /iceberg/v1/namespaces/sluice/register HTTP/1.1\r\nContent-Length: 0\r\n"),
        std::string("PUT /iceberg/v1/namespaces/sluice HTTP/1.1\r\nContent-Length: 0\r\n")}) {
    Reply reply = Exchange(http_->port(),
                           absl::StrCat(request, "Authorization: Bearer reader-token\r\n"),
                           absl::StrContains(request, "Length: 0") ? "" : body);
    EXPECT_EQ(reply.status, 403) << request;
    EXPECT_TRUE(absl::StrContains(reply.body, "this catalog is read-only")) << reply.body;
    EXPECT_TRUE(absl::StrContains(reply.body, "ForbiddenException")) << reply.body;
  }
  auto tables = catalog_->ListTables("sluice", "", 0);
  ASSERT_TRUE(tables.ok());
  EXPECT_EQ(tables->names, (std::vector<std::string>{"edits", "wiki"}));
  auto loaded = catalog_->LoadTable("sluice", "wiki");
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(loaded->metadata_location, location_);
}

}  // namespace
}  // namespace sluice::supervisor
