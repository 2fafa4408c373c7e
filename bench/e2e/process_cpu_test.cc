#include "bench/e2e/process_cpu.h"

#include <time.h>
#include <unistd.h>

#include <cmath>

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sluice {
namespace bench {
namespace {

using ::testing::HasSubstr;

TEST(ParseStatCpuTicksTest, AddsUserAndSystemTicks) {
  // A real line (Linux 6.x), utime 1234 and stime 56.
  EXPECT_EQ(*ParseStatCpuTicks("4242 (sluice-task) S 1 4242 4242 0 -1 4194560 2786 0 0 0 1234 "
                               "56 0 0 20 0 9 0 123456 1254572032 45728 18446744073709551615"),
            1290);
}

TEST(ParseStatCpuTicksTest, CommandNamesMayHoldSpacesAndParentheses) {
  EXPECT_EQ(*ParseStatCpuTicks("7 (a) b (c)) R 1 7 7 0 -1 0 0 0 0 0 10 20 0 0 20 0 1 0 5"), 30);
}

TEST(ParseStatCpuTicksTest, RejectsWhatIsNotAStatLine) {
  EXPECT_THAT(ParseStatCpuTicks("").status().message(), HasSubstr("no \"(comm)\""));
  EXPECT_THAT(ParseStatCpuTicks("1 (x) S 1 2 3").status().message(), HasSubstr("need 15"));
  EXPECT_THAT(
      ParseStatCpuTicks("1 (x) S 1 1 1 0 -1 0 0 0 0 0 ten 20 0 0").status().message(),
      HasSubstr("not tick counts"));
  EXPECT_EQ(ParseStatCpuTicks("1 (x) S 1 1 1 0 -1 0 0 0 0 0 -3 20 0 0").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ProcessCpuTest, GrowsWhileThisProcessComputes) {
  auto before = ProcessCpu(getpid());
  ASSERT_TRUE(before.ok()) << before.status();
  // Spin until the kernel's own clock says this process used 100 ms of CPU
  // (however loaded the machine is), then /proc must show most of it (it
  // counts in 10 ms ticks).
  auto self_cpu = [] {
    timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return absl::DurationFromTimespec(ts);
  };
  const absl::Duration start = self_cpu();
  const absl::Time give_up = absl::Now() + absl::Seconds(30);
  volatile double x = 0;
  while (self_cpu() - start < absl::Milliseconds(100) && absl::Now() < give_up) {
    x = x + std::sqrt(x + 1.0);
  }
  auto after = ProcessCpu(getpid());
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_GE(*after - *before, absl::Milliseconds(70));
}

TEST(ProcessCpuTest, AGoneProcessIsNotFound) {
  EXPECT_EQ(ProcessCpu(0x7ffffff0).status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace bench
}  // namespace sluice
