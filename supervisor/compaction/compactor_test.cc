// A compaction pass end to end, on SQLite and PostgreSQL, with real segment
// files in a local deep storage published through the store as the
// publisher does: the old interval is compacted, the recent one left to
// ingestion; a segment appended meanwhile stays used; an input replaced
// between plan and commit is a conflict that loses nothing; the Iceberg
// commit stages again when the table moved; the exactly-once audit passes
// after each.
#include "supervisor/compaction/compactor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "common/metrics/catalog.h"
#include "common/fault_injection.h"
#include "common/file_util.h"
#include "common/local_deep_storage.h"
#include "common/status_macros.h"
#include "common/time_util.h"
#include "supervisor/compaction/segment_compaction.h"
#include "supervisor/compaction/uncommitted_outputs.h"
#include "supervisor/naming.h"
#include "supervisor/segment_copy_check.h"
#include "supervisor/testing/segment_files.h"
#include "supervisor/testing/test_util.h"
#include "tools/audit/exactly_once_audit.h"
#include "tools/audit/segment_file_verifier.h"

namespace sluice::supervisor {
namespace {

constexpr int64_t kHour = 3600000;
constexpr int64_t kDay = 24 * kHour;
constexpr int64_t kRecordsPerSequence = 50;

// Kafka: every offset of partition 0 from 100 on is one record.
class OffsetCounter : public audit::RecordCounter {
 public:
  absl::StatusOr<int64_t> CountRecords(const std::string&, int32_t, int64_t start,
                                       int64_t end) override {
    return end - start;
  }
};

class CompactorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = testing::OpenTestStore(dir_.path());
    auto deep = LocalDeepStorage::Open(dir_.path() + "/deep");
    ASSERT_TRUE(deep.ok()) << deep.status();
    deep_ = std::move(*deep);
    ASSERT_TRUE(MakeDirs(dir_.path() + "/work").ok());
    spec_ = testing::TestSpec("wiki");
    spec_.mutable_compaction()->set_target_rows_per_segment(100000);
    spec_.mutable_compaction()->set_skip_offset_from_latest("P1D");
    ASSERT_TRUE(store_->InTransaction([&](StoreTxn& txn) -> absl::Status {
                        SLUICE_RETURN_IF_ERROR(txn.InsertSpec("wiki", spec_, false, 1000).status());
                        return txn.RecordInitialOffsets("wiki", "events", {{0, 100}}, 1000)
                            .status();
                      })
                    .ok());
    // 10 sequences in the old hour, 3 in a recent one.
    for (int i = 0; i < 10; ++i) Publish(kOld);
    for (int i = 0; i < 3; ++i) Publish(kRecent);
    options_.store = store_.get();
    options_.deep_storage = deep_.get();
    options_.scratch_dir = dir_.path() + "/scratch";
    options_.activity = &activity_;
  }

  void TearDown() override { ASSERT_TRUE(ConfigureFaultPoints("").ok()); }

  // The next sequence of partition 0 (kRecordsPerSequence records), with
  // its one segment in the hour starting at `hour_ms`, committed and handed
  // off as the publisher and handoff leave it.
  v1::SegmentDescriptor Publish(int64_t hour_ms) {
    const int n = sequences_++;
    const int64_t start = 100 + n * kRecordsPerSequence, end = start + kRecordsPerSequence;
    const int32_t partition_num = partitions_[hour_ms]++;
    v1::AllocateSegmentResponse allocated;
    allocated.mutable_interval()->set_start_ms(hour_ms);
    allocated.mutable_interval()->set_end_ms(hour_ms + kHour);
    allocated.set_version(FormatIsoInstant(hour_ms));
    allocated.set_partition_num(partition_num);
    allocated.set_segment_id(
        SegmentId("wiki", hour_ms, hour_ms + kHour, allocated.version(), partition_num));
    const std::string sequence = absl::StrCat("wiki_base_", n);
    auto pushed = testing::PushSegment(
        deep_.get(), dir_.path() + "/work",
        absl::StrCat("wiki/", hour_ms, "_", hour_ms + kHour, "/", allocated.version(), "/",
                     partition_num, "/", sequence, "_0.sluice"),
        "wiki", allocated, kRecordsPerSequence, {{0, {start, end}}});
    EXPECT_TRUE(pushed.ok()) << pushed.status();
    v1::SegmentDescriptor s = *pushed;
    s.set_sequence_name(sequence);
    auto bytes = ReadDeepStorageObject(*deep_, s.path(), dir_.path() + "/work");
    EXPECT_TRUE(bytes.ok()) << bytes.status();
    s.set_sha256(Sha256Digest(*bytes));
    EXPECT_TRUE(store_->InTransaction([&](StoreTxn& txn) -> absl::Status {
                        v1::PartitionRange stats;
                        stats.set_partition(0);
                        stats.set_start_offset(start);
                        stats.set_end_offset(end);
                        stats.set_rows(kRecordsPerSequence);
                        SLUICE_ASSIGN_OR_RETURN(
                            int64_t commit, txn.InsertCommittedSequence(
                                                "wiki", sequence, "task", {{0, start}},
                                                {{0, end}}, {stats}, 1000 + n));
                        SLUICE_RETURN_IF_ERROR(
                            txn.InsertSegment(s, s.sha256(), commit, "task", 1000 + n));
                        SLUICE_RETURN_IF_ERROR(txn.SetCommittedOffsets("wiki", "events",
                                                                       {{0, end}}, 1000 + n));
                        return txn.SetHandoff(s.id(), v1::HANDOFF_STATE_HANDED_OFF, 1000 + n,
                                              1000 + n);
                      })
                    .ok());
    return s;
  }

  std::vector<v1::SegmentDescriptor> Used(std::optional<int64_t> hour_ms = std::nullopt) {
    std::vector<v1::SegmentDescriptor> used;
    EXPECT_TRUE(store_->InTransaction([&](StoreTxn& txn) -> absl::Status {
                        SLUICE_ASSIGN_OR_RETURN(auto listed,
                                                txn.ListSegments("wiki", nullptr, false, 1000));
                        for (auto& s : listed) {
                          if (!hour_ms || s.interval().start_ms() == *hour_ms) used.push_back(s);
                        }
                        return absl::OkStatus();
                      })
                    .ok());
    std::sort(used.begin(), used.end(),
              [](const auto& a, const auto& b) { return a.id() < b.id(); });
    return used;
  }

  static std::vector<std::string> Ids(const std::vector<v1::SegmentDescriptor>& segments) {
    std::vector<std::string> ids;
    for (const auto& s : segments) ids.push_back(s.id());
    return ids;
  }

  // Records the used segments of the hour hold (from their provenance).
  int64_t Records(int64_t hour_ms) {
    int64_t records = 0;
    for (const auto& s : Used(hour_ms)) {
      for (const auto& r : s.provenance().ranges()) records += r.rows();
    }
    return records;
  }

  void MarkHandedOff() {
    ASSERT_TRUE(store_->InTransaction([&](StoreTxn& txn) -> absl::Status {
                        SLUICE_ASSIGN_OR_RETURN(auto listed,
                                                txn.ListSegments("wiki", nullptr, false, 1000));
                        for (const auto& s : listed) {
                          SLUICE_RETURN_IF_ERROR(
                              txn.SetHandoff(s.id(), v1::HANDOFF_STATE_HANDED_OFF, 5000, 5000));
                        }
                        return absl::OkStatus();
                      })
                    .ok());
  }

  // The exactly-once audit over the store's commit log and used segments.
  audit::AuditReport Audit() {
    v1::GetCommitLogResponse log;
    EXPECT_TRUE(store_->InTransaction([&](StoreTxn& txn) -> absl::Status {
                        log.set_datasource("wiki");
                        log.set_topic("events");
                        SLUICE_ASSIGN_OR_RETURN(OffsetMap initial, txn.InitialOffsets("wiki"));
                        for (const auto& [p, o] : initial) (*log.mutable_initial_offsets())[p] = o;
                        SLUICE_ASSIGN_OR_RETURN(OffsetMap committed,
                                                txn.CommittedOffsets("wiki"));
                        for (const auto& [p, o] : committed) {
                          (*log.mutable_committed_offsets())[p] = o;
                        }
                        SLUICE_ASSIGN_OR_RETURN(auto sequences, txn.CommitLog("wiki"));
                        for (auto& s : sequences) *log.add_sequences() = std::move(s);
                        return absl::OkStatus();
                      })
                    .ok());
    OffsetCounter counter;
    audit::SegmentFileVerifier verifier;
    return audit::RunAudit(log, Used(), &counter, &verifier);
  }

  void ExpectScratchClean() {
    if (!PathExists(options_.scratch_dir)) return;
    auto listed = ListDirectory(options_.scratch_dir);
    ASSERT_TRUE(listed.ok());
    EXPECT_TRUE(listed->empty()) << listed->front();
  }

  const int64_t kOld = testing::SegmentHourStartMs();
  const int64_t kRecent = kOld + 10 * kDay;
  const absl::Time kNow = absl::FromUnixMillis(kRecent + 2 * kHour);

  testing::TempDir dir_;
  std::unique_ptr<MetadataStore> store_;
  std::unique_ptr<LocalDeepStorage> deep_;
  v1::SupervisorSpec spec_;
  CompactionActivity activity_;
  CompactorOptions options_;
  int sequences_ = 0;
  std::map<int64_t, int32_t> partitions_;
};

TEST_F(CompactorTest, CompactsTheOldIntervalAndLeavesTheRecentOne) {
  const std::vector<v1::SegmentDescriptor> old_inputs = Used(kOld);
  const std::vector<v1::SegmentDescriptor> recent = Used(kRecent);
  ASSERT_EQ(old_inputs.size(), 10u);
  int64_t input_rows = 0;
  for (const auto& s : old_inputs) input_rows += s.num_rows();
  // Just before the commit the inputs are all used and nothing else is.
  int commits = 0;
  options_.before_commit = [&](const IntervalCompaction& c) {
    ++commits;
    EXPECT_EQ(Ids(Used(kOld)), Ids(old_inputs));
    EXPECT_EQ(c.replaced.size(), 10u);
  };
  metrics::Registry registry;
  options_.metrics = &registry;
  Compactor compactor(options_);
  auto pass = compactor.CompactDatasource(spec_, {}, kNow);
  ASSERT_TRUE(pass.ok()) << pass.status();
  EXPECT_TRUE(pass->errors.empty()) << pass->errors.front();
  EXPECT_EQ(commits, 1);
  EXPECT_EQ(pass->jobs_planned, 1);
  EXPECT_EQ(pass->conflicts, 0);
  ASSERT_EQ(pass->committed.size(), 1u);
  EXPECT_EQ(pass->committed[0].input_segments(), 10);
  EXPECT_EQ(pass->committed[0].output_segments(), 1);
  EXPECT_EQ(pass->committed[0].rows(), input_rows);
  EXPECT_EQ(pass->committed[0].interval().start_ms(), kOld);

  // The old hour: one compacted segment holding every record once, its
  // version later than the inputs'; the recent hour untouched.
  const std::vector<v1::SegmentDescriptor> compacted = Used(kOld);
  ASSERT_EQ(compacted.size(), 1u);
  const v1::SegmentDescriptor& c = compacted[0];
  EXPECT_GT(c.version(), old_inputs[0].version());
  EXPECT_EQ(c.provenance().ranges_size(), 10);
  EXPECT_EQ(Records(kOld), 10 * kRecordsPerSequence);
  EXPECT_LE(c.num_rows(), input_rows);
  EXPECT_EQ(Ids(Used(kRecent)), Ids(recent));
  SegmentExpectation expected = ExpectationOf(c);
  expected.sha256 = c.sha256();
  expected.depth = CopyCheckDepth::kFull;
  EXPECT_TRUE(VerifySegmentCopy(deep_.get(), dir_.path() + "/work", expected).ok());
  EXPECT_FALSE(c.sha256().empty());

  // The activity; nothing left in scratch; the audit passes.
  v1::CompactionStatus status;
  activity_.Fill("wiki", &status);
  EXPECT_EQ(status.compactions(), 1);
  EXPECT_EQ(status.segments_replaced(), 10);
  EXPECT_EQ(status.rows_compacted(), input_rows);
  EXPECT_FALSE(status.has_running());
  EXPECT_EQ(status.last_error(), "");
  ASSERT_EQ(status.pending_size(), 2);
  EXPECT_EQ(status.pending(0).reason(), "queued");
  EXPECT_EQ(status.pending(1).reason(), "within skipOffsetFromLatest");
  ExpectScratchClean();
  const audit::AuditReport report = Audit();
  EXPECT_TRUE(report.ok()) << report.ToString();
  EXPECT_EQ(report.rows_ingested, 13 * kRecordsPerSequence);
  // The metrics say the same.
  EXPECT_EQ(registry.GetCounter(metrics::kSupervisorCompactions,
                                {{"datasource", "wiki"}, {"outcome", "committed"}})
                ->Value(),
            1u);
  EXPECT_EQ(registry.GetCounter(metrics::kSupervisorCompactedRows, {{"datasource", "wiki"}})
                ->Value(),
            static_cast<uint64_t>(input_rows));

  // A second pass finds nothing to do.
  MarkHandedOff();
  pass = compactor.CompactDatasource(spec_, {}, kNow);
  ASSERT_TRUE(pass.ok()) << pass.status();
  EXPECT_EQ(pass->jobs_planned, 0);
  EXPECT_EQ(Ids(Used(kOld)), Ids(compacted));
}

TEST_F(CompactorTest, ASegmentAppendedBeforeTheCommitStaysUsed) {
  std::optional<v1::SegmentDescriptor> appended;
  options_.before_commit = [&](const IntervalCompaction&) { appended = Publish(kOld); };
  Compactor compactor(options_);
  auto pass = compactor.CompactDatasource(spec_, {}, kNow);
  ASSERT_TRUE(pass.ok()) << pass.status();
  ASSERT_EQ(pass->committed.size(), 1u);
  ASSERT_TRUE(appended);
  const std::vector<v1::SegmentDescriptor> used = Used(kOld);
  ASSERT_EQ(used.size(), 2u);
  EXPECT_TRUE(used[0].id() == appended->id() || used[1].id() == appended->id());
  EXPECT_EQ(Records(kOld), 11 * kRecordsPerSequence);
  const audit::AuditReport report = Audit();
  EXPECT_TRUE(report.ok()) << report.ToString();
}

TEST_F(CompactorTest, AnInputReplacedBeforeTheCommitIsAConflictThatLosesNothing) {
  // Between plan and commit, another compaction replaces two of the inputs.
  int commits = 0;
  std::string concurrent_id;
  options_.before_commit = [&](const IntervalCompaction& c) {
    if (commits++ > 0) return;
    IntervalCompactionRequest request;
    request.datasource = "wiki";
    request.interval = c.interval;
    request.groups = {{c.replaced[0], c.replaced[1]}};
    request.version = CompactionVersion(kNow + absl::Seconds(1), c.replaced);
    auto other = CompactInterval(deep_.get(), dir_.path() + "/other", request);
    ASSERT_TRUE(other.ok()) << other.status();
    auto committed = CommitCompaction(store_.get(), *other, std::nullopt, kNow);
    ASSERT_TRUE(committed.ok()) << committed.status();
    ASSERT_EQ(committed->outcome, CompactionCommitOutcome::kCommitted);
    concurrent_id = other->outputs[0].descriptor.id();
  };
  Compactor compactor(options_);
  auto pass = compactor.CompactDatasource(spec_, {}, kNow);
  ASSERT_TRUE(pass.ok()) << pass.status();
  EXPECT_TRUE(pass->errors.empty()) << pass->errors.front();
  EXPECT_EQ(pass->conflicts, 1);
  EXPECT_TRUE(pass->committed.empty());
  // Planned again: the winner's segment is not handed off yet.
  ASSERT_FALSE(pass->pending.empty());
  EXPECT_EQ(pass->pending[0].reason(), "waiting for handoff of 1 segment");
  std::vector<v1::SegmentDescriptor> used = Used(kOld);
  EXPECT_EQ(used.size(), 9u);
  EXPECT_EQ(Records(kOld), 10 * kRecordsPerSequence);
  // The loser's pushed copy is gone; the winner's stays.
  auto copies = deep_->List(absl::StrCat("wiki/", kOld, "_", kOld + kHour, "/",
                                         FormatIsoInstant(absl::ToUnixMillis(kNow)), "/"));
  ASSERT_TRUE(copies.ok());
  EXPECT_TRUE(copies->empty()) << copies->front().uri;
  v1::CompactionStatus status;
  activity_.Fill("wiki", &status);
  EXPECT_EQ(status.conflicts(), 1);
  EXPECT_EQ(status.compactions(), 0);
  ExpectScratchClean();
  audit::AuditReport report = Audit();
  EXPECT_TRUE(report.ok()) << report.ToString();

  // Once handed off, the next pass compacts the winner's segment with the rest.
  MarkHandedOff();
  pass = compactor.CompactDatasource(spec_, {}, kNow + absl::Seconds(2));
  ASSERT_TRUE(pass.ok()) << pass.status();
  ASSERT_EQ(pass->committed.size(), 1u);
  EXPECT_EQ(pass->committed[0].input_segments(), 9);
  used = Used(kOld);
  ASSERT_EQ(used.size(), 1u);
  EXPECT_EQ(Records(kOld), 10 * kRecordsPerSequence);
  report = Audit();
  EXPECT_TRUE(report.ok()) << report.ToString();
}

TEST_F(CompactorTest, AFailureBeforeTheCommitCommitsNothingAndTheNextPassDoes) {
  Compactor compactor(options_);
  v1::CompactionStatus status;
  for (const std::string point :
       {"supervisor.compaction_after_push", "supervisor.compaction_before_commit"}) {
    ASSERT_TRUE(ConfigureFaultPoints(point + "=error").ok());
    auto pass = compactor.CompactDatasource(spec_, {}, kNow);
    ASSERT_TRUE(pass.ok()) << pass.status();
    ASSERT_EQ(pass->errors.size(), 1u) << point;
    EXPECT_TRUE(pass->committed.empty());
    EXPECT_EQ(FaultPointHits(point), 1);
    EXPECT_EQ(Used(kOld).size(), 10u);
    activity_.Fill("wiki", &status);
    EXPECT_NE(status.last_error().find(point), std::string::npos) << status.last_error();
    EXPECT_FALSE(status.has_running());
    ExpectScratchClean();
  }
  ASSERT_TRUE(ConfigureFaultPoints("").ok());
  // The failed attempts' pushed copy is in deep storage, named by no row.
  v1::Interval hour;
  hour.set_start_ms(kOld);
  hour.set_end_ms(kOld + kHour);
  auto compacted_files = [&] {
    std::vector<std::string> out;
    auto listed = deep_->List(CompactionKeyPrefix("wiki", hour));
    EXPECT_TRUE(listed.ok()) << listed.status();
    for (const DeepStorageFileInfo& f : *listed) {
      if (f.uri.find("/compaction_") != std::string::npos) out.push_back(f.uri);
    }
    return out;
  };
  ASSERT_EQ(compacted_files().size(), 1u);

  // The next pass (later: another version, another key) removes it first.
  auto pass = compactor.CompactDatasource(spec_, {}, kNow + absl::Minutes(1));
  ASSERT_TRUE(pass.ok()) << pass.status();
  ASSERT_EQ(pass->committed.size(), 1u);
  EXPECT_EQ(Used(kOld).size(), 1u);
  EXPECT_EQ(compacted_files(), std::vector<std::string>{Used(kOld)[0].path()});
  activity_.Fill("wiki", &status);
  EXPECT_EQ(status.last_error(), "");  // cleared by the success
  const audit::AuditReport report = Audit();
  EXPECT_TRUE(report.ok()) << report.ToString();
}

// CompactDataSource's options: past the skip offset, one interval, at most
// a number of jobs (the oldest first).
TEST_F(CompactorTest, OptionsSelectTheIntervalsAndBoundTheJobs) {
  Compactor compactor(options_);
  CompactDatasourceOptions options;
  options.ignore_skip_offset = true;
  options.max_jobs = 1;
  auto pass = compactor.CompactDatasource(spec_, options, kNow);
  ASSERT_TRUE(pass.ok()) << pass.status();
  EXPECT_EQ(pass->jobs_planned, 2);
  ASSERT_EQ(pass->committed.size(), 1u);
  EXPECT_EQ(pass->committed[0].interval().start_ms(), kOld);
  EXPECT_EQ(Used(kRecent).size(), 3u);

  // Only the recent hour, within the skip offset.
  options.max_jobs = 0;
  options.interval.emplace();
  options.interval->set_start_ms(kRecent);
  options.interval->set_end_ms(kRecent + 1);
  pass = compactor.CompactDatasource(spec_, options, kNow);
  ASSERT_TRUE(pass.ok()) << pass.status();
  EXPECT_EQ(pass->jobs_planned, 1);
  ASSERT_EQ(pass->committed.size(), 1u);
  EXPECT_EQ(pass->committed[0].interval().start_ms(), kRecent);
  EXPECT_EQ(Used(kRecent).size(), 1u);
  EXPECT_EQ(Records(kRecent), 3 * kRecordsPerSequence);
  const audit::AuditReport report = Audit();
  EXPECT_TRUE(report.ok()) << report.ToString();
}

TEST_F(CompactorTest, TheIcebergCommitStagesAgainWhenTheTableMoved) {
  spec_.mutable_iceberg_table()->set_table_namespace("sluice");
  spec_.mutable_iceberg_table()->set_table_name("wiki");
  auto move_table = [&](const std::optional<std::string>& from, const std::string& to) {
    ASSERT_TRUE(store_->InTransaction([&](StoreTxn& txn) -> absl::Status {
                        SLUICE_ASSIGN_OR_RETURN(
                            bool swapped, txn.SwapIcebergMetadataLocation("sluice", "wiki", from, to));
                        EXPECT_TRUE(swapped);
                        return absl::OkStatus();
                      })
                    .ok());
  };
  move_table(std::nullopt, "file:///t/m0.json");
  // The stager stages on the base it is given; an append moves the table
  // right after the first staging.
  std::vector<std::optional<std::string>> bases;
  options_.iceberg_stager = [&](const IntervalCompaction&,
                                const std::optional<std::string>& base, IcebergReplaceReuse*)
      -> absl::StatusOr<std::optional<IcebergSwap>> {
    bases.push_back(base);
    const int n = static_cast<int>(bases.size());
    if (n == 1) move_table(base, "file:///t/appended.json");
    return IcebergSwap{"sluice", "wiki", base, absl::StrCat("file:///t/compacted", n, ".json"),
                       100 + n};
  };
  Compactor compactor(options_);
  auto pass = compactor.CompactDatasource(spec_, {}, kNow);
  ASSERT_TRUE(pass.ok()) << pass.status();
  EXPECT_TRUE(pass->errors.empty()) << pass->errors.front();
  ASSERT_EQ(pass->committed.size(), 1u);
  EXPECT_EQ(pass->committed[0].snapshot_id(), 102);
  EXPECT_EQ(bases, (std::vector<std::optional<std::string>>{"file:///t/m0.json",
                                                            "file:///t/appended.json"}));
  EXPECT_EQ(Used(kOld).size(), 1u);
  std::optional<std::string> location;
  ASSERT_TRUE(store_->InTransaction([&](StoreTxn& txn) -> absl::Status {
                      SLUICE_ASSIGN_OR_RETURN(location,
                                              txn.IcebergMetadataLocation("sluice", "wiki"));
                      return absl::OkStatus();
                    })
                  .ok());
  EXPECT_EQ(location, "file:///t/compacted2.json");
}

TEST_F(CompactorTest, AHeldAttemptStagesOnWhatThePublishesItWaitedForCommitted) {
  spec_.mutable_iceberg_table()->set_table_namespace("sluice");
  spec_.mutable_iceberg_table()->set_table_name("wiki");
  const std::string key = "iceberg/sluice/wiki";
  IcebergTableLocks locks;
  options_.table_locks = &locks;
  auto move_table = [&](const std::optional<std::string>& from, const std::string& to) {
    EXPECT_TRUE(store_->InTransaction([&](StoreTxn& txn) {
                        return txn.SwapIcebergMetadataLocation("sluice", "wiki", from, to)
                            .status();
                      })
                    .ok());
  };
  move_table(std::nullopt, "file:///t/m0.json");
  // At the first staging a publish wins, and another one holds the table
  // until the compaction waits for it alone, then commits and lets go.
  std::vector<std::optional<std::string>> bases;
  std::thread publish;
  absl::Notification holding;
  options_.iceberg_stager = [&](const IntervalCompaction&, const std::optional<std::string>& base,
                                IcebergReplaceReuse*)
      -> absl::StatusOr<std::optional<IcebergSwap>> {
    bases.push_back(base);
    const int n = static_cast<int>(bases.size());
    if (n == 1) {
      move_table(base, "file:///t/appended.json");
      publish = std::thread([&] {
        IcebergTableLocks::Shared held = locks.Publishing(key);
        holding.Notify();
        while (locks.WaitingCompactions(key) == 0) absl::SleepFor(absl::Milliseconds(1));
        move_table("file:///t/appended.json", "file:///t/appended2.json");
      });
      holding.WaitForNotification();
    }
    return IcebergSwap{"sluice", "wiki", base, absl::StrCat("file:///t/compacted", n, ".json"),
                       100 + n};
  };
  Compactor compactor(options_);
  auto pass = compactor.CompactDatasource(spec_, {}, kNow);
  publish.join();
  ASSERT_TRUE(pass.ok()) << pass.status();
  EXPECT_TRUE(pass->errors.empty()) << pass->errors.front();
  ASSERT_EQ(pass->committed.size(), 1u);
  // The held second attempt read the location after the publish committed.
  EXPECT_EQ(bases, (std::vector<std::optional<std::string>>{"file:///t/m0.json",
                                                            "file:///t/appended2.json"}));
}

TEST_F(CompactorTest, ATableThatKeepsMovingFailsTheJobWithNothingReplaced) {
  spec_.mutable_iceberg_table()->set_table_namespace("sluice");
  spec_.mutable_iceberg_table()->set_table_name("wiki");
  int stagings = 0;
  options_.iceberg_stager = [&](const IntervalCompaction&,
                                const std::optional<std::string>& base, IcebergReplaceReuse*)
      -> absl::StatusOr<std::optional<IcebergSwap>> {
    ++stagings;
    // Another writer's metadata every time.
    const std::string moved = absl::StrCat("file:///t/other", stagings, ".json");
    EXPECT_TRUE(store_->InTransaction([&](StoreTxn& txn) {
                        return txn.SwapIcebergMetadataLocation("sluice", "wiki", base, moved)
                            .status();
                      })
                    .ok());
    return IcebergSwap{"sluice", "wiki", base, "file:///t/compacted.json", 1};
  };
  Compactor compactor(options_);
  auto pass = compactor.CompactDatasource(spec_, {}, kNow);
  ASSERT_TRUE(pass.ok()) << pass.status();
  EXPECT_EQ(stagings, kMaxCompactionCommitAttempts);
  ASSERT_EQ(pass->errors.size(), 1u);
  EXPECT_NE(pass->errors[0].find("moved"), std::string::npos) << pass->errors[0];
  EXPECT_EQ(Used(kOld).size(), 10u);
  ExpectScratchClean();

  // Without a stager a table datasource is not compacted at all.
  options_.iceberg_stager = nullptr;
  Compactor without(options_);
  pass = without.CompactDatasource(spec_, {}, kNow);
  ASSERT_TRUE(pass.ok()) << pass.status();
  ASSERT_EQ(pass->errors.size(), 1u);
  EXPECT_NE(pass->errors[0].find("FAILED_PRECONDITION"), std::string::npos) << pass->errors[0];
  EXPECT_EQ(Used(kOld).size(), 10u);
}

}  // namespace
}  // namespace sluice::supervisor
