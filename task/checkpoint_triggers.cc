#include "task/checkpoint_triggers.h"

#include "common/offsets.h"

namespace sluice::task {

CheckpointTriggers::CheckpointTriggers(CheckpointTriggersOptions options)
    : options_(std::move(options)), router_(*options_.router) {
  asker_ = [this](const Sequence& latest) {
    const v1::TaskSpec& spec = *options_.spec;
    v1::CheckpointDataSourceMetadataRequest request;
    request.set_datasource(spec.datasource());
    request.set_task_id(spec.task_id());
    request.set_group_id(spec.group_id());
    request.set_base_sequence_name(spec.base_sequence_name());
    request.set_sequence_id(latest.id);
    ToProto(latest.start, request.mutable_start_offsets());
    return options_.supervisor->CheckpointDataSourceMetadata(request);
  };
}

void CheckpointTriggers::RestartPeriod() {
  next_time_ = absl::Now() + options_.settings->timings.intermediate_handoff_period;
}

void CheckpointTriggers::OnRow(int route, int64_t segment_rows, int64_t sequence_rows) {
  // Checkpoint triggers concern the latest, open sequence only.
  if (!router_.IsOpenLatest(route)) return;
  const v1::TuningConfig& tuning = options_.settings->tuning;
  const int32_t id = router_.routes()[route].id;
  const int64_t max_rows = tuning.max_rows_per_segment();
  const int64_t max_total = tuning.max_total_rows();
  if (segment_rows >= max_rows) {
    Request("maxRowsPerSegment", id, /*full=*/true);
  } else if (sequence_rows >= max_total) {
    Request("maxTotalRows", id, /*full=*/true);
  } else if (Early() && early_asked_id_ != id) {
    const double fraction = options_.early_checkpoint_fraction;
    if (static_cast<double>(segment_rows) >= fraction * static_cast<double>(max_rows)) {
      Request("maxRowsPerSegment (early)", id, /*full=*/false);
    } else if (static_cast<double>(sequence_rows) >= fraction * static_cast<double>(max_total)) {
      Request("maxTotalRows (early)", id, /*full=*/false);
    }
  }
}

void CheckpointTriggers::OnTime(absl::Time now) {
  // The time trigger never parks by itself when checkpoints are early.
  if (now >= next_time_) Request("intermediateHandoffPeriod", OpenLatestId(), !Early());
}

bool CheckpointTriggers::Park() {
  bool asked_for_checkpoint = false;
  if (!options_.control->Park(asker_, options_.notify, &asked_for_checkpoint)) return false;
  if (asked_for_checkpoint) {
    options_.metrics.checkpoint_seconds->ObserveDuration(absl::Now() - requested_at_);
  }
  early_asked_id_ = -1;
  return true;
}

void CheckpointTriggers::TakeResume() {
  if (options_.control->TakeResume(&seen_resume_generation_)) RestartPeriod();
}

void CheckpointTriggers::AskIfDue() { options_.control->AskIfDue(asker_); }

void CheckpointTriggers::Request(const char* trigger, int32_t sequence_id, bool full) {
  // Reset the time trigger in any case: it fires once per period.
  RestartPeriod();
  if (sequence_id < 0) return;
  if (!full) early_asked_id_ = sequence_id;
  if (options_.control->RequestCheckpoint(trigger, sequence_id, /*pause=*/full)) {
    requested_at_ = absl::Now();
    options_.metrics.checkpoints->Increment();
  }
}

int32_t CheckpointTriggers::OpenLatestId() const {
  const int count = router_.route_count();
  if (count == 0 || !router_.IsOpenLatest(count - 1)) return -1;
  return router_.routes()[count - 1].id;
}

bool CheckpointTriggers::Early() const {
  const double fraction = options_.early_checkpoint_fraction;
  return fraction > 0 && fraction < 1;
}

}  // namespace sluice::task
