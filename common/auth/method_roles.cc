#include "common/auth/method_roles.h"

#include "absl/strings/str_cat.h"

namespace sluice::auth {

const char* RoleName(v1::Role role) {
  switch (role) {
    case v1::ROLE_ADMIN:
      return "admin";
    case v1::ROLE_READER:
      return "reader";
    case v1::ROLE_WORKER:
      return "worker";
    case v1::ROLE_SUPERVISOR:
      return "supervisor";
    default:
      return "unspecified";
  }
}

std::set<v1::Role> RolesOf(const google::protobuf::MethodDescriptor& method) {
  std::set<v1::Role> roles;
  if (!method.options().HasExtension(v1::auth)) return roles;
  for (int role : method.options().GetExtension(v1::auth).roles()) {
    if (role != v1::ROLE_UNSPECIFIED) roles.insert(static_cast<v1::Role>(role));
  }
  return roles;
}

absl::StatusOr<MethodRoles> MethodRoles::ForServices(const std::vector<std::string>& services) {
  MethodRoles table;
  for (const std::string& name : services) {
    const google::protobuf::ServiceDescriptor* service =
        google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(name);
    if (service == nullptr) {
      return absl::NotFoundError(absl::StrCat("service ", name, " is not compiled in"));
    }
    for (int i = 0; i < service->method_count(); ++i) {
      const google::protobuf::MethodDescriptor& method = *service->method(i);
      std::set<v1::Role> roles = RolesOf(method);
      if (roles.empty()) {
        return absl::FailedPreconditionError(absl::StrCat(
            "method ", method.full_name(), " has no (sluice.v1.auth) roles in its proto"));
      }
      const std::string path = absl::StrCat("/", service->full_name(), "/", method.name());
      table.by_path_[path] = std::move(roles);
      // A bare name maps to its path only while it is unique.
      auto [it, inserted] = table.path_by_name_.emplace(method.name(), path);
      if (!inserted) it->second.clear();
    }
  }
  return table;
}

const std::set<v1::Role>* MethodRoles::Find(absl::string_view method) const {
  auto it = by_path_.find(method);
  if (it != by_path_.end()) return &it->second;
  auto name = path_by_name_.find(method);
  if (name == path_by_name_.end() || name->second.empty()) return nullptr;
  return Find(name->second);
}

std::vector<std::string> MethodRoles::Methods() const {
  std::vector<std::string> out;
  for (const auto& [path, roles] : by_path_) out.push_back(path);
  return out;
}

}  // namespace sluice::auth
