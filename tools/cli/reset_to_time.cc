#include "tools/cli/reset_to_time.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/time_util.h"
#include "tools/cli/table.h"

namespace sluice {
namespace sluicectl {

absl::StatusOr<int64_t> ParseResetTime(absl::string_view text) {
  text = absl::StripAsciiWhitespace(text);
  if (text.empty()) {
    return absl::InvalidArgumentError(
        "--to_time is empty: give an ISO-8601 time (2026-12-06T00:00:00Z) or epoch milliseconds");
  }
  int64_t ms = 0;
  if (std::all_of(text.begin(), text.end(), [](char c) { return absl::ascii_isdigit(c); })) {
    if (!absl::SimpleAtoi(text, &ms)) {
      return absl::InvalidArgumentError(absl::StrCat("--to_time \"", text, "\": too large"));
    }
    return ms;
  }
  absl::StatusOr<int64_t> parsed = ParseIsoInstantMillis(text);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--to_time \"", text, "\" is neither an ISO-8601 time (e.g. ",
                     "2026-12-06T00:00:00Z) nor epoch milliseconds: ", parsed.status().message()));
  }
  if (*parsed < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--to_time \"", text, "\" is before 1970 (Kafka timestamps are not)"));
  }
  return *parsed;
}

absl::StatusOr<kafka::KafkaProperties> SpecKafkaProperties(
    const v1::SupervisorSpec& spec, absl::string_view bootstrap, kafka::ClusterKind kind,
    const std::optional<kafka::PropertyPolicyOptions>& policy) {
  kafka::KafkaProperties properties;
  for (const auto& [name, value] : spec.io_config().consumer_properties()) {
    // A redacted secret cannot be used; the connection goes without it.
    if (value == kafka::kRedacted) continue;
    properties[name] = value;
  }
  if (!bootstrap.empty()) properties["bootstrap.servers"] = std::string(bootstrap);
  if (properties["bootstrap.servers"].empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "no Kafka address for ", spec.datasource(), ": give the bootstrap servers (--bootstrap)"));
  }
  // The lookup never joins a group (MetadataClient uses its own id).
  properties.erase("group.id");
  if (policy.has_value()) {
    absl::StatusOr<kafka::KafkaProperties> resolved =
        kafka::ResolveSecretReferences(properties, *policy);
    if (!resolved.ok()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the spec's secret references cannot be resolved here: ", resolved.status().message()));
    }
    properties = *std::move(resolved);
  }
  return kafka::WithConsumerDefaults(properties, kind);
}

absl::StatusOr<std::vector<PartitionReset>> LookUpOffsetsForTime(
    const kafka::KafkaProperties& properties, absl::string_view topic, int64_t time_ms,
    const std::map<int32_t, int64_t>& committed, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<kafka::MetadataClient> client,
                          kafka::MetadataClient::Create(properties));
  SLUICE_ASSIGN_OR_RETURN(std::vector<int32_t> partitions,
                          client->ListPartitions(topic, timeout));
  SLUICE_ASSIGN_OR_RETURN(
      auto offsets,
      client->OffsetsForTime(topic, partitions, time_ms,
                             std::max(deadline - absl::Now(), absl::Milliseconds(1))));
  std::vector<PartitionReset> plan;
  for (const auto& [partition, found] : offsets) {
    PartitionReset reset;
    reset.partition = partition;
    if (auto it = committed.find(partition); it != committed.end()) reset.committed = it->second;
    reset.new_offset = found.offset;
    reset.source = found.source;
    plan.push_back(reset);
  }
  return plan;
}

std::string FormatResetPreview(absl::string_view datasource, absl::string_view topic,
                               int64_t time_ms, const std::vector<PartitionReset>& plan) {
  std::string out = absl::StrCat("reset-offsets ", datasource, ": topic ", topic,
                                 ", first records at or after ", FormatIsoInstant(time_ms), " (",
                                 time_ms, ")\n");
  Table table({"PARTITION", "COMMITTED", "NEW", "CHANGE", "NOTE"},
              {Table::kRight, Table::kRight, Table::kRight, Table::kLeft, Table::kLeft});
  bool past_end = false;
  for (const PartitionReset& reset : plan) {
    std::string change;
    if (!reset.committed.has_value()) {
      change = "starts there";
    } else if (reset.change() > 0) {
      change = absl::StrCat("skips ", reset.change());
    } else if (reset.change() < 0) {
      change = absl::StrCat("reads ", -reset.change(), " again");
    } else {
      change = "unchanged";
    }
    std::string note;
    if (reset.source == kafka::OffsetForTimeSource::kPastEnd) {
      note = "no record that new: latest offset";
      past_end = true;
    }
    table.AddRow({absl::StrCat(reset.partition),
                  reset.committed.has_value() ? absl::StrCat(*reset.committed) : "-",
                  absl::StrCat(reset.new_offset), change, note});
  }
  absl::StrAppend(&out, table.Render("  "));
  if (past_end) {
    absl::StrAppend(&out,
                    "  (the time is past the end of some partitions: they go to their latest "
                    "offset and read only what arrives from now on)\n");
  }
  return out;
}

std::map<int32_t, int64_t> ChangedOffsets(const std::vector<PartitionReset>& plan) {
  std::map<int32_t, int64_t> offsets;
  for (const PartitionReset& reset : plan) {
    if (reset.committed.has_value() && *reset.committed == reset.new_offset) continue;
    offsets[reset.partition] = reset.new_offset;
  }
  return offsets;
}

}  // namespace sluicectl
}  // namespace sluice
