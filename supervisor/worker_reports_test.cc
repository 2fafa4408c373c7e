#include "supervisor/worker_reports.h"

#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "supervisor/testing/test_util.h"

namespace sluice::supervisor {
namespace {

v1::TaskStatus Status(const std::string& id, v1::TaskState state) {
  v1::TaskStatus status;
  status.set_task_id(id);
  status.set_state(state);
  return status;
}

class WorkerReportsTest : public ::testing::Test {
 protected:
  WorkerReportsTest()
      : store_(testing::OpenTestStore(dir_.path())),
        registry_({&clock_, absl::Seconds(1), 3, absl::Seconds(10)}) {
    WorkerReportsOptions options;
    options.store = store_.get();
    options.clock = &clock_;
    options.registry = &registry_;
    options.instance_id = "instance-1";
    options.heartbeat_interval = absl::Seconds(1);
    options.forward = [this](const std::string& ds, const v1::TaskStatus& status) {
      forwarded_.emplace_back(ds, status);
    };
    options.run_all = [this] { ++runs_; };
    reports_ = std::make_unique<WorkerReports>(std::move(options));
    EXPECT_TRUE(store_
                    ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                      return txn.InsertSpec("ds", testing::TestSpec("ds"), false, clock_.NowMs())
                          .status();
                    })
                    .ok());
  }

  void AddTask(const std::string& id, const std::string& worker, v1::TaskState state) {
    TaskRecord record;
    record.task_id = id;
    record.datasource = "ds";
    record.base_sequence_name = "base";
    record.worker_id = worker;
    record.state = state;
    EXPECT_TRUE(store_->InTransaction([&](StoreTxn& txn) { return txn.InsertTask(record); }).ok());
  }
  v1::TaskState StoredState(const std::string& id) {
    v1::TaskState state = v1::TASK_STATE_UNSPECIFIED;
    EXPECT_TRUE(store_
                    ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                      auto task = txn.GetTask(id);
                      if (!task.ok()) return task.status();
                      if (*task) state = (*task)->state;
                      return absl::OkStatus();
                    })
                    .ok());
    return state;
  }
  absl::Status Register(const std::string& worker) {
    v1::RegisterWorkerRequest request;
    request.mutable_worker()->set_worker_id(worker);
    request.mutable_worker()->set_address("127.0.0.1:7001");
    request.mutable_worker()->set_capacity(2);
    auto response = reports_->RegisterWorker(request, auth::Caller::Anonymous());
    if (response.ok()) {
      EXPECT_EQ(response->heartbeat_interval_ms(), 1000);
      EXPECT_EQ(response->supervisor_instance_id(), "instance-1");
    }
    return response.status();
  }

  testing::TempDir dir_;
  FakeClock clock_;
  std::unique_ptr<MetadataStore> store_;
  WorkerRegistry registry_;
  std::vector<std::pair<std::string, v1::TaskStatus>> forwarded_;
  int runs_ = 0;
  std::unique_ptr<WorkerReports> reports_;
};

TEST_F(WorkerReportsTest, RegistrationRecordsTheWorkerAndWakesTheSupervisors) {
  ASSERT_TRUE(Register("w1").ok());
  EXPECT_TRUE(registry_.IsAlive("w1"));
  EXPECT_EQ(runs_, 1);
  std::vector<WorkerRecord> workers;
  ASSERT_TRUE(store_
                  ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                    auto got = txn.ListWorkerRecords();
                    if (!got.ok()) return got.status();
                    workers = *got;
                    return absl::OkStatus();
                  })
                  .ok());
  ASSERT_EQ(workers.size(), 1u);
  EXPECT_EQ(workers[0].worker_id, "w1");
  EXPECT_EQ(workers[0].address, "127.0.0.1:7001");
}

TEST_F(WorkerReportsTest, StateChangesArePersistedAndForwarded) {
  AddTask("t1", "w1", v1::TASK_STATE_NOT_STARTED);
  EXPECT_FALSE(reports_->OnTaskStatus(Status("t1", v1::TASK_STATE_READING), "w1"));
  EXPECT_EQ(StoredState("t1"), v1::TASK_STATE_READING);
  ASSERT_EQ(forwarded_.size(), 1u);
  EXPECT_EQ(forwarded_[0].first, "ds");
  EXPECT_EQ(forwarded_[0].second.state(), v1::TASK_STATE_READING);
  ASSERT_TRUE(reports_->Latest("t1").has_value());
  EXPECT_EQ(reports_->Latest("t1")->state(), v1::TASK_STATE_READING);
}

TEST_F(WorkerReportsTest, UnwantedTasks) {
  // Unknown and still running: the worker should stop it.
  EXPECT_TRUE(reports_->OnTaskStatus(Status("ghost", v1::TASK_STATE_READING), "w1"));
  EXPECT_FALSE(reports_->OnTaskStatus(Status("ghost", v1::TASK_STATE_SUCCESS), "w1"));
  // Ended by the supervisor, still running on the worker.
  AddTask("killed", "w1", v1::TASK_STATE_FAILED);
  EXPECT_TRUE(reports_->OnTaskStatus(Status("killed", v1::TASK_STATE_READING), "w1"));
  EXPECT_EQ(StoredState("killed"), v1::TASK_STATE_FAILED);
  // Another worker's task: ignored, not recorded, not forwarded.
  AddTask("theirs", "w2", v1::TASK_STATE_READING);
  EXPECT_TRUE(reports_->OnTaskStatus(Status("theirs", v1::TASK_STATE_FAILED), "w1"));
  EXPECT_EQ(StoredState("theirs"), v1::TASK_STATE_READING);
  EXPECT_FALSE(reports_->Latest("theirs").has_value());
  EXPECT_TRUE(forwarded_.empty());
}

// A worker can name any number of task ids the supervisor never assigned:
// none of their statuses is kept (the supervisor's memory does not grow by
// what a worker sends), whichever way they arrive.
TEST_F(WorkerReportsTest, StatusesOfUnknownTasksAreNotKept) {
  ASSERT_TRUE(Register("w1").ok());
  v1::WorkerHeartbeatRequest beat;
  beat.set_worker_id("w1");
  for (int i = 0; i < 100; ++i) {
    *beat.add_tasks() = Status(absl::StrCat("ghost_", i), v1::TASK_STATE_READING);
    *beat.add_tasks() = Status(absl::StrCat("ended_ghost_", i), v1::TASK_STATE_SUCCESS);
  }
  auto answer = reports_->Heartbeat(beat, auth::Caller::Anonymous());
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->stop_task_ids_size(), 100);
  v1::ReportTaskStatusRequest report;
  report.set_worker_id("w1");
  *report.mutable_status() = Status("reported_ghost", v1::TASK_STATE_FAILED);
  EXPECT_TRUE(reports_->ReportTaskStatus(report, auth::Caller::Anonymous()).ok());
  for (int i = 0; i < 100; ++i) {
    EXPECT_FALSE(reports_->Latest(absl::StrCat("ghost_", i)).has_value());
    EXPECT_FALSE(reports_->Latest(absl::StrCat("ended_ghost_", i)).has_value());
  }
  EXPECT_FALSE(reports_->Latest("reported_ghost").has_value());
  EXPECT_TRUE(forwarded_.empty());
  // A task the supervisor assigned is still kept.
  AddTask("mine", "w1", v1::TASK_STATE_READING);
  reports_->OnTaskStatus(Status("mine", v1::TASK_STATE_READING), "w1");
  EXPECT_TRUE(reports_->Latest("mine").has_value());
}

TEST_F(WorkerReportsTest, HeartbeatNamesTheTasksToStop) {
  ASSERT_TRUE(Register("w1").ok());
  AddTask("mine", "w1", v1::TASK_STATE_READING);
  v1::WorkerHeartbeatRequest request;
  request.set_worker_id("w1");
  *request.add_tasks() = Status("mine", v1::TASK_STATE_READING);
  *request.add_tasks() = Status("ghost", v1::TASK_STATE_READING);
  *request.add_tasks() = Status("done", v1::TASK_STATE_SUCCESS);
  auto response = reports_->Heartbeat(request, auth::Caller::Anonymous());
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->supervisor_instance_id(), "instance-1");
  ASSERT_EQ(response->stop_task_ids_size(), 1);
  EXPECT_EQ(response->stop_task_ids(0), "ghost");
}

// One heartbeat speaks for many tasks in one store transaction: state
// changes of its own tasks are stored, another worker's task is ignored and
// named to stop, unknown running ones too.
TEST_F(WorkerReportsTest, AHeartbeatOfManyTasksIsOneReport) {
  ASSERT_TRUE(Register("w1").ok());
  AddTask("a", "w1", v1::TASK_STATE_READING);
  AddTask("b", "w1", v1::TASK_STATE_READING);
  AddTask("theirs", "w2", v1::TASK_STATE_READING);
  v1::WorkerHeartbeatRequest request;
  request.set_worker_id("w1");
  *request.add_tasks() = Status("a", v1::TASK_STATE_PUBLISHING);
  *request.add_tasks() = Status("theirs", v1::TASK_STATE_FAILED);
  *request.add_tasks() = Status("b", v1::TASK_STATE_SUCCESS);
  for (int i = 0; i < 50; ++i) {
    *request.add_tasks() = Status(absl::StrCat("ghost-", i), v1::TASK_STATE_READING);
  }
  auto response = reports_->Heartbeat(request, auth::Caller::Anonymous());
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(StoredState("a"), v1::TASK_STATE_PUBLISHING);
  EXPECT_EQ(StoredState("b"), v1::TASK_STATE_SUCCESS);
  EXPECT_EQ(StoredState("theirs"), v1::TASK_STATE_READING);
  EXPECT_EQ(response->stop_task_ids_size(), 50);
  EXPECT_FALSE(reports_->Latest("ghost-0").has_value());
}

// A report listing more tasks than any worker keeps is refused before the
// store is read: a peer cannot make the supervisor do unbounded work.
TEST_F(WorkerReportsTest, AReportOfTooManyTasksIsRefused) {
  ASSERT_TRUE(Register("w1").ok());
  v1::WorkerHeartbeatRequest beat;
  beat.set_worker_id("w1");
  for (int i = 0; i <= WorkerReports::kMaxReportedTasks; ++i) {
    *beat.add_tasks() = Status(absl::StrCat("t", i), v1::TASK_STATE_SUCCESS);
  }
  auto answer = reports_->Heartbeat(beat, auth::Caller::Anonymous());
  EXPECT_EQ(answer.status().code(), absl::StatusCode::kInvalidArgument) << answer.status();
  EXPECT_TRUE(absl::StrContains(answer.status().message(), "1025 tasks, more than the limit of 1024"))
      << answer.status();

  v1::RegisterWorkerRequest registration;
  registration.mutable_worker()->set_worker_id("w9");
  registration.mutable_worker()->set_address("127.0.0.1:7009");
  registration.mutable_worker()->set_capacity(2);
  *registration.mutable_tasks() = beat.tasks();
  EXPECT_EQ(reports_->RegisterWorker(registration, auth::Caller::Anonymous()).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(runs_, 1);  // only w1's registration woke the supervisors

  beat.mutable_tasks()->RemoveLast();
  EXPECT_TRUE(reports_->Heartbeat(beat, auth::Caller::Anonymous()).ok());
}

TEST_F(WorkerReportsTest, ReportsSpeakOnlyForTheWorkersOwnTasks) {
  AddTask("t1", "w2", v1::TASK_STATE_READING);
  v1::ReportTaskStatusRequest request;
  request.set_worker_id("w1");
  *request.mutable_status() = Status("t1", v1::TASK_STATE_FAILED);
  EXPECT_EQ(reports_->ReportTaskStatus(request, auth::Caller::Anonymous()).code(),
            absl::StatusCode::kPermissionDenied);
  request.mutable_status()->set_worker_id("w3");
  EXPECT_EQ(reports_->ReportTaskStatus(request, auth::Caller::Anonymous()).code(),
            absl::StatusCode::kPermissionDenied);
  request.set_worker_id("w2");
  request.mutable_status()->set_worker_id("w2");
  EXPECT_TRUE(reports_->ReportTaskStatus(request, auth::Caller::Anonymous()).ok());
  EXPECT_EQ(StoredState("t1"), v1::TASK_STATE_FAILED);
}

TEST_F(WorkerReportsTest, OldEndedReportsAreForgotten) {
  AddTask("old", "w1", v1::TASK_STATE_READING);
  AddTask("recent", "w1", v1::TASK_STATE_READING);
  v1::TaskStatus old = Status("old", v1::TASK_STATE_SUCCESS);
  old.set_end_time_ms(clock_.NowMs());
  reports_->OnTaskStatus(old, "w1");
  clock_.Advance(absl::Minutes(61));
  v1::TaskStatus recent = Status("recent", v1::TASK_STATE_SUCCESS);
  recent.set_end_time_ms(clock_.NowMs());
  reports_->OnTaskStatus(recent, "w1");
  reports_->ForgetOld();
  EXPECT_FALSE(reports_->Latest("old").has_value());
  EXPECT_TRUE(reports_->Latest("recent").has_value());
}

}  // namespace
}  // namespace sluice::supervisor
