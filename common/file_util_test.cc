#include "common/file_util.h"

#include <dirent.h>
#include <errno.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

std::string Read(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::vector<std::string> List(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = opendir(dir.c_str());
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  closedir(d);
  return names;
}

TEST(WriteFileAtomicallyTest, WritesAndReplacesWithoutLeavingTemporaries) {
  const std::string dir = absl::StrCat(getenv("TEST_TMPDIR"), "/atomic");
  ASSERT_EQ(system(("mkdir -p " + dir).c_str()), 0);
  const std::string path = dir + "/bootstrap";  // the dev broker's use
  ASSERT_TRUE(WriteFileAtomically(path, "127.0.0.1:1\n").ok());
  EXPECT_EQ(Read(path), "127.0.0.1:1\n");
  ASSERT_TRUE(WriteFileAtomically(path, "127.0.0.1:2\n").ok());
  EXPECT_EQ(Read(path), "127.0.0.1:2\n");
  EXPECT_EQ(List(dir), std::vector<std::string>{"bootstrap"});
}

TEST(WriteFileAtomicallyTest, MissingDirectoryIsNotFound) {
  const absl::Status s = WriteFileAtomically("/no/such/dir/bootstrap", "x");
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_NE(s.message().find("/no/such/dir/bootstrap"), absl::string_view::npos);
}

TEST(ListDirectoryTest, SortedNamesWithoutDotEntries) {
  const std::string dir = absl::StrCat(getenv("TEST_TMPDIR"), "/listing");
  ASSERT_TRUE(MakeDirs(dir + "/b_dir").ok());
  ASSERT_TRUE(WriteFileAtomically(dir + "/c", "x").ok());
  ASSERT_TRUE(WriteFileAtomically(dir + "/a", "y").ok());
  absl::StatusOr<std::vector<std::string>> names = ListDirectory(dir);
  ASSERT_TRUE(names.ok()) << names.status();
  EXPECT_EQ(*names, (std::vector<std::string>{"a", "b_dir", "c"}));
  EXPECT_EQ(ListDirectory(dir + "/missing").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ListDirectory(dir + "/c").status().code(), absl::StatusCode::kNotFound);  // ENOTDIR
  ASSERT_TRUE(RemoveAll(dir).ok());
  EXPECT_FALSE(PathExists(dir));
}

TEST(ErrnoStatusTest, CodesFollowWhatTheCallerShouldDo) {
  EXPECT_EQ(ErrnoStatus(ENOENT, "open", "/x").code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ErrnoStatus(EEXIST, "create", "/x").code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(ErrnoStatus(EACCES, "open", "/x").code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(ErrnoStatus(ENOSPC, "write", "/x").code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(ErrnoStatus(EIO, "read", "/x").code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(ErrnoStatus(EINVAL, "seek", "/x").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ErrnoStatus(ENOSPC, "write", "/data/x").message(),
            absl::StrCat("write /data/x: ", strerror(ENOSPC)));
}

}  // namespace
}  // namespace sluice
