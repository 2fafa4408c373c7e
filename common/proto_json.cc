#include "common/proto_json.h"

#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/json_depth.h"
#include "common/json_int64.h"
#include "common/status_macros.h"
#include "google/protobuf/util/json_util.h"

namespace sluice {

absl::StatusOr<std::string> ProtoToJson(const google::protobuf::Message& message,
                                        JsonStyle style) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = style.pretty;
  options.always_print_primitive_fields = style.print_defaults;
  std::string json;
  const auto status = google::protobuf::util::MessageToJsonString(message, &json, options);
  if (!status.ok()) {
    return absl::InternalError(
        absl::StrCat("cannot print ", message.GetTypeName(), " as JSON: ", status.ToString()));
  }
  if (style.int64_as_numbers) return Int64FieldsAsNumbers(json, *message.GetDescriptor());
  return json;
}

absl::Status ProtoFromJson(absl::string_view json, google::protobuf::Message* message,
                           absl::string_view what, JsonParse parse) {
  // Before the parser: its time is quadratic in the nesting depth.
  SLUICE_RETURN_IF_ERROR(CheckJsonDepth(json, what, kMaxJsonDepth, parse.error_code));
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = parse.ignore_unknown_fields;
  const auto status = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(json.data(), json.size()), message, options);
  if (status.ok()) return absl::OkStatus();
  return absl::Status(parse.error_code, absl::StrCat(what, " is not a valid ",
                                                     message->GetTypeName(), ": ",
                                                     status.ToString()));
}

absl::Status SaveProtoJson(const std::string& path, const google::protobuf::Message& message,
                           JsonStyle style) {
  SLUICE_ASSIGN_OR_RETURN(std::string json, ProtoToJson(message, style));
  return WriteFileAtomically(path, json);
}

absl::Status LoadProtoJson(const std::string& path, google::protobuf::Message* message) {
  SLUICE_ASSIGN_OR_RETURN(std::string json, ReadFile(path));
  return ProtoFromJson(json, message, path, {.error_code = absl::StatusCode::kDataLoss});
}

}  // namespace sluice
