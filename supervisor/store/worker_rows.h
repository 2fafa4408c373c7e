// The task workers that registered (table workers). Typed statements over
// one open transaction; StoreTxn (metadata_store.h) offers them.
#ifndef SLUICE_SUPERVISOR_STORE_WORKER_ROWS_H_
#define SLUICE_SUPERVISOR_STORE_WORKER_ROWS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "supervisor/store/sql.h"

namespace sluice::supervisor {

struct WorkerRecord {
  std::string worker_id;
  std::string address;
  int32_t capacity = 0;
  int64_t registered_at_ms = 0;
  int64_t last_seen_ms = 0;
};

class WorkerRows {
 public:
  explicit WorkerRows(SqlConnection* db) : db_(db) {}

  absl::Status UpsertWorker(const WorkerRecord& worker);
  absl::StatusOr<std::vector<WorkerRecord>> ListWorkerRecords();

 private:
  SqlConnection* db_;
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_STORE_WORKER_ROWS_H_
