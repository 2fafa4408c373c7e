#include "task/persister.h"

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "task/task_files.h"

namespace sluice::task {
namespace {

// Spills write their row count to the file.
class FakeIndex : public SegmentIndex {
 public:
  explicit FakeIndex(int64_t rows, absl::Status spill_error = absl::OkStatus())
      : rows_(rows), spill_error_(std::move(spill_error)) {}
  absl::Status Add(const ParsedRow&, int32_t, int64_t) override { return absl::OkStatus(); }
  int64_t rows() const override { return rows_; }
  int64_t estimated_bytes() const override { return 0; }
  absl::StatusOr<int64_t> Spill(const std::string& path) override {
    if (!spill_error_.ok()) return spill_error_;
    const absl::Status written = WriteFileAtomically(path, std::to_string(rows_));
    if (!written.ok()) return written;
    return rows_;
  }

 private:
  int64_t rows_;
  absl::Status spill_error_;
};

class PersisterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = absl::StrCat(::testing::TempDir(), "/persister_test_",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    ASSERT_TRUE(RemoveAll(dir_).ok());
    ASSERT_TRUE(MakeDirs(dir_).ok());
  }
  std::unique_ptr<Persister> Make() {
    PersisterOptions options;
    options.restore_point_path = dir_ + "/restore_point.json";
    options.metrics = TaskMetrics::For(nullptr, "wiki");
    options.log_prefix = "[task t1]";
    return std::make_unique<Persister>(std::move(options));
  }
  PersistJob Job(int64_t persists, absl::Status spill_error = absl::OkStatus()) {
    PersistJob job;
    job.started = absl::Now();
    job.spills.emplace_back(absl::StrCat(dir_, "/a_", persists, ".spill"),
                            std::make_unique<FakeIndex>(3, spill_error));
    (*job.point.mutable_current_offsets())[0] = 10 * persists;
    job.point.mutable_counters()->set_persists(persists);
    job.point.set_next_spill_number(persists);
    return job;
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
  EXPECT_EQ(*ReadFile(dir_ + "/a_1.spill"), "3");
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
  persister->set_persists_written(5);  // restored
  persister->Start();
  persister->Submit(Job(6, absl::DataLossError("disk")));
  EXPECT_EQ(persister->WaitPersisted(), absl::DataLossError("disk"));
  EXPECT_EQ(persister->failure(), absl::DataLossError("disk"));
  EXPECT_FALSE(PathExists(dir_ + "/restore_point.json"));
  EXPECT_EQ(persister->persists_written(), 5);
  persister->Submit(Job(7, absl::InternalError("later")));
  EXPECT_EQ(persister->WaitPersisted(), absl::DataLossError("disk"));
}

}  // namespace
}  // namespace sluice::task
