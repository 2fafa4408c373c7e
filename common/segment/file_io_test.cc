#include "common/segment/file_io.h"

#include <sys/stat.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace sluice {
namespace segment {
namespace {

std::string TempDir(const char* name) {
  const std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
  mkdir(dir.c_str(), 0755);
  return dir;
}

// One whole file through AtomicFile.
absl::Status Write(const std::string& path, absl::string_view contents) {
  auto file = AtomicFile::Create(path);
  if (!file.ok()) return file.status();
  if (absl::Status s = (*file)->Append(contents); !s.ok()) return s;
  return (*file)->Commit();
}

TEST(MappedFile, MissingFileIsNotFound) {
  auto mapped = MappedFile::Open("/nonexistent-file");
  EXPECT_EQ(mapped.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(mapped.status().message().find("/nonexistent-file"), absl::string_view::npos);
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
