#include "supervisor/allocator.h"

#include <gtest/gtest.h>

#include <limits>
#include <set>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/granularity.h"
#include "common/status_macros.h"
#include "common/time_util.h"
#include "supervisor/testing/test_util.h"

namespace sluice::supervisor {
namespace {

constexpr int64_t kHour = 3600 * 1000;
constexpr int64_t kT0 = 1'800'000'000'000 / kHour * kHour;
const Granularity kHourly(Granularity::Unit::kHour);

class AllocatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = testing::OpenTestStore(dir_.path());
    ASSERT_TRUE(
        store_->InTransaction([](StoreTxn& txn) { return txn.EnsureDatasource("wiki", 1); }).ok());
  }

  static v1::AllocateSegmentRequest Request(const std::string& sequence, int64_t start,
                                            int64_t end) {
    v1::AllocateSegmentRequest r;
    r.set_datasource("wiki");
    r.set_task_id("task");
    r.set_sequence_name(sequence);
    r.mutable_interval()->set_start_ms(start);
    r.mutable_interval()->set_end_ms(end);
    return r;
  }

  testing::TempDir dir_;
  FakeClock clock_;
  std::unique_ptr<MetadataStore> store_;
};

TEST_F(AllocatorTest, IdempotentPerSequenceAndIntervalWithAStableVersion) {
  Allocator allocator({store_.get(), &clock_});
  auto first = allocator.Allocate(Request("wiki_b_0", kT0, kT0 + kHour), kHourly);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->partition_num(), 0);
  EXPECT_EQ(first->version(), FormatIsoInstant(clock_.NowMs()));
  EXPECT_EQ(first->segment_id(),
            absl::StrCat("wiki_", FormatIsoInstant(kT0), "_", FormatIsoInstant(kT0 + kHour), "_",
                         first->version(), "_0"));

  clock_.Advance(absl::Minutes(5));
  auto again = allocator.Allocate(Request("wiki_b_0", kT0, kT0 + kHour), kHourly);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->segment_id(), first->segment_id());

  // Another sequence in the same interval: same version, next partition.
  auto next = allocator.Allocate(Request("wiki_b_1", kT0, kT0 + kHour), kHourly);
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(next->version(), first->version());
  EXPECT_EQ(next->partition_num(), 1);

  // Another interval gets its own version (the time of its first allocation).
  auto later = allocator.Allocate(Request("wiki_b_1", kT0 + kHour, kT0 + 2 * kHour), kHourly);
  ASSERT_TRUE(later.ok());
  EXPECT_EQ(later->partition_num(), 0);
  EXPECT_EQ(later->version(), FormatIsoInstant(clock_.NowMs()));
  EXPECT_NE(later->version(), first->version());
}

TEST_F(AllocatorTest, IntervalMustBeOneSegmentGranularityBucket) {
  Allocator allocator({store_.get(), &clock_});
  for (auto [start, end] : std::vector<std::pair<int64_t, int64_t>>{
           {kT0 + 1, kT0 + kHour + 1}, {kT0, kT0 + 2 * kHour}, {kT0, kT0 + kHour / 2}}) {
    auto result = allocator.Allocate(Request("s", start, end), kHourly);
    EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StrContains(result.status().message(), "HOUR bucket")) << result.status();
  }
  auto unknown = Request("s", kT0, kT0 + kHour);
  unknown.set_datasource("nobody");
  EXPECT_EQ(allocator.Allocate(unknown, kHourly).status().code(), absl::StatusCode::kNotFound);
}

// What one caller can make the store keep is bounded: a sequence holds at
// most max_intervals_per_sequence allocations; past that a new interval is
// refused (not retried), while its existing ones still answer.
TEST_F(AllocatorTest, ASequenceHoldsABoundedNumberOfIntervals) {
  AllocatorOptions options{store_.get(), &clock_};
  options.max_intervals_per_sequence = 3;
  Allocator allocator(options);
  for (int hour = 0; hour < 3; ++hour) {
    const int64_t start = kT0 + hour * kHour;
    ASSERT_TRUE(allocator.Allocate(Request("wiki_b_0", start, start + kHour), kHourly).ok());
  }
  auto past = allocator.Allocate(Request("wiki_b_0", kT0 + 3 * kHour, kT0 + 4 * kHour), kHourly);
  EXPECT_EQ(past.status().code(), absl::StatusCode::kFailedPrecondition) << past.status();
  EXPECT_TRUE(absl::StrContains(past.status().message(), "wiki_b_0")) << past.status();
  EXPECT_TRUE(allocator.Allocate(Request("wiki_b_0", kT0, kT0 + kHour), kHourly).ok());
  EXPECT_TRUE(allocator.Allocate(Request("wiki_b_1", kT0 + 3 * kHour, kT0 + 4 * kHour), kHourly)
                  .ok());
  int64_t held = 0;
  ASSERT_TRUE(store_
                  ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                    SLUICE_ASSIGN_OR_RETURN(held, txn.CountPendingSegments("wiki", "wiki_b_0"));
                    return absl::OkStatus();
                  })
                  .ok());
  EXPECT_EQ(held, 3);
}

// An interval whose end overflows int64 (start near its largest value, end
// the wrapped bucket end) is refused as an argument, with a human message,
// never a storage constraint error with SQL text.
TEST_F(AllocatorTest, AnIntervalOutsideTheRepresentableTimesIsAnInvalidArgument) {
  Allocator allocator({store_.get(), &clock_});
  const int64_t start = std::numeric_limits<int64_t>::max() / kHour * kHour;
  const int64_t wrapped = static_cast<int64_t>(static_cast<uint64_t>(start) + kHour);
  for (auto [s, e] : std::vector<std::pair<int64_t, int64_t>>{
           {start, wrapped}, {start, std::numeric_limits<int64_t>::max()},
           {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::min() + kHour}}) {
    auto result = allocator.Allocate(Request("wiki_b_0", s, e), kHourly);
    EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument) << result.status();
    EXPECT_TRUE(absl::StrContains(result.status().message(), "year")) << result.status();
    EXPECT_FALSE(absl::StrContains(absl::AsciiStrToLower(result.status().message()), "constraint"))
        << result.status();
  }
}

TEST_F(AllocatorTest, ConcurrentAllocationsForOneKeyReturnOneId) {
  // Eight threads over four connections to the same file.
  std::vector<std::unique_ptr<MetadataStore>> stores;
  stores.push_back(std::move(store_));
  for (int i = 0; i < 3; ++i) stores.push_back(testing::OpenTestStore(dir_.path()));
  for (int round = 0; round < 10; ++round) {
    std::vector<std::string> ids(8);
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
      threads.emplace_back([&, t] {
        Allocator allocator({stores[t % stores.size()].get(), &clock_});
        auto r =
            allocator.Allocate(Request(absl::StrCat("wiki_c_", round), kT0, kT0 + kHour), kHourly);
        ids[t] = r.ok() ? r->segment_id() : std::string(r.status().message());
      });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(std::set<std::string>(ids.begin(), ids.end()).size(), 1u) << ids[0];
    EXPECT_TRUE(absl::EndsWith(ids[0], absl::StrCat("_", round))) << ids[0];
  }
}

}  // namespace
}  // namespace sluice::supervisor
