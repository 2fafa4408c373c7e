#include "common/request_limits.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "common/status_macros.h"
#include "google/protobuf/descriptor.h"
#include "sluice/v1/limits.pb.h"

namespace sluice {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::EnumValueDescriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

absl::Status Beyond(const std::string& path, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(path, " ", what));
}

std::string Join(const std::string& path, const FieldDescriptor& field) {
  return path.empty() ? field.json_name() : absl::StrCat(path, ".", field.json_name());
}

// The limits of `field`, with the defaults filled in.
struct Bounds {
  size_t max_bytes = kDefaultMaxBytes;
  size_t max_items = kDefaultMaxItems;
  size_t max_key_bytes = kDefaultMaxBytes;
  bool has_min = false, has_max = false, has_min_key = false;
  int64_t min = 0, max = 0, min_key = 0;
};

Bounds BoundsOf(const FieldDescriptor& field) {
  Bounds b;
  if (!field.options().HasExtension(v1::limits)) return b;
  const v1::FieldLimits& l = field.options().GetExtension(v1::limits);
  if (l.max_bytes() > 0) b.max_bytes = l.max_bytes();
  if (l.max_items() > 0) b.max_items = l.max_items();
  if (l.max_key_bytes() > 0) b.max_key_bytes = l.max_key_bytes();
  b.has_min = l.has_min();
  b.min = l.min();
  b.has_max = l.has_max();
  b.max = l.max();
  b.has_min_key = l.has_min_key();
  b.min_key = l.min_key();
  return b;
}

class Checker {
 public:
  absl::Status Message(const google::protobuf::Message& m, const std::string& path, int depth) {
    if (depth > kMaxMessageDepth) {
      return Beyond(path, absl::StrCat("nests messages deeper than ", kMaxMessageDepth));
    }
    const Reflection* r = m.GetReflection();
    std::vector<const FieldDescriptor*> fields;
    r->ListFields(m, &fields);
    for (const FieldDescriptor* field : fields) {
      const Bounds bounds = BoundsOf(*field);
      const std::string at = Join(path, *field);
      if (field->is_map()) {
        SLUICE_RETURN_IF_ERROR(Map(m, *field, bounds, at, depth));
      } else if (field->is_repeated()) {
        const int n = r->FieldSize(m, field);
        if (static_cast<size_t>(n) > bounds.max_items) {
          return Beyond(at, absl::StrCat("has ", n, " elements; at most ", bounds.max_items));
        }
        for (int i = 0; i < n; ++i) {
          SLUICE_RETURN_IF_ERROR(
              Value(m, *field, i, bounds, absl::StrCat(at, "[", i, "]"), depth));
        }
      } else {
        SLUICE_RETURN_IF_ERROR(Value(m, *field, -1, bounds, at, depth));
      }
    }
    return absl::OkStatus();
  }

 private:
  // One value of `field` (element `index` of a repeated field, -1 if singular).
  absl::Status Value(const google::protobuf::Message& m, const FieldDescriptor& field, int index,
                     const Bounds& bounds, const std::string& at, int depth) {
    const Reflection* r = m.GetReflection();
    const bool rep = index >= 0;
    switch (field.cpp_type()) {
      case FieldDescriptor::CPPTYPE_STRING: {
        std::string scratch;
        const std::string& s = rep ? r->GetRepeatedStringReference(m, &field, index, &scratch)
                                   : r->GetStringReference(m, &field, &scratch);
        return Bytes(s, bounds.max_bytes, at);
      }
      case FieldDescriptor::CPPTYPE_INT32:
        return Integer(rep ? r->GetRepeatedInt32(m, &field, index) : r->GetInt32(m, &field),
                       bounds, at);
      case FieldDescriptor::CPPTYPE_INT64:
        return Integer(rep ? r->GetRepeatedInt64(m, &field, index) : r->GetInt64(m, &field),
                       bounds, at);
      case FieldDescriptor::CPPTYPE_UINT32:
        return Integer(rep ? r->GetRepeatedUInt32(m, &field, index) : r->GetUInt32(m, &field),
                       bounds, at);
      case FieldDescriptor::CPPTYPE_ENUM: {
        const int number =
            rep ? r->GetRepeatedEnumValue(m, &field, index) : r->GetEnumValue(m, &field);
        return Enum(field, number, at);
      }
      case FieldDescriptor::CPPTYPE_MESSAGE:
        return Message(rep ? r->GetRepeatedMessage(m, &field, index) : r->GetMessage(m, &field),
                       at, depth + 1);
      default:
        return absl::OkStatus();
    }
  }

  absl::Status Map(const google::protobuf::Message& m, const FieldDescriptor& field,
                   const Bounds& bounds, const std::string& at, int depth) {
    const Reflection* r = m.GetReflection();
    const int n = r->FieldSize(m, &field);
    if (static_cast<size_t>(n) > bounds.max_items) {
      return Beyond(at, absl::StrCat("has ", n, " entries; at most ", bounds.max_items));
    }
    const FieldDescriptor* key = field.message_type()->map_key();
    const FieldDescriptor* value = field.message_type()->map_value();
    Bounds key_bounds;
    key_bounds.max_bytes = bounds.max_key_bytes;
    key_bounds.has_min = bounds.has_min_key;
    key_bounds.min = bounds.min_key;
    Bounds value_bounds = bounds;
    value_bounds.max_items = kDefaultMaxItems;
    for (int i = 0; i < n; ++i) {
      const google::protobuf::Message& entry = r->GetRepeatedMessage(m, &field, i);
      const Reflection* er = entry.GetReflection();
      std::string name;
      switch (key->cpp_type()) {
        case FieldDescriptor::CPPTYPE_STRING: {
          std::string scratch;
          const std::string& k = er->GetStringReference(entry, key, &scratch);
          SLUICE_RETURN_IF_ERROR(Bytes(k, key_bounds.max_bytes, absl::StrCat(at, " key")));
          name = k;
          break;
        }
        case FieldDescriptor::CPPTYPE_INT32: {
          const int32_t k = er->GetInt32(entry, key);
          SLUICE_RETURN_IF_ERROR(Integer(k, key_bounds, absl::StrCat(at, " key")));
          name = absl::StrCat(k);
          break;
        }
        case FieldDescriptor::CPPTYPE_INT64: {
          const int64_t k = er->GetInt64(entry, key);
          SLUICE_RETURN_IF_ERROR(Integer(k, key_bounds, absl::StrCat(at, " key")));
          name = absl::StrCat(k);
          break;
        }
        default:
          break;
      }
      SLUICE_RETURN_IF_ERROR(
          Value(entry, *value, -1, value_bounds, absl::StrCat(at, "[\"", name, "\"]"), depth));
    }
    return absl::OkStatus();
  }

  static absl::Status Bytes(const std::string& s, size_t max_bytes, const std::string& at) {
    if (s.size() <= max_bytes) return absl::OkStatus();
    return Beyond(at, absl::StrCat("is ", s.size(), " bytes long; at most ", max_bytes));
  }

  static absl::Status Integer(int64_t v, const Bounds& bounds, const std::string& at) {
    if (bounds.has_min && v < bounds.min) {
      return Beyond(at, absl::StrCat("must be at least ", bounds.min, " (got ", v, ")"));
    }
    if (bounds.has_max && v > bounds.max) {
      return Beyond(at, absl::StrCat("must be at most ", bounds.max, " (got ", v, ")"));
    }
    return absl::OkStatus();
  }

  static absl::Status Enum(const FieldDescriptor& field, int number, const std::string& at) {
    if (field.enum_type()->FindValueByNumber(number) != nullptr) return absl::OkStatus();
    std::string names;
    for (int i = 0; i < field.enum_type()->value_count(); ++i) {
      const EnumValueDescriptor* v = field.enum_type()->value(i);
      if (v->number() == 0) continue;  // *_UNSPECIFIED: the default, not a choice
      absl::StrAppend(&names, names.empty() ? "" : ", ", v->name());
    }
    return Beyond(at, absl::StrCat(number, " is not one of ", names));
  }
};

}  // namespace

absl::Status CheckMessageLimits(const google::protobuf::Message& message) {
  return Checker().Message(message, "", 0);
}

namespace {

const google::protobuf::MethodDescriptor* FindMethod(absl::string_view method) {
  // "/pkg.Service/Method" (gRPC's path) or "pkg.Service.Method".
  std::string name(absl::StripPrefix(method, "/"));
  name = absl::StrReplaceAll(name, {{"/", "."}});
  return google::protobuf::DescriptorPool::generated_pool()->FindMethodByName(name);
}

size_t BoundOf(const google::protobuf::MethodDescriptor& method) {
  const uint32_t bound = method.options().GetExtension(v1::method_limits).max_request_bytes();
  return bound > 0 ? bound : kDefaultMaxRequestBytes;
}

}  // namespace

size_t MaxRequestBytes(absl::string_view method) {
  const google::protobuf::MethodDescriptor* found = FindMethod(method);
  return found == nullptr ? 0 : BoundOf(*found);
}

size_t MaxRequestBytesOfService(absl::string_view service) {
  const google::protobuf::ServiceDescriptor* found =
      google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(std::string(service));
  if (found == nullptr) return 0;
  size_t largest = 0;
  for (int i = 0; i < found->method_count(); ++i) {
    largest = std::max(largest, BoundOf(*found->method(i)));
  }
  return largest;
}

absl::Status CheckRequestSize(const google::protobuf::Message& request, absl::string_view method) {
  const google::protobuf::MethodDescriptor* found = FindMethod(method);
  if (found == nullptr) {
    return absl::InternalError(absl::StrCat("no request bound for unknown method ", method));
  }
  const size_t bound = BoundOf(*found);
  const size_t size = request.ByteSizeLong();
  if (size <= bound) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat(found->name(), " requests are bounded to ",
                                                   bound, " bytes (got ", size, ")"));
}

}  // namespace sluice
