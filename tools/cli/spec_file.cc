#include "tools/cli/spec_file.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/util/json_util.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "tools/cli/json_locator.h"

namespace sluice {
namespace sluicectl {
namespace {

namespace pb = google::protobuf;

// "io_config" and "ioConfig" both become "ioconfig".
std::string Normalize(absl::string_view name) {
  std::string out;
  for (char c : name) {
    if (c != '_') out.push_back(absl::ascii_tolower(c));
  }
  return out;
}

// One step of a protobuf error path: a field name, optionally indexed
// ("metrics_spec[0]"), optionally the key/value of a map entry.
struct Step {
  std::string field;
  std::optional<int> index;
};

// Splits "io_config.consumer_properties[0].value" into steps.
std::vector<Step> ParseProtoPath(absl::string_view path) {
  std::vector<Step> steps;
  for (absl::string_view part : absl::StrSplit(path, '.', absl::SkipEmpty())) {
    Step step;
    const size_t bracket = part.find('[');
    if (bracket != absl::string_view::npos && absl::EndsWith(part, "]")) {
      int index;
      if (absl::SimpleAtoi(part.substr(bracket + 1, part.size() - bracket - 2), &index)) {
        step.index = index;
      }
      part = part.substr(0, bracket);
    }
    step.field = std::string(part);
    steps.push_back(std::move(step));
  }
  return steps;
}

// Follows `steps` through the JSON layout (matching keys by normalized name)
// and the message descriptors. Fills the JSON path as written in the file,
// the user-facing dotted name, and the descriptor of the last field.
struct Resolved {
  JsonPath json_path;
  std::string display;  // ioConfig.taskCount, dataSchema.metricsSpec[0]
  const pb::FieldDescriptor* field = nullptr;
  const pb::Descriptor* message = nullptr;  // Message type at the end of the path.
};

Resolved Resolve(const std::vector<Step>& steps, const JsonLayout& layout) {
  Resolved r;
  r.message = v1::SupervisorSpec::descriptor();
  bool in_map_entry = false;
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& step = steps[i];
    // Map entries: "<map>[i].value" / ".key" name the i-th key of the object,
    // already added when the map was indexed.
    if (in_map_entry && (step.field == "value" || step.field == "key")) {
      in_map_entry = false;
      continue;
    }
    in_map_entry = false;
    const pb::FieldDescriptor* field =
        r.message != nullptr ? r.message->FindFieldByName(step.field) : nullptr;
    std::string written = field != nullptr ? field->json_name() : step.field;
    auto keys = layout.object_keys.find(r.json_path);
    if (keys != layout.object_keys.end()) {
      for (const std::string& key : keys->second) {
        if (Normalize(key) == Normalize(step.field)) written = key;
      }
    }
    r.json_path.push_back(written);
    absl::StrAppend(&r.display, r.display.empty() ? "" : ".", written);
    r.field = field;
    r.message = field != nullptr ? field->message_type() : nullptr;
    if (step.index.has_value()) {
      if (field != nullptr && field->is_map()) {
        auto entries = layout.object_keys.find(r.json_path);
        if (entries != layout.object_keys.end() && *step.index >= 0 &&
            static_cast<size_t>(*step.index) < entries->second.size()) {
          const std::string& key = entries->second[*step.index];
          r.json_path.push_back(key);
          absl::StrAppend(&r.display, "[\"", key, "\"]");
        }
        r.field = field->message_type()->map_value();
        r.message = r.field->message_type();
        in_map_entry = true;
      } else {
        r.json_path.push_back(absl::StrCat(*step.index));
        absl::StrAppend(&r.display, "[", *step.index, "]");
      }
    }
  }
  return r;
}

std::string Prefix(absl::string_view source, const JsonLayout& layout, const JsonPath& path) {
  auto it = layout.positions.find(path);
  if (it == layout.positions.end()) return absl::StrCat(source, ": ");
  return absl::StrCat(source, ":", it->second.line, ":", it->second.column, ": ");
}

std::string KnownFields(const pb::Descriptor* message) {
  std::vector<std::string> names;
  for (int i = 0; i < message->field_count(); ++i) names.push_back(message->field(i)->json_name());
  return absl::StrJoin(names, ", ");
}

std::string Expected(const pb::FieldDescriptor* field) {
  if (field == nullptr) return "a value of another type";
  if (field->is_map()) return "an object of string values";
  switch (field->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_INT32:
    case pb::FieldDescriptor::CPPTYPE_INT64:
    case pb::FieldDescriptor::CPPTYPE_UINT32:
    case pb::FieldDescriptor::CPPTYPE_UINT64:
      return "an integer";
    case pb::FieldDescriptor::CPPTYPE_DOUBLE:
    case pb::FieldDescriptor::CPPTYPE_FLOAT:
      return "a number";
    case pb::FieldDescriptor::CPPTYPE_BOOL:
      return "true or false";
    case pb::FieldDescriptor::CPPTYPE_STRING:
      return "a string";
    case pb::FieldDescriptor::CPPTYPE_ENUM: {
      std::vector<std::string> values;
      const pb::EnumDescriptor* e = field->enum_type();
      for (int i = 0; i < e->value_count(); ++i) values.push_back(e->value(i)->name());
      return absl::StrCat("one of ", absl::StrJoin(values, ", "));
    }
    case pb::FieldDescriptor::CPPTYPE_MESSAGE:
      return "an object";
  }
  return "a value of another type";
}

// Turns protobuf's JSON parser message into one that names the field as
// written and points at its line.
absl::Status Explain(absl::string_view message, absl::string_view source,
                     const JsonLayout& layout) {
  absl::string_view m = absl::StripAsciiWhitespace(message);
  std::string parent;
  if (absl::ConsumePrefix(&m, "(")) {
    const size_t close = m.find(')');
    if (close != absl::string_view::npos) {
      parent = std::string(m.substr(0, close));
      m.remove_prefix(close + 1);
      m = absl::StripLeadingAsciiWhitespace(m);
    }
  }
  // "(parent) key: Cannot find field." / "key: Cannot find field."
  if (absl::EndsWith(m, ": Cannot find field.")) {
    const std::string key(m.substr(0, m.size() - strlen(": Cannot find field.")));
    Resolved r = Resolve(ParseProtoPath(parent), layout);
    JsonPath path = r.json_path;
    path.push_back(key);
    const std::string where = r.display.empty() ? "the spec" : absl::StrCat(r.display);
    std::string known;
    if (r.message != nullptr) {
      known = absl::StrCat(" (", r.message->name(), "); known fields: ", KnownFields(r.message));
    }
    return absl::InvalidArgumentError(absl::StrCat(Prefix(source, layout, path), "unknown field \"",
                                                   key, "\" in ", where, known));
  }
  // "(path): invalid value X for type T"
  if (absl::ConsumePrefix(&m, ": invalid value ")) {
    const size_t for_type = m.rfind(" for type ");
    const absl::string_view value = for_type == absl::string_view::npos ? m : m.substr(0, for_type);
    Resolved r = Resolve(ParseProtoPath(parent), layout);
    return absl::InvalidArgumentError(absl::StrCat(Prefix(source, layout, r.json_path), r.display,
                                                   ": ", value, " is not ", Expected(r.field)));
  }
  if (!parent.empty()) {
    Resolved r = Resolve(ParseProtoPath(parent), layout);
    return absl::InvalidArgumentError(absl::StrCat(Prefix(source, layout, r.json_path), r.display,
                                                   ": ", absl::StripPrefix(m, ": ")));
  }
  return absl::InvalidArgumentError(absl::StrCat(source, ": ", m));
}

// The field a JSON path names (keys matched like protobuf's parser does:
// JSON name or proto name), or null.
const pb::FieldDescriptor* FieldAt(const JsonPath& path) {
  const pb::Descriptor* message = v1::SupervisorSpec::descriptor();
  const pb::FieldDescriptor* field = nullptr;
  for (const std::string& segment : path) {
    if (field != nullptr && field->is_map()) {
      field = field->message_type()->map_value();  // `segment` is a map key.
      message = field->message_type();
      continue;
    }
    if (field != nullptr && field->is_repeated()) {
      // `segment` is an element index: same field, element type.
      continue;
    }
    if (message == nullptr) return nullptr;
    field = message->FindFieldByName(segment);
    for (int i = 0; field == nullptr && i < message->field_count(); ++i) {
      if (message->field(i)->json_name() == segment) field = message->field(i);
    }
    if (field == nullptr) return nullptr;
    message = field->message_type();
  }
  return field;
}

// protobuf 3.21's JSON parser takes any string for a bool field ("no" becomes
// true); require the JSON literals.
absl::Status CheckBoolLiterals(absl::string_view source, const JsonLayout& layout) {
  for (const auto& [path, kind] : layout.kinds) {
    if (kind == JsonKind::kBool || path.empty()) continue;
    const pb::FieldDescriptor* field = FieldAt(path);
    if (field == nullptr || field->cpp_type() != pb::FieldDescriptor::CPPTYPE_BOOL) continue;
    return absl::InvalidArgumentError(absl::StrCat(
        Prefix(source, layout, path), absl::StrJoin(path, "."), ": expected true or false"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<v1::SupervisorSpec> ParseSpecJson(absl::string_view json,
                                                 absl::string_view source_name) {
  absl::StatusOr<JsonLayout> layout = LocateJson(json);
  if (!layout.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(source_name, ":", layout.status().message()));
  }
  if (layout->object_keys.find(JsonPath{}) == layout->object_keys.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source_name, ": a supervisor spec must be a JSON object"));
  }
  v1::SupervisorSpec spec;
  pb::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  const pb::util::Status status =
      pb::util::JsonStringToMessage(pb::StringPiece(json.data(), json.size()), &spec, options);
  if (!status.ok()) return Explain(status.message().ToString(), source_name, *layout);
  if (absl::Status s = CheckBoolLiterals(source_name, *layout); !s.ok()) return s;
  return spec;
}

absl::StatusOr<std::string> ReadSpecText(const std::string& path) {
  std::string text;
  if (path == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  } else {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      const int err = errno;
      return absl::Status(err == ENOENT   ? absl::StatusCode::kNotFound
                          : err == EACCES ? absl::StatusCode::kPermissionDenied
                                          : absl::StatusCode::kInvalidArgument,
                          absl::StrCat("cannot read spec file ", path, ": ", strerror(err)));
    }
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return text;
}

absl::StatusOr<v1::SupervisorSpec> ReadSpecFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadSpecText(path);
  if (!text.ok()) return text.status();
  return ParseSpecJson(*text, path == "-" ? "<stdin>" : path);
}

}  // namespace sluicectl
}  // namespace sluice
