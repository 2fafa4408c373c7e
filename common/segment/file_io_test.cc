#include "common/segment/file_io.h"

#include <dirent.h>
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace sluice {
namespace segment {
namespace {

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

std::string TempDir(const char* name) {
  const std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
  mkdir(dir.c_str(), 0755);
  return dir;
}

TEST(AtomicFile, AppearsOnlyOnCommit) {
  const std::string dir = TempDir("commit");
  const std::string path = dir + "/file";
  auto file = AtomicFile::Create(path);
  ASSERT_TRUE(file.ok()) << file.status();
  ASSERT_TRUE((*file)->Append("hello ").ok());
  ASSERT_TRUE((*file)->Append(std::string(3 << 20, 'x')).ok());
  ASSERT_TRUE((*file)->WriteAt(0, "HE").ok());
  EXPECT_EQ((*file)->size(), 6u + (3 << 20));
  EXPECT_FALSE(ReadFileToString(path).ok());  // not there yet
  ASSERT_EQ(List(dir).size(), 1u);
  EXPECT_EQ(List(dir)[0].rfind(kTempFilePrefix, 0), 0u);
  ASSERT_TRUE((*file)->Commit().ok());
  auto contents = ReadFileToString(path);
  ASSERT_TRUE(contents.ok());
  EXPECT_EQ(contents->substr(0, 6), "HEllo ");
  EXPECT_EQ(contents->size(), 6u + (3 << 20));
  EXPECT_EQ(List(dir), std::vector<std::string>{"file"});
}

TEST(AtomicFile, AbandonedFileLeavesNothing) {
  const std::string dir = TempDir("abandon");
  {
    auto file = AtomicFile::Create(dir + "/never");
    ASSERT_TRUE(file.ok());
    ASSERT_TRUE((*file)->Append("partial").ok());
  }
  EXPECT_TRUE(List(dir).empty());
}

// One whole file through AtomicFile.
absl::Status Write(const std::string& path, absl::string_view contents) {
  auto file = AtomicFile::Create(path);
  if (!file.ok()) return file.status();
  if (absl::Status s = (*file)->Append(contents); !s.ok()) return s;
  return (*file)->Commit();
}

TEST(AtomicFile, ReplacesAnExistingFileWhole) {
  const std::string dir = TempDir("replace");
  ASSERT_TRUE(Write(dir + "/f", "first version").ok());
  ASSERT_TRUE(Write(dir + "/f", "second").ok());
  EXPECT_EQ(*ReadFileToString(dir + "/f"), "second");
}

TEST(AtomicFile, ErrorsNameThePath) {
  auto file = AtomicFile::Create("/nonexistent-dir/x");
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(file.status().message().find("/nonexistent-dir"), absl::string_view::npos);
  auto mapped = MappedFile::Open("/nonexistent-file");
  EXPECT_EQ(mapped.status().code(), absl::StatusCode::kNotFound);
}

TEST(MappedFile, EmptyFile) {
  const std::string dir = TempDir("empty");
  ASSERT_TRUE(Write(dir + "/e", "").ok());
  auto mapped = MappedFile::Open(dir + "/e");
  ASSERT_TRUE(mapped.ok());
  EXPECT_TRUE(mapped->data().empty());
}

// Resident file-backed memory of this process, from /proc/self/status.
int64_t RssFileKiB() {
  FILE* f = std::fopen("/proc/self/status", "r");
  char line[256];
  int64_t kib = -1;
  while (f != nullptr && std::fgets(line, sizeof(line), f) != nullptr) {
    if (std::sscanf(line, "RssFile: %ld kB", &kib) == 1) break;
  }
  if (f != nullptr) std::fclose(f);
  return kib;
}

TEST(MappedFile, ReleasedPagesLeaveTheResidentSetAndReadAgain) {
  const std::string path = TempDir("mapped") + "/file";
  constexpr size_t kSize = 32 << 20;
  std::string bytes(kSize, 'a');
  for (size_t i = 0; i < kSize; i += 4096) bytes[i] = static_cast<char>('a' + (i / 4096) % 26);
  auto file = AtomicFile::Create(path);
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE((*file)->Append(bytes).ok());
  std::string back;
  ASSERT_TRUE((*file)->ReadAt(4096 * 27, 5, &back).ok());  // read back before commit
  EXPECT_EQ(back, std::string("b") + "aaaa");
  EXPECT_EQ((*file)->ReadAt(kSize - 1, 2, &back).code(), absl::StatusCode::kOutOfRange);
  ASSERT_TRUE((*file)->Commit().ok());

  const int64_t before = RssFileKiB();
  ASSERT_GE(before, 0);
  auto mapped = MappedFile::Open(path);  // populated: every page resident
  ASSERT_TRUE(mapped.ok());
  EXPECT_GE(RssFileKiB() - before, 30 << 10);
  mapped->ReleasePages(0, kSize);
  EXPECT_LT(RssFileKiB() - before, 2 << 10);
  EXPECT_EQ(mapped->data(), bytes);  // read again from the file
}

}  // namespace
}  // namespace segment
}  // namespace sluice
