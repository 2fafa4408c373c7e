// The proto3 JSON mapping prints 64-bit integers as strings ("1200") so that
// JavaScript's doubles cannot round them. People and shell scripts reading
// sluicectl's output expect numbers; this rewrites a message's printed JSON so
// that every int64/uint64/sint64/fixed64/sfixed64 value (singular, repeated or
// a map value) is a bare number. Parsing accepts both forms, so the output
// still reads back into the message.
#ifndef SLUICE_COMMON_JSON_INT64_H_
#define SLUICE_COMMON_JSON_INT64_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/descriptor.h"

namespace sluice {

// `json`: what the protobuf JSON printer gave for a message of type `type`.
// Layout (spaces, newlines) is kept. Well-known types (google.protobuf.*)
// are copied as printed. INTERNAL if `json` is not JSON of that shape.
absl::StatusOr<std::string> Int64FieldsAsNumbers(absl::string_view json,
                                                 const google::protobuf::Descriptor& type);

}  // namespace sluice

#endif  // SLUICE_COMMON_JSON_INT64_H_
