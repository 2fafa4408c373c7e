#include "supervisor/iceberg_table_locks.h"

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

IcebergTableLocks::Shared IcebergTableLocks::Publishing(const std::string& location_key) {
  struct NotSweeping {
    const std::set<std::string>* sweeping;
    const std::string* key;
  };
  absl::MutexLock lock(&mu_);
  NotSweeping args{&sweeping_, &location_key};
  mu_.Await(absl::Condition(
      +[](NotSweeping* a) { return a->sweeping->count(*a->key) == 0; }, &args));
  ++publishing_[location_key];
  return Shared(this, location_key);
}

bool IcebergTableLocks::TryExclusive(const std::string& location_key) {
  absl::MutexLock lock(&mu_);
  auto it = publishing_.find(location_key);
  if (it != publishing_.end() && it->second > 0) return false;
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

void IcebergTableLocks::ReleaseShared(const std::string& location_key) {
  absl::MutexLock lock(&mu_);
  auto it = publishing_.find(location_key);
  if (it != publishing_.end() && --it->second <= 0) publishing_.erase(it);
}

}  // namespace sluice::supervisor
