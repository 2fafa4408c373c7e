#include "common/file_util.h"

#include <dirent.h>
#include <errno.h>
#include <unistd.h>

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

TEST(AtomicFileTest, AppearsOnlyOnCommit) {
  const std::string dir = absl::StrCat(getenv("TEST_TMPDIR"), "/atomic_commit");
  ASSERT_TRUE(MakeDirs(dir).ok());
  const std::string path = dir + "/file";
  auto file = AtomicFile::Create(path);
  ASSERT_TRUE(file.ok()) << file.status();
  ASSERT_TRUE((*file)->Append("hello ").ok());
  ASSERT_TRUE((*file)->Append(std::string(3 << 20, 'x')).ok());
  ASSERT_TRUE((*file)->WriteAt(0, "HE").ok());
  EXPECT_EQ((*file)->size(), 6u + (3 << 20));
  std::string back;
  ASSERT_TRUE((*file)->ReadAt(0, 7, &back).ok());
  EXPECT_EQ(back, "HEllo x");
  EXPECT_EQ((*file)->ReadAt(6u + (3 << 20) - 1, 2, &back).code(), absl::StatusCode::kOutOfRange);
  EXPECT_FALSE(PathExists(path));  // not there yet
  ASSERT_EQ(List(dir).size(), 1u);
  EXPECT_EQ(List(dir)[0].rfind(kTempFilePrefix, 0), 0u);
  ASSERT_TRUE((*file)->Commit().ok());
  const std::string contents = Read(path);
  EXPECT_EQ(contents.substr(0, 6), "HEllo ");
  EXPECT_EQ(contents.size(), 6u + (3 << 20));
  EXPECT_EQ(List(dir), std::vector<std::string>{"file"});
  EXPECT_EQ((*file)->Commit().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(AtomicFileTest, AbandonedFileLeavesNothing) {
  const std::string dir = absl::StrCat(getenv("TEST_TMPDIR"), "/atomic_abandon");
  ASSERT_TRUE(MakeDirs(dir).ok());
  {
    auto file = AtomicFile::Create(dir + "/never");
    ASSERT_TRUE(file.ok());
    ASSERT_TRUE((*file)->Append("partial").ok());
  }
  EXPECT_TRUE(List(dir).empty());
}

TEST(AtomicFileTest, ErrorsNameThePath) {
  auto file = AtomicFile::Create("/nonexistent-dir/x");
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(file.status().message().find("/nonexistent-dir/"), absl::string_view::npos);
}

// A restarted container gives the new process the pid of the crashed one,
// whose temporary files may still be there: their names are skipped, and the
// leftovers are not touched.
TEST(AtomicFileTest, SkipsTemporaryNamesLeftByACrashedProcessWithTheSamePid) {
  const std::string dir = absl::StrCat(getenv("TEST_TMPDIR"), "/atomic_leftovers");
  ASSERT_TRUE(MakeDirs(dir).ok());
  constexpr int kLeftovers = 300;
  for (int n = 0; n < kLeftovers; ++n) {
    const std::string leftover =
        absl::StrCat(dir, "/", kTempFilePrefix, "state.json.", getpid(), ".", n);
    std::ofstream(leftover) << "left by a crash";
  }
  ASSERT_TRUE(WriteFileAtomically(dir + "/state.json", "new").ok());
  EXPECT_EQ(Read(dir + "/state.json"), "new");
  EXPECT_EQ(List(dir).size(), kLeftovers + 1u);
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
