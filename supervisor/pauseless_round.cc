// The pauseless part of a checkpoint round: see pauseless_round.h.
#include "supervisor/pauseless_round.h"

#include <glog/logging.h>

#include <algorithm>
#include <limits>
#include <map>

#include "absl/strings/str_cat.h"
#include "common/fault_injection.h"
#include "common/metrics/catalog.h"
#include "common/status_macros.h"
#include "supervisor/checkpoint_move_back.h"

namespace sluice::supervisor {

PauselessRound::PauselessRound(CheckpointContext context) : context_(std::move(context)) {}

namespace {

// After a round whose margin did not fit, this many rounds go straight to
// the classic round; the one after tries pauseless again (the rate may have
// dropped: a backlog read, then the live stream).
constexpr int kClassicRoundsAfterMarginMiss = 7;

}  // namespace

std::optional<OffsetMap> PauselessRound::ClassicInstead(Group& group, const OffsetObservation& now,
                                                        const std::string& why) {
  LOG(INFO) << context_.Prefix() << why << "; pausing the replicas instead (and for the next "
            << kClassicRoundsAfterMarginMiss << " rounds)";
  context_.Count(metrics::kSupervisorCheckpointFallbacks);
  group.rounds.observed = now;
  group.rounds.classic_rounds_ahead = kClassicRoundsAfterMarginMiss;
  return std::nullopt;
}

absl::StatusOr<std::optional<OffsetMap>> PauselessRound::Run(
    Group& group, const std::vector<TaskInfo*>& tasks,
    const std::vector<std::optional<std::string>>& addresses, const std::string& what) {
  // 1. Every replica's offsets, without pausing it.
  const absl::Time round_started = absl::Now();
  std::vector<absl::StatusOr<OffsetMap>> read(tasks.size(), absl::UnknownError("not called"));
  ParallelFor(tasks.size(), [&](size_t i) {
    read[i] = addresses[i] ? context_.client->GetCurrentOffsets(*addresses[i], tasks[i]->task_id)
                           : absl::NotFoundError("its worker is unknown");
  });
  const absl::Time all_read = absl::Now();
  // The classic round's fault points, at the same places in the protocol:
  // the offsets are taken and nothing is recorded, then recorded and not
  // sent.
  SLUICE_RETURN_IF_ERROR(SLUICE_FAULT_POINT("supervisor.checkpoint.after_pause"));
  OffsetMap max = group.latest_checkpoint();
  std::vector<OffsetMap> offsets(tasks.size());
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (!read[i].ok()) {
      // The classic round deals with it (and kills it if it cannot pause).
      LOG(INFO) << context_.Prefix() << what << ": reading the offsets of " << tasks[i]->task_id
                << " failed (" << read[i].status() << "); pausing the replicas instead";
      return std::optional<OffsetMap>();
    }
    offsets[i] = Restrict(*read[i], group.start_offsets);
    max = MaxOffsets(max, offsets[i]);
  }
  // A latest checkpoint that no replica has reached on some partition (a
  // pauseless end past the records that existed, still waiting for them):
  // only a paused round can move it back, so do that one.
  OffsetMap read_max;
  for (const OffsetMap& o : offsets) read_max = MaxOffsets(read_max, o);
  if (std::optional<int32_t> p =
          PartitionWaitingForRecords(*context_.watermarks, group, read_max)) {
    LOG(INFO) << context_.Prefix() << what << ": no replica reached the latest checkpoint "
              << FormatOffsets(group.latest_checkpoint()) << " on partition " << *p
              << " yet; pausing the replicas to move it back";
    return std::optional<OffsetMap>();
  }
  // 2. Nothing new read: record nothing (no replica was stopped).
  if (max == group.latest_checkpoint()) {
    LOG(INFO) << context_.Prefix() << what << ": no replica read past sequence "
              << group.latest_sequence_id() << " start " << FormatOffsets(max)
              << "; no new checkpoint";
    return std::optional<OffsetMap>(max);
  }

  // 3. End offsets: max + a margin sized from the read rate and the time a
  // round takes (the offset reads now, the whole previous round).
  OffsetObservation before = group.rounds.observed;
  OffsetObservation now{max, all_read};
  std::map<int32_t, double> rates;
  if (before.at == absl::InfinitePast() || before.offsets.empty()) {
    // The group's first round: since the group started (on its clock).
    rates = ReadRates(OffsetObservation{group.latest_checkpoint(), group.created_at},
                      OffsetObservation{max, context_.clock->Now()});
  } else {
    rates = ReadRates(before, now);
  }
  const absl::Duration window =
      std::max(group.rounds.last_round_window, 3 * (all_read - round_started));
  std::map<int32_t, int64_t> margins = PauselessMargins(rates, window, context_.pauseless_margin);
  // A sequence asks early at 90% of maxRowsPerSegment: the margin (all
  // partitions together) stays within the last 10%, so sequences keep about
  // the size the spec asks for.
  // When the margin the read rate needs does not fit there (a fast stream
  // with small segments: a sequence fills in about the time a round takes),
  // a capped margin would only make the replicas read past the end, and a
  // replica other than the first one that does is replaced: pause them
  // instead (the classic round), which costs a pause rather than a task.
  const int64_t max_rows = context_.max_rows_per_segment();
  if (max_rows > 0 && !margins.empty()) {
    const int64_t cap = std::max<int64_t>(1, max_rows / 10 / static_cast<int64_t>(margins.size()));
    for (const auto& [p, margin] : margins) {
      if (margin > cap && tasks.size() > 1) {
        return ClassicInstead(group, now,
                              absl::StrCat(what, ": partition ", p, " needs a margin of ", margin,
                                           " records at its read rate, more than the ", cap,
                                           " that keep sequences near maxRowsPerSegment"));
      }
    }
    for (auto& [p, margin] : margins) margin = std::min(margin, cap);
  }
  OffsetMap end = PauselessEndOffsets(max, margins);
  // Past the records known to exist (the latest offset of the last metadata
  // query, or max if further) only by what the stream is expected to add during the
  // round: replicas caught up with a live stream read those records before
  // the end reaches them, and the sequence closes as they arrive. If they do
  // not come, the checkpoint is moved back to what the replicas read (the
  // next paused round, a finalize round, or MoveStalledCheckpoints). The
  // rate is the stream's production rate between the last two metadata
  // queries (none before there are two: the replicas' read rate says
  // nothing of what arrives while they read a backlog).
  for (auto& [p, offset] : end) {
    if (offset == kEndOfPartition) continue;
    const auto mark = context_.watermarks->find(p);
    const int64_t latest = mark == context_.watermarks->end() ? int64_t{0} : mark->second.latest;
    const int64_t known = std::max(max.at(p), latest);
    const auto produced = context_.produce_rates->find(p);
    const double rate = produced == context_.produce_rates->end() ? 0.0 : produced->second;
    const int64_t expected = ExpectedArrivals(rate, window, context_.pauseless_margin);
    offset = std::max(max.at(p), std::min(offset, known + expected));
  }

  // The replica that read the most since the latest checkpoint.
  size_t first = 0;
  int64_t furthest = std::numeric_limits<int64_t>::min();
  for (size_t i = 0; i < tasks.size(); ++i) {
    int64_t ahead = 0;
    for (const auto& [p, o] : offsets[i]) ahead += o - group.latest_checkpoint().at(p);
    if (ahead > furthest) {
      furthest = ahead;
      first = i;
    }
  }

  // 4. Record the checkpoint before any replica learns it.
  const int32_t next_id = group.latest_sequence_id() + 1;
  absl::Status recorded = context_.store->InTransaction([&](StoreTxn& txn) {
    return txn.AppendCheckpoint(group.base_sequence_name, next_id, end, context_.clock->NowMs());
  });
  if (!recorded.ok()) return Annotate(recorded, absl::StrCat(what, ": recording the checkpoint"));
  group.checkpoints[next_id] = end;
  group.rounds.latest_checkpoint_at = context_.clock->Now();
  context_.publish_view();
  const absl::Time recorded_at = absl::Now();

  // 5. The replica furthest ahead first: it is the one likely to have read
  // past the end. If it has, no replica knows the end yet: remove it and
  // pause instead. Otherwise the others, in parallel.
  SLUICE_RETURN_IF_ERROR(SLUICE_FAULT_POINT("supervisor.checkpoint.before_set_end_offsets"));
  absl::Status fault = SLUICE_FAULT_POINT("supervisor.checkpoint.before_pauseless_set");
  if (!fault.ok()) LOG(WARNING) << context_.Prefix() << what << ": fault point: " << fault;
  std::vector<absl::StatusOr<v1::SetEndOffsetsResponse>> set(tasks.size(),
                                                             absl::UnknownError("not called"));
  set[first] = context_.client->SetEndOffsets(*addresses[first], tasks[first]->task_id, end, false);
  if (absl::IsAborted(set[first].status())) {
    // A definite refusal that changed nothing: no replica learned `end`.
    absl::Status removed = context_.store->InTransaction([&](StoreTxn& txn) {
      return txn.RemoveLatestCheckpoint(group.base_sequence_name, next_id);
    });
    if (!removed.ok()) {
      // The end stays recorded: the replica that passed it is replaced,
      // the others get it below.
      LOG(WARNING) << context_.Prefix() << what << ": removing the refused end "
                   << FormatOffsets(end) << ": " << removed;
    } else {
      group.checkpoints.erase(next_id);
      context_.publish_view();
      context_.Count(metrics::kSupervisorCheckpointFallbacks);
      LOG(INFO) << context_.Prefix() << what << ": " << tasks[first]->task_id
                << " already read past the proposed end " << FormatOffsets(end) << " (max "
                << FormatOffsets(max) << " + margin): " << set[first].status().message()
                << "; no replica has it, falling back to pause-and-max";
      return std::optional<OffsetMap>();
    }
  }
  std::vector<size_t> rest;
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (i != first) rest.push_back(i);
  }
  ParallelFor(rest.size(), [&](size_t j) {
    const size_t i = rest[j];
    set[i] = context_.client->SetEndOffsets(*addresses[i], tasks[i]->task_id, end, false);
  });
  const absl::Time all_set = absl::Now();
  int accepted = 0;
  int passed = 0;
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (set[i].ok()) {
      ++accepted;
      continue;
    }
    // The end is recorded and another replica may have it: a replica that
    // read past it cannot be given it, nor another one. Replace it.
    if (absl::IsAborted(set[i].status())) ++passed;
    context_.actions->KillTask(
        *tasks[i], absl::StrCat("it refused the recorded end offsets ", FormatOffsets(end),
                                " of the pauseless ", what, ": ", set[i].status().ToString()));
  }
  group.rounds.observed = now;
  group.rounds.last_round_window = all_set - round_started;
  if (passed > 0) context_.Count(metrics::kSupervisorCheckpointFallbacks);
  if (accepted == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(what, ": no replica accepted the end offsets ", FormatOffsets(end)));
  }
  if (passed == 0 && accepted == static_cast<int>(tasks.size())) {
    context_.Count(metrics::kSupervisorPauselessCheckpoints);
  }
  LOG(INFO) << context_.Prefix() << what << ": sequence " << next_id - 1 << " ends at "
            << FormatOffsets(end) << " (max " << FormatOffsets(max) << " of " << tasks.size()
            << " reading replicas + margin), sequence " << next_id << " recorded and set on "
            << accepted << " without pausing; read " << FormatMillis(all_read - round_started)
            << ", record " << FormatMillis(recorded_at - all_read) << ", set end offsets "
            << FormatMillis(all_set - recorded_at);
  return std::optional<OffsetMap>(end);
}

}  // namespace sluice::supervisor
