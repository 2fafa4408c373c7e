#include "supervisor/store/leader_lease_rows.h"

#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace sluice::supervisor {
namespace {

constexpr char kLeaseName[] = "supervisor";

absl::Status Fenced(const std::string& message) {
  absl::Status status = absl::UnavailableError(message);
  status.SetPayload(kFencedPayload, absl::Cord("1"));
  return status;
}

}  // namespace

bool IsFenced(const absl::Status& status) {
  return status.GetPayload(kFencedPayload).has_value();
}

absl::StatusOr<int64_t> DatabaseNowMs(SqlConnection* db) {
  const std::string sql =
      db->dialect() == SqlDialect::kPostgres
          ? "SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint"
          : "SELECT CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)";
  SLUICE_ASSIGN_OR_RETURN(std::string text, db->QueryText(sql));
  int64_t now_ms = 0;
  if (!absl::SimpleAtoi(text, &now_ms)) {
    return absl::InternalError(absl::StrCat("the database's clock said \"", text, "\""));
  }
  return now_ms;
}

absl::StatusOr<std::optional<LeaderLease>> ReadLeaderLease(SqlConnection* db) {
  SLUICE_ASSIGN_OR_RETURN(
      SqlStatement q,
      db->Prepare("SELECT holder_id, holder_address, epoch, acquired_at_ms, expires_at_ms "
                  "FROM leader_lease WHERE name = ?"));
  q.Bind(1, kLeaseName);
  SLUICE_ASSIGN_OR_RETURN(bool row, q.Step());
  if (!row) return std::nullopt;
  LeaderLease lease;
  lease.holder_id = q.Text(0);
  lease.holder_address = q.Text(1);
  lease.epoch = q.Int64(2);
  lease.acquired_at_ms = q.Int64(3);
  lease.expires_at_ms = q.Int64(4);
  return lease;
}

absl::Status WriteLeaderLease(SqlConnection* db, const LeaderLease& lease) {
  SLUICE_ASSIGN_OR_RETURN(
      SqlStatement q,
      db->Prepare("INSERT INTO leader_lease (name, holder_id, holder_address, epoch, "
                  "acquired_at_ms, expires_at_ms) VALUES (?, ?, ?, ?, ?, ?) "
                  "ON CONFLICT (name) DO UPDATE SET holder_id = excluded.holder_id, "
                  "holder_address = excluded.holder_address, epoch = excluded.epoch, "
                  "acquired_at_ms = excluded.acquired_at_ms, "
                  "expires_at_ms = excluded.expires_at_ms"));
  q.Bind(1, kLeaseName)
      .Bind(2, lease.holder_id)
      .Bind(3, lease.holder_address)
      .Bind(4, lease.epoch)
      .Bind(5, lease.acquired_at_ms)
      .Bind(6, lease.expires_at_ms);
  return q.Run();
}

absl::Status CheckLeaderFence(SqlConnection* db, const LeaderFence& fence) {
  SLUICE_ASSIGN_OR_RETURN(std::optional<LeaderLease> lease, ReadLeaderLease(db));
  if (!lease.has_value()) {
    return Fenced(absl::StrCat("fenced: supervisor ", fence.holder_id, " led at epoch ",
                               fence.epoch, " but the store has no leader lease; nothing written"));
  }
  if (lease->holder_id != fence.holder_id || lease->epoch != fence.epoch) {
    return Fenced(absl::StrCat("fenced: supervisor ", fence.holder_id, " led at epoch ",
                               fence.epoch, ", but ", lease->holder_id, " at ",
                               lease->holder_address, " leads at epoch ", lease->epoch,
                               " now; nothing written"));
  }
  SLUICE_ASSIGN_OR_RETURN(const int64_t now_ms, DatabaseNowMs(db));
  if (lease->expires_at_ms <= now_ms) {
    return Fenced(absl::StrCat("fenced: the lease of supervisor ", fence.holder_id, " (epoch ",
                               fence.epoch, ") expired ", now_ms - lease->expires_at_ms,
                               " ms ago and is not renewed yet; nothing written"));
  }
  return absl::OkStatus();
}

}  // namespace sluice::supervisor
