// The stream supervisor loop's shared state (loop_state.h): its log prefix
// and recorded errors.
#include "supervisor/loop_state.h"

#include <glog/logging.h>

#include <utility>

#include "absl/strings/str_cat.h"

namespace sluice::supervisor {

LoopState::LoopState(Clock* clock, SpecRecord spec)
    : datasource(spec.datasource), clock(clock), spec(std::move(spec)) {}

std::string LoopState::Prefix() const { return absl::StrCat("[supervisor ", datasource, "] "); }

void LoopState::RecordError(const absl::Status& status) {
  LOG(WARNING) << Prefix() << status;
  health.NoteError(clock->NowMs(), status);
}

}  // namespace sluice::supervisor
