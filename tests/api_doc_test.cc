// docs/api.md against the compiled contract: every RPC of both services has a
// section `### Service.Method` whose first line names its request and
// response types and the roles of its (auth) option, in the proto's order; no
// section names an RPC that does not exist. A renamed type, a new RPC or a
// changed role therefore fails here until the page says so.
#include <map>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/file_util.h"
#include "google/protobuf/descriptor.h"
#include "gtest/gtest.h"
#include "sluice/v1/auth.pb.h"
#include "sluice/v1/supervisor_service.pb.h"
#include "sluice/v1/task_service.pb.h"
#include "tests/testing/subprocess.h"

namespace sluice {
namespace {

// "### Service.Method" -> the first non-empty line after it.
std::map<std::string, std::string> Sections(const std::string& markdown) {
  std::map<std::string, std::string> sections;
  std::vector<std::string> lines = absl::StrSplit(markdown, '\n');
  for (size_t i = 0; i < lines.size(); ++i) {
    if (!absl::StartsWith(lines[i], "### ")) continue;
    std::string first;
    for (size_t j = i + 1; j < lines.size() && first.empty(); ++j) {
      first = std::string(absl::StripAsciiWhitespace(lines[j]));
    }
    sections[std::string(absl::StripAsciiWhitespace(lines[i].substr(4)))] = first;
  }
  return sections;
}

std::string RoleName(int role) {
  const std::string& full = v1::Role_Name(static_cast<v1::Role>(role));
  absl::string_view name = full;
  absl::ConsumePrefix(&name, "ROLE_");
  return absl::AsciiStrToLower(name);
}

// What the first line of the method's section must be.
std::string ExpectedLine(const google::protobuf::MethodDescriptor& method) {
  std::vector<std::string> roles;
  for (int role : method.options().GetExtension(v1::auth).roles()) roles.push_back(RoleName(role));
  return absl::StrCat("`", method.input_type()->name(), "` -> `", method.output_type()->name(),
                      "` · roles: ", absl::StrJoin(roles, ", "));
}

TEST(ApiDocTest, EveryRpcHasASectionWithItsTypesAndRoles) {
  absl::StatusOr<std::string> path = testing::FindRunfile("docs/api.md");
  ASSERT_TRUE(path.ok()) << path.status();
  absl::StatusOr<std::string> markdown = ReadFile(*path);
  ASSERT_TRUE(markdown.ok()) << markdown.status();
  std::map<std::string, std::string> sections = Sections(*markdown);

  int methods = 0;
  for (const char* name : {"sluice.v1.SupervisorService", "sluice.v1.TaskService"}) {
    const google::protobuf::ServiceDescriptor* service =
        google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(name);
    ASSERT_NE(service, nullptr) << name;
    for (int i = 0; i < service->method_count(); ++i) {
      const google::protobuf::MethodDescriptor& method = *service->method(i);
      const std::string heading = absl::StrCat(service->name(), ".", method.name());
      ++methods;
      auto it = sections.find(heading);
      if (it == sections.end()) {
        ADD_FAILURE() << "docs/api.md has no section \"### " << heading << "\"";
        continue;
      }
      EXPECT_EQ(it->second, ExpectedLine(method)) << "the first line of ### " << heading;
      sections.erase(it);
    }
  }
  EXPECT_GE(methods, 30);
  for (const auto& [heading, line] : sections) {
    ADD_FAILURE() << "docs/api.md: ### " << heading << " is not an RPC of the contract";
  }
}

}  // namespace
}  // namespace sluice
