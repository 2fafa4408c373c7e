// DatasourceAdminLocks: admin operations that change a datasource's spec or
// supervisor run one at a time per datasource (each sees the spec and
// supervisor the one before it left), and those of different datasources at
// once: starting a stream supervisor creates its Kafka client and reads the
// store, and N datasources onboarded together must not wait for each other's.
// A Lock holds the datasource's slot for one operation.
#ifndef SLUICE_SUPERVISOR_DATASOURCE_ADMIN_LOCKS_H_
#define SLUICE_SUPERVISOR_DATASOURCE_ADMIN_LOCKS_H_

#include <map>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace sluice::supervisor {

class DatasourceAdminLocks {
 public:
  // The datasource's slot, held while the Lock lives (created on first use,
  // dropped when no operation holds or waits for it). Not annotated for the
  // thread-safety analysis: the mutex is found at run time.
  struct Slot;
  class Lock {
   public:
    Lock(DatasourceAdminLocks* locks, const std::string& datasource);
    ~Lock();
    Lock(const Lock&) = delete;
    Lock& operator=(const Lock&) = delete;

   private:
    DatasourceAdminLocks* const locks_;
    const std::string datasource_;
    Slot* slot_ = nullptr;
  };

  DatasourceAdminLocks();
  ~DatasourceAdminLocks();

 private:
  absl::Mutex mu_;
  // Slots of the datasources with an admin operation under way or waiting.
  std::map<std::string, std::unique_ptr<Slot>> slots_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_DATASOURCE_ADMIN_LOCKS_H_
