// The leader lease row of the metadata store (schema version 3, table
// leader_lease): which supervisor leads, at which epoch, until when. Plain
// statements over one open transaction; the election is in
// supervisor/leader_elector.h, the fence in MetadataStore::InTransaction.
//
// Time is the database's clock (PostgreSQL's clock_timestamp(), SQLite's
// julianday('now')), so supervisors on machines whose clocks disagree still
// agree on when a lease expired.
#ifndef SLUICE_SUPERVISOR_STORE_LEADER_LEASE_ROWS_H_
#define SLUICE_SUPERVISOR_STORE_LEADER_LEASE_ROWS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "supervisor/store/sql.h"

namespace sluice::supervisor {

struct LeaderLease {
  std::string holder_id;
  // host:port the holder serves SupervisorService on (what followers name).
  std::string holder_address;
  // 1 for the first holder; +1 at every change of holder.
  int64_t epoch = 0;
  int64_t acquired_at_ms = 0;
  int64_t expires_at_ms = 0;
};

// The database's current time in milliseconds since the epoch.
absl::StatusOr<int64_t> DatabaseNowMs(SqlConnection* db);

// The lease row, if any supervisor ever held it.
absl::StatusOr<std::optional<LeaderLease>> ReadLeaderLease(SqlConnection* db);

// Inserts the row, or replaces it when it exists.
absl::Status WriteLeaderLease(SqlConnection* db, const LeaderLease& lease);

// What a leader's write transactions check: the lease is held by
// `holder_id` at `epoch` and has not expired by the database's clock.
struct LeaderFence {
  std::string holder_id;
  int64_t epoch = 0;
};

// OK when the fence holds in this transaction; otherwise UNAVAILABLE with
// the fenced payload, naming who holds the lease now.
absl::Status CheckLeaderFence(SqlConnection* db, const LeaderFence& fence);

// UNAVAILABLE statuses of a transaction the fence refused carry this
// payload: this supervisor is no longer the leader and wrote nothing.
inline constexpr char kFencedPayload[] = "sluice.metadata/fenced";
bool IsFenced(const absl::Status& status);

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_STORE_LEADER_LEASE_ROWS_H_
