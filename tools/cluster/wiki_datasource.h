// A datasource over wiki-edit-like records (tools/produce/wiki_rows.h, produced by
// tools/produce): its spec, and waiting until what was produced is committed.
// Shared by the demo, `sluicectl verify`'s end-to-end test, the fault suite
// and the benchmark.
//
//   WikiSpecOptions spec;
//   spec.bootstrap_servers = cluster->bootstrap_servers();
//   spec.replicas = 2;
//   SLUICE_RETURN_IF_ERROR(SubmitSpec(*stub, WikiSpec(spec)));
//   SLUICE_RETURN_IF_ERROR(WaitUntilCommitted(*stub, "wiki", produced_end_offsets,
//                                             absl::Minutes(2)));
#ifndef SLUICE_TOOLS_CLUSTER_WIKI_DATASOURCE_H_
#define SLUICE_TOOLS_CLUSTER_WIKI_DATASOURCE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "sluice/v1/supervisor_service.grpc.pb.h"

namespace sluice {
namespace cluster {

struct WikiSpecOptions {
  std::string datasource = "wiki";
  std::string topic = "wiki";
  std::string bootstrap_servers;
  int task_count = 1;
  int replicas = 1;
  // ISO-8601 durations.
  std::string task_duration = "PT1H";
  std::string period = "PT0.5S";
  std::string start_delay = "PT0.1S";
  int64_t max_rows_per_segment = 5000000;
  int64_t max_rows_in_memory = 150000;
  std::string segment_granularity = "HOUR";
  std::string query_granularity = "NONE";
  bool rollup = true;
  // Also an Iceberg table (spec "icebergTable": {}: table sluice.<datasource>
  // in the store's catalog, next to the segments; docs/iceberg.md).
  bool iceberg_table = false;
};

// The spec: the six wiki dimensions, count + longSum added/deleted +
// doubleSum delta, ISO timestamps, earliest offsets first, the dev broker's
// consumer settings left to the workers.
v1::SupervisorSpec WikiSpec(const WikiSpecOptions& options);

// SubmitSupervisor; the gRPC error as a status.
absl::Status SubmitSpec(v1::SupervisorService::StubInterface& stub, const v1::SupervisorSpec& spec);
absl::StatusOr<v1::SupervisorStatus> GetStatus(v1::SupervisorService::StubInterface& stub,
                                               const std::string& datasource);

// Polls GetSupervisorStatus until the committed offset of every partition in
// `end_offsets` reached it (everything before it is published). Calls
// `on_poll` with each status (e.g. to print progress; returning a non-OK
// status stops the wait with it). DEADLINE_EXCEEDED with the committed
// offsets after `timeout`.
absl::Status WaitUntilCommitted(
    v1::SupervisorService::StubInterface& stub, const std::string& datasource,
    const std::map<int32_t, int64_t>& end_offsets, absl::Duration timeout,
    const std::function<absl::Status(const v1::SupervisorStatus&)>& on_poll = nullptr,
    absl::Duration poll_interval = absl::Milliseconds(250));

}  // namespace cluster
}  // namespace sluice

#endif  // SLUICE_TOOLS_CLUSTER_WIKI_DATASOURCE_H_
