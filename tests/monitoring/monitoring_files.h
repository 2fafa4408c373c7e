// Reads k8s/monitoring's files for the tests beside: the Grafana dashboard's
// queries (panel title and PromQL) and the alert names of the rule file, the
// metric names an expression uses, and fields of parsed JSON objects.
#ifndef SLUICE_TESTS_MONITORING_MONITORING_FILES_H_
#define SLUICE_TESTS_MONITORING_MONITORING_FILES_H_

#include <set>
#include <string>
#include <vector>

#include <google/protobuf/struct.pb.h>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace sluice::monitoring {

// The field `key` of a JSON object (null when absent), and its string value
// ("" when absent or not a string).
const google::protobuf::Value* JsonField(const google::protobuf::Struct& object,
                                         const std::string& key);
std::string JsonString(const google::protobuf::Struct& object, const std::string& key);

// $TEST_SRCDIR/$TEST_WORKSPACE/k8s/monitoring/<name>.
std::string MonitoringFile(absl::string_view name);

struct DashboardQuery {
  std::string panel;  // the panel's title, or "variable <name>"
  std::string expr;   // as written, with Grafana's variables
};

// Every target's `expr` of every panel (rows' nested panels too) and every
// query variable's `definition`. INVALID_ARGUMENT for JSON that does not
// parse or has no panels.
absl::StatusOr<std::vector<DashboardQuery>> ReadDashboardQueries(const std::string& path);

// The panel titles, in order.
absl::StatusOr<std::vector<std::string>> ReadDashboardPanelTitles(const std::string& path);

// The names after "- alert:" in a Prometheus rule file, in order.
absl::StatusOr<std::vector<std::string>> ReadAlertNames(const std::string& path);

// The sluice metric names (sluice_...) an expression mentions, with the
// histogram suffixes (_bucket, _sum, _count) as written.
std::set<std::string> MetricNamesIn(absl::string_view expr);

// `expr` with Grafana's variables replaced so Prometheus can run it:
// $__rate_interval -> 1m, $__range -> 10m, $sluice_datasource -> .*.
std::string Instantiate(absl::string_view expr);

}  // namespace sluice::monitoring

#endif  // SLUICE_TESTS_MONITORING_MONITORING_FILES_H_
