#include "supervisor/spec_admission.h"


#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/druid/druid_spec.h"
#include "common/spec.h"
#include "common/spec_secrets.h"
#include "common/status_macros.h"

namespace sluice::supervisor {

absl::StatusOr<SubmittedSpec> SpecOfSubmitRequest(const v1::SubmitSupervisorRequest& request) {
  if (request.druid_spec_json().empty()) {
    if (request.allow_unsupported()) {
      return absl::InvalidArgumentError(
          "allow_unsupported applies to druid_spec_json only; this request has a spec in "
          "sluice's form, which has no unsupported fields");
    }
    return SubmittedSpec{request.spec(), {}};
  }
  if (request.has_spec()) {
    return absl::InvalidArgumentError(
        "give either spec (sluice's form) or druid_spec_json (a Druid spec), not both");
  }
  absl::StatusOr<druid::DruidConversion> converted = druid::FromDruidJson(
      request.druid_spec_json(), {.allow_unsupported = request.allow_unsupported()});
  if (!converted.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("druid_spec_json: ", converted.status().message()));
  }
  return SubmittedSpec{std::move(converted->spec), std::move(converted->warnings)};
}

namespace {

// A column's Iceberg type as a spec makes it: dimensions "string", long
// metrics "long", double metrics "double".
std::map<std::string, std::string> IcebergColumnTypes(const v1::SupervisorSpec& spec) {
  static const std::set<std::string> kLong = {"count", "longSum", "longMin", "longMax"};
  std::map<std::string, std::string> types;
  for (const std::string& d : spec.data_schema().dimensions_spec().dimensions()) {
    types[d] = "string";
  }
  for (const v1::MetricSpec& m : spec.data_schema().metrics_spec()) {
    types[m.name()] = kLong.count(m.type()) ? "long" : "double";
  }
  return types;
}

// An Iceberg column keeps its type: a spec that would write another type
// into a column of the table the live spec writes is refused, naming the
// field (the publishes would fail; Iceberg does not narrow or widen across
// string/long/double). A new name is a new column.
absl::Status CheckIcebergColumnTypes(const v1::SupervisorSpec& spec,
                                     const v1::SupervisorSpec& stored) {
  if (!spec.has_iceberg_table() || !stored.has_iceberg_table() ||
      spec.iceberg_table().SerializeAsString() != stored.iceberg_table().SerializeAsString()) {
    return absl::OkStatus();
  }
  const std::map<std::string, std::string> before = IcebergColumnTypes(stored);
  const v1::DataSchema& schema = spec.data_schema();
  auto check = [&](const std::string& field, const std::string& name,
                   const std::string& type) -> absl::Status {
    auto it = before.find(name);
    if (it == before.end() || it->second == type) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat(
        field, ": column \"", name, "\" of Iceberg table ", spec.iceberg_table().table_namespace(),
        ".", spec.iceberg_table().table_name(), " is ", it->second, "; it cannot become ", type,
        " (give the column a new name)"));
  };
  for (int i = 0; i < schema.dimensions_spec().dimensions_size(); ++i) {
    SLUICE_RETURN_IF_ERROR(check(absl::StrCat("dataSchema.dimensionsSpec.dimensions[", i, "]"),
                                 schema.dimensions_spec().dimensions(i), "string"));
  }
  const std::map<std::string, std::string> after = IcebergColumnTypes(spec);
  for (int i = 0; i < schema.metrics_spec_size(); ++i) {
    const std::string& name = schema.metrics_spec(i).name();
    SLUICE_RETURN_IF_ERROR(
        check(absl::StrCat("dataSchema.metricsSpec[", i, "].type"), name, after.at(name)));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<v1::SupervisorSpec> AdmitSpec(const v1::SupervisorSpec& submitted,
                                             const v1::SupervisorSpec* stored,
                                             const kafka::PropertyPolicyOptions& policy) {
  // "***" for a secret keeps the stored value (answers never show secrets).
  v1::SupervisorSpec with_secrets = submitted;
  SLUICE_RETURN_IF_ERROR(KeepStoredSecrets(&with_secrets, stored));
  SLUICE_ASSIGN_OR_RETURN(v1::SupervisorSpec spec, NormalizeSpec(std::move(with_secrets)));
  const kafka::KafkaProperties properties(spec.io_config().consumer_properties().begin(),
                                          spec.io_config().consumer_properties().end());
  SLUICE_RETURN_IF_ERROR(kafka::CheckProperties(properties, policy));
  if (stored != nullptr) SLUICE_RETURN_IF_ERROR(CheckIcebergColumnTypes(spec, *stored));
  return spec;
}

absl::Status CheckTopicSwitch(const std::string& datasource,
                              const std::optional<std::string>& commit_topic,
                              const OffsetMap& committed, const std::string& topic) {
  if (commit_topic && *commit_topic != topic && !committed.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("datasource ", datasource, " has stored offsets for topic \"", *commit_topic,
                     "\", not \"", topic, "\"; reset the supervisor before switching topics"));
  }
  return absl::OkStatus();
}

namespace {

// "topic \"wiki\"" or "topicPattern \"wiki-.*\"" (whose partitions are
// stream partition ids).
std::string StreamLabel(const v1::SupervisorStatus& status) {
  return status.topic_pattern().empty()
             ? absl::StrCat("topic \"", status.topic(), "\"")
             : absl::StrCat("topicPattern \"", status.topic_pattern(), "\"");
}

}  // namespace

absl::Status CheckNoEndMarker(const v1::SupervisorStatus& status,
                              const google::protobuf::Map<int32_t, int64_t>& offsets) {
  std::set<int32_t> marked;
  for (const auto& [p, offset] : offsets) {
    if (offset == kEndOfPartition) marked.insert(p);
  }
  if (marked.empty()) return absl::OkStatus();
  std::vector<std::string> ends;
  for (int32_t p : marked) {
    auto latest = status.latest_offsets().find(p);
    if (latest != status.latest_offsets().end()) ends.push_back(absl::StrCat(p, ":", latest->second));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "offset ", kEndOfPartition, " (END_OF_PARTITION, the end marker) is not an offset to reset ",
      "to; partition(s) ", absl::StrJoin(marked, ", "), " must be given a number",
      ends.empty() ? std::string()
                   : absl::StrCat(" (their end, as last read from Kafka: {",
                                  absl::StrJoin(ends, ", "), "})"),
      "; nothing was reset"));
}

absl::Status CheckPartitionsExist(const v1::SupervisorStatus& status,
                                  const google::protobuf::Map<int32_t, int64_t>& offsets) {
  if (status.latest_offsets().empty()) {
    return absl::UnavailableError(absl::StrCat(
        "the partitions of ", StreamLabel(status),
        " are not known yet (Kafka not reached); try again once the status shows them"));
  }
  std::set<int32_t> missing;
  for (const auto& [p, unused] : offsets) {
    if (!status.latest_offsets().contains(p)) missing.insert(p);
  }
  if (missing.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(StreamLabel(status), " has no partition ", absl::StrJoin(missing, ", "),
                   " (it has ", status.latest_offsets().size(), ": 0 to ",
                   status.latest_offsets().size() - 1, "); nothing was reset"));
}

}  // namespace sluice::supervisor
