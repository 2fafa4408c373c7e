#include "supervisor/allocator.h"

#include <glog/logging.h>

#include "absl/strings/str_cat.h"
#include "common/names.h"
#include "common/status_macros.h"
#include "common/time_util.h"
#include "supervisor/naming.h"

namespace sluice::supervisor {
namespace {

// 0001-01-01T00:00:00Z and 10000-01-01T00:00:00Z: the instants segment ids
// and versions can name (ISO years of four digits).
constexpr int64_t kMinIntervalMs = -62135596800000;
constexpr int64_t kMaxIntervalMs = 253402300800000;

}  // namespace

absl::StatusOr<v1::AllocateSegmentResponse> Allocator::Allocate(
    const v1::AllocateSegmentRequest& request, Granularity segment_granularity) {
  SLUICE_RETURN_IF_ERROR(ValidateDatasource(request.datasource()));
  if (request.sequence_name().empty()) {
    return absl::InvalidArgumentError("sequence_name is required");
  }
  const int64_t start = request.interval().start_ms();
  const int64_t end = request.interval().end_ms();
  // Checked first: a bucket end computed past int64 would wrap (an interval
  // whose end is before its start reaches the store as a constraint error).
  if (start < kMinIntervalMs || start >= kMaxIntervalMs || end > kMaxIntervalMs) {
    return absl::InvalidArgumentError(absl::StrCat(
        "interval [", start, ", ", end, ") ms is outside the times segments may have ",
        "(year 0001 to year 9999)"));
  }
  if (!segment_granularity.IsAligned(start) || segment_granularity.Next(start) != end) {
    return absl::InvalidArgumentError(
        absl::StrCat("interval [", FormatIsoInstant(start), ", ", FormatIsoInstant(end),
                     ") is not one ", segment_granularity.Name(),
                     " bucket (the segment granularity of ", request.datasource(), ")"));
  }
  const std::string& ds = request.datasource();
  v1::AllocateSegmentResponse response;
  bool created = false;
  // Re-runnable: it only assigns `response` and `created`. Two supervisors
  // allocating the same key on PostgreSQL conflict; the retry reads the
  // winner's allocation.
  SLUICE_RETURN_IF_ERROR(options_.store->InRetriedTransaction([&](StoreTxn& txn) -> absl::Status {
    created = false;
    SLUICE_ASSIGN_OR_RETURN(bool exists, txn.DatasourceExists(ds));
    if (!exists) return absl::NotFoundError(absl::StrCat("unknown datasource ", ds));
    SLUICE_ASSIGN_OR_RETURN(auto pending,
                            txn.FindPendingSegment(ds, request.sequence_name(), start, end));
    if (!pending) {
      SLUICE_ASSIGN_OR_RETURN(int64_t held,
                              txn.CountPendingSegments(ds, request.sequence_name()));
      if (held >= options_.max_intervals_per_sequence) {
        return absl::FailedPreconditionError(absl::StrCat(
            "sequence ", request.sequence_name(), " already holds segments in ", held,
            " intervals, the most one sequence may have; not allocating ",
            FormatIsoInstant(start), "/", FormatIsoInstant(end)));
      }
      const int64_t now_ms = options_.clock->NowMs();
      SLUICE_ASSIGN_OR_RETURN(std::optional<std::string> version,
                              txn.IntervalVersion(ds, start, end));
      if (!version) {
        version = FormatIsoInstant(now_ms);
        SLUICE_RETURN_IF_ERROR(txn.InsertIntervalVersion(ds, start, end, *version, now_ms));
      }
      SLUICE_ASSIGN_OR_RETURN(int32_t partition, txn.NextPartitionNum(ds, start, end, *version));
      PendingSegment segment;
      segment.id = SegmentId(ds, start, end, *version, partition);
      segment.datasource = ds;
      segment.sequence_name = request.sequence_name();
      segment.start_ms = start;
      segment.end_ms = end;
      segment.version = *version;
      segment.partition_num = partition;
      segment.task_id = request.task_id();
      SLUICE_RETURN_IF_ERROR(txn.InsertPendingSegment(segment, now_ms));
      pending = std::move(segment);
      created = true;
    }
    response.set_segment_id(pending->id);
    response.mutable_interval()->set_start_ms(pending->start_ms);
    response.mutable_interval()->set_end_ms(pending->end_ms);
    response.set_version(pending->version);
    response.set_partition_num(pending->partition_num);
    return absl::OkStatus();
  }));
  if (created) {
    VLOG(1) << "[supervisor " << ds << "] allocated " << response.segment_id() << " for "
            << request.sequence_name() << " (task " << request.task_id() << ")";
  }
  return response;
}

}  // namespace sluice::supervisor
