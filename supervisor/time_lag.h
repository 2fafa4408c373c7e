// Time lag per partition (Druid's partition time lag): how
// far, in record time, reading is behind the newest record. Pure.
#ifndef SLUICE_SUPERVISOR_TIME_LAG_H_
#define SLUICE_SUPERVISOR_TIME_LAG_H_

#include <cstdint>
#include <map>

#include "common/offsets.h"

namespace sluice::supervisor {

// Partition -> Kafka timestamp (epoch millis).
using RecordTimes = std::map<int32_t, int64_t>;

// For each partition of `latest`: 0 when reading reached the latest offset
// (`current` at or past it); else the newest record's timestamp minus that
// of the last record read, at least 0 (producers' clocks and
// CreateTime let timestamps go backwards); absent when either is unknown.
std::map<int32_t, int64_t> PartitionTimeLags(const OffsetMap& latest, const OffsetMap& current,
                                             const RecordTimes& newest, const RecordTimes& last_read);

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_TIME_LAG_H_
