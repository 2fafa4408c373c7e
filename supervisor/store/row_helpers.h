// What the row-group files of the store share (private to this package):
// the one row loop, the JSON form of stored protos, and the datasources row
// every per-datasource table refers to.
#ifndef SLUICE_SUPERVISOR_STORE_ROW_HELPERS_H_
#define SLUICE_SUPERVISOR_STORE_ROW_HELPERS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/status_macros.h"
#include "google/protobuf/message.h"
#include "supervisor/store/sql.h"

namespace sluice::supervisor::store_rows {

// Steps `q` through every row, handing each to `read`; the first error
// (from the step or from `read`) stops. The one row loop of the store: the
// typed statements only say how a row becomes a struct or proto.
template <typename Fn>
absl::Status ForEachRow(SqlStatement& q, Fn&& read) {
  while (true) {
    SLUICE_ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) return absl::OkStatus();
    SLUICE_RETURN_IF_ERROR(read(q));
  }
}

absl::StatusOr<std::string> ToJson(const google::protobuf::Message& message);

// Rows written by a newer version may carry fields this one does not know:
// they are ignored; a row that is no such message is DATA_LOSS.
absl::Status FromJson(const std::string& json, google::protobuf::Message* message);

// Inserts the datasource's row unless it exists (the parent of every
// per-datasource row).
absl::Status EnsureDatasourceRow(SqlConnection* db, const std::string& datasource,
                                 int64_t now_ms);

}  // namespace sluice::supervisor::store_rows

#endif  // SLUICE_SUPERVISOR_STORE_ROW_HELPERS_H_
