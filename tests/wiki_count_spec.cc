#include "tests/wiki_count_spec.h"

#include <grpcpp/grpcpp.h>

namespace sluice::testing {

v1::SupervisorSpec WikiCountSpec(const WikiCountSpecOptions& options) {
  v1::SupervisorSpec spec;
  spec.set_datasource(options.datasource);
  v1::IoConfig* io = spec.mutable_io_config();
  io->set_topic("wiki");
  (*io->mutable_consumer_properties())["bootstrap.servers"] = options.bootstrap_servers;
  io->set_task_count(options.task_count);
  io->set_replicas(options.replicas);
  io->set_task_duration("PT1H");
  io->set_start_delay("PT0.05S");
  io->set_period(options.period);
  io->set_use_earliest_offset(true);
  io->set_poll_timeout("PT0.05S");
  spec.mutable_data_schema()->mutable_timestamp_spec()->set_format("millis");
  v1::MetricSpec* count = spec.mutable_data_schema()->add_metrics_spec();
  count->set_type("count");
  count->set_name("count");
  return spec;
}

absl::Status SubmitSpec(v1::SupervisorService::Stub* stub, const v1::SupervisorSpec& spec) {
  v1::SubmitSupervisorRequest request;
  *request.mutable_spec() = spec;
  v1::SubmitSupervisorResponse response;
  grpc::ClientContext ctx;
  const grpc::Status status = stub->SubmitSupervisor(&ctx, request, &response);
  return status.ok() ? absl::OkStatus() : absl::InternalError(status.error_message());
}

}  // namespace sluice::testing
