#include "supervisor/naming.h"

#include <xxhash.h>

#include "absl/random/random.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
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

absl::StatusOr<int32_t> ParseSequenceName(absl::string_view base_sequence_name,
                                          absl::string_view sequence_name) {
  absl::string_view number = sequence_name;
  if (!absl::ConsumePrefix(&number, base_sequence_name) || !absl::ConsumePrefix(&number, "_")) {
    return absl::NotFoundError(absl::StrCat("sequence ", sequence_name,
                                            " is not a sequence of group ", base_sequence_name));
  }
  auto invalid = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("sequence name \"", sequence_name,
                                                   "\" is not canonical: ", why));
  };
  if (number.empty() || number.find_first_not_of("0123456789") != absl::string_view::npos) {
    return invalid("its sequence id must be decimal digits only");
  }
  if (number.size() > 1 && number[0] == '0') return invalid("its sequence id has a leading zero");
  int32_t id = -1;
  if (!absl::SimpleAtoi(number, &id) || id < 0) {
    return invalid("its sequence id is larger than 2147483647");
  }
  return id;
}

std::string SegmentId(const std::string& datasource, int64_t start_ms, int64_t end_ms,
                      const std::string& version, int32_t partition_num) {
  return absl::StrCat(datasource, "_", FormatIsoInstant(start_ms), "_", FormatIsoInstant(end_ms),
                      "_", version, "_", partition_num);
}

}  // namespace sluice::supervisor
