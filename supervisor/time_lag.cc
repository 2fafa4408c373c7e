#include "supervisor/time_lag.h"

#include <algorithm>

namespace sluice::supervisor {

std::map<int32_t, int64_t> PartitionTimeLags(const OffsetMap& latest, const OffsetMap& current,
                                             const RecordTimes& newest,
                                             const RecordTimes& last_read) {
  std::map<int32_t, int64_t> lags;
  for (const auto& [partition, latest_offset] : latest) {
    auto at = current.find(partition);
    if (at != current.end() && at->second >= latest_offset) {
      lags[partition] = 0;
      continue;
    }
    auto newest_time = newest.find(partition);
    auto read_time = last_read.find(partition);
    if (newest_time == newest.end() || read_time == last_read.end()) continue;
    if (newest_time->second < 0 || read_time->second < 0) continue;  // no timestamp
    lags[partition] = std::max<int64_t>(0, newest_time->second - read_time->second);
  }
  return lags;
}

}  // namespace sluice::supervisor
