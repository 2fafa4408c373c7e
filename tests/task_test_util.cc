#include "tests/task_test_util.h"

#include <grpcpp/grpcpp.h>
#include <stdlib.h>

#include <set>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/grpc_status.h"
#include "common/segment/segment_reader.h"

namespace sluice::testing {

using ::sluice::OffsetMap;

std::string MakeTempDir(const std::string& name) {
  std::string tmpl = absl::StrCat("/tmp/sluice_", name, "_XXXXXX");
  if (mkdtemp(tmpl.data()) == nullptr) return "";
  return tmpl;
}

std::string Record(int32_t partition, int64_t n) {
  const int64_t time = kBaseTimeMs + (n % 2) * 3600 * 1000 + (n / 2) * 1000;
  return absl::StrCat(R"({"timestamp":)", time, R"(,"key":"p)", partition, "-", n,
                      R"(","page":"Page_)", n % 7, R"(","added":)", n % 13, "}");
}

std::string KeyOf(const std::string& json) {
  const size_t at = json.find(R"("key":")");
  if (at == std::string::npos) return "";
  const size_t start = at + 7;
  const size_t end = json.find('"', start);
  return end == std::string::npos ? "" : json.substr(start, end - start);
}

v1::TaskSpec MakeSpec(const SpecOptions& o) {
  v1::TaskSpec spec;
  spec.set_task_id(o.task_id);
  spec.set_datasource(o.datasource);
  spec.set_group_id(0);
  spec.set_base_sequence_name(o.base_sequence_name);
  spec.set_topic(o.topic);
  (*spec.mutable_consumer_properties())["bootstrap.servers"] = o.bootstrap;
  ToProto(o.start, spec.mutable_start_offsets());
  v1::Checkpoint* checkpoint = spec.add_checkpoints();
  checkpoint->set_sequence_id(0);
  ToProto(o.start, checkpoint->mutable_offsets());
  spec.set_minimum_message_time_ms(o.minimum_message_time_ms);
  spec.set_maximum_message_time_ms(o.maximum_message_time_ms);
  v1::DataSchema* schema = spec.mutable_data_schema();
  schema->mutable_timestamp_spec()->set_column("timestamp");
  schema->mutable_timestamp_spec()->set_format("millis");
  schema->mutable_granularity_spec()->set_segment_granularity("HOUR");
  v1::MetricSpec* count = schema->add_metrics_spec();
  count->set_type("count");
  count->set_name("count");
  v1::MetricSpec* added = schema->add_metrics_spec();
  added->set_type("longSum");
  added->set_name("added");
  v1::TuningConfig* t = spec.mutable_tuning_config();
  t->set_max_rows_per_segment(o.max_rows_per_segment);
  t->set_max_rows_in_memory(o.max_rows_in_memory);
  t->set_max_total_rows(o.max_total_rows);
  t->set_intermediate_persist_period(o.intermediate_persist_period);
  t->set_intermediate_handoff_period(o.intermediate_handoff_period);
  t->set_checkpoint_retry_period(o.checkpoint_retry_period);
  t->set_handoff_condition_timeout(o.handoff_condition_timeout);
  t->set_chat_timeout(o.chat_timeout);
  t->set_chat_retries(2);
  if (o.max_parse_exceptions) t->set_max_parse_exceptions(*o.max_parse_exceptions);
  t->set_max_saved_parse_exceptions(o.max_saved_parse_exceptions);
  spec.set_poll_timeout_ms(o.poll_timeout_ms);
  spec.set_created_at_ms(kBaseTimeMs);
  return spec;
}

TaskClient::TaskClient(const std::string& address) { Connect(address); }

void TaskClient::Connect(const std::string& address) {
  stub_ =
      v1::TaskService::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
}

namespace {

template <typename Request, typename Response>
absl::StatusOr<Response> Call(v1::TaskService::Stub* stub,
                              grpc::Status (v1::TaskService::Stub::*method)(grpc::ClientContext*,
                                                                            const Request&,
                                                                            Response*),
                              const Request& request) {
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(15)));
  Response response;
  const grpc::Status status = (stub->*method)(&context, request, &response);
  if (!status.ok()) return FromGrpcStatus(status);
  return response;
}

}  // namespace

absl::StatusOr<v1::RunTaskResponse> TaskClient::RunTask(const v1::TaskSpec& spec) {
  v1::RunTaskRequest request;
  *request.mutable_spec() = spec;
  return Call(stub_.get(), &v1::TaskService::Stub::RunTask, request);
}

absl::StatusOr<v1::TaskStatus> TaskClient::Status(const std::string& task_id) {
  v1::GetTaskStatusRequest request;
  request.set_task_id(task_id);
  auto response = Call(stub_.get(), &v1::TaskService::Stub::GetTaskStatus, request);
  if (!response.ok()) return response.status();
  return std::move(*response->mutable_status());
}

absl::StatusOr<OffsetMap> TaskClient::Pause(const std::string& task_id, int64_t timeout_ms) {
  v1::PauseRequest request;
  request.set_task_id(task_id);
  request.set_timeout_ms(timeout_ms);
  auto response = Call(stub_.get(), &v1::TaskService::Stub::Pause, request);
  if (!response.ok()) return response.status();
  return FromProto(response->current_offsets());
}

absl::StatusOr<v1::ResumeResponse> TaskClient::Resume(const std::string& task_id) {
  v1::ResumeRequest request;
  request.set_task_id(task_id);
  return Call(stub_.get(), &v1::TaskService::Stub::Resume, request);
}

absl::StatusOr<v1::SetEndOffsetsResponse> TaskClient::SetEndOffsets(const std::string& task_id,
                                                                    const OffsetMap& offsets,
                                                                    bool finish) {
  v1::SetEndOffsetsRequest request;
  request.set_task_id(task_id);
  ToProto(offsets, request.mutable_end_offsets());
  request.set_finish(finish);
  return Call(stub_.get(), &v1::TaskService::Stub::SetEndOffsets, request);
}

absl::StatusOr<OffsetMap> TaskClient::CurrentOffsets(const std::string& task_id) {
  v1::GetCurrentOffsetsRequest request;
  request.set_task_id(task_id);
  auto response = Call(stub_.get(), &v1::TaskService::Stub::GetCurrentOffsets, request);
  if (!response.ok()) return response.status();
  return FromProto(response->offsets());
}

absl::StatusOr<v1::StopTaskResponse> TaskClient::Stop(const std::string& task_id,
                                                      v1::StopMode mode) {
  v1::StopTaskRequest request;
  request.set_task_id(task_id);
  request.set_mode(mode);
  request.set_reason("test");
  return Call(stub_.get(), &v1::TaskService::Stub::StopTask, request);
}

absl::StatusOr<v1::ListTasksResponse> TaskClient::List() {
  return Call(stub_.get(), &v1::TaskService::Stub::ListTasks, v1::ListTasksRequest());
}

bool WaitFor(const std::function<bool()>& done, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    if (done()) return true;
    if (absl::Now() >= deadline) return false;
    absl::SleepFor(absl::Milliseconds(20));
  }
}

namespace {

// Whether the record is a row: it has a key and its time is in the window.
bool IsValidRow(const std::string& value, int64_t min_time_ms, int64_t max_time_ms) {
  if (KeyOf(value).empty()) return false;
  const size_t at = value.find(R"("timestamp":)");
  if (at == std::string::npos) return false;
  int64_t time;
  const size_t start = at + 12;
  const size_t end = value.find_first_of(",}", start);
  if (!absl::SimpleAtoi(value.substr(start, end - start), &time)) return false;
  if (min_time_ms != 0 && time < min_time_ms) return false;
  if (max_time_ms != 0 && time > max_time_ms) return false;
  return true;
}

}  // namespace

absl::Status VerifyExactlyOnce(const FakeSupervisor& supervisor, DeepStorage* deep_storage,
                               const std::string& base_sequence_name, const Produced& produced,
                               const OffsetMap& initial, const OffsetMap& final,
                               int64_t min_time_ms, int64_t max_time_ms) {
  return VerifyCommitLog(supervisor.CommitLog(), supervisor.Segments(), deep_storage,
                         base_sequence_name, produced, initial, final, min_time_ms, max_time_ms);
}

absl::Status VerifyCommitLog(const std::vector<v1::CommittedSequence>& log,
                             const std::vector<v1::SegmentDescriptor>& published,
                             DeepStorage* deep_storage, const std::string& base_sequence_name,
                             const Produced& produced, const OffsetMap& initial,
                             const OffsetMap& final, int64_t min_time_ms, int64_t max_time_ms) {
  std::map<std::string, v1::SegmentDescriptor> segments;
  for (const v1::SegmentDescriptor& d : published) segments[d.id()] = d;
  OffsetMap next = initial;
  int64_t last_id = -1;
  std::set<std::string> names;
  // key -> (partition, offset) of every valid produced record in range.
  std::map<std::string, std::pair<int32_t, int64_t>> expected;
  for (const auto& [p, start] : initial) {
    const auto it = produced.find(p);
    const int64_t end = final.at(p);
    if (it == produced.end() || end > static_cast<int64_t>(it->second.size())) {
      return absl::InternalError(
          absl::StrCat("partition ", p, ": final offset ", end, " is past what was produced"));
    }
    for (int64_t o = start; o < end; ++o) {
      const std::string& value = it->second[o];
      if (IsValidRow(value, min_time_ms, max_time_ms)) expected[KeyOf(value)] = {p, o};
    }
  }
  std::map<std::string, std::string> seen;  // key -> sequence that holds it
  for (const v1::CommittedSequence& c : log) {
    const std::string& name = c.sequence_name();
    if (!names.insert(name).second) return absl::InternalError(name + " committed twice");
    if (!base_sequence_name.empty()) {
      int64_t id;
      if (!absl::StartsWith(name, base_sequence_name + "_") ||
          !absl::SimpleAtoi(name.substr(base_sequence_name.size() + 1), &id) || id <= last_id) {
        return absl::InternalError(absl::StrCat(name, " is out of order (after ", last_id, ")"));
      }
      last_id = id;
    }
    const OffsetMap start = FromProto(c.start_offsets());
    const OffsetMap end = FromProto(c.end_offsets());
    if (start != next) {
      return absl::InternalError(absl::StrCat(name, " starts at ", FormatOffsets(start),
                                              ", expected ", FormatOffsets(next)));
    }
    std::map<int32_t, int64_t> valid_rows;
    for (const auto& [p, s] : start) {
      const std::vector<std::string>& values = produced.at(p);
      for (int64_t o = s; o < end.at(p); ++o) {
        if (IsValidRow(values[o], min_time_ms, max_time_ms)) ++valid_rows[p];
      }
    }
    for (const v1::PartitionRange& r : c.partition_stats()) {
      const int64_t size = r.end_offset() - r.start_offset();
      if (r.start_offset() != start.at(r.partition()) || r.end_offset() != end.at(r.partition())) {
        return absl::InternalError(absl::StrCat(name, ": stats range of partition ", r.partition(),
                                                " differs from the sequence"));
      }
      if (r.rows() + r.unparseable() + r.thrown_away() != size) {
        return absl::InternalError(absl::StrCat(
            name, " partition ", r.partition(), ": rows ", r.rows(), " + unparseable ",
            r.unparseable(), " + thrown away ", r.thrown_away(), " != ", size, " records"));
      }
      if (r.rows() != valid_rows[r.partition()]) {
        return absl::InternalError(absl::StrCat(name, " partition ", r.partition(), ": ", r.rows(),
                                                " rows, expected ", valid_rows[r.partition()]));
      }
    }
    std::map<int32_t, int64_t> provenance_rows;
    for (const std::string& id_text : c.segment_ids()) {
      const auto d = segments.find(id_text);
      if (d == segments.end()) return absl::InternalError(id_text + " is not published");
      auto path = deep_storage->LocalPathForRead(d->second.path(), "/tmp");
      if (!path.ok()) return path.status();
      auto reader = segment::SegmentReader::Open(*path);
      if (!reader.ok()) return reader.status();
      if (absl::Status s = (*reader)->Verify(); !s.ok()) return s;
      const segment::FileHeader& header = (*reader)->header();
      if (header.metadata.segment_id != id_text ||
          static_cast<int64_t>((*reader)->num_rows()) != d->second.num_rows() ||
          (*reader)->checksum() != d->second.checksum() ||
          static_cast<int64_t>((*reader)->file_size()) != d->second.size_bytes()) {
        return absl::InternalError(id_text + ": file does not match its descriptor");
      }
      for (const v1::PartitionRange& r : d->second.provenance().ranges()) {
        provenance_rows[r.partition()] += r.rows();
      }
      const int key_dim = (*reader)->DimensionIndex("key");
      const int count_metric = (*reader)->MetricIndex("count");
      if (key_dim < 0 || count_metric < 0) {
        return absl::InternalError(id_text + ": no \"key\" dimension or \"count\" metric");
      }
      segment::RowCursor cursor(reader->get());
      while (true) {
        absl::StatusOr<bool> more = cursor.Next();
        if (!more.ok()) return more.status();
        if (!*more) break;
        const std::optional<absl::string_view> value = cursor.dimension(key_dim);
        const std::string key = value ? std::string(*value) : "";
        // Rollup would fold a record ingested twice into one row of count 2.
        if (cursor.long_metric(count_metric) != 1) {
          return absl::InternalError(absl::StrCat("record ", key, " in ", name, " has count ",
                                                  cursor.long_metric(count_metric)));
        }
        if (!seen.emplace(key, name).second) {
          return absl::InternalError(
              absl::StrCat("record ", key, " is in ", seen[key], " and ", name));
        }
        const auto e = expected.find(key);
        if (e == expected.end()) {
          return absl::InternalError(
              absl::StrCat("record ", key, " in ", name, " was not expected"));
        }
        const auto [p, o] = e->second;
        if (o < start.at(p) || o >= end.at(p)) {
          return absl::InternalError(absl::StrCat("record ", key, " (offset ", o, ") is in ", name,
                                                  " whose range is ", FormatOffsets(start),
                                                  " -> ", FormatOffsets(end)));
        }
      }
    }
    for (const auto& [p, rows] : valid_rows) {
      if (provenance_rows[p] != rows) {
        return absl::InternalError(absl::StrCat(name, " partition ", p, ": provenance says ",
                                                provenance_rows[p], " rows, expected ", rows));
      }
    }
    next = end;
  }
  if (next != final) {
    return absl::InternalError(absl::StrCat("committed up to ", FormatOffsets(next),
                                            ", expected ", FormatOffsets(final)));
  }
  if (seen.size() != expected.size()) {
    for (const auto& [key, where] : expected) {
      if (seen.count(key) == 0) {
        return absl::InternalError(absl::StrCat("record ", key, " (partition ", where.first,
                                                " offset ", where.second, ") is lost"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace sluice::testing
