// DatasourceAdminLocks: one slot per datasource with an admin operation
// under way or waiting (datasource_admin_locks.h).
#include "supervisor/datasource_admin_locks.h"

namespace sluice::supervisor {

struct DatasourceAdminLocks::Slot {
  absl::Mutex mu;
  int users = 0;  // operations holding or waiting for `mu`
};

DatasourceAdminLocks::DatasourceAdminLocks() = default;
DatasourceAdminLocks::~DatasourceAdminLocks() = default;

DatasourceAdminLocks::Lock::Lock(DatasourceAdminLocks* locks, const std::string& datasource)
    ABSL_NO_THREAD_SAFETY_ANALYSIS : locks_(locks), datasource_(datasource) {
  {
    absl::MutexLock lock(&locks_->mu_);
    std::unique_ptr<Slot>& slot = locks_->slots_[datasource_];
    if (slot == nullptr) slot = std::make_unique<Slot>();
    slot->users++;
    slot_ = slot.get();
  }
  slot_->mu.Lock();
}

DatasourceAdminLocks::Lock::~Lock() ABSL_NO_THREAD_SAFETY_ANALYSIS {
  slot_->mu.Unlock();
  absl::MutexLock lock(&locks_->mu_);
  if (--slot_->users == 0) locks_->slots_.erase(datasource_);
}

}  // namespace sluice::supervisor
