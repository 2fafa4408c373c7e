// The role table of a server, read from the `(sluice.v1.auth)` option of
// every rpc of the services it serves (proto/sluice/v1/auth.proto).
#ifndef SLUICE_COMMON_AUTH_METHOD_ROLES_H_
#define SLUICE_COMMON_AUTH_METHOD_ROLES_H_

#include <google/protobuf/descriptor.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "sluice/v1/auth.pb.h"

namespace sluice::auth {

class MethodRoles {
 public:
  // Every method of the services named (full names, "sluice.v1.TaskService",
  // looked up among the compiled descriptors). FAILED_PRECONDITION naming the
  // method when one has no roles (a server must not start with an unguarded
  // method), NOT_FOUND for an unknown service.
  static absl::StatusOr<MethodRoles> ForServices(const std::vector<std::string>& services);

  // The roles allowed to call `method`, which is the gRPC path
  // "/sluice.v1.SupervisorService/PublishSegments" or the bare method name
  // when the table covers one service. Null for a method not in the table.
  const std::set<v1::Role>* Find(absl::string_view method) const;

  // The gRPC paths in the table.
  std::vector<std::string> Methods() const;

 private:
  std::map<std::string, std::set<v1::Role>, std::less<>> by_path_;
  std::map<std::string, std::string, std::less<>> path_by_name_;
};

// The roles of one method descriptor (empty when it has none).
std::set<v1::Role> RolesOf(const google::protobuf::MethodDescriptor& method);

}  // namespace sluice::auth

#endif  // SLUICE_COMMON_AUTH_METHOD_ROLES_H_
