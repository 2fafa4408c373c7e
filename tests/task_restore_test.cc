// Process-level restore: a real sluice-task subprocess is killed (kill -9, or
// a fault point's crash) at the crash boundaries of the task — while reading,
// after a persist, after a push before the publish, after the publish before
// the sequence file update — and restarted on the same data directory. The
// task resumes from its restore point, and in the end the published set is
// exactly the records produced: every partition's offsets covered once, with
// no gap and no overlap, every row once.
#include <gtest/gtest.h>
#include <stdlib.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/open_deep_storage.h"
#include "tests/task_fake_supervisor.h"
#include "tests/task_mock_kafka.h"
#include "tests/task_test_util.h"
#include "tests/task_worker_process.h"

namespace sluice::testing {
namespace {

using ::sluice::OffsetMap;

constexpr char kBase[] = "wiki_0011223344556677";

class TaskRestoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir("task_restore");
    ASSERT_FALSE(dir_.empty());
    auto kafka = MockKafka::Start();
    ASSERT_TRUE(kafka.ok()) << kafka.status();
    kafka_ = std::move(*kafka);
    ASSERT_TRUE(kafka_->CreateTopic("wiki", 2).ok());
    auto deep = OpenDeepStorage("file://" + dir_ + "/deep");
    ASSERT_TRUE(deep.ok());
    deep_ = std::move(*deep);
    FakeSupervisorOptions fake;
    fake.datasource = "wiki";
    fake.deep_storage = deep_.get();
    fake.auto_checkpoint = false;  // the test drives the rounds
    auto supervisor = FakeSupervisor::Start(fake);
    ASSERT_TRUE(supervisor.ok());
    supervisor_ = std::move(*supervisor);
    supervisor_->SetStoredOffsets({{0, 0}, {1, 0}});
    supervisor_->AddGroup(0, kBase, {{0, 0}, {1, 0}});
    task_id_ = std::string(kBase) + "_0000ffff";
    supervisor_->AddTask(0, task_id_);
  }

  void TearDown() override {
    worker_.Kill();
    supervisor_.reset();
    kafka_.reset();
    if (HasFailure()) std::cerr << "worker log tail:\n" << Tail(log_) << "\n";
    // SLUICE_KEEP_TEST_DIRS=1 keeps the data and logs for a look.
    if (getenv("SLUICE_KEEP_TEST_DIRS") == nullptr) {
      ASSERT_TRUE(RemoveAll(dir_).ok());
    }
  }

  // Starts the worker (with `fault_points` the first time only).
  void StartWorker(const std::string& fault_points) {
    std::vector<std::string> args = {
        "--listen=127.0.0.1:0",
        absl::StrCat("--data_dir=", dir_, "/worker"),
        absl::StrCat("--supervisor=", supervisor_->address()),
        absl::StrCat("--deep_storage=file://", dir_, "/deep"),
        "--worker_id=worker-0",
        "--heartbeat_interval_ms=100",
        "--handoff_poll_ms=50",
        "--max_batch_records=10",
        "--kafka_cluster=dev",
        "--shutdown_grace_seconds=1",
        "--insecure_no_auth",  // a crash test; auth: tests/cluster_auth_test.cc
    };
    if (!fault_points.empty()) args.push_back("--fault_points=" + fault_points);
    auto address = worker_.Start(SluiceTaskBinary(), args, log_);
    ASSERT_TRUE(address.ok()) << address.status();
    if (client_ == nullptr) {
      client_ = std::make_unique<TaskClient>(*address);
    } else {
      client_->Connect(*address);
    }
    ++starts_;
  }

  // Restarts the worker if it died; records how it died.
  void RestartIfDead() {
    if (worker_.Running()) return;
    exits_.push_back(worker_.exit_code());
    StartWorker("");
  }

  void Produce(int64_t per_partition) {
    for (int32_t p = 0; p < 2; ++p) {
      std::vector<std::string> values;
      std::vector<std::string>& all = produced_[p];
      for (int64_t i = 0; i < per_partition; ++i) {
        values.push_back(Record(p, static_cast<int64_t>(all.size())));
        all.push_back(values.back());
      }
      ASSERT_TRUE(kafka_->Produce("wiki", p, values).ok());
    }
  }

  OffsetMap ProducedEnd() const {
    OffsetMap end;
    for (const auto& [p, values] : produced_) end[p] = static_cast<int64_t>(values.size());
    return end;
  }

  // Waits until the task read everything produced, restarting a dead worker.
  void WaitUntilReadAll() {
    const OffsetMap want = ProducedEnd();
    OffsetMap seen;
    const bool done = WaitFor(
        [&] {
          RestartIfDead();
          auto status = client_->Status(task_id_);
          if (!status.ok()) return false;
          EXPECT_NE(status->state(), v1::TASK_STATE_FAILED) << status->error();
          seen = FromProto(status->current_offsets());
          return seen == want;
        },
        absl::Seconds(40));
    ASSERT_TRUE(done) << "read " << FormatOffsets(seen) << ", want "
                      << FormatOffsets(want);
  }

  // Pause + SetEndOffsets at the paused offsets, as a supervisor round would,
  // retried across worker restarts.
  void Round(bool finish) {
    absl::Status last;
    const bool done = WaitFor(
        [&] {
          RestartIfDead();
          auto paused = client_->Pause(task_id_);
          if (!paused.ok()) {
            last = paused.status();
            return false;
          }
          auto set = client_->SetEndOffsets(task_id_, *paused, finish);
          last = set.status();
          return set.ok();
        },
        absl::Seconds(40));
    ASSERT_TRUE(done) << last;
  }

  v1::TaskStatus WaitUntilSuccess() {
    v1::TaskStatus last;
    const bool done = WaitFor(
        [&] {
          RestartIfDead();
          auto status = client_->Status(task_id_);
          if (status.ok()) last = *status;
          return status.ok() && (last.state() == v1::TASK_STATE_SUCCESS || last.state() == v1::TASK_STATE_FAILED);
        },
        absl::Seconds(40));
    EXPECT_TRUE(done) << last.DebugString();
    return last;
  }

  // The whole life of the task: three waves of records with a checkpoint
  // after each, then finish; crashes happen wherever `fault_points` says.
  void RunScenario(const std::string& fault_points, bool kill_while_reading) {
    SpecOptions spec;
    spec.task_id = task_id_;
    spec.base_sequence_name = kBase;
    spec.bootstrap = kafka_->bootstrap();
    spec.start = {{0, 0}, {1, 0}};
    spec.max_rows_in_memory = 15;
    Produce(60);
    StartWorker(fault_points);
    auto run = client_->RunTask(MakeSpec(spec));
    ASSERT_TRUE(run.ok()) << run.status();
    if (kill_while_reading) {
      ASSERT_TRUE(WaitFor(
          [&] {
            auto status = client_->Status(task_id_);
            return status.ok() && status->row_stats().processed() > 0;
          },
          absl::Seconds(20)));
      worker_.Kill();
    }
    for (int wave = 0; wave < 3; ++wave) {
      WaitUntilReadAll();
      Round(/*finish=*/false);
      Produce(40);
    }
    WaitUntilReadAll();
    Round(/*finish=*/true);
    const v1::TaskStatus final_status = WaitUntilSuccess();
    ASSERT_EQ(final_status.state(), v1::TASK_STATE_SUCCESS) << final_status.error();
    const absl::Status verified = VerifyExactlyOnce(*supervisor_, deep_.get(), kBase, produced_,
                                                    {{0, 0}, {1, 0}}, ProducedEnd());
    EXPECT_TRUE(verified.ok()) << verified;
    EXPECT_EQ(final_status.row_stats().processed(), 2 * (60 + 3 * 40));
  }

  std::string dir_;
  std::string log_ = "";
  std::unique_ptr<MockKafka> kafka_;
  std::unique_ptr<DeepStorage> deep_;
  std::unique_ptr<FakeSupervisor> supervisor_;
  WorkerProcess worker_;
  std::unique_ptr<TaskClient> client_;
  std::string task_id_;
  Produced produced_;
  int starts_ = 0;
  std::vector<int> exits_;
};

constexpr int kCrashExit = 86;  // common/fault_injection.h

TEST_F(TaskRestoreTest, CrashWhileReading) {
  log_ = dir_ + "/worker.log";
  RunScenario("task.while_reading=crash@4", false);
  EXPECT_EQ(exits_, std::vector<int>{kCrashExit});
}

TEST_F(TaskRestoreTest, CrashAfterAPersist) {
  log_ = dir_ + "/worker.log";
  RunScenario("task.after_persist=crash@3", false);
  EXPECT_EQ(exits_, std::vector<int>{kCrashExit});
}

TEST_F(TaskRestoreTest, CrashAfterAPushBeforeThePublish) {
  log_ = dir_ + "/worker.log";
  RunScenario("task.after_push=crash", false);
  EXPECT_EQ(exits_, std::vector<int>{kCrashExit});
  // The copy pushed before the crash stays (its publish outcome was never
  // asked); the restarted task pushed under the next unique key.
  bool second_attempt = false;
  for (const v1::SegmentDescriptor& d : supervisor_->Segments()) {
    second_attempt = second_attempt || absl::EndsWith(d.path(), "_1.sluice");
  }
  EXPECT_TRUE(second_attempt);
}

TEST_F(TaskRestoreTest, CrashAfterThePublishBeforeTheSequenceFileUpdate) {
  log_ = dir_ + "/worker.log";
  RunScenario("task.after_publish=crash", false);
  EXPECT_EQ(exits_, std::vector<int>{kCrashExit});
  // The restarted task found the sequence committed and did not publish it
  // again: every publish call committed.
  EXPECT_EQ(supervisor_->publish_calls(), static_cast<int>(supervisor_->CommitLog().size()));
  EXPECT_EQ(supervisor_->publish_aborted(), 0);
}

TEST_F(TaskRestoreTest, KillNineWhileReading) {
  log_ = dir_ + "/worker.log";
  RunScenario("", true);
  EXPECT_EQ(exits_, std::vector<int>{-9});
}

// A schemaless datasource keeps its bound of 8192 discovered dimensions per
// segment across a kill -9: the restarted task counts the names already in
// the segment's spills, so a record bringing one more is a VALUE_TOO_LARGE
// parse error after the restart as before it, and the segment publishes.
TEST_F(TaskRestoreTest, KillNineKeepsTheDiscoveredDimensionBound) {
  log_ = dir_ + "/worker.log";
  auto wide = [](int64_t n, int first, int count) {
    std::string value = absl::StrCat(R"({"timestamp":)", kBaseTimeMs + n * 1000);
    for (int i = first; i < first + count; ++i) absl::StrAppend(&value, ",\"f", i, "\":\"v\"");
    return value + "}";
  };
  std::vector<std::string> values;
  for (int r = 0; r < 8; ++r) values.push_back(wide(r, r * 1024, 1024));  // 8192 names
  ASSERT_TRUE(kafka_->Produce("wiki", 0, values).ok());
  produced_[0] = values;
  produced_[1] = {};
  SpecOptions spec;
  spec.task_id = task_id_;
  spec.base_sequence_name = kBase;
  spec.bootstrap = kafka_->bootstrap();
  spec.start = {{0, 0}, {1, 0}};
  spec.max_rows_in_memory = 3;  // persists at 3 and 6 rows
  StartWorker("");
  ASSERT_TRUE(client_->RunTask(MakeSpec(spec)).ok());
  ASSERT_TRUE(WaitFor(
      [&] {
        auto status = client_->Status(task_id_);
        return status.ok() && status->row_stats().persists() >= 2 &&
               FromProto(status->current_offsets()) == ProducedEnd();
      },
      absl::Seconds(20)));
  worker_.Kill();
  const std::vector<std::string> after = {wide(8, 8192, 1),  // one name more: refused
                                          wide(9, 0, 3)};    // known names
  ASSERT_TRUE(kafka_->Produce("wiki", 0, after).ok());
  produced_[0].insert(produced_[0].end(), after.begin(), after.end());
  WaitUntilReadAll();  // restarts the worker
  EXPECT_EQ(exits_, std::vector<int>{-9});
  auto status = client_->Status(task_id_);
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_EQ(status->row_stats().unparseable(), 1);
  ASSERT_EQ(status->recent_parse_errors_size(), 1);
  EXPECT_EQ(status->recent_parse_errors(0).offset(), 8);
  EXPECT_EQ(status->recent_parse_errors(0).kind(), "VALUE_TOO_LARGE");
  Round(/*finish=*/true);
  const v1::TaskStatus final_status = WaitUntilSuccess();
  ASSERT_EQ(final_status.state(), v1::TASK_STATE_SUCCESS) << final_status.error();
  const auto log = supervisor_->CommitLog();
  ASSERT_EQ(log.size(), 1u);
  int64_t rows = 0, unparseable = 0;
  for (const auto& stats : log[0].partition_stats()) {
    rows += stats.rows();
    unparseable += stats.unparseable();
  }
  EXPECT_EQ(rows, 9);
  EXPECT_EQ(unparseable, 1);
}

}  // namespace
}  // namespace sluice::testing
