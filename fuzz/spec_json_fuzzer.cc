// libFuzzer target: any bytes as a supervisor spec in JSON (what a submit
// carries). Parsing and NormalizeSpec must never crash; a spec NormalizeSpec
// accepts must normalize to itself again, and its durations must parse (the
// promise of common/spec.h).
#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/message_differencer.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "common/spec.h"

namespace {

void Check(bool condition) {
  if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string json(reinterpret_cast<const char*>(data), size);
  sluice::v1::SupervisorSpec spec;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  if (!google::protobuf::util::JsonStringToMessage(json, &spec, options).ok()) return 0;
  absl::StatusOr<sluice::v1::SupervisorSpec> normalized = sluice::NormalizeSpec(spec);
  if (!normalized.ok()) {
    Check(normalized.status().code() == absl::StatusCode::kInvalidArgument);
    Check(!normalized.status().message().empty());
    return 0;
  }
  absl::StatusOr<sluice::v1::SupervisorSpec> again = sluice::NormalizeSpec(*normalized);
  Check(again.ok());
  Check(google::protobuf::util::MessageDifferencer::Equals(*normalized, *again));
  Check(sluice::ParseSpecTimings(*normalized).ok());
  return 0;
}
