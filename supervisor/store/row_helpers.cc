#include "supervisor/store/row_helpers.h"

#include "absl/strings/str_cat.h"
#include "common/proto_json.h"

namespace sluice::supervisor::store_rows {

absl::StatusOr<std::string> ToJson(const google::protobuf::Message& message) {
  return ProtoToJson(message);
}

absl::Status FromJson(const std::string& json, google::protobuf::Message* message) {
  return ProtoFromJson(json, message, absl::StrCat("stored ", message->GetTypeName()),
                       {.ignore_unknown_fields = true, .error_code = absl::StatusCode::kDataLoss});
}

absl::Status EnsureDatasourceRow(SqlConnection* db, const std::string& datasource,
                                 int64_t now_ms) {
  SLUICE_ASSIGN_OR_RETURN(auto q, db->Prepare("INSERT INTO datasources (datasource, "
                                              "created_at_ms) VALUES (?, ?) "
                                              "ON CONFLICT (datasource) DO NOTHING"));
  q.Bind(1, datasource).Bind(2, now_ms);
  return q.Run();
}

}  // namespace sluice::supervisor::store_rows
