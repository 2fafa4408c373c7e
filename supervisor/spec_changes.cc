#include "supervisor/spec_changes.h"

#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/util/message_differencer.h"

namespace sluice::supervisor {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

// One field of two messages of the same type, compared alone (maps as maps).
bool FieldEquals(const Message& a, const Message& b, const FieldDescriptor* field) {
  google::protobuf::util::MessageDifferencer differencer;
  const std::vector<const FieldDescriptor*> fields = {field};
  return differencer.CompareWithFields(a, b, fields, fields);
}

void Changed(const Message& a, const Message& b, const std::string& prefix,
             std::vector<std::string>* out) {
  const google::protobuf::Descriptor* descriptor = a.GetDescriptor();
  const google::protobuf::Reflection* reflection = a.GetReflection();
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const FieldDescriptor* field = descriptor->field(i);
    const std::string path = absl::StrCat(prefix, field->json_name());
    if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE && !field->is_repeated()) {
      // Unset compares as the default instance: NormalizeSpec fills
      // defaults, so presence alone is no change. Neither set: equal (and
      // recursive messages such as DimFilter end there).
      if (!reflection->HasField(a, field) && !reflection->HasField(b, field)) continue;
      Changed(reflection->GetMessage(a, field), reflection->GetMessage(b, field),
              absl::StrCat(path, "."), out);
      continue;
    }
    if (!FieldEquals(a, b, field)) out->push_back(path);
  }
}

// Prefixes of the fields a running supervisor takes in place.
constexpr const char* kLiveFields[] = {
    "suspended",
    "ioConfig.taskCount",           // at each group's next roll-over
    "ioConfig.replicas",            // more: started now; fewer: at roll-over
    "ioConfig.stopTaskCount",
    "ioConfig.taskDuration",        // reading groups roll over at the new age
    "ioConfig.startDelay",
    "ioConfig.period",
    "ioConfig.completionTimeout",
    "ioConfig.useEarliestOffset",   // only where no offsets are stored
    "ioConfig.idleConfig.",
    "ioConfig.autoScalerConfig.",   // the samples are kept; the count stays
    "tuningConfig.maxRowsPerSegment",  // checkpoint triggers: the end offsets
    "tuningConfig.maxTotalRows",       // are agreed by the supervisor
    "tuningConfig.intermediateHandoffPeriod",
    "tuningConfig.handoffConditionTimeout",
    "tuningConfig.maxParseExceptions",
    "tuningConfig.maxSavedParseExceptions",
    "tuningConfig.resetOffsetAutomatically",
    "tuningConfig.checkpointRetryPeriod",
    // Written by the supervisor at each publish, from the latest spec; never
    // part of a segment.
    "icebergTable.",
};

bool IsLive(const std::string& path) {
  for (const char* live : kLiveFields) {
    const absl::string_view prefix(live);
    if (absl::EndsWith(prefix, ".") ? absl::StartsWith(path, prefix) : path == prefix) {
      return true;
    }
  }
  return false;
}

}  // namespace

std::vector<std::string> ChangedSpecFields(const v1::SupervisorSpec& before,
                                           const v1::SupervisorSpec& after) {
  std::vector<std::string> changed;
  Changed(before, after, "", &changed);
  return changed;
}

bool AppliesLive(const std::vector<std::string>& changed) {
  for (const std::string& path : changed) {
    if (!IsLive(path)) return false;
  }
  return true;
}

}  // namespace sluice::supervisor
