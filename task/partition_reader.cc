#include "task/partition_reader.h"

#include <glog/logging.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace sluice::task {

PartitionReader::PartitionReader(PartitionReaderOptions options)
    : options_(std::move(options)), router_(*options_.router) {
  current_.assign(router_.slots(), 0);
  last_read_timestamps_.assign(router_.slots(), -1);
  last_read_noted_.assign(router_.slots(), false);
}

absl::Status PartitionReader::Open(KafkaConsumerOptions options) {
  SLUICE_ASSIGN_OR_RETURN(consumer_, KafkaConsumer::Create(std::move(options)));
  KafkaConsumer* consumer = consumer_.get();
  options_.control->SetWaker([consumer] { consumer->Wake(); });
  return absl::OkStatus();
}

void PartitionReader::Release() {
  options_.control->SetWaker(nullptr);
  consumer_.reset();
}

OffsetMap PartitionReader::Offsets() const { return router_.ToOffsetMap(current_); }

void PartitionReader::StartAtFirstRoute() {
  for (size_t slot = 0; slot < current_.size(); ++slot) {
    const int s = static_cast<int>(slot);
    current_[slot] = router_.route_count() == 0 ? router_.task_end(s) : router_.route_start(0, s);
  }
}

absl::Status PartitionReader::RestoreOffsets(const OffsetMap& current) {
  if (current.size() != current_.size()) {
    return absl::DataLossError(absl::StrCat("restore point offsets ", FormatOffsets(current),
                                            " do not cover the task's partitions"));
  }
  for (const auto& [p, o] : current) {
    const int slot = router_.SlotOf(p);
    if (slot < 0) {
      return absl::DataLossError(
          absl::StrCat("restore point names partition ", p, " which the task does not read"));
    }
    current_[slot] = o;
  }
  return absl::OkStatus();
}

absl::Status PartitionReader::CheckNotBeforeFirstRoute() const {
  if (router_.route_count() == 0) return absl::OkStatus();
  for (size_t slot = 0; slot < current_.size(); ++slot) {
    const int s = static_cast<int>(slot);
    if (current_[slot] < router_.route_start(0, s)) {
      return absl::DataLossError(absl::StrCat(
          "restore point offset ", current_[slot], " of partition ", router_.PartitionOf(s),
          " is before the first unpublished sequence ", router_.routes()[0].name));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> PartitionReader::Reassign() {
  OffsetMap wanted;
  for (size_t slot = 0; slot < current_.size(); ++slot) {
    const int s = static_cast<int>(slot);
    if (current_[slot] < router_.task_end(s)) wanted[router_.PartitionOf(s)] = current_[slot];
  }
  // Only a change of the partition set needs a new assignment; the consumer
  // position of an assigned partition is already right.
  bool same = wanted.size() == assigned_.size();
  for (auto a = wanted.begin(), b = assigned_.begin(); same && a != wanted.end(); ++a, ++b) {
    same = a->first == b->first;
  }
  if (same && assignment_valid_) return false;
  SLUICE_RETURN_IF_ERROR(consumer_->Assign(wanted));
  assigned_ = std::move(wanted);
  assignment_valid_ = true;
  return true;
}

absl::Status PartitionReader::AssignNone() { return consumer_->Assign({}); }

absl::Status PartitionReader::Poll(absl::Duration timeout, size_t max_records, KafkaBatch* batch,
                                   std::vector<OffsetOutOfRange>* out_of_range) {
  SLUICE_RETURN_IF_ERROR(consumer_->Poll(timeout, max_records, batch, out_of_range));
  ShowAuthFailures();
  return absl::OkStatus();
}

void PartitionReader::ShowAuthFailures() {
  if (const int64_t failures = consumer_->TakeAuthFailures(); failures > 0) {
    options_.metrics.KafkaAuthFailures(consumer_->auth_mechanism())->Increment(failures);
  }
  if (consumer_->auth_error() == shown_auth_error_) return;
  shown_auth_error_ = consumer_->auth_error();
  options_.control->SetError(shown_auth_error_);
  if (!shown_auth_error_.empty()) {
    LOG(WARNING) << options_.log_prefix << " " << shown_auth_error_;
  } else {
    LOG(INFO) << options_.log_prefix << " Kafka accepts the consumer's login again";
  }
}

bool PartitionReader::AdvanceToReachedEnds() {
  bool moved = false;
  for (const auto& [p, end] : consumer_->TakeReachedEnds()) {
    const int slot = router_.SlotOf(p);
    if (slot < 0) continue;
    int64_t& current = current_[slot];
    const int64_t to = std::min(end, router_.task_end(slot));
    if (to <= current) continue;
    VLOG(1) << options_.log_prefix << " partition " << p << ": at its end " << end
            << ", offsets [" << current << ", " << to << ") hold no record for this reader";
    current = to;
    moved = true;
  }
  return moved;
}

bool PartitionReader::ReachedFinalEnd() const {
  if (!router_.final_end_fixed()) return false;
  for (size_t slot = 0; slot < current_.size(); ++slot) {
    if (current_[slot] < router_.task_end(static_cast<int>(slot))) return false;
  }
  return true;
}

absl::Status PartitionReader::HandleOutOfRange(const std::vector<OffsetOutOfRange>& out_of_range) {
  v1::ReportOffsetOutOfRangeRequest request;
  request.set_datasource(options_.datasource);
  request.set_task_id(options_.task_id);
  std::string what;
  for (const OffsetOutOfRange& oor : out_of_range) {
    (*request.mutable_offsets())[oor.partition] = oor.offset;
    absl::StatusOr<std::pair<int64_t, int64_t>> marks =
        consumer_->Watermarks(oor.partition, absl::Seconds(5));
    if (marks.ok()) (*request.mutable_earliest_offsets())[oor.partition] = marks->first;
    absl::StrAppend(
        &what, what.empty() ? "" : "; ", "partition ", oor.partition, " offset ", oor.offset,
        marks.ok() ? absl::StrCat(" (available: ", marks->first, " to ", marks->second, ")")
                   : std::string(""));
  }
  options_.control->SetError(absl::StrCat("offset out of range: ", what, "; waiting"));
  const absl::Time now = absl::Now();
  if (now >= next_out_of_range_report_) {
    next_out_of_range_report_ =
        now + std::max(options_.offset_out_of_range_retry, absl::Seconds(30));
    LOG(ERROR) << options_.log_prefix << " ALERT: offset out of range: " << what
               << (options_.reset_offset_automatically
                       ? "; asking the supervisor to reset (resetOffsetAutomatically: records may"
                         " be lost)"
                       : "; waiting (resetOffsetAutomatically is off)");
    absl::StatusOr<v1::ReportOffsetOutOfRangeResponse> response =
        options_.supervisor->ReportOffsetOutOfRange(request);
    if (!response.ok()) {
      LOG(WARNING) << options_.log_prefix
                   << " cannot report the offset out of range: " << response.status();
    } else if (response->reset()) {
      LOG(ERROR) << options_.log_prefix << " ALERT: the supervisor reset the offsets ("
                 << response->message() << "); this task will be replaced";
    }
  }
  if (!options_.control->Wait(options_.offset_out_of_range_retry)) return absl::OkStatus();
  // Try again from the same offsets (the partitions stopped fetching).
  assignment_valid_ = false;
  return Reassign().status();
}

void PartitionReader::NoteLastRead(const KafkaBatch& batch, size_t begin, size_t end) {
  // From the end: the first record met of each partition is its last one
  // read (records past the task's final end were skipped, not read).
  size_t noted = 0;
  for (size_t k = end; k > begin && noted < last_read_noted_.size(); --k) {
    const KafkaRecord record = batch[k - 1];
    const int slot = router_.SlotOf(record.partition);
    if (slot < 0 || last_read_noted_[slot] || record.offset >= router_.task_end(slot)) continue;
    last_read_noted_[slot] = true;
    ++noted;
    last_read_timestamps_[slot] = batch.Timestamp(k - 1);
  }
  std::fill(last_read_noted_.begin(), last_read_noted_.end(), false);
}

std::map<int32_t, int64_t> PartitionReader::LastReadTimestamps() const {
  std::map<int32_t, int64_t> last_read;
  for (size_t slot = 0; slot < last_read_timestamps_.size(); ++slot) {
    if (last_read_timestamps_[slot] >= 0) {
      last_read[router_.PartitionOf(static_cast<int>(slot))] = last_read_timestamps_[slot];
    }
  }
  return last_read;
}

}  // namespace sluice::task
