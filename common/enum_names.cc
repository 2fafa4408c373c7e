#include "common/enum_names.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace sluice {
namespace {

using google::protobuf::EnumDescriptor;
using google::protobuf::EnumValueDescriptor;

constexpr absl::string_view kUnspecified = "UNSPECIFIED";

// "TASK_STATE_" for TaskState; "" for an enum whose zero value does not end
// in UNSPECIFIED.
absl::string_view Prefix(const EnumDescriptor* type) {
  const EnumValueDescriptor* zero = type->FindValueByNumber(0);
  if (zero == nullptr) return "";
  absl::string_view name = zero->name();
  if (!absl::EndsWith(name, kUnspecified)) return "";
  name.remove_suffix(kUnspecified.size());
  return name;
}

}  // namespace

std::string ShortEnumName(const EnumDescriptor* type, int number) {
  const EnumValueDescriptor* value = type->FindValueByNumber(number);
  if (value == nullptr) return absl::StrCat(number);
  absl::string_view name = value->name();
  absl::ConsumePrefix(&name, Prefix(type));
  return std::string(name);
}

bool ParseShortEnumName(const EnumDescriptor* type, absl::string_view name, int* number) {
  std::string upper = absl::AsciiStrToUpper(name);
  const EnumValueDescriptor* value = type->FindValueByName(upper);
  if (value == nullptr) value = type->FindValueByName(absl::StrCat(Prefix(type), upper));
  if (value == nullptr) return false;
  *number = value->number();
  return true;
}

}  // namespace sluice
