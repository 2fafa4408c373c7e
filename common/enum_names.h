// Names of sluice.v1 enum values as operators read them. The contract
// prefixes every value with its enum's name (TASK_STATE_READING,
// SUPERVISOR_STATE_RUNNING: buf's ENUM_VALUE_PREFIX, so values of different
// enums never share the package scope); protobuf JSON and grpcurl show those
// full names. Human output (sluicectl tables, metric labels, detailed_state,
// error messages) shows them without the prefix, as Druid does: READING,
// RUNNING.
#ifndef SLUICE_COMMON_ENUM_NAMES_H_
#define SLUICE_COMMON_ENUM_NAMES_H_

#include <string>

#include "absl/strings/string_view.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/generated_enum_reflection.h"

namespace sluice {

// The value's name less the enum's prefix (the zero value's name less
// "UNSPECIFIED"): TASK_STATE_READING -> "READING". A number the enum does not
// define prints as that number.
std::string ShortEnumName(const google::protobuf::EnumDescriptor* type, int number);

template <typename E>
std::string ShortEnumName(E value) {
  return ShortEnumName(google::protobuf::GetEnumDescriptor<E>(), static_cast<int>(value));
}

// The value named `name`, short ("reading") or full ("TASK_STATE_READING"),
// case-insensitive. False when there is none.
bool ParseShortEnumName(const google::protobuf::EnumDescriptor* type, absl::string_view name,
                        int* number);

template <typename E>
bool ParseShortEnumName(absl::string_view name, E* value) {
  int number = 0;
  if (!ParseShortEnumName(google::protobuf::GetEnumDescriptor<E>(), name, &number)) return false;
  *value = static_cast<E>(number);
  return true;
}

}  // namespace sluice

#endif  // SLUICE_COMMON_ENUM_NAMES_H_
