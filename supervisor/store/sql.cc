#include "supervisor/store/sql.h"

#include "absl/strings/cord.h"

namespace sluice::supervisor {

absl::Status SerializationFailure(absl::string_view message) {
  absl::Status status = absl::AbortedError(message);
  status.SetPayload(kSerializationFailurePayload, absl::Cord("1"));
  return status;
}

bool IsSerializationFailure(const absl::Status& status) {
  return absl::IsAborted(status) && status.GetPayload(kSerializationFailurePayload).has_value();
}

absl::Status UniqueViolation(absl::string_view message) {
  absl::Status status = absl::AlreadyExistsError(message);
  status.SetPayload(kUniqueViolationPayload, absl::Cord("1"));
  return status;
}

bool IsUniqueViolation(const absl::Status& status) {
  return absl::IsAlreadyExists(status) && status.GetPayload(kUniqueViolationPayload).has_value();
}

absl::Status SqlStatement::Run() {
  while (true) {
    absl::StatusOr<bool> row = Step();
    if (!row.ok()) return row.status();
    if (!*row) return absl::OkStatus();
  }
}

absl::StatusOr<std::unique_ptr<SqlTransaction>> SqlTransaction::Begin(SqlConnection* db,
                                                                      TxnMode mode) {
  if (absl::Status s = db->Begin(mode); !s.ok()) return s;
  return std::unique_ptr<SqlTransaction>(new SqlTransaction(db));
}

SqlTransaction::~SqlTransaction() {
  if (!done_) db_->Rollback();
}

absl::Status SqlTransaction::Commit() {
  absl::Status status = db_->Commit();
  if (status.ok()) done_ = true;
  return status;
}

}  // namespace sluice::supervisor
