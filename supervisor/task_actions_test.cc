#include "supervisor/task_actions.h"

#include <gtest/gtest.h>

#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "supervisor/naming.h"
#include "supervisor/testing/test_util.h"

namespace sluice::supervisor {
namespace {

// A scripted TaskClient that records the calls it gets.
class RecordingTaskClient : public TaskClient {
 public:
  struct Stop {
    std::string address;
    std::string task_id;
    v1::StopMode mode;
    std::string reason;
  };

  absl::StatusOr<v1::RunTaskResponse> RunTask(const std::string& address,
                                              const v1::TaskSpec& spec) override {
    absl::MutexLock lock(&mu_);
    runs_.push_back({address, spec});
    if (!run_error_.ok()) return run_error_;
    v1::RunTaskResponse response;
    response.mutable_status()->set_task_id(spec.task_id());
    response.mutable_status()->set_state(v1::TASK_STATE_READING);
    return response;
  }
  absl::StatusOr<v1::TaskStatus> StopTask(const std::string& address, const std::string& task_id,
                                          v1::StopMode mode, const std::string& reason) override {
    absl::MutexLock lock(&mu_);
    stops_.push_back({address, task_id, mode, reason});
    return v1::TaskStatus();
  }
  absl::StatusOr<v1::PauseResponse> Pause(const std::string&, const std::string&) override {
    return absl::UnimplementedError("not scripted");
  }
  absl::Status Resume(const std::string&, const std::string&) override {
    return absl::UnimplementedError("not scripted");
  }
  absl::StatusOr<v1::SetEndOffsetsResponse> SetEndOffsets(const std::string&, const std::string&,
                                                          const OffsetMap&, bool) override {
    return absl::UnimplementedError("not scripted");
  }
  absl::StatusOr<OffsetMap> GetCurrentOffsets(const std::string&, const std::string&) override {
    return absl::UnimplementedError("not scripted");
  }
  absl::StatusOr<OffsetMap> GetEndOffsets(const std::string&, const std::string&) override {
    return absl::UnimplementedError("not scripted");
  }
  absl::StatusOr<std::vector<v1::Checkpoint>> GetCheckpoints(const std::string&,
                                                             const std::string&) override {
    return absl::UnimplementedError("not scripted");
  }
  absl::StatusOr<v1::TaskStatus> GetTaskStatus(const std::string&, const std::string&) override {
    return absl::UnimplementedError("not scripted");
  }
  absl::StatusOr<std::vector<v1::TaskStatus>> ListTasks(const std::string&,
                                                        const std::string&) override {
    return absl::UnimplementedError("not scripted");
  }

  std::vector<Stop> stops() {
    absl::MutexLock lock(&mu_);
    return stops_;
  }
  std::vector<std::pair<std::string, v1::TaskSpec>> runs() {
    absl::MutexLock lock(&mu_);
    return runs_;
  }
  void SetRunError(absl::Status error) {
    absl::MutexLock lock(&mu_);
    run_error_ = std::move(error);
  }

 private:
  absl::Mutex mu_;
  std::vector<Stop> stops_ ABSL_GUARDED_BY(mu_);
  std::vector<std::pair<std::string, v1::TaskSpec>> runs_ ABSL_GUARDED_BY(mu_);
  absl::Status run_error_ ABSL_GUARDED_BY(mu_);
};

v1::WorkerInfo Worker(const std::string& id, int port) {
  v1::WorkerInfo info;
  info.set_worker_id(id);
  info.set_address("127.0.0.1:" + std::to_string(port));
  info.set_capacity(4);
  return info;
}

class TaskActionsTest : public ::testing::Test {
 protected:
  TaskActionsTest()
      : store_(testing::OpenTestStore(dir_.path())),
        registry_({&clock_, absl::Seconds(1), 3, absl::Seconds(10)}),
        pool_({.threads = 1, .name = "test task rpcs"}) {
    TaskActionsOptions deps;
    deps.datasource = "ds";
    deps.registry = &registry_;
    deps.store = store_.get();
    deps.clock = &clock_;
    deps.client = &client_;
    deps.run_client = &run_client_;
    deps.task_rpcs = &pool_;
    deps.record_error = [this](const absl::Status& status) { errors_.push_back(status); };
    deps.note_outcome = [this](v1::TaskState state) { outcomes_.push_back(state); };
    actions_ = std::make_unique<TaskActions>(std::move(deps));
    spec_ = testing::TestSpec("ds");
    EXPECT_TRUE(registry_.Register(Worker("w1", 7001), {}).ok());
    EXPECT_TRUE(registry_.Register(Worker("w2", 7002), {}).ok());
    EXPECT_TRUE(store_
                    ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                      return txn.InsertSpec("ds", spec_, false, clock_.NowMs()).status();
                    })
                    .ok());
    group_.group_id = 0;
    group_.base_sequence_name = "base";
    group_.start_offsets = {{0, 10}};
    group_.checkpoints = {{0, {{0, 10}}}, {1, {{0, 25}}}};
    TaskGroupRecord record;
    record.base_sequence_name = "base";
    record.datasource = "ds";
    record.start_offsets = group_.start_offsets;
    record.checkpoints = group_.checkpoints;
    EXPECT_TRUE(store_->InTransaction([&](StoreTxn& txn) { return txn.InsertTaskGroup(record); })
                    .ok());
  }

  // A task of group_ recorded in the store and assigned to `worker`.
  TaskInfo& AddTask(const std::string& id, const std::string& worker,
                    v1::TaskState state = v1::TASK_STATE_READING) {
    TaskRecord record;
    record.task_id = id;
    record.datasource = "ds";
    record.base_sequence_name = "base";
    record.worker_id = worker;
    record.state = state;
    EXPECT_TRUE(store_->InTransaction([&](StoreTxn& txn) { return txn.InsertTask(record); }).ok());
    registry_.Assign(id, worker);
    TaskInfo& task = group_.tasks[id];
    task.task_id = id;
    task.worker_id = worker;
    task.state = state;
    return task;
  }

  std::optional<TaskRecord> Stored(const std::string& id) {
    std::optional<TaskRecord> record;
    EXPECT_TRUE(store_
                    ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                      auto got = txn.GetTask(id);
                      if (!got.ok()) return got.status();
                      record = *got;
                      return absl::OkStatus();
                    })
                    .ok());
    return record;
  }

  std::vector<std::string> LiveGroups() {
    std::vector<std::string> names;
    EXPECT_TRUE(store_
                    ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                      auto groups = txn.LiveTaskGroups("ds");
                      if (!groups.ok()) return groups.status();
                      for (const auto& g : *groups) names.push_back(g.base_sequence_name);
                      return absl::OkStatus();
                    })
                    .ok());
    return names;
  }

  testing::TempDir dir_;
  FakeClock clock_;
  std::unique_ptr<MetadataStore> store_;
  WorkerRegistry registry_;
  RecordingTaskClient client_;
  RecordingTaskClient run_client_;
  StrandExecutor pool_;
  std::vector<absl::Status> errors_;
  std::vector<v1::TaskState> outcomes_;
  v1::SupervisorSpec spec_;
  Group group_;
  std::unique_ptr<TaskActions> actions_;
};

TEST(BuildTaskSpecTest, CopiesTheInputFormatAndTheHeaderFilter) {
  v1::SupervisorSpec supervisor_spec;
  supervisor_spec.mutable_io_config()->set_topic("events");
  Group group;
  group.group_id = 0;
  group.base_sequence_name = "wiki_0";
  v1::TaskSpec plain =
      BuildTaskSpec("wiki", "wiki_0_a", supervisor_spec, SpecTimings(), group, {}, 0);
  EXPECT_FALSE(plain.has_input_format());
  EXPECT_FALSE(plain.has_header_based_filter_config());
  supervisor_spec.mutable_io_config()->mutable_input_format()->set_type("kafka");
  supervisor_spec.mutable_io_config()->mutable_input_format()->set_key_column_name("k");
  auto* filter = supervisor_spec.mutable_io_config()->mutable_header_based_filter_config();
  filter->mutable_filter()->set_type("selector");
  filter->mutable_filter()->set_dimension("env");
  v1::TaskSpec spec = BuildTaskSpec("wiki", "wiki_0_a", supervisor_spec, SpecTimings(), group, {}, 0);
  EXPECT_EQ(spec.input_format().key_column_name(), "k");
  EXPECT_EQ(spec.header_based_filter_config().filter().dimension(), "env");
}

TEST_F(TaskActionsTest, WinnerIsTheFirstSucceededTask) {
  Group group;
  EXPECT_EQ(WinnerOf(group), nullptr);
  group.tasks["b"].state = v1::TASK_STATE_SUCCESS;
  group.tasks["b"].task_id = "b";
  group.tasks["a"].state = v1::TASK_STATE_READING;
  group.tasks["c"].state = v1::TASK_STATE_SUCCESS;
  group.tasks["c"].task_id = "c";
  ASSERT_NE(WinnerOf(group), nullptr);
  EXPECT_EQ(WinnerOf(group)->task_id, "b");
  group.tasks["b"].state = v1::TASK_STATE_FAILED;
  EXPECT_EQ(WinnerOf(group)->task_id, "c");
}

TEST_F(TaskActionsTest, KillTellsTheWorkerAndRecordsTheFailure) {
  TaskInfo& task = AddTask("t1", "w1");
  actions_->KillTask(task, "testing");
  ASSERT_EQ(client_.stops().size(), 1u);
  EXPECT_EQ(client_.stops()[0].address, "127.0.0.1:7001");
  EXPECT_EQ(client_.stops()[0].task_id, "t1");
  EXPECT_EQ(client_.stops()[0].mode, v1::STOP_MODE_KILL);
  EXPECT_EQ(client_.stops()[0].reason, "testing");
  EXPECT_EQ(task.state, v1::TASK_STATE_FAILED);
  EXPECT_EQ(task.status.error(), "killed by supervisor: testing");
  EXPECT_EQ(outcomes_, std::vector<v1::TaskState>{v1::TASK_STATE_FAILED});
  std::optional<TaskRecord> stored = Stored("t1");
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->state, v1::TASK_STATE_FAILED);
  EXPECT_EQ(stored->error, "killed by supervisor: testing");
}

TEST_F(TaskActionsTest, AStartingTaskIsKilledWithoutACall) {
  TaskInfo& task = AddTask("t1", "w1");
  task.starting = true;
  actions_->KillTask(task, "frozen worker");
  EXPECT_TRUE(client_.stops().empty());
  EXPECT_EQ(task.state, v1::TASK_STATE_FAILED);
  EXPECT_EQ(Stored("t1")->state, v1::TASK_STATE_FAILED);
}

TEST_F(TaskActionsTest, GracefulStopRecordsStopped) {
  TaskInfo& task = AddTask("t1", "w2");
  actions_->StopTaskGracefully(task, "done");
  ASSERT_EQ(client_.stops().size(), 1u);
  EXPECT_EQ(client_.stops()[0].mode, v1::STOP_MODE_GRACEFUL);
  EXPECT_EQ(client_.stops()[0].address, "127.0.0.1:7002");
  EXPECT_EQ(task.state, v1::TASK_STATE_STOPPED);
  EXPECT_TRUE(outcomes_.empty());  // not an outcome
  EXPECT_EQ(Stored("t1")->state, v1::TASK_STATE_STOPPED);
  EXPECT_EQ(Stored("t1")->error, "stopped: done");
}

TEST_F(TaskActionsTest, KillGroupKillsOnlyLiveTasks) {
  AddTask("t1", "w1");
  AddTask("t2", "w2", v1::TASK_STATE_SUCCESS);
  actions_->KillGroup(group_, "reset");
  ASSERT_EQ(client_.stops().size(), 1u);
  EXPECT_EQ(client_.stops()[0].task_id, "t1");
  EXPECT_EQ(group_.tasks["t1"].state, v1::TASK_STATE_FAILED);
  EXPECT_EQ(group_.tasks["t2"].state, v1::TASK_STATE_SUCCESS);
}

TEST_F(TaskActionsTest, WonGroupStopsTheOtherReplicasAndEndsDone) {
  AddTask("a", "w1", v1::TASK_STATE_SUCCESS);
  AddTask("b", "w2");
  ASSERT_EQ(LiveGroups(), std::vector<std::string>{"base"});
  actions_->FinishWonGroup(group_, "a", "group 0 ended");
  ASSERT_EQ(client_.stops().size(), 1u);
  EXPECT_EQ(client_.stops()[0].task_id, "b");
  EXPECT_EQ(client_.stops()[0].mode, v1::STOP_MODE_GRACEFUL);
  EXPECT_EQ(client_.stops()[0].reason, "replica a succeeded");
  EXPECT_EQ(group_.tasks["b"].state, v1::TASK_STATE_STOPPED);
  EXPECT_EQ(group_.tasks["a"].state, v1::TASK_STATE_SUCCESS);
  EXPECT_TRUE(LiveGroups().empty());
  EXPECT_TRUE(errors_.empty());
}

TEST_F(TaskActionsTest, FinishGroupReportsAStoreFailure) {
  Group unknown;
  unknown.base_sequence_name = "never recorded";
  actions_->FinishGroup(unknown, GroupState::kReading, "no-op");
  EXPECT_TRUE(errors_.empty());
  actions_->FinishGroup(group_, GroupState::kAbandoned, "gone");
  EXPECT_TRUE(LiveGroups().empty());
}

TEST_F(TaskActionsTest, PickWorkerAvoidsLiveReplicas) {
  registry_.Assign("other1", "w2");  // tasks of other groups: w2 has fewer free slots
  registry_.Assign("other2", "w2");
  absl::StatusOr<std::string> worker = actions_->PickWorker(group_);
  ASSERT_TRUE(worker.ok()) << worker.status();
  EXPECT_EQ(*worker, "w1");  // the most free slots
  AddTask("t1", "w1");
  worker = actions_->PickWorker(group_);
  ASSERT_TRUE(worker.ok()) << worker.status();
  EXPECT_EQ(*worker, "w2");  // away from the group's live replica
  group_.tasks["t1"].state = v1::TASK_STATE_FAILED;  // a dead replica is no reason to avoid
  registry_.Release("t1");
  EXPECT_EQ(*actions_->PickWorker(group_), "w1");
}

TEST_F(TaskActionsTest, UnpublishedCheckpointsKeepTheLatestAndUncommitted) {
  auto checkpoints = actions_->UnpublishedCheckpoints(group_);
  ASSERT_TRUE(checkpoints.ok()) << checkpoints.status();
  EXPECT_EQ(checkpoints->size(), 2u);
  ASSERT_TRUE(store_
                  ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                    return txn
                        .InsertCommittedSequence("ds", SequenceName("base", 0), "t0",
                                                 {{0, 10}}, {{0, 25}}, {}, clock_.NowMs())
                        .status();
                  })
                  .ok());
  checkpoints = actions_->UnpublishedCheckpoints(group_);
  ASSERT_TRUE(checkpoints.ok());
  EXPECT_EQ(*checkpoints, (std::map<int32_t, OffsetMap>{{1, {{0, 25}}}}));
}

TEST_F(TaskActionsTest, CreateRecordsThenRunTaskAnswersOffTheCaller) {
  group_.tasks_lost = 1;
  SpecTimings timings;
  timings.poll_timeout = absl::Milliseconds(100);
  std::map<int32_t, OffsetMap> checkpoints = {{1, {{0, 25}}}};
  absl::StatusOr<TaskLaunch> launch =
      actions_->CreateTask(group_, "w2", checkpoints, spec_, timings);
  ASSERT_TRUE(launch.ok()) << launch.status();
  EXPECT_EQ(launch->address, "127.0.0.1:7002");
  EXPECT_EQ(launch->worker_id, "w2");
  const v1::TaskSpec& spec = launch->spec;
  EXPECT_EQ(spec.datasource(), "ds");
  EXPECT_EQ(spec.base_sequence_name(), "base");
  EXPECT_EQ(spec.topic(), spec_.io_config().topic());
  EXPECT_EQ(FromProto(spec.start_offsets()), (OffsetMap{{0, 10}}));
  ASSERT_EQ(spec.checkpoints_size(), 1);
  EXPECT_EQ(spec.checkpoints(0).sequence_id(), 1);
  EXPECT_EQ(spec.poll_timeout_ms(), 100);
  EXPECT_EQ(spec.created_at_ms(), clock_.NowMs());
  EXPECT_EQ(group_.tasks_lost, 0);  // the replacement is owed no more
  ASSERT_EQ(group_.tasks.count(spec.task_id()), 1u);
  EXPECT_TRUE(group_.tasks[spec.task_id()].starting);
  EXPECT_EQ(group_.tasks[spec.task_id()].state, v1::TASK_STATE_NOT_STARTED);
  std::optional<TaskRecord> stored = Stored(spec.task_id());
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->worker_id, "w2");
  EXPECT_EQ(stored->state, v1::TASK_STATE_NOT_STARTED);

  absl::Notification answered;
  absl::StatusOr<v1::RunTaskResponse> answer = absl::UnknownError("none");
  const std::string task_id = spec.task_id();
  actions_->SendRunTask(*launch, [&](const absl::StatusOr<v1::RunTaskResponse>& response) {
    answer = response;
    answered.Notify();
  });
  ASSERT_TRUE(actions_->AwaitRunTasks(absl::Now() + absl::Seconds(10)));
  ASSERT_TRUE(answered.HasBeenNotified());  // answered before it stopped counting
  ASSERT_TRUE(answer.ok());
  EXPECT_EQ(answer->status().task_id(), task_id);
  ASSERT_EQ(run_client_.runs().size(), 1u);
  EXPECT_EQ(run_client_.runs()[0].first, "127.0.0.1:7002");
  EXPECT_TRUE(client_.runs().empty());  // RunTask goes through its own client
}

TEST_F(TaskActionsTest, RunTaskFailureAndGivenUpTasks) {
  AddTask("t1", "w1");
  actions_->NoteRunTaskFailed("t1", "w1", "RunTask failed: UNAVAILABLE");
  EXPECT_EQ(Stored("t1")->state, v1::TASK_STATE_FAILED);
  EXPECT_EQ(Stored("t1")->error, "RunTask failed: UNAVAILABLE");
  actions_->KillGivenUp("t9", "w2");
  ASSERT_EQ(client_.stops().size(), 1u);
  EXPECT_EQ(client_.stops()[0].task_id, "t9");
  EXPECT_EQ(client_.stops()[0].mode, v1::STOP_MODE_KILL);
  EXPECT_EQ(client_.stops()[0].reason, "given up while starting");
}

TEST_F(TaskActionsTest, CreateNeedsAWorkerAddress) {
  SpecTimings timings;
  EXPECT_EQ(actions_->CreateTask(group_, "ghost", {{0, {{0, 10}}}}, spec_, timings).status().code(),
            absl::StatusCode::kInternal);
  EXPECT_TRUE(group_.tasks.empty());
}

}  // namespace
}  // namespace sluice::supervisor
