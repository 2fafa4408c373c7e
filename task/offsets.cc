#include "task/offsets.h"

#include "absl/strings/str_cat.h"
#include "common/spec.h"

namespace sluice::task {

std::string OffsetsToString(const OffsetMap& offsets) {
  std::string out = "{";
  for (const auto& [partition, offset] : offsets) {
    if (out.size() > 1) out += ", ";
    absl::StrAppend(&out, partition, ": ");
    if (offset == kEndOfPartition) {
      out += "END";
    } else {
      absl::StrAppend(&out, offset);
    }
  }
  out += "}";
  return out;
}

}  // namespace sluice::task
