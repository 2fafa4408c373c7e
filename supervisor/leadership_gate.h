// Which SupervisorManager serves SupervisorService calls: the one of this
// supervisor while it leads, none while it is a standby (or after it lost
// the lease). Without leader election there is one manager from the start.
//
// Handlers ask Manager() first; a standby's answer is UNAVAILABLE naming the
// leader (LeaderElector::NotLeaderStatus), with the leader's address also in
// the trailing metadata kLeaderAddressMetadata, so a client holding several
// supervisor addresses can go straight to it.
#ifndef SLUICE_SUPERVISOR_LEADERSHIP_GATE_H_
#define SLUICE_SUPERVISOR_LEADERSHIP_GATE_H_

#include <atomic>
#include <string>

#include "absl/status/statusor.h"
#include "supervisor/leader_elector.h"

namespace sluice::supervisor {

class SupervisorManager;

inline constexpr char kLeaderAddressMetadata[] = "sluice-leader-address";

class LeadershipGate {
 public:
  // Always leading: one supervisor, no election. `manager` not owned.
  explicit LeadershipGate(SupervisorManager* manager) : manager_(manager) {}
  // Leader election: leading once SetManager is called, never again after
  // Close; the elector (AttachElector) names the leader meanwhile.
  LeadershipGate() = default;

  // `elector` (not owned) must outlive the gate.
  void AttachElector(const LeaderElector* elector) { elector_.store(elector); }

  // This supervisor leads and `manager` (not owned) serves from now on.
  void SetManager(SupervisorManager* manager) { manager_.store(manager); }
  // Leadership lost (or shutting down): calls are refused from now on. The
  // manager itself is left to its owner.
  void Close() { manager_.store(nullptr); }

  // The manager to call, or UNAVAILABLE naming the leader.
  absl::StatusOr<SupervisorManager*> Manager() const {
    SupervisorManager* manager = manager_.load();
    if (manager != nullptr) return manager;
    const LeaderElector* elector = elector_.load();
    if (elector == nullptr) {
      return absl::UnavailableError("the supervisor is starting or shutting down");
    }
    return elector->NotLeaderStatus();
  }
  // Where the leader serves, "" when unknown or when this one leads.
  std::string LeaderAddress() const {
    const LeaderElector* elector = elector_.load();
    if (elector == nullptr || manager_.load() != nullptr) return "";
    const Leadership leadership = elector->leadership();
    if (!leadership.lease.has_value() || leadership.leading) return "";
    return leadership.lease->holder_address;
  }

 private:
  std::atomic<const LeaderElector*> elector_{nullptr};
  std::atomic<SupervisorManager*> manager_{nullptr};
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_LEADERSHIP_GATE_H_
