#include "task/task_files.h"

#include "common/file_util.h"
#include "common/status_macros.h"
#include "google/protobuf/util/json_util.h"

namespace sluice::task {

absl::Status RemoveAllBut(const std::string& dir, const std::set<std::string>& keep) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> names, ListDirectory(dir));
  for (const std::string& name : names) {
    if (keep.count(name) == 0) SLUICE_RETURN_IF_ERROR(RemoveAll(absl::StrCat(dir, "/", name)));
  }
  return absl::OkStatus();
}

absl::Status SaveJson(const google::protobuf::Message& message, const std::string& path) {
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = false;
  const auto status = google::protobuf::util::MessageToJsonString(message, &json, options);
  if (!status.ok()) {
    return absl::InternalError(
        absl::StrCat("cannot serialize ", message.GetTypeName(), ": ", status.ToString()));
  }
  return WriteFileAtomically(path, json);
}

absl::Status LoadJson(const std::string& path, google::protobuf::Message* message) {
  SLUICE_ASSIGN_OR_RETURN(std::string json, ReadFile(path));
  const auto status = google::protobuf::util::JsonStringToMessage(json, message);
  if (!status.ok()) {
    return absl::DataLossError(
        absl::StrCat(path, " is not a valid ", message->GetTypeName(), ": ", status.ToString()));
  }
  return absl::OkStatus();
}

}  // namespace sluice::task
