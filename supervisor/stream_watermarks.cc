// The last watermarks and the production rates (stream_watermarks.h).
#include "supervisor/stream_watermarks.h"

namespace sluice::supervisor {

void StreamWatermarks::Note(const std::map<int32_t, PartitionWatermarks>& marks,
                            absl::Time now) {
  const double seconds = absl::ToDoubleSeconds(now - at_);
  if (at_ != absl::InfinitePast() && seconds > 0) {
    produce_rates_.clear();
    for (const auto& [p, mark] : marks) {
      const auto before = watermarks_.find(p);
      if (before == watermarks_.end() || mark.latest < before->second.latest) continue;
      produce_rates_[p] = static_cast<double>(mark.latest - before->second.latest) / seconds;
    }
  }
  watermarks_ = marks;
  at_ = now;
}

}  // namespace sluice::supervisor
