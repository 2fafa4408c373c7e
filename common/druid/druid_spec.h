// Druid Kafka supervisor specs <-> sluice SupervisorSpecs.
//
// FromDruidJson reads a Druid Kafka supervisor spec ({"type": "kafka",
// "spec": {"dataSchema", "ioConfig", "tuningConfig"}}, or the older form with
// those three at the top level), maps every field sluice supports and names
// every field it does not by its JSON path ("spec.tuningConfig.indexSpec").
// ToDruidJson writes a sluice spec in Druid's shape; FromDruidJson of that
// gives the same spec back. docs/druid-specs.md lists the mapping.
//
//   absl::StatusOr<druid::DruidConversion> c = druid::FromDruidJson(text, {});
//   if (!c.ok()) return c.status();  // INVALID_ARGUMENT naming each field
//   Submit(c->spec);
//
// Plain C++ over the contract's messages (no gRPC). The result is not
// normalized or checked against the Kafka property policy: the supervisor's
// admission does that, exactly as for a spec in sluice's form.
#ifndef SLUICE_COMMON_DRUID_DRUID_SPEC_H_
#define SLUICE_COMMON_DRUID_DRUID_SPEC_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "sluice/v1/spec.pb.h"

namespace sluice::druid {

struct FromDruidOptions {
  // Ignore unsupported fields (one warning each) instead of refusing the spec.
  bool allow_unsupported = false;
};

struct DruidConversion {
  v1::SupervisorSpec spec;
  // One line per field ignored (allow_unsupported) or mapped with a
  // difference (a numeric dimension stored as a string dimension), each
  // naming the field by its JSON path.
  std::vector<std::string> warnings;
};

// INVALID_ARGUMENT when `json` is not JSON or not an object, when a field has
// the wrong type or a value sluice cannot honor (inputFormat csv, a Joda
// timestamp pattern, an unknown granularity), and, without allow_unsupported,
// when any field is unsupported, and when arrays and objects nest deeper than
// kMaxJsonDepth (common/json_depth.h). The message names every such field.
absl::StatusOr<DruidConversion> FromDruidJson(absl::string_view json,
                                              const FromDruidOptions& options);

// `spec` as a Druid Kafka supervisor spec, {"type": "kafka", "spec": {...},
// "suspended": ...}, pretty-printed. Fields sluice has and Druid does not
// (tuningConfig.handoffMode, checkpointRetryPeriod) are written under their
// sluice names, which FromDruidJson reads back.
absl::StatusOr<std::string> ToDruidJson(const v1::SupervisorSpec& spec);

}  // namespace sluice::druid

#endif  // SLUICE_COMMON_DRUID_DRUID_SPEC_H_
