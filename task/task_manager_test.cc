#include "task/task_manager.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/deep_storage.h"
#include "common/open_deep_storage.h"
#include "common/file_util.h"
#include "common/proto_json.h"
#include "task/task_files.h"
#include "task/testing/unimplemented_supervisor_client.h"

namespace sluice::task {
namespace {

constexpr int64_t kNowMs = 1800000000000;

class TaskManagerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = absl::StrCat(::testing::TempDir(), "/task_manager_test_",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    ASSERT_TRUE(RemoveAll(dir_).ok());
    ASSERT_TRUE(MakeDirs(dir_).ok());
    auto deep = OpenDeepStorage(absl::StrCat("file://", dir_, "/deep"));
    ASSERT_TRUE(deep.ok()) << deep.status();
    deep_ = std::move(*deep);
  }

  // A task that ended `ago` before kNowMs, as a worker leaves it on disk.
  void EndedTaskOnDisk(const std::string& id, absl::Duration ago) {
    const TaskFiles files(absl::StrCat(dir_, "/data/tasks/", id));
    ASSERT_TRUE(MakeDirs(files.dir).ok());
    v1::TaskSpec spec;
    spec.set_task_id(id);
    spec.set_datasource("wiki");
    ASSERT_TRUE(SaveProtoJson(files.spec(), spec).ok());
    v1::TaskStatus status;
    status.set_task_id(id);
    status.set_state(v1::TASK_STATE_SUCCESS);
    status.set_end_time_ms(kNowMs - absl::ToInt64Milliseconds(ago));
    ASSERT_TRUE(SaveProtoJson(files.final_status(), status).ok());
  }

  std::unique_ptr<TaskManager> Manager(int max_ended) {
    TaskManagerOptions options;
    options.data_dir = dir_ + "/data";
    options.worker_id = "w1";
    options.supervisor = &supervisor_;
    options.deep_storage = deep_.get();
    options.engine_factory = [](const v1::DataSchema&)
        -> absl::StatusOr<std::unique_ptr<SegmentEngine>> {
      return absl::UnimplementedError("no engine in this test");
    };
    options.ended_task_retention = absl::Hours(1);
    options.max_ended_tasks = max_ended;
    auto manager = TaskManager::Create(std::move(options));
    EXPECT_TRUE(manager.ok()) << manager.status();
    return std::move(*manager);
  }

  bool OnDisk(const std::string& id) {
    return PathExists(absl::StrCat(dir_, "/data/tasks/", id, "/spec.json"));
  }

  std::string dir_;
  std::unique_ptr<DeepStorage> deep_;
  testing::UnimplementedSupervisorClient supervisor_;
};

TEST_F(TaskManagerTest, EndedTasksAreForgottenAfterTheRetention) {
  EndedTaskOnDisk("old", absl::Minutes(61));
  EndedTaskOnDisk("recent", absl::Minutes(59));
  auto manager = Manager(256);
  EXPECT_EQ(manager->ListTasks().size(), 2u);
  EXPECT_EQ(manager->ForgetEndedTasks(absl::FromUnixMillis(kNowMs)), 1);
  ASSERT_EQ(manager->ListTasks().size(), 1u);
  EXPECT_EQ(manager->ListTasks()[0].task_id(), "recent");
  EXPECT_FALSE(OnDisk("old"));
  EXPECT_TRUE(OnDisk("recent"));
  EXPECT_EQ(manager->GetTaskStatus("old").status().code(), absl::StatusCode::kNotFound);
  // Nothing more to forget until time passes.
  EXPECT_EQ(manager->ForgetEndedTasks(absl::FromUnixMillis(kNowMs)), 0);
  EXPECT_EQ(manager->ForgetEndedTasks(absl::FromUnixMillis(kNowMs) + absl::Minutes(2)), 1);
  EXPECT_TRUE(manager->ListTasks().empty());
}

TEST_F(TaskManagerTest, OnlyTheNewestEndedTasksAreKept) {
  for (int i = 0; i < 5; ++i) EndedTaskOnDisk(absl::StrCat("t", i), absl::Seconds(10 * i));
  auto manager = Manager(2);
  EXPECT_EQ(manager->ForgetEndedTasks(absl::FromUnixMillis(kNowMs)), 3);
  std::vector<std::string> kept;
  for (const v1::TaskStatus& s : manager->ListTasks()) kept.push_back(s.task_id());
  std::sort(kept.begin(), kept.end());
  EXPECT_EQ(kept, (std::vector<std::string>{"t0", "t1"}));
  EXPECT_FALSE(OnDisk("t4"));
}

}  // namespace
}  // namespace sluice::task
