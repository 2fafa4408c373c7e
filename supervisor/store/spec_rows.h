// The datasources, their specs with history and tombstones, and the state
// kept per datasource besides its spec: idleness (ioConfig.idleConfig), the
// autoscaler's task count and decision log (ioConfig.autoScalerConfig), and
// the stream partition ids of a topicPattern (tables datasources with its
// idle and task-count columns, specs, scaling_decisions, stream_partitions).
// Typed statements over one open transaction; StoreTxn (metadata_store.h)
// offers them.
#ifndef SLUICE_SUPERVISOR_STORE_SPEC_ROWS_H_
#define SLUICE_SUPERVISOR_STORE_SPEC_ROWS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sluice/v1/common.pb.h"
#include "sluice/v1/spec.pb.h"
#include "sluice/v1/supervisor_service.pb.h"
#include "supervisor/idle_tracker.h"
#include "supervisor/store/sql.h"

namespace sluice::supervisor {

struct SpecRecord {
  std::string datasource;
  int64_t version = 0;
  int64_t created_at_ms = 0;
  v1::SupervisorSpec spec;
  bool terminated = false;
};

class SpecRows {
 public:
  explicit SpecRows(SqlConnection* db) : db_(db) {}

  // ---- datasources and specs ----
  absl::StatusOr<bool> DatasourceExists(const std::string& datasource);
  absl::Status EnsureDatasource(const std::string& datasource, int64_t now_ms);
  // Appends a spec version (1 for the first); returns it.
  absl::StatusOr<int64_t> InsertSpec(const std::string& datasource, const v1::SupervisorSpec& spec,
                                     bool terminated, int64_t now_ms);
  absl::StatusOr<std::optional<SpecRecord>> LatestSpec(const std::string& datasource);
  // Newest first.
  absl::StatusOr<std::vector<SpecRecord>> SpecHistory(const std::string& datasource);
  // The latest spec of every datasource whose latest version is not a tombstone.
  absl::StatusOr<std::vector<SpecRecord>> ActiveSpecs();

  // ---- idleness (ioConfig.idleConfig) ----
  // The stored idle state; nullopt: awake (or never seen).
  absl::StatusOr<std::optional<IdleState>> IdleStateOf(const std::string& datasource);
  // Stores `state` (null: awake).
  absl::Status SetIdleState(const std::string& datasource, const IdleState* state, int64_t now_ms);

  // ---- autoscaling (ioConfig.autoScalerConfig) ----
  // The number of reading groups the autoscaler last applied; nullopt:
  // none yet (or never seen).
  absl::StatusOr<std::optional<int32_t>> AutoscaledTaskCount(const std::string& datasource);
  // Records an applied decision (its decision_id is assigned, returned) and
  // makes its to_task_count the stored count.
  absl::StatusOr<int64_t> RecordScaling(const std::string& datasource,
                                        const v1::ScalingDecision& decision);
  // Every applied decision of the datasource, oldest first.
  absl::StatusOr<std::vector<v1::ScalingDecision>> ScalingDecisions(const std::string& datasource);
  // Forgets the stored count (the autoscaler was turned off): the next one
  // starts from taskCountStart again. The decisions stay in the log.
  absl::Status ClearAutoscaledTaskCount(const std::string& datasource);

  // ---- stream partitions (ioConfig.topicPattern) ----
  // Every stream partition id given for the datasource, by id.
  absl::StatusOr<std::vector<v1::StreamPartition>> StreamPartitions(const std::string& datasource);
  // Stores newly given ids. ALREADY_EXISTS when an id or a (topic,
  // partition) is stored already (the caller is out of date: ids are only
  // ever added).
  absl::Status AddStreamPartitions(const std::string& datasource,
                                   const std::vector<v1::StreamPartition>& added, int64_t now_ms);

 private:
  SqlConnection* db_;
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_STORE_SPEC_ROWS_H_
