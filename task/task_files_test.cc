#include "task/task_files.h"

#include <gtest/gtest.h>

#include "common/file_util.h"
#include "common/proto_json.h"
#include "task/task_state.pb.h"

namespace sluice::task {
namespace {

TEST(TaskFilesTest, RemoveAllButKeepsOnlyTheNamedEntries) {
  const std::string dir = ::testing::TempDir() + "/task_files_test_spills";
  ASSERT_TRUE(RemoveAll(dir).ok());
  ASSERT_TRUE(MakeDirs(dir + "/half_built").ok());
  ASSERT_TRUE(WriteFileAtomically(dir + "/0_0_1.spill", "a").ok());
  ASSERT_TRUE(WriteFileAtomically(dir + "/0_0_2.spill", "b").ok());
  ASSERT_TRUE(RemoveAllBut(dir, {"0_0_2.spill"}).ok());
  absl::StatusOr<std::vector<std::string>> left = ListDirectory(dir);
  ASSERT_TRUE(left.ok()) << left.status();
  EXPECT_EQ(*left, std::vector<std::string>{"0_0_2.spill"});
  EXPECT_EQ(RemoveAllBut(dir + "/missing", {}).code(), absl::StatusCode::kNotFound);
}

TEST(TaskFilesTest, JsonRoundTripAndMissingFiles) {
  const std::string dir = ::testing::TempDir() + "/task_files_test_json";
  ASSERT_TRUE(RemoveAll(dir).ok());
  ASSERT_TRUE(MakeDirs(dir).ok());
  const TaskFiles files(dir);
  EXPECT_EQ(files.restore_point(), dir + "/restore_point.json");
  state::RestorePoint point;
  point.set_next_spill_number(7);
  ASSERT_TRUE(SaveProtoJson(files.restore_point(), point).ok());
  state::RestorePoint loaded;
  ASSERT_TRUE(LoadProtoJson(files.restore_point(), &loaded).ok());
  EXPECT_EQ(loaded.next_spill_number(), 7);
  EXPECT_EQ(LoadProtoJson(files.sequences(), &loaded).code(), absl::StatusCode::kNotFound);
}

// The layers above pass names; the paths are built here only.
TEST(TaskFilesTest, BuildsThePathsOfNamedFiles) {
  const TaskFiles files("/data/tasks/t1");
  EXPECT_EQ(TaskFiles::SpillName(2, 3600000, 7), "2_3600000_7.spill");
  EXPECT_EQ(TaskFiles::BuiltFileName(2, 3600000, 8), "2_3600000_8.sluice");
  EXPECT_EQ(files.spill(TaskFiles::SpillName(2, 0, 7)), "/data/tasks/t1/spills/2_0_7.spill");
  EXPECT_EQ(files.spill("x"), files.spill_dir() + "/x");
  EXPECT_EQ(files.built_segment(2, 3600000), "/data/tasks/t1/segments/2_3600000.sluice");
}

}  // namespace
}  // namespace sluice::task
