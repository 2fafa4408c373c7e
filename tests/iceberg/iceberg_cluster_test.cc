// A datasource whose spec names an Iceberg table, end to end on the
// in-process cluster (supervisor and a task worker reading the in-process
// mock Kafka): every commit is an Iceberg snapshot in the metadata store's
// SQL catalog, and readers no one here wrote check it while the cluster
// runs: pyiceberg's SqlCatalog on the supervisor's SQLite file loads
// sluice.wiki_edits, and its rows, the sum of the count metric (every
// record once) and of a long metric, and the snapshots' Kafka ranges
// (contiguous, the commit log's) must be what the native segments and the
// commit log say; DuckDB reads the data files (check_cluster_table.py).
// Then pyiceberg's RestCatalog reads the same table through the
// supervisor's read-only Iceberg REST catalog (its HTTP endpoint, with a
// reader's bearer token) and finds what the SqlCatalog finds; writes through
// it are refused, and so is a client without a token
// (check_rest_catalog.py). Variants: the table on S3 (ICEBERG_TEST_S3), the
// metadata store on PostgreSQL, read by SqlCatalog through psycopg2
// (ICEBERG_TEST_POSTGRES). DuckDB's iceberg extension (loaded offline)
// scans the table and attaches the REST catalog (check_duckdb_iceberg.py).
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/auth/token_store.h"
#include "common/metrics/http_routes.h"
#include "common/metrics/http_server.h"
#include "common/metrics/registry.h"
#include "common/service_start.h"
#include "sluice/v1/supervisor_service.grpc.pb.h"
#include "tests/task_test_util.h"
#include "tests/wiki_cluster_test.h"
#include "tests/wiki_count_spec.h"
#include "tests/testing/iceberg_readers.h"
#include "tools/audit/live_audit.h"
#include "common/open_deep_storage.h"
#include "supervisor/supervisor_manager.h"
#ifdef ICEBERG_TEST_S3
#include <filesystem>

#include "common/file_util.h"
#include "common/metrics/http_get.h"
#include "tests/s3/s3_server.h"
#endif
#ifdef ICEBERG_TEST_POSTGRES
#include "tests/testing/postgres_server.h"
#endif

namespace sluice {
namespace {

constexpr int kPartitions = 2;
#ifdef ICEBERG_TEST_S3
// s3s-fs keeps an object's metadata (the SHA-256 sluice checks on a repeated
// push) in a file named after the whole key, which a longer datasource name
// pushes past the file system's 255-byte name limit.
constexpr char kDatasource[] = "wiki";
constexpr char kTable[] = "wiki";
#else
constexpr char kDatasource[] = "wiki-edits";
constexpr char kTable[] = "wiki_edits";  // the default: "-" becomes "_"
#endif

std::string ReadersCache() { return sluice::testing::IcebergReadersCache(); }
std::string ReadersPython() { return sluice::testing::IcebergReadersPython(); }

// DuckDB 1.4.4 with its iceberg extension (a venv of its own).
std::string DuckdbIcebergPython() { return ReadersCache() + "/duckdb-iceberg-venv/bin/python"; }

class IcebergClusterTest : public testing::WikiClusterTest {
 protected:
  void SetUp() override {
    testing::InProcessClusterOptions options;
#ifdef ICEBERG_TEST_S3
    server_ = s3::testing::SharedS3Server();
    ASSERT_NE(server_, nullptr);
    bucket_ = s3::testing::UniqueBucket();
    ASSERT_TRUE(server_->CreateBucket(bucket_).ok());
    options.deep_storage_uri = absl::StrCat("s3://", bucket_, "/deep");
    options.deep_storage_options.s3 = server_->Options();
#endif
#ifdef ICEBERG_TEST_POSTGRES
    auto postgres = sluice::testing::PostgresServer::Start();
    ASSERT_TRUE(postgres.ok()) << postgres.status();
    postgres_ = *std::move(postgres);
    auto url = postgres_->CreateDatabase("iceberg_cluster");
    ASSERT_TRUE(url.ok()) << url.status();
    options.metadata_store_url = *url;
#endif
    // The supervisor's HTTP endpoint as main starts it: the metrics
    // endpoint with bearer tokens (a reader's), the REST catalog a route.
    // The route table lives as long as the process: the cluster (a base
    // class member) removes its route after this fixture's members are gone.
    static metrics::HttpRoutes* routes = new metrics::HttpRoutes();
    options.supervisor_http_routes = routes;
    const std::string tmp = std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR") : "/tmp";
    auth::AuthOptions auth;
    auth.tokens_file = tmp + "/http-tokens";
    auth.policy_file = tmp + "/http-policy";
    std::ofstream(auth.tokens_file) << "sha256:" << auth::Sha256Hex(kReaderToken) << " bi\n";
    std::ofstream(auth.policy_file) << "token:bi reader\n";
    auto http = StartServiceBasics("[iceberg cluster]", "", "127.0.0.1:0", &registry_, auth, routes);
    ASSERT_TRUE(http.ok()) << http.status();
    http_ = *std::move(http);
    StartWikiCluster(kPartitions, options);
  }

  static constexpr char kReaderToken[] = "reader-token-of-the-test";
  metrics::Registry registry_;
  std::unique_ptr<metrics::MetricsHttpServer> http_;
#ifdef ICEBERG_TEST_POSTGRES
  std::unique_ptr<sluice::testing::PostgresServer> postgres_;
#endif

  // What SqlCatalog opens: the SQLite file, or the PostgreSQL store's URL
  // for SQLAlchemy with psycopg2.
  std::string StoreForReaders() {
#ifdef ICEBERG_TEST_POSTGRES
    return absl::StrCat("postgresql+psycopg2://postgres@127.0.0.1:", postgres_->port(),
                        "/iceberg_cluster");
#else
    return absl::StrCat(cluster_->dir(), "/supervisor/metadata.db");
#endif
  }

  // What the readers need besides the expected numbers: catalog properties
  // (how to reach S3) and where a data file's bytes are locally (DuckDB
  // reads local files).
  std::string ReaderSettings() {
#ifdef ICEBERG_TEST_S3
    return absl::StrCat(
        "\"warehouse\": \"s3://", bucket_, "/deep\", \"catalog_properties\": {",
        "\"s3.endpoint\": \"", server_->endpoint(), "\", \"s3.region\": \"us-east-1\", ",
        "\"s3.access-key-id\": \"", server_->credentials().access_key_id, "\", ",
        "\"s3.secret-access-key\": \"", server_->credentials().secret_access_key, "\"}, ",
        "\"local_prefixes\": {\"s3://", bucket_, "/\": \"", server_->data_dir(), "/", bucket_,
        "/\"}");
#else
    return absl::StrCat("\"warehouse\": \"file://", cluster_->dir(),
                        "/deep\", \"catalog_properties\": {}, \"local_prefixes\": {\"file://\": \"\"}");
#endif
  }

#ifdef ICEBERG_TEST_S3
  s3::testing::S3Server* server_ = nullptr;
  std::string bucket_;
#endif

  // `n` records to each partition: a page, a channel, an "added" count.
  void Produce(int n) {
    for (int32_t p = 0; p < kPartitions; ++p) {
      std::vector<std::string> values;
      for (int i = 0; i < n; ++i) {
        const int64_t added = (produced_ + i) % 13;
        added_ += added;
        // Three records in a row share time, page and channel: rollup
        // makes them one row.
        const int n = (produced_ + i) / 3;
        values.push_back(absl::StrCat(R"({"timestamp": )", 1796000000000 + n * 2991,
                                      R"(, "page": "p)", n % 11, R"(", "channel": "#)", p,
                                      R"(", "added": )", added, "}"));
      }
      ASSERT_TRUE(kafka_->Produce("wiki", p, values).ok());
    }
    produced_ += n;
  }

  v1::GetCommitLogResponse CommitLog() {
    v1::GetCommitLogRequest request;
    request.set_datasource(kDatasource);
    v1::GetCommitLogResponse response;
    grpc::ClientContext ctx;
    EXPECT_TRUE(stub_->GetCommitLog(&ctx, request, &response).ok());
    return response;
  }

  bool CommittedAt(int64_t offset) {
    const v1::GetCommitLogResponse log = CommitLog();
    if (log.committed_offsets().size() != kPartitions) return false;
    for (const auto& [p, o] : log.committed_offsets()) {
      if (o != offset) return false;
    }
    return true;
  }

  int produced_ = 0;
  int64_t added_ = 0;
};

TEST_F(IcebergClusterTest, EveryCommitIsASnapshotPyicebergReads) {
  v1::SupervisorSpec spec = testing::WikiCountSpec(
      {.datasource = kDatasource, .bootstrap_servers = kafka_->bootstrap()});
  spec.mutable_data_schema()->mutable_dimensions_spec()->add_dimensions("page");
  spec.mutable_data_schema()->mutable_dimensions_spec()->add_dimensions("channel");
  v1::MetricSpec* added = spec.mutable_data_schema()->add_metrics_spec();
  added->set_type("longSum");
  added->set_name("added");
  // Several sequences: a handoff every 2 s while records arrive.
  spec.mutable_tuning_config()->set_intermediate_handoff_period("PT2S");
  spec.mutable_iceberg_table();  // defaults: sluice.<datasource, "-" as "_">
  ASSERT_TRUE(testing::SubmitSpec(stub_.get(), spec).ok());

  const absl::Time start = absl::Now();
  Produce(300);
  ASSERT_TRUE(testing::WaitFor([&] { return CommittedAt(300); }, absl::Seconds(90)))
      << CommitLog().DebugString();
  Produce(200);
  ASSERT_TRUE(testing::WaitFor([&] { return CommittedAt(500); }, absl::Seconds(90)))
      << CommitLog().DebugString();
  const absl::Duration ingest = absl::Now() - start;

  // What the native side holds: segments (rows after rollup) and the
  // commit log's ranges.
  v1::ListSegmentsRequest list;
  list.set_datasource(kDatasource);
  v1::ListSegmentsResponse segments;
  grpc::ClientContext list_ctx;
  ASSERT_TRUE(stub_->ListSegments(&list_ctx, list, &segments).ok());
  int64_t rows = 0;
  for (const v1::SegmentDescriptor& s : segments.segments()) rows += s.num_rows();
  const v1::GetCommitLogResponse log = CommitLog();
  std::vector<std::string> sequences;
  for (const v1::CommittedSequence& sequence : log.sequences()) {
    std::vector<std::string> ranges;
    for (const auto& [p, s] : sequence.start_offsets()) {
      ranges.push_back(absl::StrCat("\"sluice.kafka.wiki.", p, "\": \"", s, "-",
                                    sequence.end_offsets().at(p), "\""));
    }
    sequences.push_back(absl::StrCat("{\"sequence\": \"", sequence.sequence_name(),
                                     "\", \"ranges\": {", absl::StrJoin(ranges, ", "), "}}"));
  }
  // The status names the table and where its current metadata is.
  v1::GetSupervisorStatusRequest status_request;
  status_request.set_datasource(kDatasource);
  v1::GetSupervisorStatusResponse status;
  grpc::ClientContext status_ctx;
  ASSERT_TRUE(stub_->GetSupervisorStatus(&status_ctx, status_request, &status).ok());
  const v1::IcebergTableStatus& table = status.status().iceberg_table();
  EXPECT_EQ(table.table_namespace(), "sluice");
  EXPECT_EQ(table.table_name(), kTable);
  EXPECT_TRUE(absl::StrContains(table.metadata_location(),
                                absl::StrCat("iceberg/sluice/", kTable, "/metadata/")) &&
              absl::EndsWith(table.metadata_location(), ".metadata.json"))
      << table.DebugString();
  EXPECT_NE(table.last_snapshot_id(), 0) << table.DebugString();
  EXPECT_EQ(table.last_commit_error(), "") << table.DebugString();

  const std::string tmp = std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR") : "/tmp";
  const std::string expected = tmp + "/expected.json";
  {
    std::ofstream out(expected);
    out << "{" << ReaderSettings() << ", \"datasource\": \"" << kDatasource
        << "\", \"table\": \"" << kTable << "\", \"records\": " << produced_ * kPartitions << ", \"added\": " << added_
        << ", \"rows\": " << rows << ", \"end_offset\": " << produced_
        << ", \"partitions\": " << kPartitions << ", \"sequences\": ["
        << absl::StrJoin(sequences, ", ") << "]}\n";
  }
  std::printf("[iceberg cluster] %d records, %lld rows in %d segments, %d sequences, in %s\n",
              produced_ * kPartitions, static_cast<long long>(rows), segments.segments_size(),
              log.sequences_size(), absl::FormatDuration(ingest).c_str());

  // The readers, while the cluster runs (SQLite in WAL mode reads fine).
  const std::string command = absl::StrCat(ReadersPython(), " tests/iceberg/check_cluster_table.py ",
                                           StoreForReaders(), " ", expected);
  std::printf("[iceberg cluster] %s\n", command.c_str());
  std::fflush(stdout);
  EXPECT_EQ(std::system(command.c_str()), 0) << "the readers disagree (see above)";

  // The same table through the REST catalog (the token on the command line
  // is the test's own throwaway one).
  const std::string rest = absl::StrCat(
      ReadersPython(), " tests/iceberg/check_rest_catalog.py http://127.0.0.1:", http_->port(),
      "/iceberg ", kReaderToken, " ", StoreForReaders(), " ", expected);
  std::printf("[iceberg cluster] %s\n", rest.c_str());
  std::fflush(stdout);
  EXPECT_EQ(std::system(rest.c_str()), 0) << "the REST catalog disagrees (see above)";

  // DuckDB's own iceberg extension, loaded offline: iceberg_scan of the
  // metadata document, and ATTACH of the REST catalog.
  const std::string duckdb = absl::StrCat(
      DuckdbIcebergPython(), " tests/iceberg/check_duckdb_iceberg.py http://127.0.0.1:",
      http_->port(), "/iceberg ", kReaderToken, " ", expected);
  std::printf("[iceberg cluster] %s\n", duckdb.c_str());
  std::fflush(stdout);
  EXPECT_EQ(std::system(duckdb.c_str()), 0) << "DuckDB's iceberg extension disagrees (see above)";

  // sluicectl verify's audit, the table's included: every snapshot against
  // the commit log and the records Kafka holds, every data file read back.
  audit::LiveAuditOptions audit_options;
  audit_options.datasource = kDatasource;
  audit_options.kafka_cluster = kafka::ClusterKind::kDevBroker;
  audit_options.expect_records = produced_ * kPartitions;
#ifdef ICEBERG_TEST_S3
  absl::StatusOr<std::unique_ptr<DeepStorage>> storage =
      OpenDeepStorage(absl::StrCat("s3://", bucket_, "/deep"), {.s3 = server_->Options()});
  ASSERT_TRUE(storage.ok()) << storage.status();
  audit_options.segment_files.deep_storage = storage->get();
  audit_options.segment_files.scratch_dir = cluster_->dir() + "/verify-scratch";
  ASSERT_TRUE(MakeDirs(audit_options.segment_files.scratch_dir).ok());
#endif
  absl::StatusOr<audit::LiveAuditResult> audited = audit::RunLiveAudit(*stub_, audit_options);
  ASSERT_TRUE(audited.ok()) << audited.status();
  std::printf("%s", audited->ToString().c_str());
  EXPECT_TRUE(audited->report.ok()) << audited->ToString();
  ASSERT_TRUE(audited->table.has_value()) << audited->ToString();
  EXPECT_TRUE(audited->table->ok());
  EXPECT_EQ(audited->table->snapshots, log.sequences_size());
  EXPECT_EQ(audited->table->rows, rows);
  EXPECT_EQ(audited->table->records, produced_ * kPartitions);
  EXPECT_TRUE(audited->table->notes.empty()) << audited->ToString();

  // The orphan sweeper: files a publish staged and did not commit go after
  // the safety age (1 h by default), never before; the table still passes
  // its audit afterwards (no referenced file was touched).
  {
#ifdef ICEBERG_TEST_S3
    const std::string deep = absl::StrCat("s3://", bucket_, "/deep");
#else
    const std::string deep = absl::StrCat("file://", cluster_->dir(), "/deep");
#endif
    absl::StatusOr<std::unique_ptr<DeepStorage>> deep_storage =
        OpenDeepStorage(deep, {
#ifdef ICEBERG_TEST_S3
                                  .s3 = server_->Options()
#endif
                              });
    ASSERT_TRUE(deep_storage.ok()) << deep_storage.status();
    const std::string staged = tmp + "/staged";
    {
      std::ofstream out(staged);
      out << "bytes of a publish that did not commit";
    }
    const std::string table_key = absl::StrCat("iceberg/sluice/", kTable);
    for (const std::string& key : {table_key + "/data/p0-uncommitted.parquet",
                                   table_key + "/metadata/uncommitted-m0.avro"}) {
      ASSERT_TRUE((*deep_storage)->Push(staged, key).ok()) << key;
    }
    supervisor::SupervisorManager* manager = cluster_->supervisor().manager();
    ASSERT_NE(manager, nullptr);
    const absl::Time now = absl::Now();
    EXPECT_EQ(manager->iceberg()->SweepOrphans(now), 0);
    EXPECT_EQ(manager->iceberg()->SweepOrphans(now + absl::Minutes(59)), 0);
    EXPECT_EQ(manager->iceberg()->SweepOrphans(now + absl::Minutes(61)), 2);
    absl::StatusOr<std::vector<DeepStorageFileInfo>> left =
        (*deep_storage)->List(table_key + "/data/");
    ASSERT_TRUE(left.ok());
    for (const DeepStorageFileInfo& f : *left) {
      EXPECT_FALSE(absl::StrContains(f.uri, "uncommitted")) << f.uri;
    }
    v1::GetSupervisorStatusRequest status_request;
    status_request.set_datasource(kDatasource);
    v1::GetSupervisorStatusResponse status;
    grpc::ClientContext status_ctx;
    ASSERT_TRUE(stub_->GetSupervisorStatus(&status_ctx, status_request, &status).ok());
    EXPECT_EQ(status.status().iceberg_table().orphan_files_removed(), 2);
    absl::StatusOr<audit::LiveAuditResult> again = audit::RunLiveAudit(*stub_, audit_options);
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_TRUE(again->report.ok()) << again->ToString();
  }

#ifdef ICEBERG_TEST_S3
  // Credentials appear in no file of the table (metadata, manifests, lists,
  // data), nor in the catalog.
  const std::string table_dir =
      server_->ObjectPath(bucket_, absl::StrCat("deep/iceberg/sluice/", kTable));
  int files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(table_dir)) {
    if (!entry.is_regular_file()) continue;
    ++files;
    absl::StatusOr<std::string> bytes = ReadFile(entry.path().string());
    ASSERT_TRUE(bytes.ok()) << bytes.status();
    EXPECT_FALSE(absl::StrContains(*bytes, server_->credentials().access_key_id))
        << entry.path();
    EXPECT_FALSE(absl::StrContains(*bytes, server_->credentials().secret_access_key))
        << entry.path();
  }
  EXPECT_GE(files, 3 + 2 * log.sequences_size()) << table_dir;
  absl::StatusOr<std::string> store = ReadFile(cluster_->dir() + "/supervisor/metadata.db");
  ASSERT_TRUE(store.ok());
  EXPECT_FALSE(absl::StrContains(*store, server_->credentials().secret_access_key));
  std::printf("[iceberg cluster] %d files of the table on S3, no credentials in any\n", files);
  // Nor in what the REST catalog answers: its config and the loaded table
  // (readers bring their own S3 credentials).
  for (const std::string path : {"/iceberg/v1/config", "/iceberg/v1/namespaces/sluice/tables/wiki"}) {
    absl::StatusOr<metrics::HttpGetResponse> got = metrics::HttpGet(http_->port(), path, kReaderToken);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(got->status, 200) << path << " " << got->body;
    EXPECT_FALSE(absl::StrContains(got->body, server_->credentials().access_key_id)) << path;
    EXPECT_FALSE(absl::StrContains(got->body, server_->credentials().secret_access_key)) << path;
  }
#endif
}

}  // namespace
}  // namespace sluice
