#include "common/metrics/process_metrics.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>

namespace sluice::metrics {
namespace {

TEST(ProcessMetricsTest, ResidentMemoryGrowsWithTouchedPages) {
  absl::StatusOr<int64_t> before = ResidentMemoryBytes();
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_GT(*before, 1 << 20);
  constexpr size_t kBytes = 64 << 20;
  std::unique_ptr<char[]> block(new char[kBytes]);
  std::memset(block.get(), 1, kBytes);  // touched: resident
  absl::StatusOr<int64_t> after = ResidentMemoryBytes();
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_GE(*after - *before, int64_t{60} << 20);
  EXPECT_EQ(block[kBytes - 1], 1);
}

TEST(ProcessMetricsTest, ScrapeShowsTheComponent) {
  Registry registry;
  std::unique_ptr<Registry::CallbackHandle> handle = AddProcessGauges(&registry, "worker");
  const std::string text = registry.Render();
  EXPECT_NE(text.find("# TYPE sluice_process_resident_memory_bytes gauge"), std::string::npos)
      << text;
  EXPECT_NE(text.find("sluice_process_resident_memory_bytes{component=\"worker\"} "),
            std::string::npos)
      << text;
  handle.reset();
  EXPECT_EQ(registry.Render().find("sluice_process_resident_memory_bytes{"), std::string::npos);
}

}  // namespace
}  // namespace sluice::metrics
