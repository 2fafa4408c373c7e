#include "tests/fault/soak_runner.h"

#include <signal.h>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "tests/fault/fault_scenario.h"

namespace sluice::fault {
namespace {

// Applies the plan's faults to a running scenario and takes them back: each
// fault schedules its own undo (restart, SIGCONT, broker up, ...), and
// HealAll() undoes whatever is left at the end of an iteration.
class Injector {
 public:
  Injector(FaultScenario* scenario, std::ostream* out) : s_(scenario), out_(out) {}

  void Apply(const FaultStep& step) {
    const std::string worker = cluster::WorkerName(step.worker);
    cluster::ProcessCluster& c = s_->cluster();
    switch (step.kind) {
      case FaultKind::kKillWorker:
      case FaultKind::kKillWorkerForGood:
        if (!Killable(worker)) return Skip(step, worker + " is not running (or frozen)");
        Note(Check(c.Kill(worker, SIGKILL)), "kill -9 " + worker);
        if (step.kind == FaultKind::kKillWorker) {
          Later(step.down_for, "restart " + worker, [this, worker] { RestartIfDown(worker); });
        }
        return;
      case FaultKind::kKillSupervisor:
        if (!Killable(cluster::kSupervisor)) return Skip(step, "the supervisor is not running");
        Note(Check(c.Kill(cluster::kSupervisor, SIGKILL)), "kill -9 supervisor");
        Later(step.down_for, "restart supervisor",
              [this] { RestartIfDown(cluster::kSupervisor); });
        return;
      case FaultKind::kCrashWorkerAtPoint:
      case FaultKind::kCrashSupervisorAtPoint: {
        const std::string process =
            step.kind == FaultKind::kCrashWorkerAtPoint ? worker : cluster::kSupervisor;
        if (!Killable(process)) return Skip(step, process + " is not running");
        Note(Check(s_->Arm(process, step.fault_point)),
             absl::StrCat("arm ", step.fault_point, " on ", process));
        armed_.insert({process, step.fault_point});
        Later(step.down_for, absl::StrCat("disarm ", step.fault_point, " and restart ", process),
              [this, process, point = step.fault_point] {
                Record(s_->Disarm(process, point));
                armed_.erase({process, point});
                *out_ << "      (" << process
                      << (s_->cluster().Running(process) ? " did not reach it)\n"
                                                         : " crashed there)\n");
                RestartIfDown(process);
              });
        return;
      }
      case FaultKind::kFreezeWorker:
        if (!Killable(worker)) return Skip(step, worker + " is not running (or frozen)");
        Note(Check(c.Kill(worker, SIGSTOP)), "SIGSTOP " + worker);
        frozen_.insert(worker);
        Later(step.down_for, "SIGCONT " + worker, [this, worker] { Thaw(worker); });
        return;
      case FaultKind::kBrokerOutage:
        if (broker_down_) return Skip(step, "the broker is already down");
        Note(Check(c.BrokerCommand("broker down 1").status()), "broker down 1");
        broker_down_ = true;
        Later(step.down_for, "broker up 1", [this] { BrokerUp(); });
        return;
      case FaultKind::kDeepStorageOutage:
        if (storage_down_) return Skip(step, "deep storage already refuses pushes");
        Note(Check(s_->SetDeepStorageDown(true)), "deep storage refuses pushes");
        storage_down_ = true;
        Later(step.down_for, "deep storage back", [this] { StorageUp(); });
        return;
      case FaultKind::kLoseWorkerDisk:
        if (!Killable(worker)) return Skip(step, worker + " is not running (or frozen)");
        Note(Check(c.Kill(worker, SIGKILL)), "kill -9 " + worker);
        Note(Check(s_->DeleteWorkerData(step.worker)), "delete the data of " + worker);
        Later(step.down_for, "restart " + worker + " empty",
              [this, worker] { RestartIfDown(worker); });
        return;
      case FaultKind::kChangeSpec: {
        if (!s_->cluster().Running(cluster::kSupervisor) || suspended_) {
          return Skip(step, "the supervisor is down or suspended");
        }
        // Alternate between two segment sizes: each submit is a real change.
        const int64_t rows = (++spec_changes_ % 2 == 1) ? 1100 : 1500;
        Note(s_->ChangeSpec([rows](v1::SupervisorSpec* spec) {
          spec->mutable_tuning_config()->set_max_rows_per_segment(rows);
        }),
             absl::StrCat("submit the spec with maxRowsPerSegment ", rows));
        return;
      }
      case FaultKind::kSuspendResume:
        if (suspended_) return Skip(step, "already suspended");
        if (absl::Status st = s_->Suspend(); !st.ok()) {
          return Skip(step, absl::StrCat("suspend failed: ", st.ToString()));
        }
        Note(absl::OkStatus(), "suspend");
        suspended_ = true;
        Later(step.down_for, "resume", [this] { ResumeIfSuspended(); });
        return;
    }
  }

  // Runs the undos due by `now`.
  void RunDue(absl::Time now) {
    while (!undos_.empty() && undos_.front().at <= now) {
      Undo undo = std::move(undos_.front());
      undos_.erase(undos_.begin());
      *out_ << "    +" << Elapsed() << " " << undo.what << "\n";
      undo.fn();
    }
  }

  absl::Time NextDue() const {
    return undos_.empty() ? absl::InfiniteFuture() : undos_.front().at;
  }

  // Undoes everything and restarts whatever is down; waits until the whole
  // cluster serves again.
  absl::Status HealAll() {
    undos_.clear();
    for (const std::string& w : std::set<std::string>(frozen_)) Thaw(w);
    if (broker_down_) BrokerUp();
    if (storage_down_) StorageUp();
    for (const auto& [process, point] : armed_) Record(s_->Disarm(process, point));
    armed_.clear();
    for (const std::string& name : s_->cluster().names()) {
      if (name != cluster::kBroker) RestartIfDown(name);
    }
    SLUICE_RETURN_IF_ERROR(s_->cluster().WaitHealthy(absl::Seconds(120)));
    // Resume needs the supervisor up (it may have been killed after the
    // suspend); resuming a running supervisor changes nothing.
    if (suspended_) {
      SLUICE_RETURN_IF_ERROR(s_->WaitUntil("the supervisor resumes", absl::Seconds(60),
                                           [this]() -> absl::StatusOr<bool> {
                                             SLUICE_RETURN_IF_ERROR(s_->Resume());
                                             return true;
                                           }));
      suspended_ = false;
    }
    return first_error_;
  }

  void StartIteration() {
    iteration_start_ = absl::Now();
    first_error_ = absl::OkStatus();
  }

  void Later(absl::Duration after, std::string what, std::function<void()> fn) {
    undos_.push_back({absl::Now() + after, std::move(what), std::move(fn)});
    std::stable_sort(undos_.begin(), undos_.end(),
                     [](const Undo& a, const Undo& b) { return a.at < b.at; });
  }

 private:
  struct Undo {
    absl::Time at;
    std::string what;
    std::function<void()> fn;
  };

  std::string Elapsed() const {
    return absl::StrCat(absl::ToInt64Milliseconds(absl::Now() - iteration_start_) / 100 / 10.0,
                        "s");
  }

  bool Killable(const std::string& process) {
    return s_->cluster().Running(process) && !frozen_.count(process);
  }

  void Skip(const FaultStep& step, const std::string& why) {
    *out_ << "    +" << Elapsed() << " skipped " << FaultKindName(step.kind) << ": " << why
          << "\n";
  }

  void Note(const absl::Status& status, const std::string& what) {
    *out_ << "    +" << Elapsed() << " " << what << (status.ok() ? "" : " FAILED: ")
          << (status.ok() ? "" : status.ToString()) << "\n";
  }

  // Keeps the first error for the iteration's verdict; returns `status`.
  absl::Status Check(absl::Status status) {
    if (!status.ok() && first_error_.ok()) first_error_ = status;
    return status;
  }
  void Record(absl::Status status) { Check(std::move(status)).IgnoreError(); }

  void RestartIfDown(const std::string& process) {
    if (frozen_.count(process) || s_->cluster().Running(process)) return;
    Record(s_->cluster().Restart(process));
  }

  void Thaw(const std::string& worker) {
    if (!frozen_.erase(worker)) return;
    Record(s_->cluster().Kill(worker, SIGCONT));
  }

  void BrokerUp() {
    broker_down_ = false;
    Record(s_->cluster().BrokerCommand("broker up 1").status());
  }

  void StorageUp() {
    storage_down_ = false;
    Record(s_->SetDeepStorageDown(false));
  }

  void ResumeIfSuspended() {
    if (!suspended_) return;
    // The supervisor may be down right now; HealAll resumes it then.
    if (s_->Resume().ok()) suspended_ = false;
  }

  FaultScenario* s_;
  std::ostream* out_;
  std::vector<Undo> undos_;
  std::set<std::string> frozen_;
  std::set<std::pair<std::string, std::string>> armed_;
  bool broker_down_ = false;
  bool storage_down_ = false;
  bool suspended_ = false;
  int spec_changes_ = 0;
  absl::Time iteration_start_ = absl::Now();
  absl::Status first_error_;
};

}  // namespace

absl::Status RunSoak(const SoakOptions& options, std::ostream* out) {
  const std::vector<SoakIteration> plan =
      MakeSoakPlan(options.seed, options.iterations, options.plan);
  const std::string replay =
      absl::StrCat("bazel run //tests/fault:soak -- --seed=", options.seed,
                   " --iterations=", options.iterations);
  *out << "soak: seed " << options.seed << ", " << options.iterations << " iterations ("
       << "replay: " << replay << ")\n";
  ScenarioOptions scenario;
  scenario.name = options.name.empty() ? absl::StrCat("soak-", options.seed) : options.name;
  scenario.seed = options.seed;
  scenario.workers = options.plan.workers;
  scenario.partitions = options.partitions;
  scenario.task_count = options.task_count;
  scenario.replicas = options.replicas;
  scenario.task_duration = options.task_duration;
  // Several segments per sequence, and the first batch partly before the
  // rejection window (thrown away, counted through every fault).
  scenario.segment_granularity = "FIFTEEN_MINUTE";
  scenario.late_message_rejection_start = "2026-11-30T02:20:00Z";
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<FaultScenario> s, FaultScenario::Start(scenario));
  *out << "soak: cluster under " << s->root_dir() << " (logs in " << s->root_dir() << "/logs)\n";
  out->flush();

  Injector injector(s.get(), out);
  std::map<FaultKind, int> kinds;
  for (const SoakIteration& it : plan) {
    *out << Describe(it) << "\n";
    out->flush();
    const absl::Time start = absl::Now();
    injector.StartIteration();
    s->StartProducing(it.records, it.produce_for);
    for (const FaultStep& step : it.steps) {
      const absl::Time at = start + step.at;
      while (absl::Now() < at) {
        injector.RunDue(absl::Now());
        absl::SleepFor(std::min(at, injector.NextDue()) - absl::Now());
      }
      injector.RunDue(absl::Now());
      injector.Apply(step);
      ++kinds[step.kind];
      out->flush();
    }
    while (injector.NextDue() != absl::InfiniteFuture()) {
      absl::SleepFor(injector.NextDue() - absl::Now());
      injector.RunDue(absl::Now());
    }
    absl::Status healed = injector.HealAll();
    if (!healed.ok()) {
      return Annotate(healed, absl::StrCat("soak seed ", options.seed, " iteration ", it.index,
                                           ": healing the cluster (replay: ", replay, ")\n",
                                           s->Context()));
    }
    absl::Status finished = s->Finish({}, options.commit_timeout);
    if (!finished.ok()) {
      return Annotate(finished, absl::StrCat("soak seed ", options.seed, " iteration ",
                                             it.index, " (replay: ", replay, ")"));
    }
    const Produced produced = s->produced();
    *out << "  iteration " << it.index << " PASS after "
         << absl::ToInt64Milliseconds(absl::Now() - start) / 1000 << "s: " << produced.records
         << " records so far, every one accounted for exactly once\n";
    out->flush();
  }
  *out << "soak: seed " << options.seed << ": all " << options.iterations
       << " iterations passed; faults drawn:";
  for (const auto& [kind, n] : kinds) *out << " " << FaultKindName(kind) << "=" << n;
  *out << "\n";
  return absl::OkStatus();
}

}  // namespace sluice::fault
