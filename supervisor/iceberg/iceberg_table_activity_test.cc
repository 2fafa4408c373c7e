#include "supervisor/iceberg/iceberg_table_activity.h"

#include <string>

#include "gtest/gtest.h"

namespace sluice::supervisor {
namespace {

TEST(IcebergTableActivityTest, UnknownDatasourceLeavesTheStatusAlone) {
  IcebergTableActivity activity;
  v1::IcebergTableStatus status;
  status.set_metadata_location("file:///x");
  activity.Fill("wiki", &status);
  EXPECT_EQ(status.metadata_location(), "file:///x");
  EXPECT_EQ(status.last_snapshot_id(), 0);
}

TEST(IcebergTableActivityTest, ACommitClearsTheLastFailure) {
  IcebergTableActivity activity;
  activity.NoteFailure("wiki", absl::UnavailableError("moved by another writer"), 10);
  v1::IcebergTableStatus failed;
  activity.Fill("wiki", &failed);
  EXPECT_EQ(failed.last_commit_error(), "UNAVAILABLE: moved by another writer");
  EXPECT_EQ(failed.last_commit_error_ms(), 10);

  activity.NoteCommit("wiki", 42, 20);
  v1::IcebergTableStatus ok;
  activity.Fill("wiki", &ok);
  EXPECT_EQ(ok.last_snapshot_id(), 42);
  EXPECT_EQ(ok.last_commit_ms(), 20);
  EXPECT_EQ(ok.last_commit_error(), "");
  EXPECT_EQ(ok.last_commit_error_ms(), 0);
}

TEST(IcebergTableActivityTest, ErrorsAreBoundedAndOrphansAddUpPerDatasource) {
  IcebergTableActivity activity;
  activity.NoteFailure("wiki", absl::InternalError(std::string(10000, 'x')), 1);
  activity.NoteOrphansRemoved("wiki", 3);
  activity.NoteOrphansRemoved("wiki", 4);
  activity.NoteOrphansRemoved("other", 1);
  v1::IcebergTableStatus status;
  activity.Fill("wiki", &status);
  EXPECT_EQ(status.last_commit_error().size(), 4096u);
  EXPECT_EQ(status.orphan_files_removed(), 7);
}

}  // namespace
}  // namespace sluice::supervisor
