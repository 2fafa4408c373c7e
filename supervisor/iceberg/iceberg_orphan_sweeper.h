// The sweeper of an Iceberg table's orphan files: files under the table's
// location (<location>/data/ and <location>/metadata/ in deep storage) that
// no document of the table's current metadata references, left by publishes
// that staged a snapshot and then did not commit it (the sequence was
// committed by a replica meanwhile, the compare-and-swap missed, the
// supervisor died), or by another writer's failed commit.
//
// Referenced: the current metadata document and every document of its
// metadata-log, every snapshot's manifest list, every manifest those lists
// name, every data file (any entry status) those manifests name. Files are
// compared by their path under the table's location, so another writer's
// spelling of the same location (file:/ against file:///) still matches.
//
// The safety age is the guard against removing a file a writer is
// committing right now, as in Iceberg's remove_orphan_files: a file is
// removed only once this sweeper has seen it unreferenced, without a break,
// for at least `min_age`. That is at least as strict as the file's own age
// (a file is never younger than the time it has been seen), needs no
// modification times from the store, and starts over after a restart or a
// leadership change (nothing is removed in the first min_age). min_age must
// exceed the longest publish (from staging a snapshot to committing it,
// retries included): a slower publish would have its staged files removed
// before its commit makes them referenced.
//
// A pass that cannot read every referenced document (a manifest missing or
// unreadable, a store error) removes nothing and returns the error: a file
// is never judged orphan on partial knowledge.
//
//   IcebergOrphanSweeper sweeper(deep_storage, {.min_age = absl::Hours(1)});
//   absl::StatusOr<int64_t> removed =
//       sweeper.Sweep("iceberg/sluice/wiki", metadata_location, clock->Now());
#ifndef SLUICE_SUPERVISOR_ICEBERG_ICEBERG_ORPHAN_SWEEPER_H_
#define SLUICE_SUPERVISOR_ICEBERG_ICEBERG_ORPHAN_SWEEPER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/deep_storage.h"
#include "supervisor/iceberg/iceberg_table_locks.h"

namespace sluice::supervisor {

struct IcebergOrphanSweepOptions {
  // How long a file must have been seen unreferenced before it is removed.
  absl::Duration min_age = absl::Hours(1);
  // Where remote (s3://) metadata files are downloaded to be read.
  std::string scratch_dir = "/tmp";
  // Shared with the publisher of the same process: files are removed only
  // while no publish of the table is under way (a pass that finds one
  // removes nothing), and only if the catalog still points at the metadata
  // the pass read. Null: the safety age is the only guard.
  IcebergTableLocks* locks = nullptr;
};

class IcebergOrphanSweeper {
 public:
  // `storage` not owned; must outlive the sweeper.
  IcebergOrphanSweeper(DeepStorage* storage, IcebergOrphanSweepOptions options)
      : storage_(storage), options_(std::move(options)) {}

  // One pass over the table at `location_key` ("iceberg/<ns>/<table>")
  // whose current metadata document is `metadata_location`: the number of
  // orphan files removed. Thread-safe (passes over one table are
  // serialized).
  // `current_location` reads the catalog's metadata location again, under
  // the exclusive hold of the table, before anything is removed (empty:
  // not checked).
  absl::StatusOr<int64_t> Sweep(
      const std::string& location_key, const std::string& metadata_location, absl::Time now,
      const std::function<absl::StatusOr<std::string>()>& current_location = nullptr)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Files of the table seen unreferenced and not yet removed (for tests and
  // logs).
  int64_t Pending(const std::string& location_key) const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  DeepStorage* storage_;
  const IcebergOrphanSweepOptions options_;
  mutable absl::Mutex mu_;
  // location key -> path under it -> when first seen unreferenced.
  std::map<std::string, std::map<std::string, absl::Time>> first_seen_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_ICEBERG_ICEBERG_ORPHAN_SWEEPER_H_
