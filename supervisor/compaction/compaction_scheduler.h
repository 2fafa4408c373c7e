// When compactions run: one background thread of the supervisor that, every
// `tick`, runs the compactions operators asked for (CompactDataSource, in
// the order asked) and then, for every running datasource whose spec has a
// compaction config, an automatic pass once its compaction.period has
// passed since the last one, followed by the table upkeep of an Iceberg
// datasource. One compaction at a time in the whole supervisor: the work is
// CPU and I/O that would otherwise compete with the publishes of ingestion,
// so the thread also runs at a lower scheduling priority (nice 10) than the
// rest of the process.
//
// The work itself is given as callbacks (the manager binds them to the
// Compactor and the table upkeep), so this class owns only the timing and
// the queue.
#ifndef SLUICE_SUPERVISOR_COMPACTION_COMPACTION_SCHEDULER_H_
#define SLUICE_SUPERVISOR_COMPACTION_COMPACTION_SCHEDULER_H_

#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "sluice/v1/common.pb.h"
#include "sluice/v1/spec.pb.h"

namespace sluice::supervisor {

// A compaction to run: on demand (an operator's request: skipOffsetFromLatest
// does not apply, `interval` narrows it) or automatic.
struct CompactionRequest {
  std::string datasource;
  std::optional<v1::Interval> interval;
  bool on_demand = false;
};

struct CompactionSchedulerOptions {
  absl::Duration tick = absl::Seconds(1);
  // Requests waiting at most; past it, CompactDataSource is refused
  // (RESOURCE_EXHAUSTED) until the queue drains.
  int max_queued = 100;
  // The running specs (normalized), read at every tick.
  std::function<std::vector<v1::SupervisorSpec>()> running_specs;
  // Runs one request to the end (every job it plans); errors are the
  // compactor's to record, the scheduler only logs them.
  std::function<absl::Status(const v1::SupervisorSpec&, const CompactionRequest&)> compact;
  // After an automatic pass of a datasource (e.g. Iceberg snapshot expiry);
  // may be null.
  std::function<absl::Status(const v1::SupervisorSpec&)> upkeep;
  // The automatic period of a spec (compaction.period); nullopt: the spec
  // has no compaction config (no automatic pass).
  std::function<std::optional<absl::Duration>(const v1::SupervisorSpec&)> period;
};

class CompactionScheduler {
 public:
  explicit CompactionScheduler(CompactionSchedulerOptions options);
  // Stops the thread (a compaction under way finishes first).
  ~CompactionScheduler();

  void Start() ABSL_LOCKS_EXCLUDED(mu_);

  // Queues an on-demand request; RESOURCE_EXHAUSTED past max_queued.
  absl::Status Enqueue(CompactionRequest request) ABSL_LOCKS_EXCLUDED(mu_);

  // One tick's work, on the caller's thread (tests; the thread calls it).
  void RunOnce(absl::Time now) ABSL_LOCKS_EXCLUDED(mu_);

  int queued() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void Loop() ABSL_LOCKS_EXCLUDED(mu_);

  const CompactionSchedulerOptions options_;
  mutable absl::Mutex mu_;
  std::deque<CompactionRequest> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // Datasource -> when its last automatic pass started.
  std::map<std::string, absl::Time> last_pass_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_COMPACTION_COMPACTION_SCHEDULER_H_
