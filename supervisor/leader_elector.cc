#include "supervisor/leader_elector.h"

#include <glog/logging.h>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace sluice::supervisor {
namespace {

using SteadyClock = std::chrono::steady_clock;

SteadyClock::duration ToSteady(absl::Duration d) {
  return std::chrono::duration_cast<SteadyClock::duration>(absl::ToChronoNanoseconds(d));
}

}  // namespace

LeaderElector::LeaderElector(LeaderElectorOptions options)
    : options_(std::move(options)),
      renew_every_(options_.renew_every > absl::ZeroDuration() ? options_.renew_every
                                                                 : options_.lease / 3) {}

LeaderElector::~LeaderElector() { Stop(/*resign=*/false); }

void LeaderElector::Start() {
  absl::MutexLock lock(&mu_);
  if (started_) return;
  started_ = true;
  thread_ = std::thread([this] { Loop(); });
}

void LeaderElector::Loop() {
  while (true) {
    absl::Status round = RunOnce();
    if (!round.ok()) {
      LOG_EVERY_N(WARNING, 5) << "[supervisor] leader election round failed: " << round;
    }
    absl::MutexLock lock(&mu_);
    auto stopping = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_; };
    if (mu_.AwaitWithTimeout(absl::Condition(&stopping), renew_every_)) return;
  }
}

void LeaderElector::Stop(bool resign) {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
  absl::MutexLock round(&round_mu_);
  int64_t epoch = 0;
  {
    absl::MutexLock lock(&mu_);
    if (!resign || !leadership_.leading) return;
    epoch = leadership_.epoch;
    leadership_.leading = false;
    leadership_.lost = true;
  }
  absl::Status status = options_.store->InLeaseTransaction([&](SqlConnection* db) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(std::optional<LeaderLease> lease, ReadLeaderLease(db));
    if (!lease.has_value() || lease->holder_id != options_.supervisor_id ||
        lease->epoch != epoch) {
      return absl::OkStatus();  // someone else leads already
    }
    SLUICE_ASSIGN_OR_RETURN(lease->expires_at_ms, DatabaseNowMs(db));
    return WriteLeaderLease(db, *lease);
  });
  if (status.ok()) {
    LOG(INFO) << "[supervisor] gave up the leader lease (epoch " << epoch << ")";
  } else {
    LOG(WARNING) << "[supervisor] could not give up the leader lease (it expires by itself): "
                 << status;
  }
}

absl::Status LeaderElector::RunOnce() {
  absl::MutexLock round(&round_mu_);
  const SteadyClock::time_point started = SteadyClock::now();
  bool was_leading = false;
  bool lost = false;
  bool expired = false;
  int64_t my_epoch = 0;
  {
    absl::MutexLock lock(&mu_);
    was_leading = leadership_.leading;
    lost = leadership_.lost;
    my_epoch = leadership_.epoch;
    expired = was_leading && started > local_deadline_;
  }
  if (expired) {
    // Paused (SIGSTOP, a long stall) or cut off from the store past the
    // lease: another supervisor may lead already. The fence refuses this
    // process's writes whatever happens next; stop leading.
    Lose("the lease ran out before it was renewed (was this process paused, or cut off from "
         "the metadata store?)");
    return absl::OkStatus();
  }

  Outcome outcome = Outcome::kFollowing;
  LeaderLease seen;
  absl::Status status = options_.store->InLeaseTransaction([&](SqlConnection* db) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(const int64_t now_ms, DatabaseNowMs(db));
    SLUICE_ASSIGN_OR_RETURN(std::optional<LeaderLease> lease, ReadLeaderLease(db));
    const int64_t lease_ms = absl::ToInt64Milliseconds(options_.lease);
    const bool mine = lease.has_value() && was_leading &&
                      lease->holder_id == options_.supervisor_id && lease->epoch == my_epoch;
    if (mine) {
      lease->expires_at_ms = now_ms + lease_ms;
      outcome = Outcome::kRenewed;
    } else if (!was_leading && !lost &&
               (!lease.has_value() || lease->expires_at_ms <= now_ms)) {
      LeaderLease taken;
      taken.holder_id = options_.supervisor_id;
      taken.holder_address = options_.address;
      taken.epoch = lease.has_value() ? lease->epoch + 1 : 1;
      taken.acquired_at_ms = now_ms;
      taken.expires_at_ms = now_ms + lease_ms;
      lease = taken;
      outcome = Outcome::kTook;
    } else {
      // Someone else's live lease, or none for a process that lost it (it
      // never leads again).
      if (lease.has_value()) seen = *lease;
      outcome = Outcome::kFollowing;
      return absl::OkStatus();
    }
    seen = *lease;
    return WriteLeaderLease(db, *lease);
  });

  if (!status.ok()) {
    absl::MutexLock lock(&mu_);
    leadership_.last_error = std::string(status.message());
    return status;
  }
  switch (outcome) {
    case Outcome::kRenewed: {
      absl::MutexLock lock(&mu_);
      leadership_.lease = seen;
      leadership_.last_error.clear();
      local_deadline_ = started + ToSteady(options_.lease);
      return absl::OkStatus();
    }
    case Outcome::kTook: {
      {
        absl::MutexLock lock(&mu_);
        leadership_.leading = true;
        leadership_.epoch = seen.epoch;
        leadership_.lease = seen;
        leadership_.last_error.clear();
        local_deadline_ = started + ToSteady(options_.lease);
      }
      options_.store->SetLeaderFence(LeaderFence{options_.supervisor_id, seen.epoch},
                                     options_.on_fenced);
      LOG(INFO) << "[supervisor] " << options_.supervisor_id << " leading at epoch " << seen.epoch
                << " (lease " << absl::FormatDuration(options_.lease) << ", renewed every "
                << absl::FormatDuration(renew_every_) << ")";
      if (options_.on_elected) options_.on_elected(seen.epoch);
      return absl::OkStatus();
    }
    case Outcome::kFollowing: {
      if (seen.holder_id.empty()) return absl::OkStatus();  // no lease row at all
      bool lose = false;
      {
        absl::MutexLock lock(&mu_);
        const bool changed = !leadership_.lease.has_value() ||
                             leadership_.lease->holder_id != seen.holder_id ||
                             leadership_.lease->epoch != seen.epoch;
        leadership_.lease = seen;
        leadership_.last_error.clear();
        lose = leadership_.leading;
        if (changed && !lose) {
          LOG(INFO) << "[supervisor] standby: " << seen.holder_id << " at " << seen.holder_address
                    << " leads at epoch " << seen.epoch;
        }
      }
      if (lose) {
        Lose(absl::StrCat(seen.holder_id, " at ", seen.holder_address,
                          " took the lease at epoch ", seen.epoch));
      }
      return absl::OkStatus();
    }
  }
  return absl::OkStatus();
}

void LeaderElector::Lose(const std::string& why) {
  int64_t epoch = 0;
  {
    absl::MutexLock lock(&mu_);
    if (!leadership_.leading) return;
    epoch = leadership_.epoch;
    leadership_.leading = false;
    leadership_.lost = true;
  }
  LOG(WARNING) << "[supervisor] " << options_.supervisor_id << " lost leadership (epoch " << epoch
               << "): " << why;
  if (options_.on_lost) options_.on_lost(why);
}

Leadership LeaderElector::leadership() const {
  absl::MutexLock lock(&mu_);
  return leadership_;
}

absl::Status LeaderElector::NotLeaderStatus() const {
  absl::MutexLock lock(&mu_);
  std::string who = "no leader is known yet";
  if (leadership_.lease.has_value() && leadership_.lease->holder_id != options_.supervisor_id) {
    who = absl::StrCat("the leader is ", leadership_.lease->holder_id, " at ",
                       leadership_.lease->holder_address, " (epoch ", leadership_.lease->epoch,
                       ")");
  }
  return absl::UnavailableError(absl::StrCat(
      "supervisor ", options_.supervisor_id,
      leadership_.lost ? " lost its leadership and is shutting down; "
                       : " is a standby; ",
      who, ": call the leader (a readiness-gated Service routes there)"));
}

}  // namespace sluice::supervisor
