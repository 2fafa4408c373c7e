#include "tests/monitoring/monitoring_files.h"

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace sluice::monitoring {

namespace {

absl::StatusOr<std::string> ReadAll(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

absl::StatusOr<google::protobuf::Struct> ReadJson(const std::string& path) {
  absl::StatusOr<std::string> text = ReadAll(path);
  if (!text.ok()) return text.status();
  google::protobuf::Struct dashboard;
  auto parsed = google::protobuf::util::JsonStringToMessage(*text, &dashboard);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", parsed.ToString()));
  }
  return dashboard;
}

// Calls fn on every panel, rows' nested panels included.
template <typename Fn>
void ForEachPanel(const google::protobuf::Struct& holder, Fn fn) {
  const google::protobuf::Value* panels = JsonField(holder, "panels");
  if (panels == nullptr || !panels->has_list_value()) return;
  for (const google::protobuf::Value& panel : panels->list_value().values()) {
    if (!panel.has_struct_value()) continue;
    fn(panel.struct_value());
    ForEachPanel(panel.struct_value(), fn);
  }
}

}  // namespace

const google::protobuf::Value* JsonField(const google::protobuf::Struct& object,
                                         const std::string& key) {
  auto it = object.fields().find(key);
  return it == object.fields().end() ? nullptr : &it->second;
}

std::string JsonString(const google::protobuf::Struct& object, const std::string& key) {
  const google::protobuf::Value* v = JsonField(object, key);
  return v != nullptr && v->has_string_value() ? v->string_value() : "";
}

std::string MonitoringFile(absl::string_view name) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  return absl::StrCat(srcdir != nullptr ? srcdir : ".", "/",
                      workspace != nullptr ? workspace : "", "/k8s/monitoring/", name);
}

absl::StatusOr<std::vector<DashboardQuery>> ReadDashboardQueries(const std::string& path) {
  absl::StatusOr<google::protobuf::Struct> dashboard = ReadJson(path);
  if (!dashboard.ok()) return dashboard.status();
  std::vector<DashboardQuery> queries;
  ForEachPanel(*dashboard, [&](const google::protobuf::Struct& panel) {
    const google::protobuf::Value* targets = JsonField(panel, "targets");
    if (targets == nullptr || !targets->has_list_value()) return;
    for (const google::protobuf::Value& target : targets->list_value().values()) {
      if (!target.has_struct_value()) continue;
      std::string expr = JsonString(target.struct_value(), "expr");
      if (!expr.empty()) queries.push_back({JsonString(panel, "title"), std::move(expr)});
    }
  });
  if (queries.empty()) return absl::InvalidArgumentError(absl::StrCat(path, ": no panel queries"));
  const google::protobuf::Value* templating = JsonField(*dashboard, "templating");
  if (templating != nullptr && templating->has_struct_value()) {
    const google::protobuf::Value* list = JsonField(templating->struct_value(), "list");
    if (list != nullptr && list->has_list_value()) {
      for (const google::protobuf::Value& variable : list->list_value().values()) {
        if (!variable.has_struct_value()) continue;
        const std::string definition = JsonString(variable.struct_value(), "definition");
        if (!definition.empty()) {
          queries.push_back(
              {absl::StrCat("variable ", JsonString(variable.struct_value(), "name")),
               definition});
        }
      }
    }
  }
  return queries;
}

absl::StatusOr<std::vector<std::string>> ReadDashboardPanelTitles(const std::string& path) {
  absl::StatusOr<google::protobuf::Struct> dashboard = ReadJson(path);
  if (!dashboard.ok()) return dashboard.status();
  std::vector<std::string> titles;
  ForEachPanel(*dashboard, [&](const google::protobuf::Struct& panel) {
    titles.push_back(JsonString(panel, "title"));
  });
  return titles;
}

absl::StatusOr<std::vector<std::string>> ReadAlertNames(const std::string& path) {
  absl::StatusOr<std::string> text = ReadAll(path);
  if (!text.ok()) return text.status();
  std::vector<std::string> names;
  for (absl::string_view line : absl::StrSplit(*text, '\n')) {
    line = absl::StripLeadingAsciiWhitespace(line);
    if (absl::ConsumePrefix(&line, "- alert:")) {
      names.emplace_back(absl::StripAsciiWhitespace(line));
    }
  }
  return names;
}

std::set<std::string> MetricNamesIn(absl::string_view expr) {
  std::set<std::string> names;
  for (size_t at = expr.find("sluice_"); at != absl::string_view::npos;
       at = expr.find("sluice_", at + 1)) {
    // A name starts at a boundary: not inside another identifier or variable.
    if (at > 0) {
      const char before = expr[at - 1];
      if (std::isalnum(static_cast<unsigned char>(before)) || before == '_' || before == '$') {
        continue;
      }
    }
    size_t end = at;
    while (end < expr.size() && (std::islower(static_cast<unsigned char>(expr[end])) ||
                                 std::isdigit(static_cast<unsigned char>(expr[end])) ||
                                 expr[end] == '_')) {
      ++end;
    }
    names.emplace(expr.substr(at, end - at));
    at = end - 1;
  }
  return names;
}

std::string Instantiate(absl::string_view expr) {
  return absl::StrReplaceAll(
      expr, {{"$__rate_interval", "1m"}, {"$__range", "10m"}, {"$sluice_datasource", ".*"}});
}

}  // namespace sluice::monitoring
