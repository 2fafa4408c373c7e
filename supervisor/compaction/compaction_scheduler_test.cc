#include "supervisor/compaction/compaction_scheduler.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/synchronization/notification.h"

namespace sluice::supervisor {
namespace {

v1::SupervisorSpec Spec(const std::string& datasource, bool automatic) {
  v1::SupervisorSpec spec;
  spec.set_datasource(datasource);
  if (automatic) spec.mutable_compaction()->set_period("PT1M");
  return spec;
}

struct Recorder {
  std::vector<v1::SupervisorSpec> specs;
  std::vector<std::string> calls;  // "compact wiki auto", "upkeep wiki", ...

  CompactionSchedulerOptions Options() {
    CompactionSchedulerOptions options;
    options.max_queued = 2;
    options.running_specs = [this] { return specs; };
    options.compact = [this](const v1::SupervisorSpec& spec, const CompactionRequest& request) {
      calls.push_back("compact " + spec.datasource() + (request.on_demand ? " now" : " auto") +
                      (request.interval.has_value() ? " interval" : ""));
      return absl::OkStatus();
    };
    options.upkeep = [this](const v1::SupervisorSpec& spec) {
      calls.push_back("upkeep " + spec.datasource());
      return absl::OkStatus();
    };
    options.period = [](const v1::SupervisorSpec& spec) -> std::optional<absl::Duration> {
      if (!spec.has_compaction()) return std::nullopt;
      return absl::Minutes(1);
    };
    return options;
  }
};

TEST(CompactionSchedulerTest, RequestsFirstThenEachConfiguredDatasourceOncePerPeriod) {
  Recorder r;
  r.specs = {Spec("wiki", true), Spec("clicks", false)};
  CompactionScheduler scheduler(r.Options());
  CompactionRequest request;
  request.datasource = "clicks";
  request.interval = v1::Interval();
  ASSERT_TRUE(scheduler.Enqueue(request).ok());
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  scheduler.RunOnce(t0);
  EXPECT_EQ(r.calls, (std::vector<std::string>{"compact clicks now interval", "compact wiki auto",
                                               "upkeep wiki"}));
  r.calls.clear();
  scheduler.RunOnce(t0 + absl::Seconds(59));  // within the period: nothing
  EXPECT_TRUE(r.calls.empty());
  scheduler.RunOnce(t0 + absl::Seconds(60));
  EXPECT_EQ(r.calls, (std::vector<std::string>{"compact wiki auto", "upkeep wiki"}));
}

TEST(CompactionSchedulerTest, TheQueueIsBoundedAndARequestForAStoppedDatasourceIsDropped) {
  Recorder r;
  CompactionScheduler scheduler(r.Options());
  CompactionRequest request;
  request.datasource = "gone";
  ASSERT_TRUE(scheduler.Enqueue(request).ok());
  ASSERT_TRUE(scheduler.Enqueue(request).ok());
  absl::Status full = scheduler.Enqueue(request);
  EXPECT_EQ(full.code(), absl::StatusCode::kResourceExhausted) << full;
  EXPECT_EQ(scheduler.queued(), 2);
  scheduler.RunOnce(absl::FromUnixSeconds(1));
  EXPECT_TRUE(r.calls.empty());
  EXPECT_EQ(scheduler.queued(), 0);
}

TEST(CompactionSchedulerTest, TheThreadRunsQueuedRequestsAndStopsWhenDestroyed) {
  Recorder r;
  r.specs = {Spec("wiki", false)};
  absl::Notification ran;
  CompactionSchedulerOptions options = r.Options();
  options.tick = absl::Milliseconds(10);
  options.compact = [&](const v1::SupervisorSpec&, const CompactionRequest&) {
    if (!ran.HasBeenNotified()) ran.Notify();
    return absl::OkStatus();
  };
  {
    CompactionScheduler scheduler(options);
    scheduler.Start();
    CompactionRequest request;
    request.datasource = "wiki";
    ASSERT_TRUE(scheduler.Enqueue(request).ok());
    EXPECT_TRUE(ran.WaitForNotificationWithTimeout(absl::Seconds(30)));
  }
}

}  // namespace
}  // namespace sluice::supervisor
