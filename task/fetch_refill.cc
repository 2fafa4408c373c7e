#include "task/fetch_refill.h"

namespace sluice::task {

bool RefillTrigger::Observe(int64_t queued_messages, double average_record_bytes) {
  const double queued_bytes = static_cast<double>(queued_messages) * average_record_bytes;
  // librdkafka counts payload bytes; the average is of payloads too, so the
  // estimate is close. 90% of the byte limit counts as reaching it.
  const bool at_limit = (max_messages_ > 0 && queued_messages >= max_messages_) ||
                        (max_bytes_ > 0 && queued_bytes >= 0.9 * static_cast<double>(max_bytes_));
  if (at_limit) {
    was_full_ = true;
    return false;
  }
  if (!was_full_) return false;
  const bool drained = (max_messages_ <= 0 || 2 * queued_messages <= max_messages_) &&
                       (max_bytes_ <= 0 || 2 * queued_bytes <= static_cast<double>(max_bytes_));
  if (!drained) return false;
  was_full_ = false;
  return true;
}

}  // namespace sluice::task
