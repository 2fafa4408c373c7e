#include "common/druid/druid_spec.h"

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/message_differencer.h>

#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/enum_names.h"
#include "common/granularity.h"
#include "common/json_depth.h"
#include "common/time_util.h"

namespace sluice::druid {
namespace {

namespace pb = google::protobuf;
using Handler = std::function<bool(const std::string& key, const pb::Value& value,
                                   const std::string& at)>;

std::string KindName(const pb::Value& v) {
  switch (v.kind_case()) {
    case pb::Value::kNullValue: return "null";
    case pb::Value::kNumberValue: return "a number";
    case pb::Value::kStringValue: return "a string";
    case pb::Value::kBoolValue: return "a boolean";
    case pb::Value::kStructValue: return "an object";
    case pb::Value::kListValue: return "an array";
    default: return "nothing";
  }
}

std::string Quoted(absl::string_view s) { return absl::StrCat("\"", s, "\""); }

// Walks a Druid spec, recording what it cannot map: errors (a wrong type, a
// value sluice cannot honor) and unsupported fields, each by JSON path.
class Walker {
 public:
  explicit Walker(const FromDruidOptions& options) : options_(options) {}

  void Error(const std::string& at, absl::string_view message) {
    errors_.push_back(absl::StrCat(at, ": ", message));
  }
  void Unsupported(const std::string& at, absl::string_view why = "") {
    unsupported_.push_back(
        absl::StrCat(at, why.empty() ? " is not supported by sluice" : absl::StrCat(": ", why)));
  }
  void Warn(std::string message) { warnings_.push_back(std::move(message)); }
  size_t unsupported_count() const { return unsupported_.size(); }

  // Calls `handle` for each key of the object `v` (sorted, nulls skipped:
  // Jackson takes null as "not given"); keys it does not take are unsupported.
  void Object(const pb::Value& v, const std::string& at, const Handler& handle) {
    if (v.kind_case() != pb::Value::kStructValue) {
      Error(at, absl::StrCat("expected an object, got ", KindName(v)));
      return;
    }
    const std::map<std::string, pb::Value> fields(v.struct_value().fields().begin(),
                                                  v.struct_value().fields().end());
    for (const auto& [key, value] : fields) {
      if (value.kind_case() == pb::Value::kNullValue) continue;
      const std::string path = at.empty() ? key : absl::StrCat(at, ".", key);
      if (!handle(key, value, path)) Unsupported(path);
    }
  }

  std::optional<std::string> String(const pb::Value& v, const std::string& at) {
    if (v.kind_case() == pb::Value::kStringValue) return v.string_value();
    Error(at, absl::StrCat("expected a string, got ", KindName(v)));
    return std::nullopt;
  }

  // Integers: JSON numbers without a fraction, or numeric strings (Jackson
  // coerces those).
  std::optional<int64_t> Int(const pb::Value& v, const std::string& at) {
    if (v.kind_case() == pb::Value::kNumberValue) {
      const double d = v.number_value();
      if (std::isfinite(d) && std::trunc(d) == d && std::fabs(d) <= 9007199254740992.0) {
        return static_cast<int64_t>(d);
      }
    } else if (v.kind_case() == pb::Value::kStringValue) {
      int64_t n;
      if (absl::SimpleAtoi(v.string_value(), &n)) return n;
    }
    Error(at, absl::StrCat("expected an integer, got ",
                           v.kind_case() == pb::Value::kStringValue ? Quoted(v.string_value())
                                                                    : KindName(v)));
    return std::nullopt;
  }

  std::optional<int32_t> Int32(const pb::Value& v, const std::string& at) {
    std::optional<int64_t> n = Int(v, at);
    if (!n) return std::nullopt;
    if (*n < INT32_MIN || *n > INT32_MAX) {
      Error(at, absl::StrCat(*n, " is out of range"));
      return std::nullopt;
    }
    return static_cast<int32_t>(*n);
  }

  std::optional<bool> Bool(const pb::Value& v, const std::string& at) {
    if (v.kind_case() == pb::Value::kBoolValue) return v.bool_value();
    Error(at, absl::StrCat("expected true or false, got ", KindName(v)));
    return std::nullopt;
  }

  // An ISO-8601 period ("PT1H", "pt10m"), as sluice writes it.
  std::optional<std::string> Duration(const pb::Value& v, const std::string& at) {
    std::optional<std::string> s = String(v, at);
    if (!s) return std::nullopt;
    const std::string upper = absl::AsciiStrToUpper(*s);
    absl::StatusOr<absl::Duration> d = ParseIsoDuration(upper);
    if (!d.ok()) {
      Error(at, absl::StrCat(Quoted(*s), " is not an ISO-8601 period sluice takes (",
                             d.status().message(), ")"));
      return std::nullopt;
    }
    return upper;
  }

  // A number of milliseconds (Druid's pollTimeout, handoffConditionTimeout).
  std::optional<std::string> Millis(const pb::Value& v, const std::string& at) {
    std::optional<int64_t> ms = Int(v, at);
    if (!ms) return std::nullopt;
    if (*ms < 0) {
      Error(at, absl::StrCat("must be >= 0 milliseconds (got ", *ms, ")"));
      return std::nullopt;
    }
    return FormatIsoDuration(absl::Milliseconds(*ms));
  }

  // A value that must be one Druid's default has (e.g. "type": "kafka").
  bool Expect(const pb::Value& v, const std::string& at, absl::string_view want) {
    std::optional<std::string> s = String(v, at);
    if (s && absl::AsciiStrToLower(*s) != want) {
      Error(at, absl::StrCat(Quoted(*s), " is not supported; sluice takes only ", Quoted(want)));
    }
    return true;
  }

  absl::StatusOr<DruidConversion> Finish(v1::SupervisorSpec spec) {
    if (!errors_.empty() || (!unsupported_.empty() && !options_.allow_unsupported)) {
      std::string message = "the Druid spec cannot be taken as it is:";
      for (const std::string& e : errors_) absl::StrAppend(&message, "\n  ", e);
      for (const std::string& u : unsupported_) absl::StrAppend(&message, "\n  ", u);
      if (!unsupported_.empty()) {
        absl::StrAppend(&message, "\n(", unsupported_.size(),
                        " unsupported field(s); allow_unsupported / --allow_unsupported ignores "
                        "them with a warning each)");
      }
      return absl::InvalidArgumentError(message);
    }
    DruidConversion out;
    out.spec = std::move(spec);
    out.warnings = warnings_;
    for (const std::string& u : unsupported_) out.warnings.push_back(absl::StrCat(u, "; ignored"));
    return out;
  }

 private:
  const FromDruidOptions& options_;
  std::vector<std::string> errors_;
  std::vector<std::string> unsupported_;
  std::vector<std::string> warnings_;
};

void StringList(Walker& w, const pb::Value& v, const std::string& at,
                pb::RepeatedPtrField<std::string>* out) {
  if (v.kind_case() != pb::Value::kListValue) {
    w.Error(at, absl::StrCat("expected an array, got ", KindName(v)));
    return;
  }
  for (int i = 0; i < v.list_value().values_size(); ++i) {
    std::optional<std::string> s = w.String(v.list_value().values(i), absl::StrCat(at, "[", i, "]"));
    if (s) out->Add(std::move(*s));
  }
}

// An empty array (or false) is what Druid does by default; anything else is
// unsupported.
bool EmptyOrUnsupported(Walker& w, const pb::Value& v, const std::string& at) {
  const bool empty = (v.kind_case() == pb::Value::kListValue && v.list_value().values_size() == 0) ||
                     (v.kind_case() == pb::Value::kBoolValue && !v.bool_value());
  if (!empty) w.Unsupported(at);
  return true;
}

void TimestampSpec(Walker& w, const pb::Value& v, const std::string& at, v1::TimestampSpec* ts) {
  w.Object(v, at, [&](const std::string& key, const pb::Value& value, const std::string& p) {
    if (key == "column") {
      if (auto s = w.String(value, p)) ts->set_column(*s);
    } else if (key == "format") {
      if (auto s = w.String(value, p)) {
        static const std::set<std::string> kFormats = {"auto",   "iso",   "millis",
                                                       "posix",  "micros", "nanos"};
        const std::string lower = absl::AsciiStrToLower(*s);
        if (kFormats.count(lower)) {
          ts->set_format(lower);
        } else {
          w.Error(p, absl::StrCat(Quoted(*s),
                                  " is not supported: sluice takes auto, iso, millis, posix, "
                                  "micros or nanos (no Joda-Time patterns, no ruby)"));
        }
      }
    } else {
      return false;  // missingValue, ...
    }
    return true;
  });
}

void Dimension(Walker& w, const pb::Value& v, const std::string& at, v1::DimensionsSpec* dims) {
  if (v.kind_case() == pb::Value::kStringValue) {
    dims->add_dimensions(v.string_value());
    return;
  }
  if (v.kind_case() != pb::Value::kStructValue) {
    w.Error(at, absl::StrCat("expected a dimension name or object, got ", KindName(v)));
    return;
  }
  std::optional<std::string> name;
  std::string type = "string";
  w.Object(v, at, [&](const std::string& key, const pb::Value& value, const std::string& p) {
    if (key == "name") {
      name = w.String(value, p);
    } else if (key == "type") {
      if (auto s = w.String(value, p)) type = absl::AsciiStrToLower(*s);
    } else {
      return false;  // multiValueHandling, createBitmapIndex, ...
    }
    return true;
  });
  if (!name) {
    w.Error(at, "a dimension object needs a \"name\"");
    return;
  }
  if (type == "long" || type == "float" || type == "double") {
    w.Warn(absl::StrCat(at, ": dimension ", Quoted(*name), " of type ", type,
                        " is stored as a string dimension (its values' text)"));
  } else if (type != "string") {
    w.Error(absl::StrCat(at, ".type"),
            absl::StrCat(Quoted(type),
                         " is not supported: sluice's dimensions are strings (string, long, "
                         "float and double are taken)"));
    return;
  }
  dims->add_dimensions(*name);
}

void DimensionsSpec(Walker& w, const pb::Value& v, const std::string& at,
                    v1::DimensionsSpec* dims) {
  w.Object(v, at, [&](const std::string& key, const pb::Value& value, const std::string& p) {
    if (key == "dimensions") {
      if (value.kind_case() != pb::Value::kListValue) {
        w.Error(p, absl::StrCat("expected an array, got ", KindName(value)));
      } else {
        for (int i = 0; i < value.list_value().values_size(); ++i) {
          Dimension(w, value.list_value().values(i), absl::StrCat(p, "[", i, "]"), dims);
        }
      }
    } else if (key == "dimensionExclusions") {
      StringList(w, value, p, dims->mutable_dimension_exclusions());
    } else if (key == "spatialDimensions" || key == "includeAllDimensions" ||
               key == "useSchemaDiscovery") {
      return EmptyOrUnsupported(w, value, p);
    } else {
      return false;
    }
    return true;
  });
}

void MetricsSpec(Walker& w, const pb::Value& v, const std::string& at,
                 pb::RepeatedPtrField<v1::MetricSpec>* metrics) {
  if (v.kind_case() != pb::Value::kListValue) {
    w.Error(at, absl::StrCat("expected an array, got ", KindName(v)));
    return;
  }
  static const std::set<std::string> kTypes = {"count",   "longSum",   "doubleSum", "longMin",
                                               "longMax", "doubleMin", "doubleMax"};
  for (int i = 0; i < v.list_value().values_size(); ++i) {
    const std::string item = absl::StrCat(at, "[", i, "]");
    v1::MetricSpec metric;
    w.Object(v.list_value().values(i), item,
             [&](const std::string& key, const pb::Value& value, const std::string& p) {
               if (key == "type") {
                 if (auto s = w.String(value, p)) {
                   if (!kTypes.count(*s)) {
                     w.Error(p, absl::StrCat(Quoted(*s), " is not supported: sluice takes ",
                                             absl::StrJoin(kTypes, ", ")));
                   }
                   metric.set_type(*s);
                 }
               } else if (key == "name") {
                 if (auto s = w.String(value, p)) metric.set_name(*s);
               } else if (key == "fieldName") {
                 if (auto s = w.String(value, p)) metric.set_field_name(*s);
               } else {
                 return false;  // expression, ...
               }
               return true;
             });
    *metrics->Add() = std::move(metric);
  }
}

void GranularityName(Walker& w, const pb::Value& v, const std::string& at, std::string* out) {
  if (v.kind_case() == pb::Value::kStructValue) {
    w.Error(at, "only named granularities (\"HOUR\", \"DAY\", ...) are supported, not objects");
    return;
  }
  std::optional<std::string> s = w.String(v, at);
  if (!s) return;
  absl::StatusOr<Granularity> g = Granularity::Parse(*s);
  if (!g.ok()) {
    w.Error(at, absl::StrCat(Quoted(*s), " is not a granularity sluice has (",
                             g.status().message(), ")"));
    return;
  }
  *out = g->Name();
}

void GranularitySpec(Walker& w, const pb::Value& v, const std::string& at,
                     v1::GranularitySpec* g) {
  w.Object(v, at, [&](const std::string& key, const pb::Value& value, const std::string& p) {
    if (key == "type") return w.Expect(value, p, "uniform");
    if (key == "segmentGranularity") {
      GranularityName(w, value, p, g->mutable_segment_granularity());
    } else if (key == "queryGranularity") {
      GranularityName(w, value, p, g->mutable_query_granularity());
    } else if (key == "rollup") {
      if (auto b = w.Bool(value, p)) g->set_rollup(*b);
    } else if (key == "intervals") {
      return EmptyOrUnsupported(w, value, p);
    } else {
      return false;
    }
    return true;
  });
}

// The legacy "parser": {"type": "string", "parseSpec": {"format": "json",
// "timestampSpec", "dimensionsSpec"}} of older Druid specs.
void Parser(Walker& w, const pb::Value& v, const std::string& at, v1::DataSchema* schema) {
  w.Object(v, at, [&](const std::string& key, const pb::Value& value, const std::string& p) {
    if (key == "type") return w.Expect(value, p, "string");
    if (key != "parseSpec") return false;
    w.Object(value, p, [&](const std::string& k, const pb::Value& val, const std::string& pp) {
      if (k == "format") return w.Expect(val, pp, "json");
      if (k == "timestampSpec") {
        TimestampSpec(w, val, pp, schema->mutable_timestamp_spec());
      } else if (k == "dimensionsSpec") {
        DimensionsSpec(w, val, pp, schema->mutable_dimensions_spec());
      } else {
        return false;  // flattenSpec, ...
      }
      return true;
    });
    return true;
  });
}

// A filter value: a string, or a number as its text (Jackson coerces).
std::optional<std::string> FilterValue(Walker& w, const pb::Value& v, const std::string& at) {
  if (v.kind_case() == pb::Value::kNumberValue) {
    const double d = v.number_value();
    if (std::isfinite(d) && std::trunc(d) == d && std::fabs(d) <= 9007199254740992.0) {
      return absl::StrCat(static_cast<int64_t>(d));
    }
    return absl::StrCat(d);
  }
  return w.String(v, at);
}

// A Druid dimension filter: selector, in, bound, and, or, not.
void Filter(Walker& w, const pb::Value& v, const std::string& at, v1::DimFilter* f) {
  static const std::set<std::string> kTypes = {"selector", "in", "bound", "and", "or", "not"};
  w.Object(v, at, [&](const std::string& key, const pb::Value& value, const std::string& p) {
    if (key == "type") {
      if (auto s = w.String(value, p)) {
        if (kTypes.count(*s)) {
          f->set_type(*s);
        } else {
          w.Unsupported(p, absl::StrCat(Quoted(*s), " is not supported by sluice (only ",
                                        absl::StrJoin(kTypes, ", "), ")"));
        }
      }
    } else if (key == "dimension") {
      if (auto s = w.String(value, p)) f->set_dimension(*s);
    } else if (key == "value") {
      if (auto s = FilterValue(w, value, p)) f->set_value(*s);
    } else if (key == "values") {
      if (value.kind_case() != pb::Value::kListValue) {
        w.Error(p, absl::StrCat("expected an array, got ", KindName(value)));
        return true;
      }
      for (int i = 0; i < value.list_value().values_size(); ++i) {
        const pb::Value& item = value.list_value().values(i);
        const std::string item_at = absl::StrCat(p, "[", i, "]");
        if (item.kind_case() == pb::Value::kNullValue) {
          w.Unsupported(item_at, "null among the values of an \"in\" filter is not supported by "
                                 "sluice (a selector without value matches null)");
        } else if (auto s = FilterValue(w, item, item_at)) {
          f->add_values(*s);
        }
      }
    } else if (key == "fields") {
      if (value.kind_case() != pb::Value::kListValue) {
        w.Error(p, absl::StrCat("expected an array, got ", KindName(value)));
        return true;
      }
      for (int i = 0; i < value.list_value().values_size(); ++i) {
        Filter(w, value.list_value().values(i), absl::StrCat(p, "[", i, "]"), f->add_fields());
      }
    } else if (key == "field") {
      Filter(w, value, p, f->mutable_field());
    } else if (key == "lower") {
      if (auto s = FilterValue(w, value, p)) f->set_lower(*s);
    } else if (key == "upper") {
      if (auto s = FilterValue(w, value, p)) f->set_upper(*s);
    } else if (key == "lowerStrict") {
      if (auto b = w.Bool(value, p)) f->set_lower_strict(*b);
    } else if (key == "upperStrict") {
      if (auto b = w.Bool(value, p)) f->set_upper_strict(*b);
    } else if (key == "ordering") {
      // A name, or Druid's object form {"type": "numeric"}.
      std::optional<std::string> ordering;
      if (value.kind_case() == pb::Value::kStructValue) {
        w.Object(value, p, [&](const std::string& k, const pb::Value& val, const std::string& pp) {
          if (k != "type") return false;
          ordering = w.String(val, pp);
          return true;
        });
      } else {
        ordering = w.String(value, p);
      }
      if (ordering) {
        const std::string lower = absl::AsciiStrToLower(*ordering);
        if (lower == "lexicographic" || lower == "numeric") {
          f->set_ordering(lower);
        } else {
          w.Unsupported(p, absl::StrCat(Quoted(*ordering),
                                        " is not supported by sluice (lexicographic, numeric)"));
        }
      }
    } else {
      return false;  // extractionFn, filterTuning, alphaNumeric, ...
    }
    return true;
  });
}

void TransformSpec(Walker& w, const pb::Value& v, const std::string& at, v1::TransformSpec* t) {
  w.Object(v, at, [&](const std::string& key, const pb::Value& value, const std::string& p) {
    if (key == "transforms") {
      if (value.kind_case() != pb::Value::kListValue) {
        w.Error(p, absl::StrCat("expected an array, got ", KindName(value)));
        return true;
      }
      for (int i = 0; i < value.list_value().values_size(); ++i) {
        const std::string item = absl::StrCat(p, "[", i, "]");
        v1::Transform transform;
        bool supported = true;
        w.Object(value.list_value().values(i), item,
                 [&](const std::string& k, const pb::Value& val, const std::string& pp) {
                   if (k == "type") {
                     if (auto s = w.String(val, pp)) {
                       if (*s == "expression") {
                         transform.set_type(*s);
                       } else {
                         supported = false;
                         w.Unsupported(pp, absl::StrCat(Quoted(*s),
                                                        " is not supported by sluice (only "
                                                        "expression)"));
                       }
                     }
                   } else if (k == "name") {
                     if (auto s = w.String(val, pp)) transform.set_name(*s);
                   } else if (k == "expression") {
                     if (auto s = w.String(val, pp)) transform.set_expression(*s);
                   } else {
                     return false;
                   }
                   return true;
                 });
        if (supported) *t->add_transforms() = std::move(transform);
      }
    } else if (key == "filter") {
      // A filter with an unsupported part is dropped whole (with
      // allow_unsupported): dropping only that part would change its meaning.
      const size_t before = w.unsupported_count();
      v1::DimFilter filter;
      Filter(w, value, p, &filter);
      if (w.unsupported_count() == before) *t->mutable_filter() = std::move(filter);
    } else {
      return false;
    }
    return true;
  });
}

void DataSchema(Walker& w, const pb::Value& v, const std::string& at, v1::SupervisorSpec* spec) {
  v1::DataSchema* schema = spec->mutable_data_schema();
  w.Object(v, at, [&](const std::string& key, const pb::Value& value, const std::string& p) {
    if (key == "dataSource") {
      if (auto s = w.String(value, p)) spec->set_datasource(*s);
    } else if (key == "timestampSpec") {
      TimestampSpec(w, value, p, schema->mutable_timestamp_spec());
    } else if (key == "dimensionsSpec") {
      DimensionsSpec(w, value, p, schema->mutable_dimensions_spec());
    } else if (key == "metricsSpec") {
      MetricsSpec(w, value, p, schema->mutable_metrics_spec());
    } else if (key == "granularitySpec") {
      GranularitySpec(w, value, p, schema->mutable_granularity_spec());
    } else if (key == "parser") {
      Parser(w, value, p, schema);
    } else if (key == "transformSpec") {
      TransformSpec(w, value, p, schema->mutable_transform_spec());
    } else {
      return false;
    }
    return true;
  });
}

void ConsumerProperties(Walker& w, const pb::Value& v, const std::string& at,
                        pb::Map<std::string, std::string>* out) {
  w.Object(v, at, [&](const std::string& key, const pb::Value& value, const std::string& p) {
    switch (value.kind_case()) {
      case pb::Value::kStringValue:
        (*out)[key] = value.string_value();
        return true;
      case pb::Value::kBoolValue:
        (*out)[key] = value.bool_value() ? "true" : "false";
        return true;
      case pb::Value::kNumberValue:
        if (auto n = w.Int(value, p)) (*out)[key] = absl::StrCat(*n);
        return true;
      default:
        return false;  // an object: Druid's dynamic config providers
    }
  });
}

// Druid's "kafka" inputFormat: the value's format, the key, the headers, the
// timestamp and topic column names.
void KafkaInputFormat(Walker& w, const pb::Value& v, const std::string& at, v1::InputFormat* f) {
  f->set_type("kafka");
  w.Object(v, at, [&](const std::string& key, const pb::Value& value, const std::string& p) {
    if (key == "type") return true;
    if (key == "valueFormat") {
      w.Object(value, p, [&](const std::string& k, const pb::Value& val, const std::string& pp) {
        if (k != "type") return false;  // flattenSpec, ...
        f->mutable_value_format()->set_type("json");
        return w.Expect(val, pp, "json");
      });
    } else if (key == "keyFormat") {
      // The key is taken whole, as a string: what a one-column csv or tsv
      // keyFormat gives for keys without its delimiter.
      std::string type;
      int columns = -1;
      w.Object(value, p, [&](const std::string& k, const pb::Value& val, const std::string& pp) {
        if (k == "type") {
          if (auto s = w.String(val, pp)) type = absl::AsciiStrToLower(*s);
        } else if (k == "columns") {
          columns = val.kind_case() == pb::Value::kListValue ? val.list_value().values_size() : -1;
        } else if (k == "findColumnsFromHeader") {
          return EmptyOrUnsupported(w, val, pp);
        } else if (k != "delimiter" && k != "listDelimiter") {
          return false;
        }
        return true;
      });
      if ((type != "csv" && type != "tsv") || columns != 1) {
        w.Unsupported(p, "sluice takes the key as one string (a csv or tsv keyFormat with one "
                         "column); other key formats are not supported");
      }
    } else if (key == "keyColumnName") {
      if (auto s = w.String(value, p)) f->set_key_column_name(*s);
    } else if (key == "headerColumnPrefix" || key == "headerLabelPrefix") {
      if (auto s = w.String(value, p)) f->set_header_column_prefix(*s);
    } else if (key == "timestampColumnName") {
      if (auto s = w.String(value, p)) f->set_timestamp_column_name(*s);
    } else if (key == "topicColumnName") {
      if (auto s = w.String(value, p)) f->set_topic_column_name(*s);
    } else if (key == "partitionColumnName") {  // sluice's own
      if (auto s = w.String(value, p)) f->set_partition_column_name(*s);
    } else if (key == "offsetColumnName") {  // sluice's own
      if (auto s = w.String(value, p)) f->set_offset_column_name(*s);
    } else if (key == "headerFormat") {
      w.Object(value, p, [&](const std::string& k, const pb::Value& val, const std::string& pp) {
        if (k == "type") {
          f->mutable_header_format()->set_type("string");
          return w.Expect(val, pp, "string");
        }
        if (k != "encoding") return false;
        if (auto s = w.String(val, pp)) f->mutable_header_format()->set_encoding(*s);
        return true;
      });
    } else {
      return false;
    }
    return true;
  });
}

void InputFormat(Walker& w, const pb::Value& v, const std::string& at, v1::IoConfig* io) {
  std::string type;
  if (v.kind_case() == pb::Value::kStructValue) {
    auto it = v.struct_value().fields().find("type");
    if (it != v.struct_value().fields().end() &&
        it->second.kind_case() == pb::Value::kStringValue) {
      type = absl::AsciiStrToLower(it->second.string_value());
    }
  }
  if (type == "kafka") {
    KafkaInputFormat(w, v, at, io->mutable_input_format());
    return;
  }
  w.Object(v, at, [&](const std::string& k, const pb::Value& val, const std::string& pp) {
    if (k != "type") return false;  // flattenSpec, featureSpec, keepNullColumns, ...
    if (type != "json" && type != "kafka" && val.kind_case() == pb::Value::kStringValue) {
      w.Error(pp, absl::StrCat(Quoted(val.string_value()),
                               " is not supported; sluice takes \"json\" or \"kafka\""));
      return true;
    }
    return w.Expect(val, pp, "json");
  });
}

void HeaderBasedFilterConfig(Walker& w, const pb::Value& v, const std::string& at,
                             v1::HeaderBasedFilterConfig* out) {
  w.Object(v, at, [&](const std::string& key, const pb::Value& value, const std::string& p) {
    if (key == "filter") {
      Filter(w, value, p, out->mutable_filter());
    } else if (key == "encoding") {
      if (auto s = w.String(value, p)) out->set_encoding(*s);
    } else {
      return false;
    }
    return true;
  });
}

// autoScalerConfig: sluice's fields carry Druid's names (LagBasedAutoScalerConfig),
// so each key is the field of that JSON name.
void AutoScalerConfig(Walker& w, const pb::Value& v, const std::string& at,
                      v1::AutoScalerConfig* out) {
  const pb::Descriptor* descriptor = out->GetDescriptor();
  const pb::Reflection* reflection = out->GetReflection();
  w.Object(v, at, [&](const std::string& key, const pb::Value& value, const std::string& p) {
    const pb::FieldDescriptor* field = nullptr;
    for (int i = 0; i < descriptor->field_count() && field == nullptr; ++i) {
      if (descriptor->field(i)->json_name() == key) field = descriptor->field(i);
    }
    if (field == nullptr) return false;
    switch (field->cpp_type()) {
      case pb::FieldDescriptor::CPPTYPE_BOOL:
        if (auto b = w.Bool(value, p)) reflection->SetBool(out, field, *b);
        break;
      case pb::FieldDescriptor::CPPTYPE_STRING:
        if (auto str = w.String(value, p)) reflection->SetString(out, field, *str);
        break;
      case pb::FieldDescriptor::CPPTYPE_INT32:
        if (auto n = w.Int32(value, p)) reflection->SetInt32(out, field, *n);
        break;
      case pb::FieldDescriptor::CPPTYPE_INT64:
        if (auto n = w.Int(value, p)) reflection->SetInt64(out, field, *n);
        break;
      case pb::FieldDescriptor::CPPTYPE_DOUBLE:
        if (value.kind_case() == pb::Value::kNumberValue) {
          reflection->SetDouble(out, field, value.number_value());
        } else {
          w.Error(p, "expected a number");
        }
        break;
      default:
        return false;
    }
    return true;
  });
}

void IoConfig(Walker& w, const pb::Value& v, const std::string& at, v1::IoConfig* io) {
  w.Object(v, at, [&](const std::string& key, const pb::Value& value, const std::string& p) {
    if (key == "type") return w.Expect(value, p, "kafka");
    if (key == "topic") {
      if (auto s = w.String(value, p)) io->set_topic(*s);
    } else if (key == "topicPattern") {
      if (auto s = w.String(value, p)) io->set_topic_pattern(*s);
    } else if (key == "inputFormat") {
      InputFormat(w, value, p, io);
    } else if (key == "headerBasedFilterConfig") {
      HeaderBasedFilterConfig(w, value, p, io->mutable_header_based_filter_config());
    } else if (key == "consumerProperties") {
      ConsumerProperties(w, value, p, io->mutable_consumer_properties());
    } else if (key == "taskCount") {
      if (auto n = w.Int32(value, p)) io->set_task_count(*n);
    } else if (key == "replicas") {
      if (auto n = w.Int32(value, p)) io->set_replicas(*n);
    } else if (key == "stopTaskCount") {
      if (auto n = w.Int32(value, p)) io->set_stop_task_count(*n);
    } else if (key == "taskDuration") {
      if (auto d = w.Duration(value, p)) io->set_task_duration(*d);
    } else if (key == "startDelay") {
      if (auto d = w.Duration(value, p)) io->set_start_delay(*d);
    } else if (key == "period") {
      if (auto d = w.Duration(value, p)) io->set_period(*d);
    } else if (key == "completionTimeout") {
      if (auto d = w.Duration(value, p)) io->set_completion_timeout(*d);
    } else if (key == "lateMessageRejectionPeriod") {
      if (auto d = w.Duration(value, p)) io->set_late_message_rejection_period(*d);
    } else if (key == "earlyMessageRejectionPeriod") {
      if (auto d = w.Duration(value, p)) io->set_early_message_rejection_period(*d);
    } else if (key == "lateMessageRejectionStartDateTime") {
      if (auto s = w.String(value, p)) io->set_late_message_rejection_start_date_time(*s);
    } else if (key == "useEarliestOffset") {
      if (auto b = w.Bool(value, p)) io->set_use_earliest_offset(*b);
    } else if (key == "pollTimeout") {
      if (auto d = w.Millis(value, p)) io->set_poll_timeout(*d);
    } else if (key == "idleConfig") {
      v1::IdleConfig* idle = io->mutable_idle_config();
      w.Object(value, p, [&](const std::string& k, const pb::Value& val, const std::string& pp) {
        if (k == "enabled") {
          if (auto b = w.Bool(val, pp)) idle->set_enabled(*b);
        } else if (k == "inactiveAfterMillis") {
          if (auto n = w.Int(val, pp)) idle->set_inactive_after_millis(*n);
        } else {
          return false;
        }
        return true;
      });
    } else if (key == "autoScalerConfig") {
      AutoScalerConfig(w, value, p, io->mutable_auto_scaler_config());
    } else {
      return false;  // topicPattern, ...
    }
    return true;
  });
}

// Periods of a year or more mean "never" to sluice's intermediateHandoffPeriod
// (Druid's default is P2147483647D).
constexpr absl::Duration kNeverHandoff = absl::Hours(24 * 365);

void TuningConfig(Walker& w, const pb::Value& v, const std::string& at, v1::TuningConfig* t) {
  std::optional<bool> report_parse_exceptions;
  w.Object(v, at, [&](const std::string& key, const pb::Value& value, const std::string& p) {
    if (key == "type") return w.Expect(value, p, "kafka");
    if (key == "maxRowsInMemory") {
      if (auto n = w.Int(value, p)) t->set_max_rows_in_memory(*n);
    } else if (key == "maxBytesInMemory") {
      if (auto n = w.Int(value, p)) {
        // Druid: 0 is its default (a share of the heap), -1 no limit.
        if (*n > 0) {
          t->set_max_bytes_in_memory(*n);
        } else if (*n < 0) {
          w.Error(p, absl::StrCat(*n, ": sluice always bounds the bytes in memory"));
        }
      }
    } else if (key == "maxRowsPerSegment") {
      if (auto n = w.Int(value, p)) t->set_max_rows_per_segment(*n);
    } else if (key == "maxTotalRows") {
      if (auto n = w.Int(value, p)) t->set_max_total_rows(*n);
    } else if (key == "intermediatePersistPeriod") {
      if (auto d = w.Duration(value, p)) t->set_intermediate_persist_period(*d);
    } else if (key == "intermediateHandoffPeriod") {
      if (auto d = w.Duration(value, p)) {
        absl::StatusOr<absl::Duration> parsed = ParseIsoDuration(*d);
        if (parsed.ok() && *parsed < kNeverHandoff) t->set_intermediate_handoff_period(*d);
      }
    } else if (key == "handoffConditionTimeout") {
      if (auto d = w.Millis(value, p)) t->set_handoff_condition_timeout(*d);
    } else if (key == "resetOffsetAutomatically") {
      if (auto b = w.Bool(value, p)) t->set_reset_offset_automatically(*b);
    } else if (key == "chatRetries") {
      if (auto n = w.Int32(value, p)) t->set_chat_retries(*n);
    } else if (key == "httpTimeout") {
      if (auto d = w.Duration(value, p)) t->set_chat_timeout(*d);
    } else if (key == "maxParseExceptions") {
      if (auto n = w.Int(value, p)) t->set_max_parse_exceptions(*n);
    } else if (key == "maxSavedParseExceptions") {
      if (auto n = w.Int32(value, p)) t->set_max_saved_parse_exceptions(*n);
    } else if (key == "reportParseExceptions") {
      report_parse_exceptions = w.Bool(value, p);
    } else if (key == "checkpointRetryPeriod") {  // sluice's own
      if (auto d = w.Duration(value, p)) t->set_checkpoint_retry_period(*d);
    } else if (key == "handoffMode") {  // sluice's own
      if (auto s = w.String(value, p)) {
        v1::HandoffMode mode;
        if (ParseShortEnumName(*s, &mode) && mode != v1::HANDOFF_MODE_UNSPECIFIED) {
          t->set_handoff_mode(mode);
        } else {
          w.Error(p, absl::StrCat(Quoted(*s), " is not DEEP_STORAGE or LOADER"));
        }
      }
    } else {
      return false;  // indexSpec, maxPendingPersists, workerThreads, ...
    }
    return true;
  });
  // Druid: reportParseExceptions=true fails on the first parse error.
  if (report_parse_exceptions.value_or(false) && !t->has_max_parse_exceptions()) {
    t->set_max_parse_exceptions(0);
  }
}

// Druid's GET answer carries the spec twice: under "spec" and at the top
// level. Both are fine as long as they agree.
bool SameValue(const pb::Value& a, const pb::Value& b) {
  return pb::util::MessageDifferencer::Equals(a, b);
}

}  // namespace

absl::StatusOr<DruidConversion> FromDruidJson(absl::string_view json,
                                              const FromDruidOptions& options) {
  // Before protobuf's parser, whose time is quadratic in the nesting depth.
  if (absl::Status depth = CheckJsonDepth(json, "the Druid spec"); !depth.ok()) return depth;
  pb::Value root;
  const auto parsed = pb::util::JsonStringToMessage(pb::StringPiece(json.data(), json.size()), &root);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the Druid spec is not valid JSON: ", parsed.message().ToString()));
  }
  if (root.kind_case() != pb::Value::kStructValue) {
    return absl::InvalidArgumentError(
        absl::StrCat("a Druid supervisor spec is a JSON object, not ", KindName(root)));
  }
  const auto& top = root.struct_value().fields();
  Walker w(options);
  v1::SupervisorSpec spec;
  auto type = top.find("type");
  if (type == top.end()) {
    w.Error("type", "missing; a Druid Kafka supervisor spec has \"type\": \"kafka\"");
  }
  // The parts: from "spec" when present, else from the top level.
  const pb::Value* inner = nullptr;
  if (auto it = top.find("spec"); it != top.end() && it->second.has_struct_value()) {
    inner = &it->second;
  }
  const std::string prefix = inner != nullptr ? "spec." : "";
  w.Object(root, "", [&](const std::string& key, const pb::Value& value, const std::string& p) {
    if (key == "type") return w.Expect(value, p, "kafka");
    if (key == "suspended") {
      if (auto b = w.Bool(value, p)) spec.set_suspended(*b);
      return true;
    }
    if (key == "id") return w.String(value, p).has_value();  // checked below
    if (key == "spec") {
      if (inner == nullptr) w.Error(p, absl::StrCat("expected an object, got ", KindName(value)));
      return true;
    }
    if (key == "dataSchema" || key == "ioConfig" || key == "tuningConfig") {
      if (inner != nullptr) {
        auto copy = inner->struct_value().fields().find(key);
        if (copy == inner->struct_value().fields().end() || !SameValue(copy->second, value)) {
          w.Error(p, absl::StrCat("differs from spec.", key, " (give it once)"));
        }
      }
      return true;
    }
    return false;  // context, ...
  });
  const pb::Value& parts = inner != nullptr ? *inner : root;
  bool has_schema = false, has_io = false;
  w.Object(parts, inner != nullptr ? "spec" : "",
           [&](const std::string& key, const pb::Value& value, const std::string& p) {
             if (key == "dataSchema") {
               has_schema = true;
               DataSchema(w, value, p, &spec);
             } else if (key == "ioConfig") {
               has_io = true;
               IoConfig(w, value, p, spec.mutable_io_config());
             } else if (key == "tuningConfig") {
               TuningConfig(w, value, p, spec.mutable_tuning_config());
             } else {
               // The top level's own keys were handled above.
               return inner == nullptr;
             }
             return true;
           });
  if (!has_schema) w.Error(absl::StrCat(prefix, "dataSchema"), "missing");
  if (!has_io) w.Error(absl::StrCat(prefix, "ioConfig"), "missing");
  if (auto id = top.find("id"); id != top.end() && id->second.has_string_value() &&
                                 id->second.string_value() != spec.datasource()) {
    w.Error("id", absl::StrCat(Quoted(id->second.string_value()), " is not the dataSource ",
                               Quoted(spec.datasource())));
  }
  return w.Finish(std::move(spec));
}

// ---- sluice -> Druid ----

namespace {

pb::Value Str(const std::string& s) {
  pb::Value v;
  v.set_string_value(s);
  return v;
}
pb::Value Num(int64_t n) {
  pb::Value v;
  v.set_number_value(static_cast<double>(n));
  return v;
}
pb::Value Bool(bool b) {
  pb::Value v;
  v.set_bool_value(b);
  return v;
}

class ObjectBuilder {
 public:
  ObjectBuilder& Set(const std::string& key, pb::Value v) {
    (*value_.mutable_struct_value()->mutable_fields())[key] = std::move(v);
    return *this;
  }
  ObjectBuilder& SetString(const std::string& key, const std::string& s) {
    if (!s.empty()) Set(key, Str(s));
    return *this;
  }
  pb::Value Build() {
    value_.mutable_struct_value();
    return value_;
  }

 private:
  pb::Value value_;
};

pb::Value StringArray(const pb::RepeatedPtrField<std::string>& items) {
  pb::Value v;
  v.mutable_list_value();
  for (const std::string& s : items) *v.mutable_list_value()->add_values() = Str(s);
  return v;
}

// ioConfig.autoScalerConfig: the fields that are set, under their (Druid's)
// JSON names.
pb::Value DruidAutoScalerConfig(const v1::IoConfig& io) {
  const v1::AutoScalerConfig& c = io.auto_scaler_config();
  const pb::Reflection* reflection = c.GetReflection();
  std::vector<const pb::FieldDescriptor*> fields;
  reflection->ListFields(c, &fields);
  ObjectBuilder out;
  out.Set("enableTaskAutoScaler", Bool(c.enable_task_auto_scaler()));
  for (const pb::FieldDescriptor* field : fields) {
    pb::Value v;
    switch (field->cpp_type()) {
      case pb::FieldDescriptor::CPPTYPE_BOOL: v = Bool(reflection->GetBool(c, field)); break;
      case pb::FieldDescriptor::CPPTYPE_STRING: v = Str(reflection->GetString(c, field)); break;
      case pb::FieldDescriptor::CPPTYPE_INT32: v = Num(reflection->GetInt32(c, field)); break;
      case pb::FieldDescriptor::CPPTYPE_INT64: v = Num(reflection->GetInt64(c, field)); break;
      case pb::FieldDescriptor::CPPTYPE_DOUBLE:
        v.set_number_value(reflection->GetDouble(c, field));
        break;
      default: continue;
    }
    out.Set(field->json_name(), std::move(v));
  }
  return out.Build();
}

// ioConfig.inputFormat in Druid's form: {"type": "json"} unless it is kafka.
pb::Value DruidInputFormat(const v1::IoConfig& io) {
  const v1::InputFormat& f = io.input_format();
  if (f.type() != "kafka") return ObjectBuilder().Set("type", Str("json")).Build();
  ObjectBuilder header_format;
  header_format.Set("type", Str("string")).SetString("encoding", f.header_format().encoding());
  ObjectBuilder out;
  out.Set("type", Str("kafka"))
      .Set("valueFormat", ObjectBuilder().Set("type", Str("json")).Build())
      .Set("headerFormat", header_format.Build())
      .SetString("keyColumnName", f.key_column_name())
      .SetString("headerColumnPrefix", f.header_column_prefix())
      .SetString("timestampColumnName", f.timestamp_column_name())
      .SetString("topicColumnName", f.topic_column_name())
      .SetString("partitionColumnName", f.partition_column_name())
      .SetString("offsetColumnName", f.offset_column_name());
  return out.Build();
}

absl::StatusOr<int64_t> DurationMillis(const std::string& iso) {
  absl::StatusOr<absl::Duration> d = ParseIsoDuration(iso);
  if (!d.ok()) return d.status();
  return absl::ToInt64Milliseconds(*d);
}

// JSON text with sorted keys, two-space indentation.
absl::Status Print(const pb::Value& v, int indent, std::string* out) {
  const std::string pad(indent + 2, ' ');
  switch (v.kind_case()) {
    case pb::Value::kStructValue: {
      const std::map<std::string, pb::Value> fields(v.struct_value().fields().begin(),
                                                    v.struct_value().fields().end());
      if (fields.empty()) {
        out->append("{}");
        return absl::OkStatus();
      }
      out->append("{\n");
      bool first = true;
      for (const auto& [key, value] : fields) {
        if (!first) out->append(",\n");
        first = false;
        std::string quoted;
        pb::util::MessageToJsonString(Str(key), &quoted);
        absl::StrAppend(out, pad, quoted, ": ");
        if (absl::Status s = Print(value, indent + 2, out); !s.ok()) return s;
      }
      absl::StrAppend(out, "\n", std::string(indent, ' '), "}");
      return absl::OkStatus();
    }
    case pb::Value::kListValue: {
      if (v.list_value().values_size() == 0) {
        out->append("[]");
        return absl::OkStatus();
      }
      out->append("[\n");
      for (int i = 0; i < v.list_value().values_size(); ++i) {
        if (i > 0) out->append(",\n");
        out->append(pad);
        if (absl::Status s = Print(v.list_value().values(i), indent + 2, out); !s.ok()) return s;
      }
      absl::StrAppend(out, "\n", std::string(indent, ' '), "]");
      return absl::OkStatus();
    }
    default: {
      std::string leaf;
      if (!pb::util::MessageToJsonString(v, &leaf).ok()) {
        return absl::InternalError("cannot print a JSON value");
      }
      out->append(leaf);
      return absl::OkStatus();
    }
  }
}

pb::Value FilterToDruid(const v1::DimFilter& f) {
  ObjectBuilder out;
  out.SetString("type", f.type()).SetString("dimension", f.dimension());
  if (f.has_value()) out.Set("value", Str(f.value()));
  if (f.type() == "in" || f.values_size() > 0) out.Set("values", StringArray(f.values()));
  if (f.fields_size() > 0) {
    pb::Value fields;
    fields.mutable_list_value();
    for (const v1::DimFilter& child : f.fields()) {
      *fields.mutable_list_value()->add_values() = FilterToDruid(child);
    }
    out.Set("fields", fields);
  }
  if (f.has_field()) out.Set("field", FilterToDruid(f.field()));
  if (f.has_lower()) out.Set("lower", Str(f.lower()));
  if (f.has_upper()) out.Set("upper", Str(f.upper()));
  if (f.lower_strict()) out.Set("lowerStrict", Bool(true));
  if (f.upper_strict()) out.Set("upperStrict", Bool(true));
  out.SetString("ordering", f.ordering());
  return out.Build();
}

pb::Value TransformSpecToDruid(const v1::TransformSpec& t) {
  ObjectBuilder out;
  pb::Value transforms;
  transforms.mutable_list_value();
  for (const v1::Transform& transform : t.transforms()) {
    ObjectBuilder item;
    item.SetString("type", transform.type())
        .SetString("name", transform.name())
        .SetString("expression", transform.expression());
    *transforms.mutable_list_value()->add_values() = item.Build();
  }
  out.Set("transforms", transforms);
  if (t.has_filter()) out.Set("filter", FilterToDruid(t.filter()));
  return out.Build();
}

}  // namespace

absl::StatusOr<std::string> ToDruidJson(const v1::SupervisorSpec& spec) {
  const v1::DataSchema& ds = spec.data_schema();
  ObjectBuilder timestamp;
  timestamp.SetString("column", ds.timestamp_spec().column())
      .SetString("format", ds.timestamp_spec().format());
  ObjectBuilder dimensions;
  dimensions.Set("dimensions", StringArray(ds.dimensions_spec().dimensions()));
  if (ds.dimensions_spec().dimension_exclusions_size() > 0) {
    dimensions.Set("dimensionExclusions", StringArray(ds.dimensions_spec().dimension_exclusions()));
  }
  pb::Value metrics;
  metrics.mutable_list_value();
  for (const v1::MetricSpec& m : ds.metrics_spec()) {
    ObjectBuilder metric;
    metric.SetString("type", m.type()).SetString("name", m.name()).SetString("fieldName",
                                                                              m.field_name());
    *metrics.mutable_list_value()->add_values() = metric.Build();
  }
  ObjectBuilder granularity;
  granularity.Set("type", Str("uniform"))
      .SetString("segmentGranularity", ds.granularity_spec().segment_granularity())
      .SetString("queryGranularity", ds.granularity_spec().query_granularity());
  if (ds.granularity_spec().has_rollup()) {
    granularity.Set("rollup", Bool(ds.granularity_spec().rollup()));
  }
  ObjectBuilder data_schema;
  data_schema.Set("dataSource", Str(spec.datasource()))
      .Set("timestampSpec", timestamp.Build())
      .Set("dimensionsSpec", dimensions.Build())
      .Set("metricsSpec", metrics)
      .Set("granularitySpec", granularity.Build());
  if (ds.has_transform_spec()) {
    data_schema.Set("transformSpec", TransformSpecToDruid(ds.transform_spec()));
  }

  const v1::IoConfig& io = spec.io_config();
  ObjectBuilder properties;
  for (const auto& [k, v] : io.consumer_properties()) properties.Set(k, Str(v));
  ObjectBuilder io_config;
  io_config.Set("type", Str("kafka"));
  if (io.topic_pattern().empty()) {
    io_config.Set("topic", Str(io.topic()));
  } else {
    io_config.Set("topicPattern", Str(io.topic_pattern()));
  }
  io_config
      .Set("inputFormat", DruidInputFormat(io))
      .Set("consumerProperties", properties.Build())
      .Set("useEarliestOffset", Bool(io.use_earliest_offset()))
      .SetString("taskDuration", io.task_duration())
      .SetString("startDelay", io.start_delay())
      .SetString("period", io.period())
      .SetString("completionTimeout", io.completion_timeout())
      .SetString("lateMessageRejectionPeriod", io.late_message_rejection_period())
      .SetString("lateMessageRejectionStartDateTime", io.late_message_rejection_start_date_time())
      .SetString("earlyMessageRejectionPeriod", io.early_message_rejection_period());
  if (io.has_header_based_filter_config()) {
    const v1::HeaderBasedFilterConfig& filter = io.header_based_filter_config();
    ObjectBuilder config;
    config.Set("filter", FilterToDruid(filter.filter())).SetString("encoding", filter.encoding());
    io_config.Set("headerBasedFilterConfig", config.Build());
  }
  if (io.has_task_count()) io_config.Set("taskCount", Num(io.task_count()));
  if (io.has_replicas()) io_config.Set("replicas", Num(io.replicas()));
  if (io.has_stop_task_count()) io_config.Set("stopTaskCount", Num(io.stop_task_count()));
  if (io.has_idle_config()) {
    ObjectBuilder idle;
    idle.Set("enabled", Bool(io.idle_config().enabled()));
    if (io.idle_config().has_inactive_after_millis()) {
      idle.Set("inactiveAfterMillis", Num(io.idle_config().inactive_after_millis()));
    }
    io_config.Set("idleConfig", idle.Build());
  }
  if (io.has_auto_scaler_config()) io_config.Set("autoScalerConfig", DruidAutoScalerConfig(io));
  if (!io.poll_timeout().empty()) {
    absl::StatusOr<int64_t> ms = DurationMillis(io.poll_timeout());
    if (!ms.ok()) return ms.status();
    io_config.Set("pollTimeout", Num(*ms));
  }

  const v1::TuningConfig& t = spec.tuning_config();
  ObjectBuilder tuning;
  tuning.Set("type", Str("kafka"))
      .SetString("intermediatePersistPeriod", t.intermediate_persist_period())
      .SetString("intermediateHandoffPeriod", t.intermediate_handoff_period())
      .SetString("httpTimeout", t.chat_timeout())
      .SetString("checkpointRetryPeriod", t.checkpoint_retry_period());
  if (t.has_max_rows_in_memory()) tuning.Set("maxRowsInMemory", Num(t.max_rows_in_memory()));
  if (t.has_max_bytes_in_memory()) tuning.Set("maxBytesInMemory", Num(t.max_bytes_in_memory()));
  if (t.has_max_rows_per_segment()) {
    tuning.Set("maxRowsPerSegment", Num(t.max_rows_per_segment()));
  }
  if (t.has_max_total_rows()) tuning.Set("maxTotalRows", Num(t.max_total_rows()));
  if (t.has_max_parse_exceptions()) {
    tuning.Set("maxParseExceptions", Num(t.max_parse_exceptions()));
  }
  if (t.has_max_saved_parse_exceptions()) {
    tuning.Set("maxSavedParseExceptions", Num(t.max_saved_parse_exceptions()));
  }
  if (t.has_chat_retries()) tuning.Set("chatRetries", Num(t.chat_retries()));
  tuning.Set("resetOffsetAutomatically", Bool(t.reset_offset_automatically()));
  if (!t.handoff_condition_timeout().empty()) {
    absl::StatusOr<int64_t> ms = DurationMillis(t.handoff_condition_timeout());
    if (!ms.ok()) return ms.status();
    tuning.Set("handoffConditionTimeout", Num(*ms));
  }
  if (t.handoff_mode() != v1::HANDOFF_MODE_UNSPECIFIED) {
    tuning.Set("handoffMode", Str(ShortEnumName(t.handoff_mode())));
  }

  ObjectBuilder inner;
  inner.Set("dataSchema", data_schema.Build())
      .Set("ioConfig", io_config.Build())
      .Set("tuningConfig", tuning.Build());
  ObjectBuilder root;
  root.Set("type", Str("kafka")).Set("spec", inner.Build()).Set("suspended", Bool(spec.suspended()));
  std::string out;
  if (absl::Status s = Print(root.Build(), 0, &out); !s.ok()) return s;
  out.append("\n");
  return out;
}

}  // namespace sluice::druid
