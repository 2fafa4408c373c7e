#include "common/spec.h"

#include <algorithm>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/granularity.h"
#include "common/names.h"
#include "common/request_limits.h"
#include "common/segment/dim_filter.h"
#include "common/segment/header_decoding.h"
#include "common/segment/row_transform.h"
#include "common/status_macros.h"
#include "common/topic_pattern.h"
#include "common/time_util.h"

namespace sluice {
namespace {

constexpr absl::Duration kDay = absl::Hours(24);
constexpr absl::Duration kYear = absl::Hours(24 * 365);

void DefaultString(std::string* field, const char* value) {
  if (field->empty()) *field = value;
}

absl::Status Invalid(absl::string_view field, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(field, " ", what));
}

absl::Status Required(absl::string_view field, bool present) {
  return present ? absl::OkStatus() : Invalid(field, "is required");
}

// Parses an ISO-8601 duration field and checks its bounds.
absl::StatusOr<absl::Duration> DurationField(absl::string_view field, const std::string& text,
                                             absl::Duration minimum,
                                             absl::Duration maximum = absl::InfiniteDuration()) {
  auto d = ParseIsoDuration(text);
  if (!d.ok()) return Invalid(field, std::string(d.status().message()));
  if (*d < minimum) {
    return Invalid(field, absl::StrCat("must be at least ", FormatIsoDuration(minimum),
                                       " (got ", text, ")"));
  }
  if (*d > maximum) {
    return Invalid(field, absl::StrCat("must be at most ", FormatIsoDuration(maximum),
                                       " (got ", text, ")"));
  }
  return *d;
}

absl::StatusOr<std::optional<absl::Duration>> OptionalDurationField(absl::string_view field,
                                                                    const std::string& text) {
  if (text.empty()) return std::optional<absl::Duration>();
  SLUICE_ASSIGN_OR_RETURN(absl::Duration d,
                          DurationField(field, text, absl::ZeroDuration(), 36500 * kDay));
  return std::optional<absl::Duration>(d);
}

absl::Status ValidateTopic(const std::string& topic) {
  if (topic.empty()) return Invalid("ioConfig.topic", "is required (or ioConfig.topicPattern)");
  if (topic.size() > 249) return Invalid("ioConfig.topic", "is longer than Kafka's 249 characters");
  if (topic == "." || topic == "..") return Invalid("ioConfig.topic", "must not be \".\" or \"..\"");
  for (char c : topic) {
    if (absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-') {
      continue;
    }
    return Invalid("ioConfig.topic",
                   absl::StrCat("\"", topic, "\" is not a valid Kafka topic name ",
                                "(letters, digits, '.', '_', '-')"));
  }
  return absl::OkStatus();
}

// Well-formed UTF-8: no overlong forms, no surrogates, nothing past U+10FFFF.
bool IsValidUtf8(absl::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = s[i];
    size_t n;
    uint32_t cp;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xe0) == 0xc0) {
      n = 1, cp = c & 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
      n = 2, cp = c & 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
      n = 3, cp = c & 0x07;
    } else {
      return false;
    }
    if (i + n >= s.size()) return false;  // truncated sequence
    for (size_t k = 1; k <= n; ++k) {
      const unsigned char d = s[i + k];
      if ((d & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3f);
    }
    static constexpr uint32_t kMin[] = {0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += n + 1;
  }
  return true;
}

// A column name (timestamp column, dimension, metric, metric input): 1 to 256
// bytes (the proto bounds the length) of UTF-8 without control characters.
absl::Status ValidateColumnName(absl::string_view field, const std::string& name) {
  if (name.empty()) return Invalid(field, "must not be empty");
  if (!IsValidUtf8(name)) return Invalid(field, "is not valid UTF-8");
  for (unsigned char c : name) {
    if (c < 0x20 || c == 0x7f) {
      return Invalid(field, absl::StrFormat("contains the control character 0x%02x", c));
    }
  }
  return absl::OkStatus();
}

const std::set<std::string>& TimestampFormats() {
  static const auto* formats =
      new std::set<std::string>{"auto", "iso", "millis", "posix", "micros", "nanos"};
  return *formats;
}

const std::set<std::string>& MetricTypes() {
  static const auto* types = new std::set<std::string>{
      "count", "longSum", "doubleSum", "longMin", "longMax", "doubleMin", "doubleMax"};
  return *types;
}

// ioConfig.inputFormat (defaults filled in) against the data schema.
absl::Status ValidateInputFormat(const v1::InputFormat& format, const v1::DataSchema& schema) {
  constexpr absl::string_view kPath = "ioConfig.inputFormat";
  if (format.type() == "json") {
    v1::InputFormat bare;
    bare.set_type("json");
    if (format.SerializeAsString() != bare.SerializeAsString()) {
      return Invalid(kPath, "of type \"json\" takes no other field (they are for type \"kafka\")");
    }
    return absl::OkStatus();
  }
  if (format.type() != "kafka") {
    return Invalid(absl::StrCat(kPath, ".type"),
                   absl::StrCat("\"", format.type(), "\" is not one of json, kafka"));
  }
  v1::InputFormat json_only;
  json_only.set_type("json");
  if (format.value_format().SerializeAsString() != json_only.SerializeAsString()) {
    return Invalid(absl::StrCat(kPath, ".valueFormat"),
                   absl::StrCat("must be {\"type\": \"json\"} (got type \"",
                                format.value_format().type(), "\")"));
  }
  if (format.header_format().type() != "string") {
    return Invalid(absl::StrCat(kPath, ".headerFormat.type"),
                   absl::StrCat("\"", format.header_format().type(), "\" is not \"string\""));
  }
  if (auto encoding = segment::ParseHeaderEncoding(format.header_format().encoding());
      !encoding.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(kPath, ".headerFormat.encoding: ", encoding.status().message()));
  }
  SLUICE_RETURN_IF_ERROR(ValidateColumnName(absl::StrCat(kPath, ".headerColumnPrefix"),
                                            format.header_column_prefix()));
  const std::pair<const char*, const std::string*> columns[] = {
      {"keyColumnName", &format.key_column_name()},
      {"timestampColumnName", &format.timestamp_column_name()},
      {"topicColumnName", &format.topic_column_name()},
      {"partitionColumnName", &format.partition_column_name()},
      {"offsetColumnName", &format.offset_column_name()},
  };
  std::set<std::string> seen;
  for (const auto& [name, value] : columns) {
    if (value->empty()) continue;  // partition and offset: none
    const std::string field = absl::StrCat(kPath, ".", name);
    SLUICE_RETURN_IF_ERROR(ValidateColumnName(field, *value));
    if (*value == "__time") return Invalid(field, "\"__time\" is reserved");
    if (!seen.insert(*value).second) {
      return Invalid(field, absl::StrCat("\"", *value, "\" names another envelope column too"));
    }
    if (absl::StartsWith(*value, format.header_column_prefix())) {
      return Invalid(field, absl::StrCat("\"", *value, "\" starts with the headerColumnPrefix \"",
                                         format.header_column_prefix(), "\""));
    }
  }
  const v1::TimestampSpec& ts = schema.timestamp_spec();
  if (ts.column() == format.timestamp_column_name() && ts.format() != "auto" &&
      ts.format() != "millis") {
    return Invalid("dataSchema.timestampSpec.format",
                   absl::StrCat("must be auto or millis to read the Kafka timestamp column \"",
                                ts.column(), "\" (got ", ts.format(), ")"));
  }
  return absl::OkStatus();
}

absl::Status ValidateHeaderFilter(const v1::HeaderBasedFilterConfig& config) {
  constexpr absl::string_view kPath = "ioConfig.headerBasedFilterConfig";
  if (!config.has_filter()) return Invalid(absl::StrCat(kPath, ".filter"), "is required");
  SLUICE_RETURN_IF_ERROR(
      segment::DimFilterMatcher::Create(config.filter(), absl::StrCat(kPath, ".filter")).status());
  if (auto encoding = segment::ParseHeaderEncoding(config.encoding()); !encoding.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(kPath, ".encoding: ", encoding.status().message()));
  }
  return absl::OkStatus();
}

absl::Status ValidateDataSchema(const v1::DataSchema& schema) {
  const auto& ts = schema.timestamp_spec();
  if (ts.column().empty()) return Invalid("dataSchema.timestampSpec.column", "is required");
  SLUICE_RETURN_IF_ERROR(ValidateColumnName("dataSchema.timestampSpec.column", ts.column()));
  if (ts.column() == "__time") {
    return Invalid("dataSchema.timestampSpec.column", "\"__time\" is reserved");
  }
  if (!TimestampFormats().count(ts.format())) {
    return Invalid("dataSchema.timestampSpec.format",
                   absl::StrCat("\"", ts.format(), "\" is not one of ",
                                absl::StrJoin(TimestampFormats(), ", ")));
  }

  std::set<std::string> columns = {"__time"};
  for (int i = 0; i < schema.dimensions_spec().dimensions_size(); ++i) {
    const std::string& dim = schema.dimensions_spec().dimensions(i);
    const std::string field = absl::StrCat("dataSchema.dimensionsSpec.dimensions[", i, "]");
    SLUICE_RETURN_IF_ERROR(ValidateColumnName(field, dim));
    if (dim == ts.column()) {
      return Invalid(field, absl::StrCat("\"", dim, "\" is the timestamp column"));
    }
    if (!columns.insert(dim).second) {
      return Invalid(field, absl::StrCat("\"", dim, "\" is listed twice or reserved"));
    }
  }
  for (int i = 0; i < schema.metrics_spec_size(); ++i) {
    const auto& metric = schema.metrics_spec(i);
    const std::string field = absl::StrCat("dataSchema.metricsSpec[", i, "]");
    if (!MetricTypes().count(metric.type())) {
      return Invalid(absl::StrCat(field, ".type"),
                     absl::StrCat("\"", metric.type(), "\" is not one of ",
                                  absl::StrJoin(MetricTypes(), ", ")));
    }
    if (metric.name().empty()) return Invalid(absl::StrCat(field, ".name"), "is required");
    SLUICE_RETURN_IF_ERROR(ValidateColumnName(absl::StrCat(field, ".name"), metric.name()));
    if (metric.name() == ts.column()) {
      return Invalid(absl::StrCat(field, ".name"),
                     absl::StrCat("\"", metric.name(), "\" is the timestamp column"));
    }
    if (!metric.field_name().empty()) {
      SLUICE_RETURN_IF_ERROR(
          ValidateColumnName(absl::StrCat(field, ".fieldName"), metric.field_name()));
    }
    if (!columns.insert(metric.name()).second) {
      return Invalid(absl::StrCat(field, ".name"),
                     absl::StrCat("\"", metric.name(),
                                  "\" is already a dimension, a metric or reserved"));
    }
    if (metric.type() != "count" && metric.field_name().empty()) {
      return Invalid(absl::StrCat(field, ".fieldName"), "is required");
    }
  }

  // The transformSpec compiles here, as the task will compile it, so that a
  // bad one is refused at submit.
  SLUICE_RETURN_IF_ERROR(segment::RowTransform::Create(schema.transform_spec(),
                                                       "dataSchema.transformSpec", ts.column())
                             .status());
  for (int i = 0; i < schema.transform_spec().transforms_size(); ++i) {
    SLUICE_RETURN_IF_ERROR(
        ValidateColumnName(absl::StrCat("dataSchema.transformSpec.transforms[", i, "].name"),
                           schema.transform_spec().transforms(i).name()));
  }

  const auto& gran = schema.granularity_spec();
  auto segment = Granularity::Parse(gran.segment_granularity());
  if (!segment.ok()) {
    return Invalid("dataSchema.granularitySpec.segmentGranularity",
                   std::string(segment.status().message()));
  }
  if (segment->ApproximateMillis() < 60000) {
    return Invalid("dataSchema.granularitySpec.segmentGranularity",
                   absl::StrCat("must be MINUTE or coarser (got ", gran.segment_granularity(), ")"));
  }
  auto query = Granularity::Parse(gran.query_granularity());
  if (!query.ok()) {
    return Invalid("dataSchema.granularitySpec.queryGranularity",
                   std::string(query.status().message()));
  }
  if (query->ApproximateMillis() > segment->ApproximateMillis()) {
    return Invalid("dataSchema.granularitySpec.queryGranularity",
                   absl::StrCat(gran.query_granularity(), " is coarser than the segment granularity ",
                                gran.segment_granularity()));
  }
  return absl::OkStatus();
}

absl::Status ValidateAutoScaler(const v1::AutoScalerConfig& c) {
  const std::string at = "ioConfig.autoScalerConfig.";
  if (c.auto_scaler_strategy() != "lagBased") {
    return Invalid(at + "autoScalerStrategy",
                   absl::StrCat("\"", c.auto_scaler_strategy(), "\" is not \"lagBased\""));
  }
  if (c.lag_aggregate() != "SUM" && c.lag_aggregate() != "MAX" &&
      c.lag_aggregate() != "AVERAGE") {
    return Invalid(at + "lagAggregate",
                   absl::StrCat("\"", c.lag_aggregate(), "\" is not SUM, MAX or AVERAGE"));
  }
  if (!c.enable_task_auto_scaler()) return absl::OkStatus();
  if (!c.has_task_count_min() || !c.has_task_count_max()) {
    return Invalid(at + (c.has_task_count_min() ? "taskCountMax" : "taskCountMin"),
                   "is required when enableTaskAutoScaler is true");
  }
  if (c.task_count_min() > c.task_count_max()) {
    return Invalid(at + "taskCountMin", absl::StrCat(c.task_count_min(), " is more than taskCountMax ",
                                                     c.task_count_max()));
  }
  if (c.has_task_count_start() &&
      (c.task_count_start() < c.task_count_min() || c.task_count_start() > c.task_count_max())) {
    return Invalid(at + "taskCountStart",
                   absl::StrCat(c.task_count_start(), " is outside [taskCountMin, taskCountMax] = [",
                                c.task_count_min(), ", ", c.task_count_max(), "]"));
  }
  for (const auto& [name, fraction] :
       {std::pair<const char*, double>{"triggerScaleOutFractionThreshold",
                                       c.trigger_scale_out_fraction_threshold()},
        {"triggerScaleInFractionThreshold", c.trigger_scale_in_fraction_threshold()}}) {
    if (!(fraction > 0 && fraction <= 1)) {  // also NaN
      return Invalid(at + name, absl::StrCat(fraction, " is not in (0, 1]"));
    }
  }
  if (c.scale_in_threshold() > c.scale_out_threshold()) {
    return Invalid(at + "scaleInThreshold",
                   absl::StrCat(c.scale_in_threshold(), " is more than scaleOutThreshold ",
                                c.scale_out_threshold()));
  }
  if (c.lag_collection_range_millis() < c.lag_collection_interval_millis()) {
    return Invalid(at + "lagCollectionRangeMillis",
                   absl::StrCat(c.lag_collection_range_millis(),
                                " is shorter than lagCollectionIntervalMillis ",
                                c.lag_collection_interval_millis()));
  }
  return absl::OkStatus();
}

// Druid's LagBasedAutoScalerConfig defaults.
void ApplyAutoScalerDefaults(v1::AutoScalerConfig* c) {
  DefaultString(c->mutable_auto_scaler_strategy(), "lagBased");
  DefaultString(c->mutable_lag_aggregate(), "SUM");
  if (!c->has_lag_collection_interval_millis()) c->set_lag_collection_interval_millis(30000);
  if (!c->has_lag_collection_range_millis()) c->set_lag_collection_range_millis(600000);
  if (!c->has_scale_out_threshold()) c->set_scale_out_threshold(6000000);
  if (!c->has_trigger_scale_out_fraction_threshold()) {
    c->set_trigger_scale_out_fraction_threshold(0.3);
  }
  if (!c->has_scale_in_threshold()) c->set_scale_in_threshold(1000000);
  if (!c->has_trigger_scale_in_fraction_threshold()) {
    c->set_trigger_scale_in_fraction_threshold(0.9);
  }
  if (!c->has_scale_action_start_delay_millis()) c->set_scale_action_start_delay_millis(300000);
  if (!c->has_scale_action_period_millis()) c->set_scale_action_period_millis(60000);
  if (!c->has_scale_in_step()) c->set_scale_in_step(1);
  if (!c->has_scale_out_step()) c->set_scale_out_step(2);
  if (!c->has_min_trigger_scale_action_frequency_millis()) {
    c->set_min_trigger_scale_action_frequency_millis(600000);
  }
}

// An Iceberg namespace or table name: 1-255 characters of [A-Za-z0-9_],
// starting with a letter (what every engine takes unquoted).
absl::Status ValidateIcebergName(absl::string_view field, const std::string& name) {
  if (name.empty() || name.size() > 255) {
    return Invalid(field, absl::StrCat("must be 1 to 255 characters (got ", name.size(), ")"));
  }
  if (!absl::ascii_isalpha(static_cast<unsigned char>(name[0]))) {
    return Invalid(field, absl::StrCat("\"", name, "\" must start with a letter"));
  }
  for (char c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_') {
      return Invalid(field, absl::StrCat("\"", name, "\" may hold only letters, digits and '_'"));
    }
  }
  return absl::OkStatus();
}

// What an Iceberg table cannot hold: a column name longer than Iceberg's
// 255 bytes (the writer's limit), or the name of the partition field
// ("__time_hour", ...), which engines refuse as a column name.
absl::Status ValidateIcebergColumns(const v1::SupervisorSpec& spec) {
  const v1::DataSchema& schema = spec.data_schema();
  auto check = [](const std::string& field, const std::string& name) -> absl::Status {
    if (name.size() > 255) {
      return Invalid(field, absl::StrCat("is ", name.size(),
                                         " bytes; an Iceberg column name (icebergTable) is at "
                                         "most 255"));
    }
    for (const char* reserved : {"__time_hour", "__time_day", "__time_month", "__time_year"}) {
      if (name == reserved) {
        return Invalid(field, absl::StrCat("\"", name,
                                           "\" is the Iceberg table's partition field "
                                           "(icebergTable); rename the column"));
      }
    }
    return absl::OkStatus();
  };
  for (int i = 0; i < schema.dimensions_spec().dimensions_size(); ++i) {
    SLUICE_RETURN_IF_ERROR(check(absl::StrCat("dataSchema.dimensionsSpec.dimensions[", i, "]"),
                                 schema.dimensions_spec().dimensions(i)));
  }
  for (int i = 0; i < schema.metrics_spec_size(); ++i) {
    SLUICE_RETURN_IF_ERROR(check(absl::StrCat("dataSchema.metricsSpec[", i, "].name"),
                                 schema.metrics_spec(i).name()));
  }
  return absl::OkStatus();
}

}  // namespace

std::string DefaultIcebergTableName(absl::string_view datasource) {
  std::string name(datasource);
  for (char& c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
  }
  return name;
}

void ApplyInputFormatDefaults(v1::InputFormat* format) {
  DefaultString(format->mutable_type(), "json");
  if (format->type() != "kafka") return;
  DefaultString(format->mutable_value_format()->mutable_type(), "json");
  DefaultString(format->mutable_key_column_name(), "kafka.key");
  DefaultString(format->mutable_header_column_prefix(), "kafka.header.");
  v1::HeaderFormat* header = format->mutable_header_format();
  DefaultString(header->mutable_type(), "string");
  // Stored in its canonical spelling.
  auto encoding = segment::ParseHeaderEncoding(header->encoding());
  if (encoding.ok()) header->set_encoding(segment::HeaderEncodingName(*encoding));
  DefaultString(format->mutable_timestamp_column_name(), "kafka.timestamp");
  DefaultString(format->mutable_topic_column_name(), "kafka.topic");
}

void ApplySpecDefaults(v1::SupervisorSpec* spec) {
  v1::IoConfig* io = spec->mutable_io_config();
  if (!io->has_task_count()) io->set_task_count(1);
  if (!io->has_replicas()) io->set_replicas(1);
  DefaultString(io->mutable_task_duration(), "PT1H");
  DefaultString(io->mutable_start_delay(), "PT5S");
  DefaultString(io->mutable_period(), "PT30S");
  DefaultString(io->mutable_completion_timeout(), "PT30M");
  DefaultString(io->mutable_poll_timeout(), "PT0.1S");
  if (!io->has_stop_task_count()) {
    // Every group may roll over at once: taskCount, or with the autoscaler
    // on, the most groups it may run.
    const v1::AutoScalerConfig& scaler = io->auto_scaler_config();
    io->set_stop_task_count(scaler.enable_task_auto_scaler() && scaler.has_task_count_max()
                                ? std::max(scaler.task_count_max(), io->task_count())
                                : io->task_count());
  }
  if (io->has_idle_config() && !io->idle_config().has_inactive_after_millis()) {
    io->mutable_idle_config()->set_inactive_after_millis(600000);  // Druid's default
  }
  if (io->has_auto_scaler_config()) ApplyAutoScalerDefaults(io->mutable_auto_scaler_config());
  // Only a spec that names an input format shows its defaults (json needs none).
  if (io->has_input_format()) ApplyInputFormatDefaults(io->mutable_input_format());
  if (io->has_header_based_filter_config()) {
    std::string* encoding = io->mutable_header_based_filter_config()->mutable_encoding();
    if (auto parsed = segment::ParseHeaderEncoding(*encoding); parsed.ok()) {
      *encoding = segment::HeaderEncodingName(*parsed);
    }
  }

  if (spec->has_iceberg_table()) {
    v1::IcebergTable* table = spec->mutable_iceberg_table();
    DefaultString(table->mutable_table_namespace(), kDefaultIcebergNamespace);
    if (table->table_name().empty()) {
      table->set_table_name(DefaultIcebergTableName(spec->datasource()));
    }
  }

  if (spec->has_compaction()) {
    v1::CompactionConfig* compaction = spec->mutable_compaction();
    if (!compaction->has_target_rows_per_segment()) {
      compaction->set_target_rows_per_segment(kDefaultCompactionTargetRows);
    }
    DefaultString(compaction->mutable_skip_offset_from_latest(), "P1D");
    if (!compaction->has_max_input_segments()) {
      compaction->set_max_input_segments(kDefaultCompactionMaxInputSegments);
    }
    DefaultString(compaction->mutable_period(), "PT1M");
    DefaultString(compaction->mutable_snapshot_retention(), "P7D");
    if (!compaction->has_snapshots_to_keep()) compaction->set_snapshots_to_keep(10);
  }

  v1::DataSchema* schema = spec->mutable_data_schema();
  DefaultString(schema->mutable_timestamp_spec()->mutable_column(), "timestamp");
  DefaultString(schema->mutable_timestamp_spec()->mutable_format(), "auto");
  for (v1::MetricSpec& metric : *schema->mutable_metrics_spec()) {
    if (metric.type() != "count" && metric.field_name().empty()) {
      metric.set_field_name(metric.name());
    }
  }
  v1::GranularitySpec* gran = schema->mutable_granularity_spec();
  DefaultString(gran->mutable_segment_granularity(), "HOUR");
  DefaultString(gran->mutable_query_granularity(), "NONE");
  if (!gran->has_rollup()) gran->set_rollup(true);
  // Store granularities in their canonical upper-case spelling.
  if (auto g = Granularity::Parse(gran->segment_granularity()); g.ok()) {
    gran->set_segment_granularity(g->Name());
  }
  if (auto g = Granularity::Parse(gran->query_granularity()); g.ok()) {
    gran->set_query_granularity(g->Name());
  }

  v1::TuningConfig* tuning = spec->mutable_tuning_config();
  if (!tuning->has_max_rows_in_memory()) tuning->set_max_rows_in_memory(kDefaultMaxRowsInMemory);
  if (!tuning->has_max_bytes_in_memory()) {
    tuning->set_max_bytes_in_memory(kDefaultMaxBytesInMemory);
  }
  if (!tuning->has_max_rows_per_segment()) {
    tuning->set_max_rows_per_segment(kDefaultMaxRowsPerSegment);
  }
  if (!tuning->has_max_total_rows()) tuning->set_max_total_rows(kDefaultMaxTotalRows);
  DefaultString(tuning->mutable_intermediate_persist_period(), "PT10M");
  DefaultString(tuning->mutable_handoff_condition_timeout(), "PT15M");
  if (!tuning->has_max_saved_parse_exceptions()) {
    tuning->set_max_saved_parse_exceptions(kDefaultMaxSavedParseExceptions);
  }
  if (tuning->handoff_mode() == v1::HANDOFF_MODE_UNSPECIFIED) {
    tuning->set_handoff_mode(v1::HANDOFF_MODE_DEEP_STORAGE);
  }
  DefaultString(tuning->mutable_checkpoint_retry_period(), "PT10S");
  DefaultString(tuning->mutable_chat_timeout(), "PT10S");
  if (!tuning->has_chat_retries()) tuning->set_chat_retries(kDefaultChatRetries);
}

absl::StatusOr<SpecTimings> ParseTuningTimings(const v1::TuningConfig& tuning) {
  SpecTimings t;
  SLUICE_ASSIGN_OR_RETURN(t.intermediate_persist_period,
                          DurationField("tuningConfig.intermediatePersistPeriod",
                                        tuning.intermediate_persist_period(),
                                        absl::Milliseconds(10), absl::Hours(24)));
  if (tuning.intermediate_handoff_period().empty()) {
    t.intermediate_handoff_period = absl::InfiniteDuration();
  } else {
    SLUICE_ASSIGN_OR_RETURN(t.intermediate_handoff_period,
                            DurationField("tuningConfig.intermediateHandoffPeriod",
                                          tuning.intermediate_handoff_period(),
                                          absl::Milliseconds(100), kYear));
  }
  SLUICE_ASSIGN_OR_RETURN(t.handoff_condition_timeout,
                          DurationField("tuningConfig.handoffConditionTimeout",
                                        tuning.handoff_condition_timeout(),
                                        absl::ZeroDuration(), 30 * kDay));
  if (t.handoff_condition_timeout == absl::ZeroDuration()) {
    t.handoff_condition_timeout = absl::InfiniteDuration();
  }
  SLUICE_ASSIGN_OR_RETURN(t.checkpoint_retry_period,
                          DurationField("tuningConfig.checkpointRetryPeriod",
                                        tuning.checkpoint_retry_period(),
                                        absl::Milliseconds(100), absl::Hours(1)));
  SLUICE_ASSIGN_OR_RETURN(t.chat_timeout,
                          DurationField("tuningConfig.chatTimeout", tuning.chat_timeout(),
                                        absl::Milliseconds(100), absl::Minutes(10)));
  return t;
}

absl::StatusOr<SpecTimings> ParseSpecTimings(const v1::SupervisorSpec& spec) {
  SLUICE_ASSIGN_OR_RETURN(SpecTimings t, ParseTuningTimings(spec.tuning_config()));
  const v1::IoConfig& io = spec.io_config();
  SLUICE_ASSIGN_OR_RETURN(t.task_duration, DurationField("ioConfig.taskDuration",
                                                         io.task_duration(), absl::Seconds(1),
                                                         kYear));
  SLUICE_ASSIGN_OR_RETURN(t.start_delay, DurationField("ioConfig.startDelay", io.start_delay(),
                                                       absl::ZeroDuration(), kDay));
  SLUICE_ASSIGN_OR_RETURN(t.period, DurationField("ioConfig.period", io.period(),
                                                  absl::Milliseconds(100), kDay));
  SLUICE_ASSIGN_OR_RETURN(t.completion_timeout,
                          DurationField("ioConfig.completionTimeout", io.completion_timeout(),
                                        absl::Seconds(1), 30 * kDay));
  SLUICE_ASSIGN_OR_RETURN(t.poll_timeout, DurationField("ioConfig.pollTimeout", io.poll_timeout(),
                                                        absl::Milliseconds(1), absl::Seconds(10)));
  SLUICE_ASSIGN_OR_RETURN(t.late_message_rejection_period,
                          OptionalDurationField("ioConfig.lateMessageRejectionPeriod",
                                                io.late_message_rejection_period()));
  SLUICE_ASSIGN_OR_RETURN(t.early_message_rejection_period,
                          OptionalDurationField("ioConfig.earlyMessageRejectionPeriod",
                                                io.early_message_rejection_period()));
  if (!io.late_message_rejection_start_date_time().empty()) {
    if (t.late_message_rejection_period.has_value()) {
      return Invalid("ioConfig.lateMessageRejectionStartDateTime",
                     "and ioConfig.lateMessageRejectionPeriod are exclusive; set one");
    }
    auto ms = ParseIsoInstantMillis(io.late_message_rejection_start_date_time());
    if (!ms.ok()) {
      return Invalid("ioConfig.lateMessageRejectionStartDateTime",
                     std::string(ms.status().message()));
    }
    // Years 0001 to 9999: what ISO-8601 instants spell without extensions.
    constexpr int64_t kYear1Ms = -62135596800000;
    constexpr int64_t kYear10000Ms = 253402300800000;
    if (*ms < kYear1Ms || *ms >= kYear10000Ms) {
      return Invalid("ioConfig.lateMessageRejectionStartDateTime",
                     absl::StrCat("must be in the years 0001 to 9999 (got ",
                                  io.late_message_rejection_start_date_time(), ")"));
    }
    t.late_message_rejection_start_ms = *ms;
  }
  return t;
}

absl::StatusOr<CompactionPolicy> ParseCompactionPolicy(const v1::SupervisorSpec& spec) {
  CompactionPolicy policy;
  if (!spec.has_compaction()) return policy;
  const v1::CompactionConfig& c = spec.compaction();
  // Ranges of the integers come from the proto (CheckMessageLimits).
  if (c.has_target_rows_per_segment()) policy.target_rows_per_segment = c.target_rows_per_segment();
  if (c.has_max_input_segments()) policy.max_input_segments = c.max_input_segments();
  if (c.has_snapshots_to_keep()) policy.snapshots_to_keep = c.snapshots_to_keep();
  if (!c.skip_offset_from_latest().empty()) {
    SLUICE_ASSIGN_OR_RETURN(policy.skip_offset_from_latest,
                            DurationField("compaction.skipOffsetFromLatest",
                                          c.skip_offset_from_latest(), absl::ZeroDuration(),
                                          3650 * kDay));
  }
  if (!c.period().empty()) {
    SLUICE_ASSIGN_OR_RETURN(policy.period, DurationField("compaction.period", c.period(),
                                                         absl::Seconds(1), kDay));
  }
  if (!c.snapshot_retention().empty()) {
    SLUICE_ASSIGN_OR_RETURN(policy.snapshot_retention,
                            DurationField("compaction.snapshotRetention",
                                          c.snapshot_retention(), absl::Minutes(1),
                                          3650 * kDay));
  }
  return policy;
}

absl::Status ValidateSpec(const v1::SupervisorSpec& spec) {
  // Lengths, list sizes, integer ranges and enum values, as the proto states
  // them (proto/sluice/v1/spec.proto).
  SLUICE_RETURN_IF_ERROR(CheckMessageLimits(spec));
  SLUICE_RETURN_IF_ERROR(ValidateDatasource(spec.datasource()));

  const v1::IoConfig& io = spec.io_config();
  if (!io.topic_pattern().empty()) {
    if (!io.topic().empty()) {
      return Invalid("ioConfig.topicPattern", "and ioConfig.topic are exclusive: give one of them");
    }
    SLUICE_RETURN_IF_ERROR(ValidateTopicPattern(io.topic_pattern()));
  } else {
    SLUICE_RETURN_IF_ERROR(ValidateTopic(io.topic()));
  }
  auto bootstrap = io.consumer_properties().find("bootstrap.servers");
  if (bootstrap == io.consumer_properties().end() || bootstrap->second.empty()) {
    return Invalid("ioConfig.consumerProperties", "must set \"bootstrap.servers\"");
  }
  for (const char* managed : {"enable.auto.commit", "group.instance.id"}) {
    if (io.consumer_properties().count(managed)) {
      return Invalid("ioConfig.consumerProperties",
                     absl::StrCat("must not set \"", managed,
                                  "\": offsets are kept in the metadata store"));
    }
  }
  // Bounds come from the proto (above); these must hold a value, defaulted
  // by ApplySpecDefaults when the user left them out.
  SLUICE_RETURN_IF_ERROR(Required("ioConfig.taskCount", io.has_task_count()));
  SLUICE_RETURN_IF_ERROR(Required("ioConfig.replicas", io.has_replicas()));
  SLUICE_RETURN_IF_ERROR(Required("ioConfig.stopTaskCount", io.has_stop_task_count()));

  SLUICE_RETURN_IF_ERROR(ValidateDataSchema(spec.data_schema()));
  if (io.has_input_format()) {
    SLUICE_RETURN_IF_ERROR(ValidateInputFormat(io.input_format(), spec.data_schema()));
  }
  if (io.has_header_based_filter_config()) {
    SLUICE_RETURN_IF_ERROR(ValidateHeaderFilter(io.header_based_filter_config()));
  }
  if (io.has_auto_scaler_config()) {
    SLUICE_RETURN_IF_ERROR(ValidateAutoScaler(io.auto_scaler_config()));
  }
  if (spec.has_iceberg_table()) {
    SLUICE_RETURN_IF_ERROR(ValidateIcebergName("icebergTable.tableNamespace",
                                               spec.iceberg_table().table_namespace()));
    SLUICE_RETURN_IF_ERROR(
        ValidateIcebergName("icebergTable.tableName", spec.iceberg_table().table_name()));
    SLUICE_RETURN_IF_ERROR(ValidateIcebergColumns(spec));
  }

  if (spec.has_compaction()) SLUICE_RETURN_IF_ERROR(ParseCompactionPolicy(spec).status());

  const v1::TuningConfig& tuning = spec.tuning_config();
  SLUICE_RETURN_IF_ERROR(
      Required("tuningConfig.maxRowsInMemory", tuning.has_max_rows_in_memory()));
  SLUICE_RETURN_IF_ERROR(
      Required("tuningConfig.maxBytesInMemory", tuning.has_max_bytes_in_memory()));
  SLUICE_RETURN_IF_ERROR(
      Required("tuningConfig.maxRowsPerSegment", tuning.has_max_rows_per_segment()));
  SLUICE_RETURN_IF_ERROR(Required("tuningConfig.maxTotalRows", tuning.has_max_total_rows()));
  SLUICE_RETURN_IF_ERROR(Required("tuningConfig.chatRetries", tuning.has_chat_retries()));
  return ParseSpecTimings(spec).status();
}

absl::StatusOr<v1::SupervisorSpec> NormalizeSpec(v1::SupervisorSpec spec) {
  ApplySpecDefaults(&spec);
  SLUICE_RETURN_IF_ERROR(ValidateSpec(spec));
  return spec;
}

}  // namespace sluice
