#include "supervisor/console/lag_history.h"

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"

namespace sluice::supervisor::console {

LagHistory::LagHistory(absl::Duration window, absl::Duration min_step)
    : window_(window), min_step_(min_step) {}

void LagHistory::Record(absl::Time now, const std::vector<v1::SupervisorStatus>& statuses) {
  const int64_t now_ms = absl::ToUnixMillis(now);
  const int64_t oldest_ms = absl::ToUnixMillis(now - window_);
  const int64_t step_ms = absl::ToInt64Milliseconds(min_step_);
  absl::MutexLock lock(&mu_);
  std::set<std::string> shown;
  for (const v1::SupervisorStatus& status : statuses) {
    shown.insert(status.datasource());
    std::deque<Point>& points = points_[status.datasource()];
    if (!points.empty() && now_ms - points.back().time_ms < step_ms) continue;
    Point point;
    point.time_ms = now_ms;
    for (const auto& [partition, lag] : status.lag()) {
      point.partitions[partition] = lag;
      point.lag += std::max<int64_t>(lag, 0);
    }
    for (const auto& [partition, offset] : status.current_offsets()) point.read += offset;
    for (const auto& [partition, ms] : status.time_lag_ms()) {
      point.time_lag_ms = std::max(point.time_lag_ms, ms);
    }
    points.push_back(std::move(point));
    while (!points.empty() && points.front().time_ms < oldest_ms) points.pop_front();
  }
  for (auto it = points_.begin(); it != points_.end();) {
    it = shown.count(it->first) > 0 ? std::next(it) : points_.erase(it);
  }
}

std::string LagHistory::Json(const std::string& datasource) const {
  google::protobuf::Struct out;
  (*out.mutable_fields())["datasource"].set_string_value(datasource);
  (*out.mutable_fields())["windowSeconds"].set_number_value(
      static_cast<double>(absl::ToInt64Seconds(window_)));
  google::protobuf::ListValue* list = (*out.mutable_fields())["points"].mutable_list_value();
  {
    absl::MutexLock lock(&mu_);
    auto it = points_.find(datasource);
    if (it != points_.end()) {
      for (const Point& point : it->second) {
        google::protobuf::Struct* p = list->add_values()->mutable_struct_value();
        (*p->mutable_fields())["timeMs"].set_number_value(static_cast<double>(point.time_ms));
        (*p->mutable_fields())["lag"].set_number_value(static_cast<double>(point.lag));
        (*p->mutable_fields())["timeLagMs"].set_number_value(
            static_cast<double>(point.time_lag_ms));
        (*p->mutable_fields())["read"].set_number_value(static_cast<double>(point.read));
        google::protobuf::Struct* partitions =
            (*p->mutable_fields())["partitions"].mutable_struct_value();
        for (const auto& [partition, lag] : point.partitions) {
          (*partitions->mutable_fields())[absl::StrCat(partition)].set_number_value(
              static_cast<double>(lag));
        }
      }
    }
  }
  std::string json;
  (void)google::protobuf::util::MessageToJsonString(out, &json);
  return json;
}

size_t LagHistory::size(const std::string& datasource) const {
  absl::MutexLock lock(&mu_);
  auto it = points_.find(datasource);
  return it == points_.end() ? 0 : it->second.size();
}

}  // namespace sluice::supervisor::console
