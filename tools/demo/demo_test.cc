// The demo end to end, scaled down: real processes, a few thousand records,
// checkpoints and a roll-over, the audit, a clean stop.
#include "tools/demo/demo.h"

#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/subprocess.h"

namespace sluice {
namespace demo {
namespace {

using ::testing::HasSubstr;

TEST(DemoTest, SmallRunPassesTheAuditAndStopsCleanly) {
  auto root = testing::MakeTempDir("demo");
  ASSERT_TRUE(root.ok());
  DemoOptions options;
  options.root_dir = *root;
  options.records = 6000;
  options.rate = 1000;  // about 6 s of stream
  options.malformed_fraction = 0.005;
  options.partitions = 2;
  options.workers = 2;
  options.task_count = 1;
  options.replicas = 2;
  options.max_rows_per_segment = 1500;
  options.task_duration = "PT4S";
  options.timeout = absl::Minutes(2);
  std::ostringstream out;
  const int code = RunDemo(options, out);
  std::cerr << out.str();
  EXPECT_EQ(code, kDemoOk);
  const std::string text = out.str();
  EXPECT_THAT(text, HasSubstr("submitted the spec"));
  EXPECT_THAT(text, HasSubstr("roll-over"));
  EXPECT_THAT(text, HasSubstr("everything produced is committed"));
  EXPECT_THAT(text, HasSubstr("handed off"));
  EXPECT_THAT(text, HasSubstr("records in Kafka (committed ranges) 6000"));
  EXPECT_THAT(text, HasSubstr("PASS"));
  EXPECT_THAT(text, HasSubstr("stopped cleanly"));
}

TEST(DemoTest, BadOptionsAreUsageErrors) {
  DemoOptions options;
  options.workers = 1;
  options.replicas = 2;
  std::ostringstream out;
  EXPECT_EQ(RunDemo(options, out), kDemoUsage);
  EXPECT_THAT(out.str(), HasSubstr("--replicas must be in [1, workers=1]"));
}

}  // namespace
}  // namespace demo
}  // namespace sluice
