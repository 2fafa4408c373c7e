#include "supervisor/iceberg/iceberg_table_locks.h"

#include <utility>

namespace sluice::supervisor {

IcebergTableLocks::Shared::Shared(Shared&& other) noexcept
    : locks_(std::exchange(other.locks_, nullptr)), key_(std::move(other.key_)) {}

IcebergTableLocks::Shared& IcebergTableLocks::Shared::operator=(Shared&& other) noexcept {
  if (this != &other) {
    Release();
    locks_ = std::exchange(other.locks_, nullptr);
    key_ = std::move(other.key_);
  }
  return *this;
}

IcebergTableLocks::Shared::~Shared() { Release(); }

void IcebergTableLocks::Shared::Release() {
  if (locks_ != nullptr) locks_->ReleaseShared(key_);
  locks_ = nullptr;
}

IcebergTableLocks::Exclusive::Exclusive(Exclusive&& other) noexcept
    : locks_(std::exchange(other.locks_, nullptr)), key_(std::move(other.key_)) {}

IcebergTableLocks::Exclusive& IcebergTableLocks::Exclusive::operator=(Exclusive&& other) noexcept {
  if (this != &other) {
    Release();
    locks_ = std::exchange(other.locks_, nullptr);
    key_ = std::move(other.key_);
  }
  return *this;
}

IcebergTableLocks::Exclusive::~Exclusive() { Release(); }

void IcebergTableLocks::Exclusive::Release() {
  if (locks_ != nullptr) locks_->ReleaseExclusive(key_);
  locks_ = nullptr;
}

IcebergTableLocks::Shared IcebergTableLocks::Publishing(const std::string& location_key) {
  struct Free {
    IcebergTableLocks* locks;
    const std::string* key;
  };
  absl::MutexLock lock(&mu_);
  Free args{this, &location_key};
  mu_.Await(absl::Condition(
      +[](Free* a) ABSL_NO_THREAD_SAFETY_ANALYSIS {
        return a->locks->sweeping_.count(*a->key) == 0 && a->locks->waiting_.count(*a->key) == 0;
      },
      &args));
  ++publishing_[location_key];
  return Shared(this, location_key);
}

IcebergTableLocks::Exclusive IcebergTableLocks::Committing(const std::string& location_key) {
  struct Free {
    IcebergTableLocks* locks;
    const std::string* key;
  };
  absl::MutexLock lock(&mu_);
  ++waiting_[location_key];
  Free args{this, &location_key};
  mu_.Await(absl::Condition(
      +[](Free* a) ABSL_NO_THREAD_SAFETY_ANALYSIS {
        return a->locks->sweeping_.count(*a->key) == 0 &&
               a->locks->publishing_.count(*a->key) == 0;
      },
      &args));
  if (--waiting_[location_key] <= 0) waiting_.erase(location_key);
  sweeping_.insert(location_key);
  return Exclusive(this, location_key);
}

bool IcebergTableLocks::TryExclusive(const std::string& location_key) {
  absl::MutexLock lock(&mu_);
  auto it = publishing_.find(location_key);
  if (it != publishing_.end() && it->second > 0) return false;
  if (waiting_.count(location_key) > 0) return false;
  return sweeping_.insert(location_key).second;
}

void IcebergTableLocks::ReleaseExclusive(const std::string& location_key) {
  absl::MutexLock lock(&mu_);
  sweeping_.erase(location_key);
}

int IcebergTableLocks::Publishes(const std::string& location_key) const {
  absl::MutexLock lock(&mu_);
  auto it = publishing_.find(location_key);
  return it == publishing_.end() ? 0 : it->second;
}

int IcebergTableLocks::WaitingCompactions(const std::string& location_key) const {
  absl::MutexLock lock(&mu_);
  auto it = waiting_.find(location_key);
  return it == waiting_.end() ? 0 : it->second;
}

void IcebergTableLocks::ReleaseShared(const std::string& location_key) {
  absl::MutexLock lock(&mu_);
  auto it = publishing_.find(location_key);
  if (it != publishing_.end() && --it->second <= 0) publishing_.erase(it);
}

}  // namespace sluice::supervisor
