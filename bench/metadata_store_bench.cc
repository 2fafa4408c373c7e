// Latency of the publish transaction on each metadata-store backend: the
// statements Publisher::Publish runs for a sequence of two segments (the
// datasource and commit-log checks, the compare-and-swap read of the
// committed offsets, the commit log row, two allocation and segment checks
// and inserts, the offset update and its read-back), one transaction each,
// from one connection, as one supervisor does; then the same as a leader
// under --leader_election, whose transactions also check the lease (fenced).
//
//   bazel run //bench:metadata_store_bench -- --transactions=2000
//
// SQLite: WAL, synchronous=FULL, on the local disk under /tmp. PostgreSQL: a
// private server from tests/testing/postgres_server.h on loopback, with its
// test settings (fsync off), so the number is the client's cost (round
// trips, a savepoint per statement, SERIALIZABLE bookkeeping), not the
// disk's; a production server adds its WAL flush per commit.
#include <stdlib.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <gflags/gflags.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "supervisor/leader_elector.h"
#include "supervisor/store/metadata_store.h"
#include "tests/testing/postgres_server.h"

DEFINE_int32(transactions, 2000, "publish transactions per backend");

namespace sluice::supervisor {
namespace {

absl::Status PublishOnce(StoreTxn& txn, int i) {
  const std::string ds = "wiki";
  const std::string sequence = absl::StrCat("wiki_bench_", i);
  SLUICE_ASSIGN_OR_RETURN(bool exists, txn.DatasourceExists(ds));
  if (!exists) return absl::NotFoundError("no datasource");
  SLUICE_ASSIGN_OR_RETURN(auto committed, txn.CommittedSequence(ds, sequence));
  if (committed) return absl::AlreadyExistsError("committed");
  SLUICE_ASSIGN_OR_RETURN(OffsetMap before, txn.CommittedOffsets(ds));
  SLUICE_ASSIGN_OR_RETURN(auto topic, txn.CommitTopic(ds));
  const OffsetMap start = {{0, before[0]}, {1, before[1]}};
  const OffsetMap end = {{0, before[0] + 100}, {1, before[1] + 100}};
  SLUICE_ASSIGN_OR_RETURN(int64_t commit_id,
                          txn.InsertCommittedSequence(ds, sequence, "task", start, end, {}, i));
  for (int s = 0; s < 2; ++s) {
    v1::SegmentDescriptor segment;
    segment.set_id(absl::StrCat(sequence, "_seg_", s));
    segment.set_datasource(ds);
    segment.mutable_interval()->set_start_ms(int64_t{i} * 3600000);
    segment.mutable_interval()->set_end_ms(int64_t{i + 1} * 3600000);
    segment.set_version("v1");
    segment.set_partition_num(s);
    segment.set_sequence_name(sequence);
    segment.set_path("/deep/x");
    segment.set_checksum("00");
    SLUICE_ASSIGN_OR_RETURN(auto pending, txn.PendingSegmentById(segment.id()));
    (void)pending;
    SLUICE_ASSIGN_OR_RETURN(bool present, txn.SegmentExists(segment.id()));
    if (present) return absl::AlreadyExistsError("segment");
    SLUICE_RETURN_IF_ERROR(txn.InsertSegment(segment, /*sha256=*/"", commit_id, "task", i));
  }
  SLUICE_RETURN_IF_ERROR(txn.SetCommittedOffsets(ds, topic.value_or("edits"), end, i));
  return txn.CommittedOffsets(ds).status();
}

// `fenced`: as a leader under --leader_election, whose every transaction
// first checks the lease (supervisor/leader_elector.h): one more statement.
absl::Status Measure(const std::string& name, MetadataStoreOptions options, int n, bool fenced) {
  SLUICE_ASSIGN_OR_RETURN(auto store, MetadataStore::Open(options));
  LeaderElector elector({.store = store.get(),
                         .supervisor_id = "bench",
                         .address = "127.0.0.1:1",
                         .lease = absl::Hours(1)});
  if (fenced) {
    SLUICE_RETURN_IF_ERROR(elector.RunOnce());
    if (!elector.leadership().leading) return absl::InternalError("did not take the lease");
  }
  SLUICE_RETURN_IF_ERROR(store->InTransaction([](StoreTxn& txn) -> absl::Status {
    SLUICE_RETURN_IF_ERROR(txn.EnsureDatasource("wiki", 0));
    return txn.RecordInitialOffsets("wiki", "edits", {{0, 0}, {1, 0}}, 0).status();
  }));
  std::vector<double> micros;
  micros.reserve(n);
  for (int i = 0; i < n; ++i) {
    const absl::Time t0 = absl::Now();
    SLUICE_RETURN_IF_ERROR(
        store->InTransaction([&](StoreTxn& txn) { return PublishOnce(txn, i); }));
    micros.push_back(absl::ToDoubleMicroseconds(absl::Now() - t0));
  }
  std::sort(micros.begin(), micros.end());
  double total = 0;
  for (double m : micros) total += m;
  std::printf("%-18s %6d publishes  mean %8.0f us  p50 %8.0f us  p99 %8.0f us\n", name.c_str(), n,
              total / n, micros[n / 2], micros[std::min(n - 1, n * 99 / 100)]);
  return absl::OkStatus();
}

int Run(int n) {
  std::string dir = "/tmp/sluice-store-bench.XXXXXX";
  if (mkdtemp(dir.data()) == nullptr) return 1;
  MetadataStoreOptions sqlite;
  sqlite.path = dir + "/metadata.db";
  absl::Status s = Measure("sqlite", sqlite, n, false);
  if (s.ok()) {
    sqlite.path = dir + "/fenced.db";
    s = Measure("sqlite fenced", sqlite, n, true);
  }
  RemoveAll(dir).IgnoreError();
  if (!s.ok()) {
    std::fprintf(stderr, "sqlite: %s\n", s.ToString().c_str());
    return 1;
  }
  auto server = testing::PostgresServer::Start();
  if (!server.ok()) {
    std::fprintf(stderr, "postgresql: %s\n", server.status().ToString().c_str());
    return 1;
  }
  auto url = (*server)->CreateDatabase("bench");
  if (!url.ok()) {
    std::fprintf(stderr, "postgresql: %s\n", url.status().ToString().c_str());
    return 1;
  }
  MetadataStoreOptions postgres;
  postgres.postgres_url = *url;
  s = Measure("postgresql", postgres, n, false);
  if (s.ok()) {
    auto fenced_url = (*server)->CreateDatabase("bench_fenced");
    if (!fenced_url.ok()) {
      std::fprintf(stderr, "postgresql: %s\n", fenced_url.status().ToString().c_str());
      return 1;
    }
    postgres.postgres_url = *fenced_url;
    s = Measure("postgresql fenced", postgres, n, true);
  }
  if (!s.ok()) {
    std::fprintf(stderr, "postgresql: %s\n", s.ToString().c_str());
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace sluice::supervisor

int main(int argc, char** argv) {
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  return sluice::supervisor::Run(FLAGS_transactions);
}
