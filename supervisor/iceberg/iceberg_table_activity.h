// What the supervisor did to each Iceberg datasource's table since it
// started: the last snapshot committed, the last commit that failed, the
// orphan files the sweeper removed. The publisher and the sweeper write it
// (RPC and housekeeping threads); the status reads it. In memory only: the
// table itself (the catalog's metadata_location) is the durable record.
//
//   IcebergTableActivity activity;
//   activity.NoteCommit("wiki", snapshot_id, now_ms);
//   activity.Fill("wiki", status.mutable_iceberg_table());
#ifndef SLUICE_SUPERVISOR_ICEBERG_ICEBERG_TABLE_ACTIVITY_H_
#define SLUICE_SUPERVISOR_ICEBERG_ICEBERG_TABLE_ACTIVITY_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "sluice/v1/supervisor_service.pb.h"

namespace sluice::supervisor {

class IcebergTableActivity {
 public:
  // A publish committed snapshot `snapshot_id`; clears the last failure.
  void NoteCommit(const std::string& datasource, int64_t snapshot_id, int64_t now_ms)
      ABSL_LOCKS_EXCLUDED(mu_);
  // A publish failed to commit to the table.
  void NoteFailure(const std::string& datasource, const absl::Status& status, int64_t now_ms)
      ABSL_LOCKS_EXCLUDED(mu_);
  // The sweeper removed `files` orphan files of the datasource's table.
  void NoteOrphansRemoved(const std::string& datasource, int64_t files) ABSL_LOCKS_EXCLUDED(mu_);
  // Sets the activity fields of `status` (last_snapshot_id, last_commit_ms,
  // last_commit_error[_ms], orphan_files_removed); leaves the others.
  void Fill(const std::string& datasource, v1::IcebergTableStatus* status) const
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Entry {
    int64_t last_snapshot_id = 0;
    int64_t last_commit_ms = 0;
    std::string last_error;
    int64_t last_error_ms = 0;
    int64_t orphan_files_removed = 0;
  };
  mutable absl::Mutex mu_;
  std::map<std::string, Entry> entries_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_ICEBERG_ICEBERG_TABLE_ACTIVITY_H_
