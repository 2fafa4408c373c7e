// The exactly-once audit of a datasource against a running system: reads the
// commit log and the used segments from the supervisor, counts the records
// of every committed range in Kafka (KafkaRecordCounter), verifies every
// segment file in deep storage (SegmentFileVerifier), and optionally checks
// the "total" view: everything produced is in the committed ranges. For a
// datasource with an Iceberg table (its status names the table's
// metadata_location), it also audits the table from its files
// (table_audit.h) with the same Kafka counts; the overall PASS/FAIL
// includes it. `sluicectl verify`, the demo and the fault suite run it.
//
//   LiveAuditOptions options;
//   options.datasource = "wiki";
//   options.expect_records = 300000;     // what the producer reported
//   SLUICE_ASSIGN_OR_RETURN(LiveAuditResult result, RunLiveAudit(*stub, options));
//   std::cout << result.ToString();      // ends with PASS or FAIL
//   if (!result.report.ok()) ...
#ifndef SLUICE_TOOLS_AUDIT_LIVE_AUDIT_H_
#define SLUICE_TOOLS_AUDIT_LIVE_AUDIT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/kafka/consumer_settings.h"
#include "common/kafka/property_policy.h"
#include "sluice/v1/supervisor_service.grpc.pb.h"
#include "tools/audit/exactly_once_audit.h"
#include "tools/audit/segment_file_verifier.h"
#include "tools/audit/table_audit.h"

namespace sluice::audit {

struct LiveAuditOptions {
  std::string datasource;
  // Kafka to count records in. Empty: the spec's consumer properties
  // (GetSupervisor), whose bootstrap.servers this overrides when set (e.g.
  // when the audit runs where the cluster is known by another address).
  std::string bootstrap_servers;
  // Consumer defaults for the counter's reads.
  kafka::ClusterKind kafka_cluster = kafka::ClusterKind::kKafka;
  // Set: the spec's ${env:} / ${file:} secret references are resolved under
  // this policy (the operator's --kafka_files_dir and
  // --kafka_secret_destinations_file, as on the workers), so the counter
  // logs in to Kafka as the datasource does. Unset: references are passed
  // on as they are (a secured listener then refuses the counter).
  std::optional<kafka::PropertyPolicyOptions> secret_policy;
  // The total view, when >= 0: records produced to the topic, which must all
  // be in the committed ranges (so: everything produced is committed, and
  // nothing else is). Per partition when the map is not empty.
  int64_t expect_records = -1;
  std::map<int32_t, int64_t> expect_records_by_partition;
  // When >= 0: the malformed records produced, which must all be counted as
  // unparseable.
  int64_t expect_unparseable = -1;
  // Deadline of each supervisor call; how long a Kafka read may stall.
  absl::Duration rpc_timeout = absl::Seconds(30);
  absl::Duration kafka_idle_timeout = absl::Seconds(30);
  // How segment files (and the Iceberg table's files) are read: file:// in
  // place; other URIs (s3://) through the deep storage given here.
  SegmentFileVerifierOptions segment_files;
};

// The audit's inputs from a running supervisor, as one consistent snapshot
// of a datasource that may still be publishing: segments are inserted in the
// same transaction as their commit log entry, so a segment list taken between
// two equal commit logs matches them. UNAVAILABLE if the datasource kept
// committing through every attempt; a failed call as its status.
struct AuditInputs {
  v1::GetCommitLogResponse commit_log;
  // Every segment the supervisor listed, used or not.
  v1::ListSegmentsResponse segments;
  // The used ones among them.
  std::vector<v1::SegmentDescriptor> used_segments;
  // The supervisor's status (its Iceberg table's metadata_location, read in
  // the same store as the commit log); absent for a datasource without a
  // supervisor (terminated) or a supervisor that does not answer it.
  std::optional<v1::SupervisorStatus> status;
};
absl::StatusOr<AuditInputs> FetchAuditInputs(v1::SupervisorService::StubInterface& stub,
                                             const std::string& datasource,
                                             absl::Duration rpc_timeout);

struct LiveAuditResult {
  AuditReport report;
  // The Iceberg table's audit, when the datasource has a table; its
  // failures are also one discrepancy of `report`.
  std::optional<TableAuditReport> table;
  std::string topic;
  std::string bootstrap_servers;
  // Records read back from Kafka and how long the whole audit took.
  int64_t records_read = 0;
  absl::Duration elapsed;

  // "verify wiki: topic wiki at HOST:PORT, ...", the table's audit if any,
  // then the report (PASS/FAIL, overall).
  std::string ToString() const;
};

// Runs the audit. Errors only when it cannot run at all: a supervisor call
// fails (its status, with what was asked), or no Kafka address is known
// (FAILED_PRECONDITION). Everything wrong with the data is a discrepancy in
// the report.
absl::StatusOr<LiveAuditResult> RunLiveAudit(v1::SupervisorService::StubInterface& stub,
                                             const LiveAuditOptions& options);

}  // namespace sluice::audit

#endif  // SLUICE_TOOLS_AUDIT_LIVE_AUDIT_H_
