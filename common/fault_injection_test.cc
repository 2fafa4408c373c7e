#include "common/fault_injection.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include "common/file_util.h"

namespace sluice {
namespace {

TEST(FaultInjection, OffByDefault) {
  ASSERT_TRUE(ConfigureFaultPoints("").ok());
  EXPECT_TRUE(SLUICE_FAULT_POINT("anything").ok());
}

TEST(FaultInjection, ErrorOnNthHit) {
  ASSERT_TRUE(ConfigureFaultPoints("a=error@2").ok());
  EXPECT_TRUE(HitFaultPoint("a").ok());
  EXPECT_EQ(HitFaultPoint("a").code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(HitFaultPoint("a").ok());
  EXPECT_TRUE(HitFaultPoint("b").ok());
  EXPECT_EQ(FaultPointHits("a"), 3);
}

TEST(FaultInjection, EveryHit) {
  ASSERT_TRUE(ConfigureFaultPoints("a=error@*, b=delay:1").ok());
  EXPECT_FALSE(HitFaultPoint("a").ok());
  EXPECT_FALSE(HitFaultPoint("a").ok());
  EXPECT_TRUE(HitFaultPoint("b").ok());
}

TEST(FaultInjection, ErrorWhileFileExists) {
  char tmpl[] = "/tmp/sluice_fault_XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string flag = std::string(tmpl) + "/fail";
  ASSERT_TRUE(ConfigureFaultPoints("push=error_while_file:" + flag).ok());
  EXPECT_TRUE(HitFaultPoint("push").ok());
  ASSERT_TRUE(WriteFileAtomically(flag, "").ok());
  EXPECT_FALSE(HitFaultPoint("push").ok());
  ASSERT_TRUE(RemoveAll(tmpl).ok());
  EXPECT_TRUE(HitFaultPoint("push").ok());
}

TEST(FaultInjection, CrashExitsTheProcess) {
  ASSERT_TRUE(ConfigureFaultPoints("boom=crash").ok());
  EXPECT_EXIT((void)HitFaultPoint("boom"), ::testing::ExitedWithCode(86), "");
}

TEST(FaultInjection, CrashIfFileCrashesOnceTheFileAppearsAndDeletesIt) {
  char tmpl[] = "/tmp/sluice_fault_XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string arm = std::string(tmpl) + "/arm";
  ASSERT_TRUE(ConfigureFaultPoints("boom=crash_if_file:" + arm).ok());
  EXPECT_TRUE(HitFaultPoint("boom").ok());  // not armed
  ASSERT_TRUE(WriteFileAtomically(arm, "").ok());
  EXPECT_EXIT((void)HitFaultPoint("boom"), ::testing::ExitedWithCode(86), "");
  // The crashed child deleted the file: the next process runs on.
  EXPECT_FALSE(PathExists(arm));
  EXPECT_TRUE(HitFaultPoint("boom").ok());
  ASSERT_TRUE(RemoveAll(tmpl).ok());
}

TEST(FaultInjection, RejectsMalformedSpecs) {
  for (const char* bad : {"noequals", "=crash", "a=explode", "a=crash@0", "a=delay:x",
                          "a=error_while_file:", "a=crash_if_file:"}) {
    EXPECT_EQ(ConfigureFaultPoints(bad).code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

}  // namespace
}  // namespace sluice
