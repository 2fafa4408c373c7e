#include "tools/audit/live_audit.h"

#include <google/protobuf/util/message_differencer.h>
#include <grpcpp/grpcpp.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "common/grpc_status.h"
#include "common/kafka/property_policy.h"
#include "common/segment/row_parser.h"
#include "common/segment/row_transform.h"
#include "common/segment/schema_proto.h"
#include "common/status_macros.h"
#include "task/header_filter.h"
#include "task/kafka_consumer.h"
#include "task/record_envelope_builder.h"
#include "tools/audit/kafka_record_counter.h"
#include "tools/audit/segment_file_verifier.h"

namespace sluice::audit {
namespace {

// More than any datasource lists in one call; a full page means "maybe more".
constexpr int32_t kSegmentLimit = 1000000;
constexpr int kSnapshotAttempts = 20;

// Parses a record as the task's read loop does (ReadLoop::ProcessRecord in
// task/read_loop.cc): with the spec's kafka input format, the value with the
// record's envelope (key, headers, Kafka timestamp, topic... as columns, so
// that a row time taken from kafka.timestamp is found); with a header
// filter, the headers first: a record it skips is thrown away (not
// unparseable), a header that does not decode is unparseable (BAD_HEADER).
// One per counter (one thread): it reuses its buffers.
class RecordReparser {
 public:
  // nullptr when the spec's parser, input format or header filter does not
  // compile (the records are then not re-parsed).
  static std::unique_ptr<RecordReparser> Create(const v1::SupervisorSpec& spec) {
    absl::StatusOr<segment::Schema> schema = segment::SchemaFromProto(spec.data_schema());
    if (!schema.ok()) return nullptr;
    // The transformSpec too: what it derives decides whether a record parses.
    absl::StatusOr<segment::RowTransform> transform = segment::RowTransform::Create(
        spec.data_schema().transform_spec(), "dataSchema.transformSpec", schema->timestamp_column);
    if (!transform.ok()) return nullptr;
    absl::StatusOr<std::unique_ptr<segment::RowParser>> parser =
        segment::RowParser::Create(*schema, *transform);
    if (!parser.ok()) return nullptr;
    std::unique_ptr<RecordReparser> reparser(new RecordReparser(*std::move(parser)));
    const v1::IoConfig& io = spec.io_config();
    // As the task worker: its TaskSpec carries the ioConfig's input format
    // and header filter (supervisor/task_actions.cc), read_loop.cc uses them.
    if (io.input_format().type() == "kafka") {
      absl::StatusOr<task::RecordEnvelopeBuilder> builder =
          task::RecordEnvelopeBuilder::Create(io.input_format());
      if (!builder.ok()) return nullptr;
      reparser->envelope_builder_.emplace(*std::move(builder));
    }
    if (io.has_header_based_filter_config()) {
      absl::StatusOr<task::HeaderFilter> filter =
          task::HeaderFilter::Create(io.header_based_filter_config());
      if (!filter.ok()) return nullptr;
      reparser->header_filter_.emplace(*std::move(filter));
    }
    return reparser;
  }

  // Whether Parses needs the record's envelope.
  bool needs_envelope() const { return envelope_builder_ || header_filter_; }

  // False: the task counted the record as unparseable.
  bool Parses(const task::KafkaRecord& record, const task::KafkaEnvelope& meta) {
    if (!needs_envelope()) return parser_->Parse(record.value, &row_).ok();
    if (header_filter_) {
      const task::HeaderFilter::Outcome outcome = header_filter_->Evaluate(meta, &error_);
      if (outcome == task::HeaderFilter::Outcome::kSkip) return true;  // thrown away
      if (outcome == task::HeaderFilter::Outcome::kBadHeader) return false;
    }
    if (!envelope_builder_) return parser_->Parse(record.value, &row_).ok();
    const segment::RecordEnvelope* envelope = envelope_builder_->Build(record, meta, &error_);
    return envelope != nullptr && parser_->Parse(record.value, *envelope, &row_).ok();
  }

 private:
  explicit RecordReparser(std::unique_ptr<segment::RowParser> parser)
      : parser_(std::move(parser)) {}

  std::unique_ptr<segment::RowParser> parser_;
  std::optional<task::RecordEnvelopeBuilder> envelope_builder_;
  std::optional<task::HeaderFilter> header_filter_;
  segment::InputRow row_;
  std::string error_;
};

template <typename Request, typename Response>
absl::Status Call(grpc::Status (v1::SupervisorService::StubInterface::*method)(grpc::ClientContext*,
                                                                               const Request&,
                                                                               Response*),
                  v1::SupervisorService::StubInterface& stub, absl::Duration timeout,
                  absl::string_view what, const Request& request, Response* response) {
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  const absl::Status status = FromGrpcStatus((stub.*method)(&context, request, response));
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat(what, ": ", status.message()));
}

}  // namespace

absl::StatusOr<AuditInputs> FetchAuditInputs(v1::SupervisorService::StubInterface& stub,
                                             const std::string& datasource,
                                             absl::Duration rpc_timeout) {
  v1::GetCommitLogRequest ref;
  ref.set_datasource(datasource);
  for (int attempt = 1;; ++attempt) {
    AuditInputs inputs;
    SLUICE_RETURN_IF_ERROR(Call(&v1::SupervisorService::StubInterface::GetCommitLog, stub,
                                rpc_timeout, "GetCommitLog", ref, &inputs.commit_log));
    v1::ListSegmentsRequest list;
    list.set_datasource(datasource);
    list.set_limit(kSegmentLimit);
    // Unused ones too: the table audit compares every append snapshot with
    // the segments its sequence published, also those compaction replaced.
    list.set_include_unused(true);
    SLUICE_RETURN_IF_ERROR(Call(&v1::SupervisorService::StubInterface::ListSegments, stub,
                                rpc_timeout, "ListSegments", list, &inputs.segments));
    // Between the two equal commit logs: the table's metadata_location is
    // swapped in the same transaction as a commit log entry is inserted.
    v1::GetSupervisorStatusRequest status_request;
    status_request.set_datasource(datasource);
    v1::GetSupervisorStatusResponse status;
    const absl::Status got_status =
        Call(&v1::SupervisorService::StubInterface::GetSupervisorStatus, stub, rpc_timeout,
             "GetSupervisorStatus", status_request, &status);
    if (got_status.ok()) {
      inputs.status = status.status();
    } else if (!absl::IsNotFound(got_status) && !absl::IsUnimplemented(got_status)) {
      return got_status;
    }
    v1::GetCommitLogResponse again;
    SLUICE_RETURN_IF_ERROR(Call(&v1::SupervisorService::StubInterface::GetCommitLog, stub,
                                rpc_timeout, "GetCommitLog", ref, &again));
    if (google::protobuf::util::MessageDifferencer::Equals(inputs.commit_log, again)) {
      for (const v1::SegmentDescriptor& s : inputs.segments.segments()) {
        if (s.used()) inputs.used_segments.push_back(s);
      }
      return inputs;
    }
    if (attempt == kSnapshotAttempts) {
      return absl::UnavailableError(absl::StrCat(
          datasource, " committed new sequences during each of ", kSnapshotAttempts,
          " attempts to read a consistent commit log and segment list; suspend it and retry"));
    }
    absl::SleepFor(absl::Milliseconds(200));
  }
}

std::string LiveAuditResult::ToString() const {
  return absl::StrCat("verify ", report.datasource, ": topic ", topic, " at ", bootstrap_servers,
                      ", ", records_read, " records read back from Kafka in ",
                      absl::StrFormat("%.1fs", absl::ToDoubleSeconds(elapsed)), "\n",
                      table.has_value() ? absl::StrCat(table->ToString(), "\n") : std::string(),
                      report.ToString(), "\n");
}

absl::StatusOr<LiveAuditResult> RunLiveAudit(v1::SupervisorService::StubInterface& stub,
                                             const LiveAuditOptions& options) {
  const absl::Time start = absl::Now();
  v1::GetSupervisorRequest ref;
  ref.set_datasource(options.datasource);

  SLUICE_ASSIGN_OR_RETURN(AuditInputs inputs,
                          FetchAuditInputs(stub, options.datasource, options.rpc_timeout));
  const v1::GetCommitLogResponse& log = inputs.commit_log;
  const v1::ListSegmentsResponse& segments = inputs.segments;

  // Kafka: the spec's consumer properties (security settings included), with
  // the address overridden when given.
  kafka::KafkaProperties properties;
  v1::GetSupervisorResponse spec;
  const absl::Status got_spec = Call(&v1::SupervisorService::StubInterface::GetSupervisor, stub,
                                     options.rpc_timeout, "GetSupervisor", ref, &spec);
  // Every record of the committed ranges is parsed again with the spec's own
  // parser (the task's rules), so a publish's unparseable claim is checked.
  std::shared_ptr<RecordReparser> reparser;
  if (got_spec.ok()) {
    for (const auto& [name, value] : spec.spec().io_config().consumer_properties()) {
      // A redacted secret cannot be used; the counter connects without it.
      if (value == kafka::kRedacted) continue;
      properties[name] = value;
    }
    reparser = RecordReparser::Create(spec.spec());
  } else if (!absl::IsNotFound(got_spec) || options.bootstrap_servers.empty()) {
    // A terminated datasource has no spec: then the address must be given.
    return got_spec;
  }
  if (!options.bootstrap_servers.empty()) {
    properties["bootstrap.servers"] = options.bootstrap_servers;
  }
  if (properties["bootstrap.servers"].empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("no Kafka address for ", options.datasource, ": give the bootstrap servers"));
  }
  properties.erase("group.id");  // The counter reads with its own (never joined) group.
  if (options.secret_policy.has_value()) {
    absl::StatusOr<kafka::KafkaProperties> resolved =
        kafka::ResolveSecretReferences(properties, *options.secret_policy);
    if (!resolved.ok()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the spec's secret references cannot be resolved here: ", resolved.status().message()));
    }
    properties = *std::move(resolved);
  }

  LiveAuditResult result;
  result.topic = log.topic_pattern().empty() ? log.topic() : "pattern " + log.topic_pattern();
  result.bootstrap_servers = properties["bootstrap.servers"];
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<KafkaRecordCounter> counter,
                          KafkaRecordCounter::Create(
                              {.properties = properties,
                               .cluster = options.kafka_cluster,
                               .idle_timeout = options.kafka_idle_timeout,
                               .parses = reparser == nullptr
                                             ? KafkaRecordCounterOptions().parses
                                             : [reparser](const task::KafkaRecord& record,
                                                          const task::KafkaEnvelope& envelope) {
                                                 return reparser->Parses(record, envelope);
                                               },
                               .read_envelope = reparser != nullptr &&
                                                reparser->needs_envelope()}));
  SegmentFileVerifier verifier(options.segment_files);
  result.report = RunAudit(log, inputs.used_segments, counter.get(), &verifier);
  result.records_read = counter->records_read();
  AuditReport& report = result.report;
  if (report.datasource.empty()) report.datasource = options.datasource;
  auto fail = [&report](std::string message) {
    report.discrepancies.push_back(std::move(message));
  };
  // The Iceberg table, from its own files, with the Kafka counts above.
  if (inputs.status.has_value() && inputs.status->has_iceberg_table() &&
      !inputs.status->iceberg_table().metadata_location().empty()) {
    const v1::IcebergTableStatus& table = inputs.status->iceberg_table();
    TableAuditOptions table_options;
    table_options.metadata_location = table.metadata_location();
    if (got_spec.ok()) SetRecordAccounting(spec.spec(), &table_options);
    DeepStorageFileReader files(options.segment_files.deep_storage,
                                options.segment_files.scratch_dir);
    // Every segment of a sequence, used or since dropped: the snapshot
    // keeps the rows it was published with.
    const std::vector<v1::SegmentDescriptor> published(segments.segments().begin(),
                                                       segments.segments().end());
    result.table = RunTableAudit(log, published, report.records_by_sequence,
                                 table_options, &files);
    if (!result.table->ok()) {
      fail(absl::StrCat("the Iceberg table ", table.table_namespace(), ".", table.table_name(),
                        " fails its audit (", result.table->discrepancies.size(),
                        " discrepancies, listed above)"));
    }
  }
  if (segments.segments_size() >= kSegmentLimit) {
    fail(absl::StrCat("the supervisor listed ", segments.segments_size(),
                      " segments, the most one call returns: the audit may have missed some"));
  }
  if (options.expect_records >= 0 && report.records_in_kafka != options.expect_records) {
    fail(absl::StrCat("records produced ", options.expect_records,
                      " != records in the committed ranges ", report.records_in_kafka,
                      report.records_in_kafka < options.expect_records
                          ? " (not everything produced is committed)"
                          : " (more is committed than was produced)"));
  }
  for (const auto& [partition, expected] : options.expect_records_by_partition) {
    auto it = report.records_by_partition.find(partition);
    const int64_t committed = it == report.records_by_partition.end() ? 0 : it->second;
    if (committed != expected) {
      fail(absl::StrCat("partition ", partition, ": records produced ", expected,
                        " != records in its committed ranges ", committed));
    }
  }
  if (options.expect_unparseable >= 0 && report.unparseable != options.expect_unparseable) {
    fail(absl::StrCat("malformed records produced ", options.expect_unparseable,
                      " != unparseable records counted ", report.unparseable));
  }
  result.elapsed = absl::Now() - start;
  return result;
}

}  // namespace sluice::audit
