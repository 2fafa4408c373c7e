#include "common/local_deep_storage.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include "common/fault_injection.h"
#include "common/file_util.h"
#include "common/open_deep_storage.h"

namespace sluice {
namespace {

class LocalDeepStorageTest : public testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/sluice_deep_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    auto storage = OpenDeepStorage("file://" + dir_ + "/deep");
    ASSERT_TRUE(storage.ok()) << storage.status();
    storage_ = std::move(*storage);
    src_ = dir_ + "/segment.bin";
    ASSERT_TRUE(WriteFileAtomically(src_, "segment bytes").ok());
  }
  void TearDown() override { ASSERT_TRUE(RemoveAll(dir_).ok()); }

  std::string dir_;
  std::string src_;
  std::unique_ptr<DeepStorage> storage_;
};

TEST_F(LocalDeepStorageTest, PushStatReadListDelete) {
  auto uri = storage_->Push(src_, "wiki/2026-11-30T02:00:00.000Z_x/v1/0/task-a.seg");
  ASSERT_TRUE(uri.ok()) << uri.status();
  EXPECT_EQ(*uri, "file://" + dir_ + "/deep/wiki/2026-11-30T02:00:00.000Z_x/v1/0/task-a.seg");
  auto info = storage_->Stat(*uri);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->size_bytes, 13);
  auto path = storage_->LocalPathForRead(*uri, dir_);
  ASSERT_TRUE(path.ok());
  EXPECT_EQ(*ReadFile(*path), "segment bytes");

  ASSERT_TRUE(storage_->Push(src_, "wiki/other.seg").ok());
  ASSERT_TRUE(storage_->Push(src_, "wikipedia/x.seg").ok());
  auto listed = storage_->List("wiki/");
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ((*listed)[0].uri, *uri);

  ASSERT_TRUE(storage_->Delete(*uri).ok());
  EXPECT_EQ(storage_->Stat(*uri).status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(storage_->Delete(*uri).ok());  // idempotent
}

TEST_F(LocalDeepStorageTest, NeverOverwrites) {
  ASSERT_TRUE(storage_->Push(src_, "wiki/a.seg").ok());
  ASSERT_TRUE(WriteFileAtomically(src_, "different bytes").ok());
  auto again = storage_->Push(src_, "wiki/a.seg");
  EXPECT_EQ(again.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(*ReadFile(dir_ + "/deep/wiki/a.seg"), "segment bytes");
}

TEST_F(LocalDeepStorageTest, RefusesUnsafeKeysAndForeignUris) {
  for (const char* key : {"", "../escape", "a/../../b", "/abs", "a//b", "a/./b", "sp ace", "a\nb"}) {
    EXPECT_EQ(storage_->Push(src_, key).status().code(), absl::StatusCode::kInvalidArgument)
        << key;
  }
  EXPECT_EQ(storage_->Stat("file:///etc/passwd").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(storage_->Stat("file://" + dir_ + "/deep/../segment.bin").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(LocalDeepStorageTest, MissingSourceIsAnError) {
  auto uri = storage_->Push(dir_ + "/nope", "wiki/n.seg");
  EXPECT_EQ(uri.status().code(), absl::StatusCode::kNotFound);
  EXPECT_FALSE(PathExists(dir_ + "/deep/wiki/n.seg"));
}

// The fault tests make pushes fail for a while through the "deep_storage.push"
// fault point: UNAVAILABLE (the caller retries) and nothing left behind.
TEST_F(LocalDeepStorageTest, PushFaultPointFailsTransientlyAndWritesNothing) {
  const std::string flag = dir_ + "/fail-pushes";
  ASSERT_TRUE(ConfigureFaultPoints("deep_storage.push=error_while_file:" + flag).ok());
  ASSERT_TRUE(WriteFileAtomically(flag, "").ok());
  auto failed = storage_->Push(src_, "wiki/f.seg");
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kUnavailable) << failed.status();
  EXPECT_FALSE(PathExists(dir_ + "/deep/wiki/f.seg"));
  ASSERT_TRUE(RemoveAll(flag).ok());
  auto pushed = storage_->Push(src_, "wiki/f.seg");
  EXPECT_TRUE(pushed.ok()) << pushed.status();
  ASSERT_TRUE(ConfigureFaultPoints("").ok());
}

TEST(OpenDeepStorage, RejectsOtherSchemesAndRelativePaths) {
  EXPECT_EQ(OpenDeepStorage("gs://bucket/x").status().code(), absl::StatusCode::kInvalidArgument);
  // A bad s3:// URI is refused before credentials are looked for.
  EXPECT_EQ(OpenDeepStorage("s3://Bad_Bucket/x").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(OpenDeepStorage("relative/dir").status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace sluice
