// SpecLifecycle: submit, suspend, resume, reset, reset offsets, handoff and
// terminate of a datasource (spec_lifecycle.h).
#include "supervisor/spec_lifecycle.h"

#include <optional>
#include <vector>

#include <glog/logging.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/names.h"
#include "common/request_limits.h"
#include "common/spec_secrets.h"
#include "common/status_macros.h"
#include "common/stream_partitions.h"
#include "supervisor/spec_admission.h"
#include "supervisor/spec_changes.h"
#include "supervisor/supervisor_reads.h"

namespace sluice::supervisor {

SpecLifecycle::SpecLifecycle(SpecLifecycleOptions options) : options_(std::move(options)) {}

absl::StatusOr<v1::SubmitSupervisorResponse> SpecLifecycle::Submit(
    const v1::SupervisorSpec& submitted) {
  SLUICE_RETURN_IF_ERROR(ValidateDatasource(submitted.datasource()));
  DatasourceAdminLocks::Lock admin(&admin_locks_, submitted.datasource());
  absl::StatusOr<SpecRecord> stored = ReadLatestSpec(*options_.store, submitted.datasource());
  if (!stored.ok() && !absl::IsNotFound(stored.status())) return stored.status();
  SLUICE_ASSIGN_OR_RETURN(
      v1::SupervisorSpec spec,
      AdmitSpec(submitted, stored.ok() && !stored->terminated ? &stored->spec : nullptr,
                options_.kafka_policy));
  const std::string& ds = spec.datasource();
  RunningSupervisors& supervisors = *options_.supervisors;
  std::shared_ptr<StreamSupervisor> running = supervisors.Running(ds).value_or(nullptr);
  std::optional<SpecRecord> latest;
  std::optional<std::string> commit_topic;
  OffsetMap committed;
  SLUICE_RETURN_IF_ERROR(options_.store->InTransaction([&](StoreTxn& txn) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(latest, txn.LatestSpec(ds));
    SLUICE_ASSIGN_OR_RETURN(commit_topic, txn.CommitTopic(ds));
    SLUICE_ASSIGN_OR_RETURN(committed, txn.CommittedOffsets(ds));
    return absl::OkStatus();
  }));
  v1::SubmitSupervisorResponse response;
  const bool live = latest && !latest->terminated;
  const std::vector<std::string> changed =
      live ? ChangedSpecFields(latest->spec, spec) : std::vector<std::string>();
  for (const std::string& field : changed) response.add_changed_fields(field);
  if (live && changed.empty() && running) {
    *response.mutable_spec() = RedactedSpec(spec);
    response.set_version(latest->version);
    response.set_unchanged(true);
    response.set_update(v1::SPEC_UPDATE_UNCHANGED);
    return response;
  }
  SLUICE_RETURN_IF_ERROR(CheckTopicSwitch(ds, commit_topic, committed, StreamNameOf(spec.io_config())));
  int64_t version = 0;
  SLUICE_RETURN_IF_ERROR(options_.store->InTransaction([&](StoreTxn& txn) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(version, txn.InsertSpec(ds, spec, false, options_.clock->NowMs()));
    return absl::OkStatus();
  }));
  SpecRecord record;
  record.datasource = ds;
  record.version = version;
  record.created_at_ms = options_.clock->NowMs();
  record.spec = spec;
  v1::SpecUpdate update = v1::SPEC_UPDATE_CREATED;
  if (running && live && AppliesLive(changed)) {
    running->UpdateSpec(record);
    update = v1::SPEC_UPDATE_APPLIED_LIVE;
  } else {
    if (running) {
      LOG(INFO) << "[supervisor " << ds << "] spec version " << version
                << " replaces the running one (" << absl::StrJoin(changed, ", ")
                << " changed): finishing its groups first";
      supervisors.Take(ds)->StopGracefully();
      running.reset();
      update = v1::SPEC_UPDATE_RESTARTED;
    }
    SLUICE_RETURN_IF_ERROR(supervisors.Start(record));
  }
  LOG(INFO) << "[supervisor " << ds << "] spec version " << version << " submitted ("
            << StreamNameOf(spec.io_config()) << (spec.suspended() ? ", suspended" : "")
            << (update == v1::SPEC_UPDATE_APPLIED_LIVE
                    ? absl::StrCat(", applied live: ", absl::StrJoin(changed, ", "))
                    : "")
            << ")";
  *response.mutable_spec() = RedactedSpec(spec);
  response.set_version(version);
  response.set_replaced(update == v1::SPEC_UPDATE_RESTARTED);
  response.set_update(update);
  return response;
}

absl::StatusOr<v1::SubmitSupervisorResponse> SpecLifecycle::Submit(
    const v1::SubmitSupervisorRequest& request) {
  SLUICE_ASSIGN_OR_RETURN(SubmittedSpec submitted, SpecOfSubmitRequest(request));
  SLUICE_ASSIGN_OR_RETURN(v1::SubmitSupervisorResponse response, Submit(submitted.spec));
  if (!submitted.warnings.empty()) {
    LOG(INFO) << "[supervisor " << submitted.spec.datasource() << "] Druid spec taken with "
              << submitted.warnings.size() << " warning(s): " << submitted.warnings.front()
              << (submitted.warnings.size() > 1 ? ", ..." : "");
  }
  for (std::string& warning : submitted.warnings) response.add_warnings(std::move(warning));
  return response;
}

absl::StatusOr<v1::SupervisorSummary> SpecLifecycle::SetSuspended(const std::string& datasource,
                                                                  bool suspended) {
  DatasourceAdminLocks::Lock admin(&admin_locks_, datasource);
  SLUICE_ASSIGN_OR_RETURN(auto supervisor, options_.supervisors->Running(datasource));
  SLUICE_ASSIGN_OR_RETURN(SpecRecord latest, ReadLatestSpec(*options_.store, datasource));
  if (latest.spec.suspended() != suspended) {
    latest.spec.set_suspended(suspended);
    SLUICE_RETURN_IF_ERROR(options_.store->InTransaction([&](StoreTxn& txn) -> absl::Status {
      SLUICE_ASSIGN_OR_RETURN(
          latest.version, txn.InsertSpec(datasource, latest.spec, false, options_.clock->NowMs()));
      return absl::OkStatus();
    }));
    latest.created_at_ms = options_.clock->NowMs();
    supervisor->UpdateSpec(latest);
  }
  SLUICE_RETURN_IF_ERROR(supervisor->Sync(options_.loop_timeout));
  return supervisor->Summary();
}

absl::StatusOr<v1::SupervisorSummary> SpecLifecycle::Suspend(const std::string& datasource) {
  return SetSuspended(datasource, true);
}

absl::StatusOr<v1::SupervisorSummary> SpecLifecycle::Resume(const std::string& datasource) {
  return SetSuspended(datasource, false);
}

absl::StatusOr<v1::SupervisorSummary> SpecLifecycle::Reset(const std::string& datasource) {
  DatasourceAdminLocks::Lock admin(&admin_locks_, datasource);
  SLUICE_ASSIGN_OR_RETURN(auto supervisor, options_.supervisors->Running(datasource));
  supervisor->Reset();
  SLUICE_RETURN_IF_ERROR(supervisor->Sync(options_.loop_timeout));
  return supervisor->Summary();
}

absl::StatusOr<v1::SupervisorSummary> SpecLifecycle::ResetOffsets(
    const v1::ResetOffsetsRequest& request) {
  // Negative partitions and offsets are beyond the request's bounds (checked
  // here too: the core does not rely on the gRPC layer for it).
  SLUICE_RETURN_IF_ERROR(CheckMessageLimits(request));
  if (request.offsets().empty()) return absl::InvalidArgumentError("offsets is empty");
  DatasourceAdminLocks::Lock admin(&admin_locks_, request.datasource());
  SLUICE_ASSIGN_OR_RETURN(auto supervisor, options_.supervisors->Running(request.datasource()));
  const v1::SupervisorStatus status = supervisor->Status();
  SLUICE_RETURN_IF_ERROR(CheckNoEndMarker(status, request.offsets()));
  SLUICE_RETURN_IF_ERROR(CheckPartitionsExist(status, request.offsets()));
  supervisor->ResetOffsets(FromProto(request.offsets()));
  SLUICE_RETURN_IF_ERROR(supervisor->Sync(options_.loop_timeout));
  return supervisor->Summary();
}

absl::StatusOr<v1::HandoffTaskGroupsResponse> SpecLifecycle::Handoff(
    const v1::HandoffTaskGroupsRequest& request) {
  SLUICE_RETURN_IF_ERROR(CheckMessageLimits(request));
  SLUICE_ASSIGN_OR_RETURN(auto supervisor, options_.supervisors->Running(request.datasource()));
  const std::vector<int32_t> groups(request.group_ids().begin(), request.group_ids().end());
  return supervisor->Handoff(groups, options_.loop_timeout);
}

absl::StatusOr<v1::SupervisorSummary> SpecLifecycle::Terminate(const std::string& datasource) {
  DatasourceAdminLocks::Lock admin(&admin_locks_, datasource);
  SLUICE_ASSIGN_OR_RETURN(auto running, options_.supervisors->Running(datasource));
  SLUICE_ASSIGN_OR_RETURN(SpecRecord latest, ReadLatestSpec(*options_.store, datasource));
  int64_t version = 0;
  SLUICE_RETURN_IF_ERROR(options_.store->InTransaction([&](StoreTxn& txn) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(version,
                            txn.InsertSpec(datasource, latest.spec, true, options_.clock->NowMs()));
    return absl::OkStatus();
  }));
  v1::SupervisorSummary summary = running->Summary();
  running.reset();
  options_.supervisors->Take(datasource)->StopGracefully();
  LOG(INFO) << "[supervisor " << datasource << "] terminated (tombstone version " << version
            << "); its groups finish publishing on their own";
  summary.set_state(v1::SUPERVISOR_STATE_STOPPING);
  summary.set_spec_version(version);
  summary.set_message("terminated: reading groups finalized, they publish what they read");
  return summary;
}

}  // namespace sluice::supervisor
