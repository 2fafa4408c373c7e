// Protobuf messages as JSON (the proto3 JSON mapping), in memory and in small
// files written atomically: the task's state files, the metadata store's JSON
// columns and the CLI's output all go through these.
#ifndef SLUICE_COMMON_PROTO_JSON_H_
#define SLUICE_COMMON_PROTO_JSON_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/message.h"

namespace sluice {

struct JsonStyle {
  // Indented, one field per line (files people read); else compact.
  bool pretty = false;
  // Fields at their default value printed too (a file that shows every knob).
  bool print_defaults = false;
  // 64-bit integers as JSON numbers (1200) instead of the proto3 mapping's
  // strings ("1200"): for people and scripts (common/json_int64.h). Both
  // forms parse back.
  bool int64_as_numbers = false;
};

// INTERNAL if the message cannot be printed (it always can for valid messages).
absl::StatusOr<std::string> ProtoToJson(const google::protobuf::Message& message,
                                        JsonStyle style = {});

struct JsonParse {
  // Unknown fields skipped (data written by a newer version) instead of an error.
  bool ignore_unknown_fields = false;
  // The code of a parse failure: INVALID_ARGUMENT for input from a caller,
  // DATA_LOSS for something this program stored itself.
  absl::StatusCode error_code = absl::StatusCode::kInvalidArgument;
};

// `what` names the input in the error ("stored spec", a path, ...). JSON nested
// deeper than kMaxJsonDepth (common/json_depth.h) is refused with
// `parse.error_code` before protobuf's parser runs; no message this program
// writes comes near it.
absl::Status ProtoFromJson(absl::string_view json, google::protobuf::Message* message,
                           absl::string_view what, JsonParse parse = {});

// Pretty JSON, replaced atomically and durably (WriteFileAtomically).
absl::Status SaveProtoJson(const std::string& path, const google::protobuf::Message& message,
                           JsonStyle style = {.pretty = true});
// NOT_FOUND if the file is missing; DATA_LOSS "<path> is not a valid <type>"
// if it does not parse.
absl::Status LoadProtoJson(const std::string& path, google::protobuf::Message* message);

}  // namespace sluice

#endif  // SLUICE_COMMON_PROTO_JSON_H_
