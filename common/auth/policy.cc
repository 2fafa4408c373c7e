#include "common/auth/policy.h"

#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/file_util.h"
#include "common/names.h"
#include "common/status_macros.h"

namespace sluice::auth {
namespace {

std::optional<v1::Role> ParseRole(absl::string_view name) {
  if (name == "admin") return v1::ROLE_ADMIN;
  if (name == "reader") return v1::ROLE_READER;
  if (name == "worker") return v1::ROLE_WORKER;
  if (name == "supervisor") return v1::ROLE_SUPERVISOR;
  return std::nullopt;
}

}  // namespace

absl::StatusOr<Policy> Policy::Load(const std::string& path) {
  SLUICE_ASSIGN_OR_RETURN(std::string contents, ReadFile(path));
  return Parse(contents, path);
}

absl::StatusOr<Policy> Policy::Parse(absl::string_view contents, absl::string_view origin) {
  Policy policy;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(contents, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    auto bad = [&](absl::string_view why) {
      return absl::InvalidArgumentError(
          absl::StrCat("auth policy file ", origin, " line ", line_number, ": ", why));
    };
    std::vector<absl::string_view> fields =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    if (fields.size() < 2 || fields.size() > 3) {
      return bad("expected \"<principal> <role>[,<role>...] [<worker id>]\"");
    }
    const absl::string_view principal = fields[0];
    if (!absl::StartsWith(principal, "token:") && !absl::StartsWith(principal, "cert:")) {
      return bad(absl::StrCat("principal \"", principal,
                              "\" must start with \"token:\" or \"cert:\""));
    }
    Grant grant;
    for (absl::string_view name : absl::StrSplit(fields[1], ',', absl::SkipEmpty())) {
      std::optional<v1::Role> role = ParseRole(name);
      if (!role) {
        return bad(absl::StrCat("unknown role \"", name,
                                "\" (admin, reader, worker, supervisor)"));
      }
      grant.roles.insert(*role);
    }
    if (grant.roles.empty()) return bad("no role");
    const bool worker = grant.roles.count(v1::ROLE_WORKER) > 0;
    if (fields.size() == 3) {
      if (!worker) return bad("a worker id is only for principals with the worker role");
      grant.worker_id = std::string(fields[2]);
      if (absl::Status valid = ValidateWorkerId(grant.worker_id); !valid.ok()) {
        return bad(valid.message());
      }
    } else if (worker) {
      return bad(absl::StrCat("worker principal \"", principal,
                              "\" must name the worker id it is bound to"));
    }
    if (!policy.grants_.emplace(std::string(principal), std::move(grant)).second) {
      return bad(absl::StrCat("principal \"", principal, "\" is listed twice"));
    }
  }
  return policy;
}

const Grant* Policy::Find(absl::string_view principal) const {
  auto it = grants_.find(principal);
  return it == grants_.end() ? nullptr : &it->second;
}

}  // namespace sluice::auth
