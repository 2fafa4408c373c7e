#include "task/persister.h"

#include <glog/logging.h>

#include "absl/strings/str_cat.h"
#include "common/fault_injection.h"
#include "common/offsets.h"
#include "common/proto_json.h"
#include "common/status_macros.h"
#include "task/task_files.h"

namespace sluice::task {

Persister::Persister(PersisterOptions options)
    : options_(std::move(options)), files_(options_.task_dir) {}

Persister::~Persister() { Stop(); }

absl::StatusOr<std::optional<state::RestorePoint>> Persister::LoadRestorePoint(
    const std::string& path) {
  state::RestorePoint point;
  const absl::Status loaded = LoadProtoJson(path, &point);
  if (loaded.code() == absl::StatusCode::kNotFound) return std::nullopt;
  SLUICE_RETURN_IF_ERROR(loaded);
  return point;
}

void Persister::Start() {
  {
    absl::MutexLock lock(&mu_);
    exit_ = false;
  }
  thread_ = std::thread([this] { Run(); });
}

void Persister::Submit(PersistJob job) {
  absl::MutexLock lock(&mu_);
  job_ = std::move(job);
  running_ = true;
}

absl::Status Persister::WaitPersisted() {
  absl::MutexLock lock(&mu_);
  auto idle = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !running_; };
  mu_.Await(absl::Condition(&idle));
  return error_;
}

absl::Status Persister::AwaitPersisted(int64_t persists, const std::function<bool()>& stopping) {
  auto done = [this, persists]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return persists_written_.load() >= persists || !error_.ok();
  };
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      if (mu_.AwaitWithTimeout(absl::Condition(&done), absl::Milliseconds(50))) return error_;
    }
    // Outside the lock: `stopping` takes the caller's own.
    if (stopping()) return absl::CancelledError("stopped while waiting for a persist");
  }
}

void Persister::Restore(const state::RestorePoint& point) {
  absl::MutexLock lock(&mu_);
  persists_written_.store(point.counters().persists());
  spilled_rows_.clear();
  for (const state::SegmentState& s : point.segments()) {
    spilled_rows_[{s.sequence_id(), s.interval_start_ms()}] = s.spilled_rows();
  }
}

absl::Status Persister::failure() const {
  absl::MutexLock lock(&mu_);
  return error_;
}

void Persister::Stop() {
  {
    absl::MutexLock lock(&mu_);
    exit_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void Persister::Run() {
  while (true) {
    PersistJob job;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return job_.has_value() || exit_;
      };
      mu_.Await(absl::Condition(&ready));
      if (!job_.has_value()) return;
      job = std::move(*job_);
      job_.reset();
    }
    const absl::Status written = Write(job);
    job.spills.clear();  // the indexes' memory goes before the next persist starts
    absl::MutexLock lock(&mu_);
    if (!written.ok() && error_.ok()) error_ = written;
    running_ = false;
  }
}

bool Persister::exiting() const {
  absl::MutexLock lock(&mu_);
  return exit_;
}

absl::Status Persister::Write(PersistJob& job) {
  // The rows each file written holds, as it says itself.
  std::map<std::string, int64_t> rows_of;
  for (PersistBuild& build : job.builds) {
    BuildSlot slot(options_.build_slots, [this] { return exiting(); });
    if (!slot.held()) {
      return absl::CancelledError(absl::StrCat("stopping before building ", build.info.segment_id));
    }
    std::vector<std::string> spills;
    for (const std::string& name : build.spills) spills.push_back(files_.spill(name));
    SLUICE_ASSIGN_OR_RETURN(const BuiltSegment built,
                            build.index->Build(spills, build.info, files_.spill(build.name)));
    rows_of[build.name] = built.rows;
    build.index.reset();
  }
  for (auto& [name, index] : job.spills) {
    SLUICE_ASSIGN_OR_RETURN(rows_of[name], index->Spill(files_.spill_dir(), name));
    index.reset();
  }
  // Each segment's rows: those of its spills written before, and of the
  // spills written now; a built file holds all of them.
  std::map<SegmentKey, int64_t> spilled_rows;
  {
    absl::MutexLock lock(&mu_);
    for (state::SegmentState& s : *job.point.mutable_segments()) {
      const SegmentKey key{s.sequence_id(), s.interval_start_ms()};
      auto before = spilled_rows_.find(key);
      int64_t rows = before == spilled_rows_.end() ? 0 : before->second;
      for (const std::string& name : s.spill_files()) {
        if (auto it = rows_of.find(name); it != rows_of.end()) rows += it->second;
      }
      if (auto it = rows_of.find(s.built_file()); it != rows_of.end()) rows = it->second;
      s.set_spilled_rows(rows);
      spilled_rows[key] = rows;
    }
  }
  // Spills and built files written, restore point not yet: a crash here
  // leaves files no restore point names (the restart deletes them and
  // re-reads).
  SLUICE_RETURN_IF_ERROR(SLUICE_FAULT_POINT("task.persist.after_spills"));
  SLUICE_RETURN_IF_ERROR(SaveProtoJson(files_.restore_point(), job.point));
  {
    absl::MutexLock lock(&mu_);
    spilled_rows_ = std::move(spilled_rows);
  }
  persists_written_.store(job.point.counters().persists());
  options_.metrics.persists->Increment();
  options_.metrics.persist_seconds->ObserveDuration(absl::Now() - job.started);
  VLOG(1) << options_.log_prefix << " persisted at "
          << FormatOffsets(FromProto(job.point.current_offsets()));
  return SLUICE_FAULT_POINT("task.after_persist");
}

}  // namespace sluice::task
