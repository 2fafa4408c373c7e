#include "tools/cluster/wiki_datasource.h"

#include <grpcpp/grpcpp.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/grpc_status.h"

namespace sluice {
namespace cluster {
namespace {

constexpr absl::Duration kRpcTimeout = absl::Seconds(10);

std::string FormatOffsets(const std::map<int32_t, int64_t>& offsets) {
  std::vector<std::string> parts;
  for (const auto& [p, o] : offsets) parts.push_back(absl::StrCat(p, ":", o));
  return absl::StrJoin(parts, " ");
}

}  // namespace

v1::SupervisorSpec WikiSpec(const WikiSpecOptions& options) {
  v1::SupervisorSpec spec;
  spec.set_datasource(options.datasource);
  v1::IoConfig* io = spec.mutable_io_config();
  io->set_topic(options.topic);
  (*io->mutable_consumer_properties())["bootstrap.servers"] = options.bootstrap_servers;
  io->set_task_count(options.task_count);
  io->set_replicas(options.replicas);
  io->set_task_duration(options.task_duration);
  io->set_period(options.period);
  io->set_start_delay(options.start_delay);
  io->set_use_earliest_offset(true);
  v1::DataSchema* schema = spec.mutable_data_schema();
  schema->mutable_timestamp_spec()->set_column("timestamp");
  schema->mutable_timestamp_spec()->set_format("iso");
  for (const char* d : {"channel", "page", "user", "namespace", "countryName", "isRobot"}) {
    schema->mutable_dimensions_spec()->add_dimensions(d);
  }
  auto metric = [schema](const char* type, const char* name) {
    v1::MetricSpec* m = schema->add_metrics_spec();
    m->set_type(type);
    m->set_name(name);
    if (std::string(type) != "count") m->set_field_name(name);
  };
  metric("count", "count");
  metric("longSum", "added");
  metric("longSum", "deleted");
  metric("doubleSum", "delta");
  schema->mutable_granularity_spec()->set_segment_granularity(options.segment_granularity);
  schema->mutable_granularity_spec()->set_query_granularity(options.query_granularity);
  schema->mutable_granularity_spec()->set_rollup(options.rollup);
  spec.mutable_tuning_config()->set_max_rows_per_segment(options.max_rows_per_segment);
  spec.mutable_tuning_config()->set_max_rows_in_memory(options.max_rows_in_memory);
  if (options.iceberg_table) spec.mutable_iceberg_table();  // the defaults
  return spec;
}

absl::Status SubmitSpec(v1::SupervisorService::StubInterface& stub,
                        const v1::SupervisorSpec& spec) {
  v1::SubmitSupervisorRequest request;
  *request.mutable_spec() = spec;
  v1::SubmitSupervisorResponse response;
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + kRpcTimeout));
  const absl::Status status = FromGrpcStatus(stub.SubmitSupervisor(&context, request, &response));
  if (status.ok()) return status;
  return absl::Status(status.code(),
                      absl::StrCat("submit ", spec.datasource(), ": ", status.message()));
}

absl::StatusOr<v1::SupervisorStatus> GetStatus(v1::SupervisorService::StubInterface& stub,
                                               const std::string& datasource) {
  v1::GetSupervisorStatusRequest ref;
  ref.set_datasource(datasource);
  v1::GetSupervisorStatusResponse response;
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + kRpcTimeout));
  const absl::Status s = FromGrpcStatus(stub.GetSupervisorStatus(&context, ref, &response));
  if (!s.ok()) {
    return absl::Status(s.code(), absl::StrCat("status of ", datasource, ": ", s.message()));
  }
  return std::move(*response.mutable_status());
}

absl::Status WaitUntilCommitted(
    v1::SupervisorService::StubInterface& stub, const std::string& datasource,
    const std::map<int32_t, int64_t>& end_offsets, absl::Duration timeout,
    const std::function<absl::Status(const v1::SupervisorStatus&)>& on_poll,
    absl::Duration poll_interval) {
  const absl::Time deadline = absl::Now() + timeout;
  std::map<int32_t, int64_t> committed;
  std::string last_error;
  while (true) {
    absl::StatusOr<v1::SupervisorStatus> status = GetStatus(stub, datasource);
    if (status.ok()) {
      if (on_poll) {
        if (absl::Status s = on_poll(*status); !s.ok()) return s;
      }
      committed.clear();
      bool done = true;
      for (const auto& [p, end] : end_offsets) {
        auto it = status->committed_offsets().find(p);
        const int64_t c = it == status->committed_offsets().end() ? 0 : it->second;
        committed[p] = c;
        done &= c >= end;
      }
      if (done) return absl::OkStatus();
    } else {
      last_error = std::string(status.status().message());  // e.g. restarting: retry
    }
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          datasource, ": committed offsets ", FormatOffsets(committed), " did not reach ",
          FormatOffsets(end_offsets), " within ", absl::FormatDuration(timeout),
          last_error.empty() ? "" : absl::StrCat(" (last error: ", last_error, ")")));
    }
    absl::SleepFor(poll_interval);
  }
}

}  // namespace cluster
}  // namespace sluice
