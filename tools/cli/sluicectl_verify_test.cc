// End to end: `sluicectl verify` against real processes (dev broker,
// supervisor, two workers) after a small wiki stream was ingested. It passes
// on the intact datasource, and fails for real when a segment file in deep
// storage is damaged or when a committed segment's row is deleted from the
// metadata store.
#include <signal.h>
#include <sqlite3.h>

#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/subprocess.h"
#include "tools/audit/segment_file_verifier.h"
#include "tools/cluster/process_cluster.h"
#include "tools/cluster/wiki_datasource.h"
#include "tools/produce/wiki_producer.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void Write(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

struct CliRun {
  int code = -1;
  std::string out;
  std::string err;
};

class SluicectlVerifyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto root = testing::MakeTempDir("verify");
    ASSERT_TRUE(root.ok());
    root_ = *root;
    cluster::ProcessClusterOptions options;
    options.root_dir = root_;
    options.workers = 2;
    options.topics = {"wiki:2"};
    auto cluster = cluster::ProcessCluster::Create(options);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
    ASSERT_TRUE(cluster_->Start().ok());
    absl::Status healthy = cluster_->WaitHealthy(absl::Seconds(60));
    ASSERT_TRUE(healthy.ok()) << healthy;
  }

  void TearDown() override {
    if (cluster_ != nullptr) {
      absl::Status stopped = cluster_->StopAll();
      EXPECT_TRUE(stopped.ok()) << stopped;
    }
  }

  CliRun Sluicectl(std::vector<std::string> args) {
    testing::SubprocessOptions options;
    options.binary = *testing::FindRunfile("tools/sluicectl");
    options.args = {"--supervisor=" + cluster_->supervisor_address(), "--kafka_cluster=dev",
                    "--auth_token_file=" + cluster_->token_file("admin")};
    options.args.insert(options.args.end(), args.begin(), args.end());
    options.stdout_path = root_ + "/cli.out";
    options.stderr_path = root_ + "/cli.err";
    CliRun run;
    auto process = testing::Subprocess::Start(options);
    EXPECT_TRUE(process.ok()) << process.status();
    if (!process.ok()) return run;
    auto exit = (*process)->Wait(absl::Seconds(120));
    EXPECT_TRUE(exit.ok()) << exit.status();
    run.code = exit.ok() && exit->exited ? exit->code : -1;
    run.out = Slurp(options.stdout_path);
    run.err = Slurp(options.stderr_path);
    std::cerr << "$ sluicectl " << absl::StrJoin(args, " ") << "  (exit " << run.code << ")\n"
              << run.out << run.err;
    return run;
  }

  std::vector<v1::SegmentDescriptor> Segments() {
    auto stub = cluster_->SupervisorStub();
    v1::ListSegmentsRequest request;
    request.set_datasource("wiki");
    v1::ListSegmentsResponse response;
    grpc::ClientContext context;
    EXPECT_TRUE(stub->ListSegments(&context, request, &response).ok());
    return {response.segments().begin(), response.segments().end()};
  }

  std::string root_;
  std::unique_ptr<cluster::ProcessCluster> cluster_;
};

TEST_F(SluicectlVerifyTest, PassesOnIngestedDataAndFailsOnDamage) {
  // 4000 records, a few malformed, then a spec whose small segments and
  // short task duration make several sequences, published while reading.
  produce::ProduceOptions produce;
  produce.properties = {{"bootstrap.servers", cluster_->bootstrap_servers()}};
  produce.topic = "wiki";
  produce.records = 4000;
  produce.rows.seed = 3;
  produce.rows.malformed_fraction = 0.01;
  auto produced = produce::ProduceWikiRecords(produce);
  ASSERT_TRUE(produced.ok()) << produced.status();
  ASSERT_GT(produced->malformed, 0);
  std::map<int32_t, int64_t> ends;
  for (const auto& [p, count] : produced->partitions) ends[p] = count.end_offset;

  cluster::WikiSpecOptions spec;
  spec.bootstrap_servers = cluster_->bootstrap_servers();
  spec.replicas = 2;
  spec.max_rows_per_segment = 1000;
  spec.task_duration = "PT5S";
  auto stub = cluster_->SupervisorStub();
  ASSERT_TRUE(cluster::SubmitSpec(*stub, cluster::WikiSpec(spec)).ok());
  absl::Status committed = cluster::WaitUntilCommitted(*stub, "wiki", ends, absl::Seconds(120));
  ASSERT_TRUE(committed.ok()) << committed << "\n" << cluster_->LogTail("supervisor");

  // Intact, while the supervisor keeps rolling groups over: PASS.
  CliRun run = Sluicectl({"verify", "wiki", "--expect_records=4000"});
  EXPECT_EQ(run.code, 0) << run.out << run.err;
  EXPECT_THAT(run.out, HasSubstr("records in Kafka (committed ranges) 4000"));
  EXPECT_THAT(run.out, HasSubstr(absl::StrCat("unparseable ", produced->malformed)));
  EXPECT_THAT(run.out, HasSubstr("PASS"));
  // The total view: a record produced but not committed is a failure.
  run = Sluicectl({"verify", "wiki", "--expect_records=4001"});
  EXPECT_EQ(run.code, 3) << run.out << run.err;
  EXPECT_THAT(run.out, HasSubstr("records produced 4001 != records in the committed ranges 4000"));

  // Quiet from here on: the groups finish and nothing new is committed.
  {
    v1::SuspendSupervisorRequest ref;
    ref.set_datasource("wiki");
    v1::SuspendSupervisorResponse summary;
    grpc::ClientContext context;
    ASSERT_TRUE(stub->SuspendSupervisor(&context, ref, &summary).ok());
  }

  // A damaged segment file fails the audit; restored, it passes again.
  const std::vector<v1::SegmentDescriptor> segments = Segments();
  ASSERT_GE(segments.size(), 3u) << "expected several handoffs";
  const std::string path = *audit::LocalSegmentPath(segments[0].path());
  const std::string original = Slurp(path);
  ASSERT_GT(original.size(), 100u);
  std::string damaged = original;
  damaged[damaged.size() / 2] ^= 0x01;
  Write(path, damaged);
  run = Sluicectl({"verify", "wiki"});
  EXPECT_EQ(run.code, 3) << run.out << run.err;
  EXPECT_THAT(run.out, HasSubstr(absl::StrCat("segment ", segments[0].id(), " file ")));
  EXPECT_THAT(run.out, HasSubstr("fails verification"));
  EXPECT_THAT(run.out, HasSubstr("FAIL"));
  Write(path, original);
  run = Sluicectl({"verify", "wiki", "--expect_records=4000"});
  EXPECT_EQ(run.code, 0) << run.out << run.err;

  // A committed segment deleted from the metadata store (supervisor stopped,
  // SQLite edited, supervisor restarted): its rows are missing.
  const v1::SegmentDescriptor& victim = segments[1];
  ASSERT_TRUE(cluster_->Kill("supervisor", SIGTERM).ok());
  {
    sqlite3* db = nullptr;
    const std::string db_path = cluster_->data_dir("supervisor") + "/metadata.db";
    ASSERT_EQ(sqlite3_open(db_path.c_str(), &db), SQLITE_OK);
    sqlite3_stmt* stmt = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db, "DELETE FROM segments WHERE id = ?", -1, &stmt, nullptr),
              SQLITE_OK);
    sqlite3_bind_text(stmt, 1, victim.id().c_str(), -1, SQLITE_TRANSIENT);
    EXPECT_EQ(sqlite3_step(stmt), SQLITE_DONE);
    sqlite3_finalize(stmt);
    EXPECT_EQ(sqlite3_changes(db), 1);
    sqlite3_close(db);
  }
  ASSERT_TRUE(cluster_->Restart("supervisor").ok());
  absl::Status healthy = cluster_->WaitHealthy(absl::Seconds(60));
  ASSERT_TRUE(healthy.ok()) << healthy;
  run = Sluicectl({"verify", "wiki", "--expect_records=4000"});
  EXPECT_EQ(run.code, 3) << run.out << run.err;
  EXPECT_THAT(run.out, HasSubstr(absl::StrCat("sequence ", victim.sequence_name())));
  EXPECT_THAT(run.out, HasSubstr("Kafka holds"));
  EXPECT_THAT(run.out, HasSubstr("its segments account for"));
  EXPECT_THAT(run.out, HasSubstr("FAIL"));
}

TEST_F(SluicectlVerifyTest, UnknownDatasourceIsAnRpcError) {
  CliRun run = Sluicectl({"verify", "nosuch"});
  EXPECT_EQ(run.code, 1) << run.out << run.err;
  EXPECT_THAT(run.err, HasSubstr("sluicectl: verify nosuch failed: NOT_FOUND"));
}

}  // namespace
}  // namespace sluice
