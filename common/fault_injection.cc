#include "common/fault_injection.h"

#include <glog/logging.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/strings/ascii.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "common/file_util.h"

namespace sluice {
namespace {

enum class Action { kCrash, kError, kDelay, kErrorWhileFile, kCrashIfFile };

struct FaultPoint {
  Action action;
  int64_t delay_ms = 0;
  std::string file;
  int trigger_hit = 1;  // 0 = every hit
  int hits = 0;
};

struct Registry {
  absl::Mutex mu;
  std::map<std::string, FaultPoint, std::less<>> points ABSL_GUARDED_BY(mu);
};

std::atomic<bool> g_any_configured{false};

Registry& GetRegistry() {
  static auto* registry = new Registry();
  return *registry;
}

absl::Status ParseEntry(absl::string_view entry, std::string* name, FaultPoint* point) {
  const std::vector<absl::string_view> kv = absl::StrSplit(entry, absl::MaxSplits('=', 1));
  if (kv.size() != 2 || kv[0].empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("fault point \"", entry, "\" is not NAME=ACTION[@N]"));
  }
  *name = std::string(kv[0]);
  absl::string_view action = kv[1];
  if (const size_t at = action.rfind('@'); at != absl::string_view::npos) {
    const absl::string_view when = action.substr(at + 1);
    action = action.substr(0, at);
    if (when == "*") {
      point->trigger_hit = 0;
    } else if (!absl::SimpleAtoi(when, &point->trigger_hit) || point->trigger_hit < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("fault point \"", entry, "\": @N needs N >= 1 or '*'"));
    }
  }
  if (action == "crash") {
    point->action = Action::kCrash;
  } else if (action == "error") {
    point->action = Action::kError;
  } else if (absl::StartsWith(action, "delay:")) {
    point->action = Action::kDelay;
    if (!absl::SimpleAtoi(action.substr(6), &point->delay_ms) || point->delay_ms < 0) {
      return absl::InvalidArgumentError(absl::StrCat("fault point \"", entry, "\": bad delay"));
    }
  } else if (absl::StartsWith(action, "error_while_file:")) {
    point->action = Action::kErrorWhileFile;
    point->file = std::string(action.substr(17));
    point->trigger_hit = 0;
    if (point->file.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("fault point \"", entry, "\": no file"));
    }
  } else if (absl::StartsWith(action, "crash_if_file:")) {
    point->action = Action::kCrashIfFile;
    point->file = std::string(action.substr(14));
    point->trigger_hit = 0;
    if (point->file.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("fault point \"", entry, "\": no file"));
    }
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "fault point \"", entry,
        "\": action must be crash, error, delay:MS, error_while_file:PATH or "
        "crash_if_file:PATH"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ConfigureFaultPoints(absl::string_view spec) {
  std::map<std::string, FaultPoint, std::less<>> points;
  for (absl::string_view entry : absl::StrSplit(spec, ',', absl::SkipWhitespace())) {
    std::string name;
    FaultPoint point;
    absl::Status status = ParseEntry(absl::StripAsciiWhitespace(entry), &name, &point);
    if (!status.ok()) return status;
    points[name] = point;
  }
  Registry& registry = GetRegistry();
  absl::MutexLock lock(&registry.mu);
  registry.points = std::move(points);
  g_any_configured.store(!registry.points.empty(), std::memory_order_relaxed);
  for (const auto& [name, point] : registry.points) {
    LOG(WARNING) << "[fault] fault point " << name << " is armed";
  }
  return absl::OkStatus();
}

absl::Status HitFaultPoint(absl::string_view name) {
  if (!g_any_configured.load(std::memory_order_relaxed)) return absl::OkStatus();
  Registry& registry = GetRegistry();
  FaultPoint point;
  bool fire = false;
  {
    absl::MutexLock lock(&registry.mu);
    auto it = registry.points.find(name);
    if (it == registry.points.end()) return absl::OkStatus();
    ++it->second.hits;
    point = it->second;
    fire = point.trigger_hit == 0 || point.hits == point.trigger_hit;
  }
  if (!fire) return absl::OkStatus();
  switch (point.action) {
    case Action::kCrashIfFile:
      // Deleting the file claims the crash: of several processes armed by
      // one file only the first crashes, and a restarted one runs on.
      if (::unlink(point.file.c_str()) != 0) return absl::OkStatus();
      LOG(ERROR) << "[fault] " << name << ": crashing the process (armed by " << point.file
                 << ")";
      google::FlushLogFiles(google::GLOG_INFO);
      ::_exit(86);
    case Action::kCrash:
      LOG(ERROR) << "[fault] " << name << ": crashing the process (hit " << point.hits << ")";
      google::FlushLogFiles(google::GLOG_INFO);
      ::_exit(86);
    case Action::kError:
      LOG(WARNING) << "[fault] " << name << ": injected error (hit " << point.hits << ")";
      return absl::UnavailableError(absl::StrCat("injected fault at ", name));
    case Action::kDelay:
      LOG(WARNING) << "[fault] " << name << ": sleeping " << point.delay_ms << " ms";
      absl::SleepFor(absl::Milliseconds(point.delay_ms));
      return absl::OkStatus();
    case Action::kErrorWhileFile:
      if (!PathExists(point.file)) return absl::OkStatus();
      LOG_EVERY_N(WARNING, 20) << "[fault] " << name << ": injected error while " << point.file
                               << " exists";
      return absl::UnavailableError(absl::StrCat("injected fault at ", name, " (while ",
                                                 point.file, " exists)"));
  }
  return absl::OkStatus();
}

int FaultPointHits(absl::string_view name) {
  Registry& registry = GetRegistry();
  absl::MutexLock lock(&registry.mu);
  auto it = registry.points.find(name);
  return it == registry.points.end() ? 0 : it->second.hits;
}

}  // namespace sluice
