#include "task/persister.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "common/status_macros.h"
#include "common/file_util.h"
#include "task/task_files.h"

namespace sluice::task {
namespace {

// Spills write their row count to the file. A spill may hold fewer rows
// than the index says it holds (`spilled`): what the spill says counts.
class FakeIndex : public SegmentIndex {
 public:
  explicit FakeIndex(int64_t rows, absl::Status spill_error = absl::OkStatus(),
                     int64_t spilled = -1)
      : rows_(rows), spilled_(spilled < 0 ? rows : spilled), spill_error_(std::move(spill_error)) {}
  absl::Status Add(const ParsedRow&, int32_t, int64_t) override { return absl::OkStatus(); }
  int64_t rows() const override { return rows_; }
  int64_t estimated_bytes() const override { return 0; }
  absl::StatusOr<int64_t> Spill(const std::string& directory, const std::string& name) override {
    if (!spill_error_.ok()) return spill_error_;
    const absl::Status written =
        WriteFileAtomically(absl::StrCat(directory, "/", name), std::to_string(spilled_));
    if (!written.ok()) return written;
    return spilled_;
  }

 private:
  int64_t rows_;
  int64_t spilled_;
  absl::Status spill_error_;
};

class PersisterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = absl::StrCat(::testing::TempDir(), "/persister_test_",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    ASSERT_TRUE(RemoveAll(dir_).ok());
    ASSERT_TRUE(MakeDirs(dir_ + "/spills").ok());
  }
  std::unique_ptr<Persister> Make() {
    PersisterOptions options;
    options.task_dir = dir_;
    options.metrics = TaskMetrics::For(nullptr, "wiki");
    options.log_prefix = "[task t1]";
    return std::make_unique<Persister>(std::move(options));
  }
  PersistJob Job(int64_t persists, absl::Status spill_error = absl::OkStatus()) {
    PersistJob job;
    job.started = absl::Now();
    job.spills.emplace_back(absl::StrCat("a_", persists, ".spill"),
                            std::make_unique<FakeIndex>(3, spill_error));
    (*job.point.mutable_current_offsets())[0] = 10 * persists;
    job.point.mutable_counters()->set_persists(persists);
    job.point.set_next_spill_number(persists);
    return job;
  }
  // A restore point written before a restart, `persists` persists in.
  static state::RestorePoint Restored(int64_t persists) {
    state::RestorePoint point;
    point.mutable_counters()->set_persists(persists);
    return point;
  }
  std::string dir_;
};

TEST_F(PersisterTest, NoRestorePointIsNotAnError) {
  absl::StatusOr<std::optional<state::RestorePoint>> point =
      Persister::LoadRestorePoint(dir_ + "/restore_point.json");
  ASSERT_TRUE(point.ok()) << point.status();
  EXPECT_FALSE(point->has_value());
  ASSERT_TRUE(WriteFileAtomically(dir_ + "/restore_point.json", "{not json").ok());
  EXPECT_EQ(Persister::LoadRestorePoint(dir_ + "/restore_point.json").status().code(),
            absl::StatusCode::kDataLoss);
}

TEST_F(PersisterTest, SpillsThenWritesTheRestorePointNamingThem) {
  auto persister = Make();
  persister->Start();
  EXPECT_TRUE(persister->WaitPersisted().ok());  // nothing to wait for
  persister->Submit(Job(1));
  ASSERT_TRUE(persister->WaitPersisted().ok());
  EXPECT_EQ(*ReadFile(dir_ + "/spills/a_1.spill"), "3");
  EXPECT_EQ(persister->persists_written(), 1);
  persister->Submit(Job(2));
  ASSERT_TRUE(persister->WaitPersisted().ok());
  absl::StatusOr<std::optional<state::RestorePoint>> point =
      Persister::LoadRestorePoint(dir_ + "/restore_point.json");
  ASSERT_TRUE(point.ok() && point->has_value()) << point.status();
  EXPECT_EQ((*point)->current_offsets().at(0), 20);
  EXPECT_EQ((*point)->counters().persists(), 2);
  EXPECT_EQ(persister->persists_written(), 2);
  EXPECT_TRUE(persister->failure().ok());
  persister->Stop();
  persister->Stop();  // idempotent
}

TEST_F(PersisterTest, TheFirstFailureSticksAndNoRestorePointIsWritten) {
  auto persister = Make();
  persister->Restore(Restored(5));
  persister->Start();
  persister->Submit(Job(6, absl::DataLossError("disk")));
  EXPECT_EQ(persister->WaitPersisted(), absl::DataLossError("disk"));
  EXPECT_EQ(persister->failure(), absl::DataLossError("disk"));
  EXPECT_FALSE(PathExists(dir_ + "/restore_point.json"));
  EXPECT_EQ(persister->persists_written(), 5);
  persister->Submit(Job(7, absl::InternalError("later")));
  EXPECT_EQ(persister->WaitPersisted(), absl::DataLossError("disk"));
}

// A spill that waits until the test lets it go (the persist in progress).
class SlowIndex : public FakeIndex {
 public:
  explicit SlowIndex(absl::Notification* go) : FakeIndex(3), go_(go) {}
  absl::StatusOr<int64_t> Spill(const std::string& directory, const std::string& name) override {
    go_->WaitForNotification();
    return FakeIndex::Spill(directory, name);
  }

 private:
  absl::Notification* go_;
};

// The publisher waits for the persist that makes a closed sequence durable
// (the read loop does not): until it is written, or a failure, or until the
// publisher stops.
TEST_F(PersisterTest, AwaitPersistedWaitsForThatPersistOnly) {
  auto persister = Make();
  persister->Restore(Restored(4));
  persister->Start();
  auto never = [] { return false; };
  EXPECT_TRUE(persister->AwaitPersisted(4, never).ok());  // written before the restart
  absl::Notification go;
  PersistJob job = Job(5);
  job.spills[0].second = std::make_unique<SlowIndex>(&go);
  persister->Submit(std::move(job));
  EXPECT_EQ(persister->AwaitPersisted(5, [] { return true; }).code(),
            absl::StatusCode::kCancelled);
  std::atomic<bool> returned{false};
  std::thread waiter([&] {
    EXPECT_TRUE(persister->AwaitPersisted(5, never).ok());
    returned = true;
  });
  absl::SleepFor(absl::Milliseconds(150));
  EXPECT_FALSE(returned.load());  // the spill is not written yet
  go.Notify();
  waiter.join();
  EXPECT_TRUE(returned.load());
  EXPECT_TRUE(PathExists(dir_ + "/spills/a_5.spill"));
  // A failed persist ends the wait with its error.
  persister->Submit(Job(6, absl::DataLossError("disk")));
  EXPECT_EQ(persister->AwaitPersisted(6, never), absl::DataLossError("disk"));
}

// An index that builds its segment: the file holds its row count.
class BuildingIndex : public FakeIndex {
 public:
  BuildingIndex() : FakeIndex(3) {}
  absl::StatusOr<BuiltSegment> Build(const std::vector<std::string>& spills,
                                     const SegmentBuildInfo& info,
                                     const std::string& out_path) const override {
    EXPECT_TRUE(spills.empty());
    SLUICE_RETURN_IF_ERROR(WriteFileAtomically(out_path, info.segment_id));
    BuiltSegment built;
    built.rows = 3;
    return built;
  }
};

// A direct build is written before the restore point that names it, with a
// build slot held (the worker's builds are bounded together).
TEST_F(PersisterTest, ADirectBuildIsWrittenBeforeTheRestorePoint) {
  BuildSlots slots(1);
  PersisterOptions options;
  options.task_dir = dir_;
  options.metrics = TaskMetrics::For(nullptr, "wiki");
  options.build_slots = &slots;
  Persister persister(std::move(options));
  persister.Start();
  PersistJob job = Job(1);
  PersistBuild build;
  build.name = "0_0_7.sluice";
  build.index = std::make_unique<BuildingIndex>();
  build.info.segment_id = "wiki_x";
  job.builds.push_back(std::move(build));
  {
    // Every slot taken (another task's build): the persist waits for it.
    BuildSlot taken(&slots, [] { return false; });
    persister.Submit(std::move(job));
    absl::SleepFor(absl::Milliseconds(150));
    EXPECT_FALSE(PathExists(dir_ + "/spills/0_0_7.sluice"));
    EXPECT_FALSE(PathExists(dir_ + "/restore_point.json"));
  }
  ASSERT_TRUE(persister.WaitPersisted().ok());
  EXPECT_EQ(*ReadFile(dir_ + "/spills/0_0_7.sluice"), "wiki_x");
  EXPECT_TRUE(PathExists(dir_ + "/restore_point.json"));
  EXPECT_EQ(slots.in_use(), 0);
}

// Each segment's rows in the restore point are what its spills and built
// file say they hold (not what the index said before): those of the
// restored point, plus each spill written since; a built file holds all.
TEST_F(PersisterTest, TheRestorePointCountsTheRowsEachFileSaysItHolds) {
  auto persister = Make();
  state::RestorePoint restored = Restored(1);
  state::SegmentState* a = restored.add_segments();
  a->set_sequence_id(0);
  a->set_interval_start_ms(0);
  a->add_spill_files("0_0_0.spill");
  a->set_spilled_rows(10);
  persister->Restore(restored);
  persister->Start();
  auto segment = [](PersistJob* job, int32_t sequence, int64_t start) {
    state::SegmentState* s = job->point.add_segments();
    s->set_sequence_id(sequence);
    s->set_interval_start_ms(start);
    return s;
  };
  // Persist 2: a second spill of the restored segment (rolled up to 4 of
  // its index's 6 rows) and a first one of a new segment.
  PersistJob job = Job(2);
  job.spills.clear();
  state::SegmentState* s = segment(&job, 0, 0);
  s->add_spill_files("0_0_0.spill");
  s->add_spill_files("0_0_1.spill");
  job.spills.emplace_back("0_0_1.spill", std::make_unique<FakeIndex>(6, absl::OkStatus(), 4));
  segment(&job, 0, 3600000)->add_spill_files("0_3600000_2.spill");
  job.spills.emplace_back("0_3600000_2.spill", std::make_unique<FakeIndex>(5));
  persister->Submit(std::move(job));
  ASSERT_TRUE(persister->WaitPersisted().ok());
  auto point = Persister::LoadRestorePoint(dir_ + "/restore_point.json");
  ASSERT_TRUE(point.ok() && point->has_value()) << point.status();
  ASSERT_EQ((*point)->segments_size(), 2);
  EXPECT_EQ((*point)->segments(0).spilled_rows(), 14);
  EXPECT_EQ((*point)->segments(1).spilled_rows(), 5);

  // Persist 3: nothing new for the first segment; the second one's
  // sequence closed and a third segment is built directly.
  job = Job(3);
  job.spills.clear();
  s = segment(&job, 0, 0);
  s->add_spill_files("0_0_0.spill");
  s->add_spill_files("0_0_1.spill");
  s = segment(&job, 0, 3600000);
  s->add_spill_files("0_3600000_2.spill");
  s->add_spill_files("0_3600000_3.spill");
  job.spills.emplace_back("0_3600000_3.spill", std::make_unique<FakeIndex>(2));
  segment(&job, 1, 0)->set_built_file("1_0_4.sluice");
  PersistBuild build;
  build.name = "1_0_4.sluice";
  build.index = std::make_unique<BuildingIndex>();
  build.info.segment_id = "wiki_y";
  job.builds.push_back(std::move(build));
  persister->Submit(std::move(job));
  ASSERT_TRUE(persister->WaitPersisted().ok());
  point = Persister::LoadRestorePoint(dir_ + "/restore_point.json");
  ASSERT_TRUE(point.ok() && point->has_value()) << point.status();
  ASSERT_EQ((*point)->segments_size(), 3);
  EXPECT_EQ((*point)->segments(0).spilled_rows(), 14);
  EXPECT_EQ((*point)->segments(1).spilled_rows(), 7);
  EXPECT_EQ((*point)->segments(2).spilled_rows(), 3);  // BuildingIndex's file
  EXPECT_EQ(*ReadFile(dir_ + "/spills/1_0_4.sluice"), "wiki_y");
}

}  // namespace
}  // namespace sluice::task
