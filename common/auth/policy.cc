#include "common/auth/policy.h"

#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/strip.h"
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

// HOST:PORT with a non-empty host, a port of digits or "*".
bool ValidPattern(absl::string_view pattern) {
  const size_t colon = pattern.rfind(':');
  if (colon == absl::string_view::npos || colon == 0) return false;
  absl::string_view host = pattern.substr(0, colon);
  absl::string_view port = pattern.substr(colon + 1);
  if (absl::ConsumePrefix(&host, "*.") && host.empty()) return false;
  if (absl::StrContains(host, '*')) return false;
  if (port == "*") return true;
  int number = 0;
  return absl::SimpleAtoi(port, &number) && number > 0 && number <= 65535;
}

// Applies "key=value" worker options to `grant`; the error says why not.
absl::Status ApplyWorkerOption(absl::string_view option, Grant* grant) {
  std::pair<absl::string_view, absl::string_view> kv = absl::StrSplit(option, absl::MaxSplits('=', 1));
  if (kv.first == "address") {
    if (!ValidPattern(kv.second)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "address \"", kv.second, "\" is not HOST:PORT (HOST may start with \"*.\", PORT may be \"*\")"));
    }
    grant->address_pattern = std::string(kv.second);
    return absl::OkStatus();
  }
  if (kv.first == "max_capacity") {
    if (!absl::SimpleAtoi(kv.second, &grant->max_capacity) || grant->max_capacity < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("max_capacity \"", kv.second, "\" is not a positive number"));
    }
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown worker option \"", option, "\" (address=HOST:PORT, max_capacity=N)"));
}

}  // namespace

bool AddressMatches(absl::string_view pattern, absl::string_view address) {
  const size_t pattern_colon = pattern.rfind(':');
  const size_t colon = address.rfind(':');
  if (pattern_colon == absl::string_view::npos || colon == absl::string_view::npos) return false;
  absl::string_view pattern_host = pattern.substr(0, pattern_colon);
  absl::string_view pattern_port = pattern.substr(pattern_colon + 1);
  absl::string_view host = address.substr(0, colon);
  absl::string_view port = address.substr(colon + 1);
  if (pattern_port != "*" && pattern_port != port) return false;
  if (absl::ConsumePrefix(&pattern_host, "*")) {
    // "*.rest": at least one label, then ".rest".
    return host.size() > pattern_host.size() && absl::EndsWithIgnoreCase(host, pattern_host) &&
           host[host.size() - pattern_host.size() - 1] != '.';
  }
  return absl::EqualsIgnoreCase(pattern_host, host);
}

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
    if (fields.size() < 2) {
      return bad("expected \"<principal> <role>[,<role>...] [<worker id> [<option>=<value>...]]\"");
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
    const bool supervisor = grant.roles.count(v1::ROLE_SUPERVISOR) > 0;
    if (fields.size() >= 3) {
      if (!worker && !supervisor) {
        return bad("a worker id is only for principals with the worker or supervisor role");
      }
      grant.worker_id = std::string(fields[2]);
      if (absl::Status valid = ValidateWorkerId(grant.worker_id); !valid.ok()) {
        return bad(valid.message());
      }
    } else if (worker) {
      return bad(absl::StrCat("worker principal \"", principal,
                              "\" must name the worker id it is bound to"));
    }
    for (size_t i = 3; i < fields.size(); ++i) {
      if (!worker) return bad(absl::StrCat("\"", fields[i], "\": options are for workers only"));
      if (absl::Status applied = ApplyWorkerOption(fields[i], &grant); !applied.ok()) {
        return bad(applied.message());
      }
    }
    if (worker && grant.address_pattern.empty()) {
      return bad(absl::StrCat("worker principal \"", principal,
                              "\" must name the address it may register: address=HOST:PORT"));
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
