#include "supervisor/console/console_route.h"

#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace sluice::supervisor::console {

namespace {

struct Sub {
  const char* name;
  ConsoleCall call;
};

constexpr Sub kDatasourceReads[] = {
    {"spec", ConsoleCall::kSpec},           {"history", ConsoleCall::kSpecHistory},
    {"segments", ConsoleCall::kSegments},   {"commit-log", ConsoleCall::kCommitLog},
    {"tasks", ConsoleCall::kTasks},         {"lag-history", ConsoleCall::kLagHistory},
};
constexpr Sub kDatasourceActions[] = {
    {"suspend", ConsoleCall::kSuspend},     {"resume", ConsoleCall::kResume},
    {"reset", ConsoleCall::kReset},         {"handoff", ConsoleCall::kHandoff},
    {"terminate", ConsoleCall::kTerminate}, {"reset-offsets", ConsoleCall::kResetOffsets},
};

absl::Status NotFound(absl::string_view path) {
  return absl::NotFoundError(absl::StrCat("no such console API path: ", path.substr(0, 200)));
}

absl::StatusOr<std::map<int32_t, int64_t>> ParseOffsets(absl::string_view query) {
  std::map<int32_t, int64_t> offsets;
  for (absl::string_view pair : absl::StrSplit(query, '&', absl::SkipEmpty())) {
    std::pair<absl::string_view, absl::string_view> kv = absl::StrSplit(pair, '=');
    int32_t partition = -1;
    int64_t offset = -1;
    if (!absl::SimpleAtoi(kv.first, &partition) || !absl::SimpleAtoi(kv.second, &offset) ||
        partition < 0 || offset < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("reset-offsets takes <partition>=<offset> pairs of non-negative integers, "
                       "not: ",
                       pair.substr(0, 100)));
    }
    if (!offsets.emplace(partition, offset).second) {
      return absl::InvalidArgumentError(absl::StrCat("partition ", partition, " given twice"));
    }
  }
  if (offsets.empty()) return absl::InvalidArgumentError("reset-offsets names no partition");
  return offsets;
}

}  // namespace

bool IsAction(ConsoleCall call) {
  for (const Sub& sub : kDatasourceActions) {
    if (sub.call == call) return true;
  }
  return false;
}

absl::StatusOr<ConsoleRoute> MatchConsoleRoute(absl::string_view method, absl::string_view path,
                                               absl::string_view query) {
  absl::string_view rest = path;
  if (!absl::ConsumePrefix(&rest, kApiPrefix)) return NotFound(path);
  const bool read = method == "GET" || method == "HEAD";
  const bool post = method == "POST";
  auto wrong_method = [&](bool action) {
    return absl::UnimplementedError(absl::StrCat(method.substr(0, 20), " is not allowed here: use ",
                                                 action ? "POST" : "GET"));
  };
  std::vector<absl::string_view> parts = absl::StrSplit(rest, '/');
  ConsoleRoute route;
  if (parts.size() == 1 && (parts[0] == "whoami" || parts[0] == "workers" ||
                            parts[0] == "datasources")) {
    if (!read) return wrong_method(false);
    route.call = parts[0] == "whoami"    ? ConsoleCall::kWhoAmI
                 : parts[0] == "workers" ? ConsoleCall::kWorkers
                                         : ConsoleCall::kDatasources;
    return route;
  }
  if (parts[0] != "datasources" || parts.size() < 2 || parts.size() > 3 || parts[1].empty()) {
    return NotFound(path);
  }
  route.datasource = std::string(parts[1]);
  if (parts.size() == 2) {
    if (!read) return wrong_method(false);
    route.call = ConsoleCall::kStatus;
    return route;
  }
  for (const Sub& sub : kDatasourceReads) {
    if (parts[2] != sub.name) continue;
    if (!read) return wrong_method(false);
    route.call = sub.call;
    return route;
  }
  for (const Sub& sub : kDatasourceActions) {
    if (parts[2] != sub.name) continue;
    if (!post) return wrong_method(true);
    route.call = sub.call;
    if (sub.call == ConsoleCall::kResetOffsets) {
      absl::StatusOr<std::map<int32_t, int64_t>> offsets = ParseOffsets(query);
      if (!offsets.ok()) return offsets.status();
      route.offsets = *std::move(offsets);
    }
    return route;
  }
  return NotFound(path);
}

}  // namespace sluice::supervisor::console
