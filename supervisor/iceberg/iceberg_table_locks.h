// Keeps the orphan sweeper's removals and the publishes of the same Iceberg
// table apart, within the supervisor process that does both. A publish
// holds its table shared from before it stages files until its commit
// transaction ended; the sweeper removes a table's files only while it holds
// the table exclusively, which it gets only while no publish holds it (it
// skips the table otherwise; publishes never wait behind a whole sweep, only
// behind its removals). With the catalog's metadata location checked again
// under the exclusive hold, nothing the sweeper judged orphan can have been
// staged or committed by a publish since.
//
// A compaction that lost its commit to a publish takes the table with
// Committing for its next attempt: it waits for the publishes holding the
// table to end, new publishes wait behind it (it cannot be starved by a
// stream of them), and no publish commits between its staging and its
// commit. Publishes then wait for one staging and commit of the compaction.
//
//   IcebergTableLocks locks;
//   {
//     IcebergTableLocks::Shared publishing = locks.Publishing("iceberg/sluice/wiki");
//     ... stage, commit ...
//   }
//   if (locks.TryExclusive("iceberg/sluice/wiki")) { ... remove ...; locks.ReleaseExclusive(...); }
#ifndef SLUICE_SUPERVISOR_ICEBERG_ICEBERG_TABLE_LOCKS_H_
#define SLUICE_SUPERVISOR_ICEBERG_ICEBERG_TABLE_LOCKS_H_

#include <map>
#include <set>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace sluice::supervisor {

class IcebergTableLocks {
 public:
  // A publish's shared hold of one table; released when destroyed.
  class Shared {
   public:
    Shared() = default;
    Shared(Shared&& other) noexcept;
    Shared& operator=(Shared&& other) noexcept;
    Shared(const Shared&) = delete;
    Shared& operator=(const Shared&) = delete;
    ~Shared();

   private:
    friend class IcebergTableLocks;
    Shared(IcebergTableLocks* locks, std::string key) : locks_(locks), key_(std::move(key)) {}
    void Release();
    IcebergTableLocks* locks_ = nullptr;
    std::string key_;
  };

  // An exclusive hold of one table (Committing); released when destroyed.
  class Exclusive {
   public:
    Exclusive() = default;
    Exclusive(Exclusive&& other) noexcept;
    Exclusive& operator=(Exclusive&& other) noexcept;
    Exclusive(const Exclusive&) = delete;
    Exclusive& operator=(const Exclusive&) = delete;
    ~Exclusive();

   private:
    friend class IcebergTableLocks;
    Exclusive(IcebergTableLocks* locks, std::string key)
        : locks_(locks), key_(std::move(key)) {}
    void Release();
    IcebergTableLocks* locks_ = nullptr;
    std::string key_;
  };

  // Holds `location_key` shared; waits while the sweeper removes its files
  // and while a compaction holds or waits for the table (Committing). Not
  // reentrant: a thread must release its hold before taking another one of
  // the same table (a second one could wait behind a Committing that waits
  // for the first).
  Shared Publishing(const std::string& location_key) ABSL_LOCKS_EXCLUDED(mu_);
  // Holds `location_key` exclusively: waits until no publish holds it and no
  // sweep removes its files; publishes that start meanwhile wait behind it.
  Exclusive Committing(const std::string& location_key) ABSL_LOCKS_EXCLUDED(mu_);
  // Holds it exclusively if no publish holds it; false otherwise.
  bool TryExclusive(const std::string& location_key) ABSL_LOCKS_EXCLUDED(mu_);
  void ReleaseExclusive(const std::string& location_key) ABSL_LOCKS_EXCLUDED(mu_);
  // Publishes holding the table now (tests).
  int Publishes(const std::string& location_key) const ABSL_LOCKS_EXCLUDED(mu_);
  // Compactions waiting for the table in Committing now (tests).
  int WaitingCompactions(const std::string& location_key) const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void ReleaseShared(const std::string& location_key) ABSL_LOCKS_EXCLUDED(mu_);

  mutable absl::Mutex mu_;
  std::map<std::string, int> publishing_ ABSL_GUARDED_BY(mu_);
  // Tables held exclusively (a sweep's removals, a compaction's commit).
  std::set<std::string> sweeping_ ABSL_GUARDED_BY(mu_);
  // Compactions waiting for a table (Committing).
  std::map<std::string, int> waiting_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_ICEBERG_ICEBERG_TABLE_LOCKS_H_
