// Runs the real sluice-segment binary on good and damaged files.
#include <sys/wait.h>

#include <sys/stat.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "common/file_util.h"
#include "absl/strings/str_cat.h"
#include "common/segment/file_io.h"
#include "tools/segment/segment_fixture.h"

namespace sluice {
namespace tools {
namespace {

struct ToolRun {
  int exit_code;
  std::string out, err;
};

ToolRun RunTool(const std::string& args) {
  const std::string dir = std::getenv("TEST_TMPDIR");
  const std::string command = absl::StrCat("tools/segment/sluice-segment ", args, " >", dir,
                                           "/out.txt 2>", dir, "/err.txt");
  const int status = std::system(command.c_str());
  ToolRun run;
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.out = segment::ReadFileToString(dir + "/out.txt").value_or("");
  run.err = segment::ReadFileToString(dir + "/err.txt").value_or("");
  return run;
}

class SluiceSegment : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/" +
                            ::testing::UnitTest::GetInstance()->current_test_info()->name();
    mkdir(dir.c_str(), 0755);
    fixture_ = MakeFixture(dir);
  }
  Fixture fixture_;
};

TEST_F(SluiceSegment, VerifyDumpAndStatsOnAGoodFile) {
  ToolRun run = RunTool(absl::StrCat("verify ", fixture_.segment, " ", fixture_.spill));
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("OK " + fixture_.segment + ": segment, 4 rows"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("OK " + fixture_.spill + ": spill, 5 rows"), std::string::npos) << run.out;
  run = RunTool(absl::StrCat("dump ", fixture_.segment));
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(std::count(run.out.begin(), run.out.end(), '\n'), 4);
  run = RunTool(absl::StrCat("dump --limit=2 ", fixture_.segment));
  EXPECT_EQ(std::count(run.out.begin(), run.out.end(), '\n'), 2);
  run = RunTool(absl::StrCat("stats ", fixture_.segment));
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_NE(run.out.find("provenance:  topic \"edits\""), std::string::npos) << run.out;
}

TEST_F(SluiceSegment, VerifyFailsWithTheReasonOnDamage) {
  std::string bytes = *segment::ReadFileToString(fixture_.segment);
  bytes[bytes.size() / 2] ^= 0x40;
  const std::string damaged = fixture_.segment + ".damaged";
  ASSERT_TRUE(sluice::WriteFileAtomically(damaged, bytes).ok());
  ToolRun run = RunTool(absl::StrCat("verify ", fixture_.segment, " ", damaged));
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.out.find("OK " + fixture_.segment), std::string::npos);  // the good one still checked
  EXPECT_NE(run.err.find(damaged), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("checksum mismatch"), std::string::npos) << run.err;
  const std::string truncated = fixture_.segment + ".truncated";
  ASSERT_TRUE(sluice::WriteFileAtomically(truncated, bytes.substr(0, 100)).ok());
  run = RunTool(absl::StrCat("verify ", truncated));
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("truncated"), std::string::npos) << run.err;
  run = RunTool(absl::StrCat("dump ", damaged));
  EXPECT_EQ(run.exit_code, 1);
  run = RunTool(absl::StrCat("stats ", fixture_.segment, ".missing"));
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("No such file"), std::string::npos) << run.err;
}

TEST_F(SluiceSegment, UsageErrors) {
  EXPECT_EQ(RunTool("").exit_code, 2);
  EXPECT_EQ(RunTool("frobnicate x").exit_code, 2);
  EXPECT_EQ(RunTool(absl::StrCat("dump ", fixture_.segment, " extra")).exit_code, 2);
}

}  // namespace
}  // namespace tools
}  // namespace sluice
