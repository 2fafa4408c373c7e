#include "supervisor/worker_registry.h"

#include <gtest/gtest.h>

namespace sluice::supervisor {
namespace {

v1::WorkerInfo Info(const std::string& id, int capacity) {
  v1::WorkerInfo info;
  info.set_worker_id(id);
  info.set_address("127.0.0.1:" + std::to_string(7000 + id.back()));
  info.set_capacity(capacity);
  return info;
}

v1::TaskStatus Task(const std::string& id, v1::TaskState state) {
  v1::TaskStatus status;
  status.set_task_id(id);
  status.set_state(state);
  return status;
}

class WorkerRegistryTest : public ::testing::Test {
 protected:
  WorkerRegistryTest() : registry_({&clock_, absl::Seconds(1), 3, absl::Seconds(10)}) {}
  FakeClock clock_;
  WorkerRegistry registry_;
};

TEST_F(WorkerRegistryTest, LostAfterTheTimeoutAndBackOnHeartbeat) {
  EXPECT_EQ(registry_.lost_timeout(), absl::Seconds(10));  // 3 x 1 s, at least 10 s
  ASSERT_TRUE(registry_.Register(Info("w1", 2), {}).ok());
  EXPECT_TRUE(registry_.IsAlive("w1"));
  clock_.Advance(absl::Seconds(9));
  EXPECT_TRUE(registry_.CheckLiveness().empty());
  ASSERT_TRUE(registry_.Heartbeat("w1", {}).ok());
  clock_.Advance(absl::Seconds(9));
  EXPECT_TRUE(registry_.CheckLiveness().empty());
  clock_.Advance(absl::Seconds(2));
  EXPECT_EQ(registry_.CheckLiveness(), std::vector<std::string>{"w1"});
  EXPECT_FALSE(registry_.IsAlive("w1"));
  EXPECT_TRUE(registry_.CheckLiveness().empty());  // reported once
  ASSERT_TRUE(registry_.Heartbeat("w1", {}).ok());
  EXPECT_TRUE(registry_.IsAlive("w1"));
}

TEST_F(WorkerRegistryTest, UnknownOrSeededWorkersMustRegister) {
  EXPECT_EQ(registry_.Heartbeat("ghost", {}).code(), absl::StatusCode::kNotFound);
  WorkerRecord record;
  record.worker_id = "w2";
  record.address = "10.0.0.2:7000";
  record.capacity = 4;
  registry_.Seed(record);
  EXPECT_TRUE(registry_.IsAlive("w2"));
  EXPECT_EQ(*registry_.Address("w2"), "10.0.0.2:7000");
  EXPECT_EQ(registry_.Heartbeat("w2", {}).code(), absl::StatusCode::kNotFound);
  // Not registered: gets no new tasks.
  EXPECT_EQ(registry_.PickWorker({}).status().code(), absl::StatusCode::kResourceExhausted);
  clock_.Advance(absl::Seconds(11));
  EXPECT_EQ(registry_.CheckLiveness(), std::vector<std::string>{"w2"});
}

TEST_F(WorkerRegistryTest, RegistrationIsValidated) {
  EXPECT_EQ(registry_.Register(Info("bad/id", 1), {}).code(), absl::StatusCode::kInvalidArgument);
  v1::WorkerInfo no_address = Info("w1", 1);
  no_address.set_address("nowhere");
  EXPECT_EQ(registry_.Register(no_address, {}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(registry_.Register(Info("w1", 0), {}).code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(WorkerRegistryTest, OneLiveWorkerPerAddressAndTheWorkerAtAnAddress) {
  v1::WorkerInfo w1 = Info("w1", 2);
  ASSERT_TRUE(registry_.Register(w1, {}).ok());
  EXPECT_EQ(registry_.WorkerAt(w1.address()), "w1");
  EXPECT_EQ(registry_.WorkerAt("127.0.0.1:1"), std::nullopt);
  // Another worker id claiming w1's address while w1 is alive.
  v1::WorkerInfo thief = Info("w9", 2);
  thief.set_address(w1.address());
  EXPECT_EQ(registry_.Register(thief, {}).code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(registry_.WorkerAt(w1.address()), "w1");
  // w1 re-registering at its own address is fine.
  EXPECT_TRUE(registry_.Register(w1, {}).ok());
  // Once w1 is lost, a new worker may take the address over.
  clock_.Advance(absl::Seconds(11));
  ASSERT_EQ(registry_.CheckLiveness(), std::vector<std::string>{"w1"});
  EXPECT_TRUE(registry_.Register(thief, {}).ok());
  EXPECT_EQ(registry_.WorkerAt(w1.address()), "w9");
}

TEST_F(WorkerRegistryTest, SlotsCountAssignedAndReportedRunningTasks) {
  ASSERT_TRUE(
      registry_.Register(Info("w1", 2), {Task("a", v1::TASK_STATE_READING), Task("old", v1::TASK_STATE_SUCCESS)}).ok());
  registry_.Assign("b", "w1");
  EXPECT_EQ(registry_.Get("w1")->info.running_tasks(), 2);
  EXPECT_EQ(registry_.PickWorker({}).status().code(), absl::StatusCode::kResourceExhausted);
  // The worker reports "b" too: still two, not three.
  ASSERT_TRUE(registry_.Heartbeat("w1", {Task("a", v1::TASK_STATE_READING), Task("b", v1::TASK_STATE_READING)}).ok());
  EXPECT_EQ(registry_.Get("w1")->info.running_tasks(), 2);
  // "a" finished.
  ASSERT_TRUE(registry_.Heartbeat("w1", {Task("a", v1::TASK_STATE_SUCCESS), Task("b", v1::TASK_STATE_READING)}).ok());
  EXPECT_EQ(*registry_.PickWorker({}), "w1");
  registry_.Release("b");
  ASSERT_TRUE(registry_.Heartbeat("w1", {}).ok());
  EXPECT_EQ(registry_.Get("w1")->info.running_tasks(), 0);
}

TEST_F(WorkerRegistryTest, ReplicasAvoidSharingAWorkerWhenAnotherHasRoom) {
  ASSERT_TRUE(registry_.Register(Info("w1", 8), {}).ok());
  ASSERT_TRUE(registry_.Register(Info("w2", 1), {}).ok());
  EXPECT_EQ(*registry_.PickWorker({}), "w1");      // most free slots
  EXPECT_EQ(*registry_.PickWorker({"w1"}), "w2");  // anti-affinity wins
  registry_.Assign("t", "w2");
  EXPECT_EQ(*registry_.PickWorker({"w1"}), "w1");  // w2 is full: share
  clock_.Advance(absl::Seconds(11));
  registry_.CheckLiveness();
  EXPECT_EQ(registry_.PickWorker({}).status().code(), absl::StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace sluice::supervisor

namespace sluice::supervisor {
namespace {

class WorkerRegistrySlotsTest : public ::testing::Test {
 protected:
  WorkerRegistrySlotsTest() : registry_(Options()) {}
  WorkerRegistryOptions Options() {
    WorkerRegistryOptions o;
    o.clock = &clock_;
    o.heartbeat_interval = absl::Seconds(1);
    o.unreported_grace = absl::Seconds(15);
    o.placement_backoff = absl::Seconds(5);
    o.max_placement_backoff = absl::Seconds(20);
    return o;
  }
  int Running(const std::string& id) { return registry_.Get(id)->info.running_tasks(); }
  FakeClock clock_;
  WorkerRegistry registry_;
};

// Whatever ends a task (and whoever forgets to Release it), the worker's
// report frees its slot.
TEST_F(WorkerRegistrySlotsTest, HeartbeatsSettleThePlacedTasks) {
  ASSERT_TRUE(registry_.Register(Info("w1", 3), {}).ok());
  registry_.Assign("done", "w1");
  registry_.Assign("running", "w1");
  registry_.Assign("never-arrived", "w1");
  EXPECT_EQ(Running("w1"), 3);
  EXPECT_FALSE(registry_.PickWorker({}).ok());
  // A heartbeat built before the placements reached the worker lists none.
  ASSERT_TRUE(registry_.Heartbeat("w1", {}).ok());
  EXPECT_EQ(Running("w1"), 3);
  ASSERT_TRUE(
      registry_.Heartbeat("w1", {Task("done", v1::TASK_STATE_SUCCESS), Task("running", v1::TASK_STATE_READING)}).ok());
  EXPECT_EQ(Running("w1"), 2);
  clock_.Advance(absl::Seconds(16));
  ASSERT_TRUE(registry_.Heartbeat("w1", {Task("done", v1::TASK_STATE_SUCCESS), Task("running", v1::TASK_STATE_READING)})
                  .ok());
  EXPECT_EQ(Running("w1"), 1);  // only the one really running
  ASSERT_TRUE(registry_.Heartbeat("w1", {Task("running", v1::TASK_STATE_FAILED)}).ok());
  EXPECT_EQ(Running("w1"), 0);
  // A restart re-registers with what survived: the same rule.
  registry_.Assign("after", "w1");
  clock_.Advance(absl::Seconds(16));
  ASSERT_TRUE(registry_.Register(Info("w1", 3), {}).ok());
  EXPECT_EQ(Running("w1"), 0);
}

// A worker whose RunTask failed (frozen, overloaded) gets no placement for a
// backoff that doubles while it keeps failing; another worker is picked.
TEST_F(WorkerRegistrySlotsTest, AWorkerWhoseRunTaskFailedIsSkippedForABackoff) {
  ASSERT_TRUE(registry_.Register(Info("w1", 4), {}).ok());
  ASSERT_TRUE(registry_.Register(Info("w2", 2), {}).ok());
  // Time passes with both heartbeating (a silent worker is skipped too).
  auto Pass = [this](absl::Duration d) {
    for (absl::Duration t; t < d; t += absl::Milliseconds(500)) {
      clock_.Advance(absl::Milliseconds(500));
      ASSERT_TRUE(registry_.Heartbeat("w1", {}).ok());
      ASSERT_TRUE(registry_.Heartbeat("w2", {}).ok());
    }
  };
  EXPECT_EQ(*registry_.PickWorker({}), "w1");  // more free slots
  registry_.NoteRunTaskFailed("w1");
  EXPECT_EQ(*registry_.PickWorker({}), "w2");
  EXPECT_EQ(*registry_.PickWorker({"w2"}), "w2");  // avoided, but the only choice
  Pass(absl::Seconds(5));
  EXPECT_EQ(*registry_.PickWorker({}), "w1");
  registry_.NoteRunTaskFailed("w1");  // again: 10 s
  Pass(absl::Seconds(9));
  EXPECT_EQ(*registry_.PickWorker({}), "w2");
  Pass(absl::Seconds(1));
  EXPECT_EQ(*registry_.PickWorker({}), "w1");
  registry_.NoteRunTaskSucceeded("w1");
  registry_.NoteRunTaskFailed("w1");  // reset: 5 s again
  Pass(absl::Seconds(5));
  EXPECT_EQ(*registry_.PickWorker({}), "w1");
  // Everyone backing off: no worker, and the message says why.
  registry_.NoteRunTaskFailed("w1");
  registry_.NoteRunTaskFailed("w2");
  auto none = registry_.PickWorker({});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(none.status().message().find("RunTask failed"), std::string::npos) << none.status();
}

// Issue 12, point 8: a worker that stopped heartbeating (frozen) is not
// lost yet, but gets no new task: it would be the first choice (the most
// free slots) and cost every replacement a RunTask deadline.
TEST_F(WorkerRegistryTest, ASilentWorkerGetsNoNewTaskBeforeItIsLost) {
  ASSERT_TRUE(registry_.Register(Info("w1", 8), {}).ok());  // the most free slots
  ASSERT_TRUE(registry_.Register(Info("w2", 4), {}).ok());
  EXPECT_EQ(*registry_.PickWorker({}), "w1");
  clock_.Advance(absl::Milliseconds(1500));
  ASSERT_TRUE(registry_.Heartbeat("w2", {}).ok());
  EXPECT_EQ(*registry_.PickWorker({}), "w1");  // 1.5 s: within 2 intervals
  clock_.Advance(absl::Milliseconds(1000));
  ASSERT_TRUE(registry_.Heartbeat("w2", {}).ok());
  EXPECT_TRUE(registry_.IsAlive("w1"));
  EXPECT_EQ(*registry_.PickWorker({}), "w2");  // w1 silent for 2.5 s
  ASSERT_TRUE(registry_.Heartbeat("w1", {}).ok());
  EXPECT_EQ(*registry_.PickWorker({}), "w1");
}

}  // namespace
}  // namespace sluice::supervisor
