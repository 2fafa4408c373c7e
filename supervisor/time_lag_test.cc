#include "supervisor/time_lag.h"

#include <gtest/gtest.h>

namespace sluice::supervisor {
namespace {

TEST(PartitionTimeLagsTest, NewestMinusLastReadZeroWhenCaughtUpAbsentWhenUnknown) {
  const OffsetMap latest = {{0, 100}, {1, 50}, {2, 10}, {3, 7}, {4, 9}};
  const OffsetMap current = {{0, 90}, {1, 50}, {2, 4}, {4, 1}};
  const RecordTimes newest = {{0, 10'000}, {2, 5'000}, {3, 1'000}, {4, 3'000}};
  const RecordTimes last_read = {{0, 7'500}, {1, 1}, {2, 6'000}, {4, -1}};
  const std::map<int32_t, int64_t> lags = PartitionTimeLags(latest, current, newest, last_read);
  EXPECT_EQ(lags, (std::map<int32_t, int64_t>{
                      {0, 2'500},  // behind by 2.5 s of record time
                      {1, 0},      // read to the latest offset
                      {2, 0},      // timestamps went backwards: never negative
                  }));
  // 3: nothing read yet; 4: a record without a timestamp.
}

}  // namespace
}  // namespace sluice::supervisor
