// Names the supervisor makes (docs/protocol.md "Names"): base sequence names,
// task ids, sequence names and segment ids.
#ifndef SLUICE_SUPERVISOR_NAMING_H_
#define SLUICE_SUPERVISOR_NAMING_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "sluice/v1/spec.pb.h"
#include "common/offsets.h"

namespace sluice::supervisor {

// "<datasource>_<16 hex>": xxh64 over the deterministic serialization of the
// data schema and the tuning config, the sorted start offsets, the min/max
// message times and, for the group's partitions whose stored offsets were
// ever reset, how many times (`reset_counts`; partitions never reset add
// nothing, so those names are as before). Depends on nothing else, so
// replicas and replacements of a group share it and a changed spec changes
// it; a group that starts again at offsets an earlier group started from
// after an offset reset gets a new name (the earlier group's sequences may be
// committed under the old one).
std::string BaseSequenceName(const std::string& datasource, const v1::DataSchema& schema,
                             const v1::TuningConfig& tuning, const OffsetMap& start_offsets,
                             int64_t min_message_time_ms, int64_t max_message_time_ms,
                             const OffsetMap& reset_counts = {},
                             const std::string& input_parsing = {});

// The part of the ioConfig that decides how records become rows (inputFormat,
// headerBasedFilterConfig) as bytes for BaseSequenceName's `input_parsing`:
// empty when neither is set, so those names are as before.
std::string InputParsingBytes(const v1::IoConfig& io);

// "<base>_<8 random hex>".
std::string NewTaskId(const std::string& base_sequence_name);

// "<base>_<n>".
std::string SequenceName(const std::string& base_sequence_name, int32_t sequence_id);

// The id n of `sequence_name` when it is exactly SequenceName(base, n): the
// one canonical form, n in decimal digits with no sign, no leading zero (but
// "0" itself) and at most INT32_MAX, so that a sequence has one name only
// (an alias as "<base>_007" would be another commit-log key for sequence 7).
// NOT_FOUND when the name does not start with "<base>_" (not a sequence of
// that group); INVALID_ARGUMENT, naming it, when it does but the rest is not
// the canonical form of a sequence id.
absl::StatusOr<int32_t> ParseSequenceName(absl::string_view base_sequence_name,
                                          absl::string_view sequence_name);

// "<datasource>_<start ISO>_<end ISO>_<version>_<partition>".
std::string SegmentId(const std::string& datasource, int64_t start_ms, int64_t end_ms,
                      const std::string& version, int32_t partition_num);

// 16 random hex characters (supervisor instance ids).
std::string RandomHex(int chars);

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_NAMING_H_
