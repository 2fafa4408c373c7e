#include "supervisor/task_client.h"

#include <gtest/gtest.h>

#include "supervisor/testing/test_util.h"

namespace sluice::supervisor {
namespace {

TEST(ChatOptionsFromTuningTest, TimeoutRetriesAndBackoffCap) {
  const v1::SupervisorSpec spec = testing::TestSpec("ds");  // PT0.5S, 2 retries
  ChatOptions options = ChatOptionsFromTuning(spec.tuning_config());
  EXPECT_EQ(options.timeout, absl::Milliseconds(500));
  EXPECT_EQ(options.attempts, 2);
  EXPECT_EQ(options.initial_backoff, absl::Milliseconds(50));
  EXPECT_EQ(options.max_backoff, absl::Milliseconds(500));  // never longer than an attempt
}

TEST(ChatOptionsFromTuningTest, DefaultsWhenUnset) {
  v1::TuningConfig tuning = testing::TestSpec("ds").tuning_config();
  tuning.set_chat_timeout("PT30S");
  tuning.clear_chat_retries();
  ChatOptions options = ChatOptionsFromTuning(tuning);
  EXPECT_EQ(options.timeout, absl::Seconds(30));
  EXPECT_EQ(options.attempts, ChatOptions().attempts);
  EXPECT_EQ(options.max_backoff, ChatOptions().max_backoff);
}

TEST(ChatOptionsFromTuningTest, UnparseableTimingsKeepTheDefaultTimeout) {
  v1::TuningConfig tuning;  // not normalized: its durations do not parse
  tuning.set_chat_retries(5);
  ChatOptions options = ChatOptionsFromTuning(tuning);
  EXPECT_EQ(options.timeout, ChatOptions().timeout);
  EXPECT_EQ(options.attempts, 5);
}

}  // namespace
}  // namespace sluice::supervisor
