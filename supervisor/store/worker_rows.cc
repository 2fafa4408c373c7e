#include "supervisor/store/worker_rows.h"

#include "common/status_macros.h"
#include "supervisor/store/row_helpers.h"

namespace sluice::supervisor {

using store_rows::ForEachRow;

absl::Status WorkerRows::UpsertWorker(const WorkerRecord& w) {
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db_->Prepare("INSERT INTO workers (worker_id, address, capacity, registered_at_ms, "
                           "last_seen_ms) VALUES (?, ?, ?, ?, ?) ON CONFLICT (worker_id) DO UPDATE "
                           "SET address = excluded.address, capacity = excluded.capacity, "
                           "registered_at_ms = excluded.registered_at_ms, "
                           "last_seen_ms = excluded.last_seen_ms"));
  q.Bind(1, w.worker_id).Bind(2, w.address).Bind(3, w.capacity).Bind(4, w.registered_at_ms);
  q.Bind(5, w.last_seen_ms);
  return q.Run();
}

absl::StatusOr<std::vector<WorkerRecord>> WorkerRows::ListWorkerRecords() {
  SLUICE_ASSIGN_OR_RETURN(auto q, db_->Prepare("SELECT worker_id, address, capacity, "
                                               "registered_at_ms, last_seen_ms FROM workers "
                                               "ORDER BY worker_id"));
  std::vector<WorkerRecord> out;
  SLUICE_RETURN_IF_ERROR(ForEachRow(q, [&](SqlStatement& q) -> absl::Status {
    WorkerRecord w;
    w.worker_id = q.Text(0);
    w.address = q.Text(1);
    w.capacity = static_cast<int32_t>(q.Int64(2));
    w.registered_at_ms = q.Int64(3);
    w.last_seen_ms = q.Int64(4);
    out.push_back(std::move(w));
    return absl::OkStatus();
  }));
  return out;
}

}  // namespace sluice::supervisor
