#include "supervisor/naming.h"

#include <xxhash.h>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/time_util.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

namespace sluice::supervisor {
namespace {

std::string DeterministicBytes(const google::protobuf::MessageLite& message) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    message.SerializeToCodedStream(&coded);
  }
  return out;
}

}  // namespace

std::string BaseSequenceName(const std::string& datasource, const v1::DataSchema& schema,
                             const v1::TuningConfig& tuning, const OffsetMap& start_offsets,
                             int64_t min_message_time_ms, int64_t max_message_time_ms,
                             const OffsetMap& reset_counts, const std::string& input_parsing) {
  std::string input = DeterministicBytes(schema);
  input += '\xff';
  input += DeterministicBytes(tuning);
  input += '\xff';
  for (const auto& [partition, offset] : start_offsets) {
    absl::StrAppend(&input, "p", partition, "(", offset, ")");
  }
  absl::StrAppend(&input, "\xff", min_message_time_ms, "\xff", max_message_time_ms);
  for (const auto& [partition, count] : reset_counts) {
    if (count > 0 && start_offsets.count(partition)) {
      absl::StrAppend(&input, "\xffreset p", partition, "(", count, ")");
    }
  }
  if (!input_parsing.empty()) absl::StrAppend(&input, "\xffinput ", input_parsing);
  const uint64_t hash = XXH64(input.data(), input.size(), /*seed=*/0);
  return absl::StrFormat("%s_%016x", datasource, hash);
}

std::string InputParsingBytes(const v1::IoConfig& io) {
  std::string out;
  if (io.has_input_format()) absl::StrAppend(&out, "f", DeterministicBytes(io.input_format()));
  if (io.has_header_based_filter_config()) {
    absl::StrAppend(&out, "\xffh", DeterministicBytes(io.header_based_filter_config()));
  }
  return out;
}

std::string RandomHex(int chars) {
  thread_local absl::BitGen gen;
  std::string out;
  for (int i = 0; i < chars; ++i) out += "0123456789abcdef"[absl::Uniform(gen, 0, 16)];
  return out;
}

std::string NewTaskId(const std::string& base_sequence_name) {
  return absl::StrCat(base_sequence_name, "_", RandomHex(8));
}

std::string SequenceName(const std::string& base_sequence_name, int32_t sequence_id) {
  return absl::StrCat(base_sequence_name, "_", sequence_id);
}

std::string SegmentId(const std::string& datasource, int64_t start_ms, int64_t end_ms,
                      const std::string& version, int32_t partition_num) {
  return absl::StrCat(datasource, "_", FormatIsoInstant(start_ms), "_", FormatIsoInstant(end_ms),
                      "_", version, "_", partition_num);
}

}  // namespace sluice::supervisor
