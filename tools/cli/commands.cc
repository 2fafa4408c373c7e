#include "tools/cli/commands.h"

#include <grpcpp/grpcpp.h>

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/druid/druid_spec.h"
#include "common/enum_names.h"
#include "common/grpc_status.h"
#include "common/kafka/consumer_settings.h"
#include "common/names.h"
#include "common/status_macros.h"
#include "common/time_util.h"
#include "tools/audit/live_audit.h"
#include "tools/cli/format.h"
#include "tools/cli/reset_to_time.h"
#include "tools/cli/spec_file.h"

namespace sluice {
namespace sluicectl {
namespace {

using Args = std::vector<std::string>;

struct Context {
  const CliOptions& options;
  v1::SupervisorService::StubInterface& stub;
  std::ostream& out;
  std::ostream& err;
};

struct CommandSpec {
  const char* name;
  const char* args;  // For the usage text.
  const char* help;
  size_t min_args;
  size_t max_args;  // SIZE_MAX: any number.
  int (*run)(const Args& args, Context& ctx);
};

int UsageError(Context& ctx, absl::string_view message) {
  ctx.err << "sluicectl: " << message << "\n(run 'sluicectl help' for usage)\n";
  return kExitUsage;
}

// Calls one RPC with the deadline; prints the error and returns false when it
// fails.
template <typename Request, typename Response>
bool Call(Context& ctx, absl::string_view what,
          grpc::Status (v1::SupervisorService::StubInterface::*method)(grpc::ClientContext*,
                                                                       const Request&, Response*),
          const Request& request, Response* response) {
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + ctx.options.timeout));
  const grpc::Status status = (ctx.stub.*method)(&context, request, response);
  if (status.ok()) return true;
  const absl::Status s = FromGrpcStatus(status);
  ctx.err << "sluicectl: " << what << " failed: " << absl::StatusCodeToString(s.code()) << ": "
          << s.message() << "\n";
  return false;
}

// Prints `response` (the RPC's whole answer, as grpcurl shows it) as JSON with
// --json, else `readable`.
template <typename Response>
int Print(Context& ctx, const Response& response, const std::string& readable) {
  ctx.out << (ctx.options.json ? ToJson(response) : readable);
  return kExitOk;
}

absl::Status CheckDatasource(const std::string& name) { return ValidateDatasource(name); }

// The request of a call that names one datasource (each RPC has its own type,
// all with the same `datasource` field).
template <typename Request>
Request Ref(const std::string& datasource) {
  Request ref;
  ref.set_datasource(datasource);
  return ref;
}

// submit --druid: the file's text goes to the supervisor as it is (it does
// the conversion); converting here first catches what it would refuse before
// anything is sent.
int SubmitDruid(const Args& args, Context& ctx) {
  absl::StatusOr<std::string> text = ReadSpecText(args[0]);
  if (!text.ok()) {
    ctx.err << "sluicectl: " << text.status().message() << "\n";
    return kExitUsage;
  }
  absl::StatusOr<druid::DruidConversion> converted =
      druid::FromDruidJson(*text, {.allow_unsupported = ctx.options.allow_unsupported});
  if (!converted.ok()) {
    ctx.err << "sluicectl: " << args[0] << ": " << converted.status().message() << "\n";
    return kExitUsage;
  }
  v1::SubmitSupervisorRequest request;
  request.set_druid_spec_json(*std::move(text));
  request.set_allow_unsupported(ctx.options.allow_unsupported);
  v1::SubmitSupervisorResponse response;
  if (!Call(ctx, absl::StrCat("submit ", converted->spec.datasource()),
            &v1::SupervisorService::StubInterface::SubmitSupervisor, request, &response)) {
    return kExitRpcError;
  }
  for (const std::string& warning : response.warnings()) {
    ctx.err << "sluicectl: warning: " << warning << "\n";
  }
  return Print(ctx, response, FormatSubmit(response));
}

int Submit(const Args& args, Context& ctx) {
  if (ctx.options.druid) return SubmitDruid(args, ctx);
  if (ctx.options.allow_unsupported) {
    return UsageError(ctx, "--allow_unsupported applies to Druid specs only (submit --druid FILE)");
  }
  absl::StatusOr<v1::SupervisorSpec> spec = ReadSpecFile(args[0]);
  if (!spec.ok()) {
    ctx.err << "sluicectl: " << spec.status().message() << "\n";
    return kExitUsage;
  }
  v1::SubmitSupervisorRequest request;
  *request.mutable_spec() = *std::move(spec);
  v1::SubmitSupervisorResponse response;
  if (!Call(ctx, absl::StrCat("submit ", request.spec().datasource()),
            &v1::SupervisorService::StubInterface::SubmitSupervisor, request, &response)) {
    return kExitRpcError;
  }
  return Print(ctx, response, FormatSubmit(response));
}

int Get(const Args& args, Context& ctx) {
  v1::GetSupervisorResponse response;
  if (!Call(ctx, absl::StrCat("get ", args[0]),
            &v1::SupervisorService::StubInterface::GetSupervisor,
            Ref<v1::GetSupervisorRequest>(args[0]), &response)) {
    return kExitRpcError;
  }
  if (ctx.options.druid) {
    absl::StatusOr<std::string> druid = druid::ToDruidJson(response.spec());
    if (!druid.ok()) {
      ctx.err << "sluicectl: get " << args[0] << ": " << druid.status().message() << "\n";
      return kExitRpcError;
    }
    ctx.out << *druid;
    return kExitOk;
  }
  return Print(ctx, response, FormatSpec(response));
}

int List(const Args&, Context& ctx) {
  v1::ListSupervisorsResponse response;
  if (!Call(ctx, "list", &v1::SupervisorService::StubInterface::ListSupervisors,
            v1::ListSupervisorsRequest(), &response)) {
    return kExitRpcError;
  }
  return Print(ctx, response, FormatSupervisorList(response));
}

int History(const Args& args, Context& ctx) {
  v1::GetSupervisorHistoryResponse response;
  if (!Call(ctx, absl::StrCat("history ", args[0]),
            &v1::SupervisorService::StubInterface::GetSupervisorHistory,
            Ref<v1::GetSupervisorHistoryRequest>(args[0]), &response)) {
    return kExitRpcError;
  }
  return Print(ctx, response, FormatHistory(args[0], response));
}

int Status(const Args& args, Context& ctx) {
  v1::GetSupervisorStatusResponse response;
  if (!Call(ctx, absl::StrCat("status ", args[0]),
            &v1::SupervisorService::StubInterface::GetSupervisorStatus,
            Ref<v1::GetSupervisorStatusRequest>(args[0]), &response)) {
    return kExitRpcError;
  }
  return Print(ctx, response, FormatStatus(response.status()));
}

// suspend / resume / reset / terminate: a datasource in, the supervisor's
// summary out.
template <typename Request, typename Response>
int SummaryCommand(const Args& args, Context& ctx, absl::string_view verb,
                   grpc::Status (v1::SupervisorService::StubInterface::*method)(
                       grpc::ClientContext*, const Request&, Response*)) {
  Response response;
  if (!Call(ctx, absl::StrCat(verb, " ", args[0]), method, Ref<Request>(args[0]), &response)) {
    return kExitRpcError;
  }
  return Print(ctx, response, FormatSummary(response.supervisor()));
}

int Suspend(const Args& args, Context& ctx) {
  return SummaryCommand(args, ctx, "suspend",
                        &v1::SupervisorService::StubInterface::SuspendSupervisor);
}
int Resume(const Args& args, Context& ctx) {
  return SummaryCommand(args, ctx, "resume",
                        &v1::SupervisorService::StubInterface::ResumeSupervisor);
}
int Reset(const Args& args, Context& ctx) {
  return SummaryCommand(args, ctx, "reset", &v1::SupervisorService::StubInterface::ResetSupervisor);
}
int Terminate(const Args& args, Context& ctx) {
  return SummaryCommand(args, ctx, "terminate",
                        &v1::SupervisorService::StubInterface::TerminateSupervisor);
}

int SendResetOffsets(Context& ctx, const std::string& datasource,
                     const std::map<int32_t, int64_t>& offsets) {
  v1::ResetOffsetsRequest request;
  request.set_datasource(datasource);
  for (const auto& [partition, offset] : offsets) (*request.mutable_offsets())[partition] = offset;
  v1::ResetOffsetsResponse response;
  if (!Call(ctx, absl::StrCat("reset-offsets ", datasource),
            &v1::SupervisorService::StubInterface::ResetOffsets, request, &response)) {
    return kExitRpcError;
  }
  return Print(ctx, response, FormatSummary(response.supervisor()));
}

// reset-offsets --to_time: the datasource's topic and committed offsets from
// the supervisor, each partition's offset for the time from Kafka (reached
// as verify reaches it), a preview, a confirmation, then ResetOffsets.
int ResetOffsetsToTime(const std::string& datasource, Context& ctx) {
  absl::StatusOr<int64_t> time_ms = ParseResetTime(ctx.options.to_time);
  if (!time_ms.ok()) return UsageError(ctx, time_ms.status().message());
  absl::StatusOr<kafka::ClusterKind> kind = kafka::ParseClusterKind(ctx.options.kafka_cluster);
  if (!kind.ok()) {
    return UsageError(ctx, absl::StrCat("--kafka_cluster: ", kind.status().message()));
  }
  if (!ctx.options.yes && ctx.options.confirm_in == nullptr) {
    return UsageError(ctx, "reset-offsets --to_time asks for confirmation: add --yes");
  }
  const std::string what = absl::StrCat("reset-offsets ", datasource);
  v1::GetSupervisorStatusResponse status;
  if (!Call(ctx, what, &v1::SupervisorService::StubInterface::GetSupervisorStatus,
            Ref<v1::GetSupervisorStatusRequest>(datasource), &status)) {
    return kExitRpcError;
  }
  if (!status.status().topic_pattern().empty() || status.status().topic().empty()) {
    ctx.err << "sluicectl: " << what
            << ": --to_time needs a datasource reading one topic (this one reads pattern \""
            << status.status().topic_pattern() << "\"); give P=OFFSET pairs instead\n";
    return kExitUsage;
  }
  v1::GetSupervisorResponse spec;
  if (!Call(ctx, what, &v1::SupervisorService::StubInterface::GetSupervisor,
            Ref<v1::GetSupervisorRequest>(datasource), &spec)) {
    return kExitRpcError;
  }
  const std::string& topic = status.status().topic();
  absl::StatusOr<std::vector<PartitionReset>> plan = [&]() -> absl::StatusOr<std::vector<PartitionReset>> {
    SLUICE_ASSIGN_OR_RETURN(kafka::KafkaProperties properties,
                            SpecKafkaProperties(spec.spec(), ctx.options.bootstrap, *kind,
                                                ctx.options.kafka_secret_policy));
    const std::map<int32_t, int64_t> committed(status.status().committed_offsets().begin(),
                                               status.status().committed_offsets().end());
    return LookUpOffsetsForTime(properties, topic, *time_ms, committed, ctx.options.timeout);
  }();
  if (!plan.ok()) {
    ctx.err << "sluicectl: " << what << ": " << absl::StatusCodeToString(plan.status().code())
            << ": " << plan.status().message() << "\n";
    return kExitRpcError;
  }
  // With --json stdout carries only the RPC's answer.
  std::ostream& shown = ctx.options.json ? ctx.err : ctx.out;
  shown << FormatResetPreview(datasource, topic, *time_ms, *plan);
  const std::map<int32_t, int64_t> offsets = ChangedOffsets(*plan);
  if (offsets.empty()) {
    shown << "nothing to reset: every partition is already there\n";
    return kExitOk;
  }
  if (!ctx.options.yes) {
    ctx.err << "reset " << offsets.size() << " partition(s) of " << datasource
            << " to these offsets and restart their groups? [y/N] " << std::flush;
    std::string answer;
    std::getline(*ctx.options.confirm_in, answer);
    answer = absl::AsciiStrToLower(absl::StripAsciiWhitespace(answer));
    if (answer != "y" && answer != "yes") {
      ctx.err << "sluicectl: " << what << ": not confirmed, nothing changed\n";
      return kExitUsage;
    }
  }
  return SendResetOffsets(ctx, datasource, offsets);
}

int ResetOffsets(const Args& args, Context& ctx) {
  if (!ctx.options.to_time.empty()) {
    if (args.size() != 1) {
      return UsageError(ctx, "reset-offsets: give either P=OFFSET pairs or --to_time, not both");
    }
    return ResetOffsetsToTime(args[0], ctx);
  }
  if (args.size() < 2) {
    return UsageError(ctx, "usage: sluicectl reset-offsets DATASOURCE P=OFFSET... "
                           "(or --to_time=TIME)");
  }
  absl::StatusOr<std::map<int32_t, int64_t>> offsets =
      ParsePartitionOffsets(Args(args.begin() + 1, args.end()));
  if (!offsets.ok()) return UsageError(ctx, offsets.status().message());
  return SendResetOffsets(ctx, args[0], *offsets);
}

int Handoff(const Args& args, Context& ctx) {
  v1::HandoffTaskGroupsRequest request;
  request.set_datasource(args[0]);
  for (size_t i = 1; i < args.size(); ++i) {
    int32_t group = 0;
    if (!absl::SimpleAtoi(args[i], &group) || group < 0) {
      return UsageError(ctx, absl::StrCat("not a group id: \"", args[i], "\""));
    }
    request.add_group_ids(group);
  }
  v1::HandoffTaskGroupsResponse response;
  if (!Call(ctx, absl::StrCat("handoff ", args[0]),
            &v1::SupervisorService::StubInterface::HandoffTaskGroups, request, &response)) {
    return kExitRpcError;
  }
  return Print(ctx, response, FormatHandoff(args[0], response));
}

int Compact(const Args& args, Context& ctx) {
  v1::CompactDataSourceRequest request;
  request.set_datasource(args[0]);
  if (args.size() > 1) {
    absl::StatusOr<v1::Interval> interval = ParseInterval(args[1]);
    if (!interval.ok()) return UsageError(ctx, interval.status().message());
    *request.mutable_interval() = *interval;
  }
  v1::CompactDataSourceResponse response;
  if (!Call(ctx, absl::StrCat("compact ", args[0]),
            &v1::SupervisorService::StubInterface::CompactDataSource, request, &response)) {
    return kExitRpcError;
  }
  return Print(ctx, response, FormatCompact(args[0], response));
}

int Segments(const Args& args, Context& ctx) {
  v1::ListSegmentsRequest request;
  request.set_datasource(args[0]);
  request.set_include_unused(ctx.options.include_unused);
  if (ctx.options.limit < 0) return UsageError(ctx, "--limit must be >= 0");
  request.set_limit(ctx.options.limit);
  if (!ctx.options.interval.empty()) {
    absl::StatusOr<v1::Interval> interval = ParseInterval(ctx.options.interval);
    if (!interval.ok()) return UsageError(ctx, interval.status().message());
    *request.mutable_interval() = *interval;
  }
  v1::ListSegmentsResponse response;
  if (!Call(ctx, absl::StrCat("segments ", args[0]),
            &v1::SupervisorService::StubInterface::ListSegments, request, &response)) {
    return kExitRpcError;
  }
  return Print(ctx, response, FormatSegments(response));
}

int Tasks(const Args& args, Context& ctx) {
  v1::SupervisorServiceListTasksRequest request;
  if (!args.empty()) request.set_datasource(args[0]);
  request.set_include_finished(ctx.options.include_finished);
  for (absl::string_view name : absl::StrSplit(ctx.options.states, ',', absl::SkipEmpty())) {
    v1::TaskState state;
    // READING or TASK_STATE_READING, any case.
    if (!ParseShortEnumName(name, &state) ||
        state == v1::TASK_STATE_UNSPECIFIED) {
      return UsageError(ctx, absl::StrCat("unknown task state \"", name,
                                          "\" in --states (e.g. READING,PAUSED,PUBLISHING)"));
    }
    request.add_states(state);
  }
  v1::SupervisorServiceListTasksResponse response;
  if (!Call(ctx, "tasks", &v1::SupervisorService::StubInterface::ListTasks, request, &response)) {
    return kExitRpcError;
  }
  return Print(ctx, response, FormatTasks(response));
}

int Workers(const Args&, Context& ctx) {
  v1::ListWorkersResponse response;
  if (!Call(ctx, "workers", &v1::SupervisorService::StubInterface::ListWorkers,
            v1::ListWorkersRequest(), &response)) {
    return kExitRpcError;
  }
  const int64_t now = ctx.options.now_ms ? ctx.options.now_ms() : NowMillis();
  return Print(ctx, response, FormatWorkers(response, now));
}

int MarkLoaded(const Args& args, Context& ctx) {
  v1::MarkSegmentsLoadedRequest request;
  request.set_datasource(args[0]);
  for (size_t i = 1; i < args.size(); ++i) request.add_segment_ids(args[i]);
  request.set_loader(ctx.options.loader);
  v1::MarkSegmentsLoadedResponse response;
  if (!Call(ctx, absl::StrCat("mark-loaded ", args[0]),
            &v1::SupervisorService::StubInterface::MarkSegmentsLoaded, request, &response)) {
    return kExitRpcError;
  }
  return Print(ctx, response,
               FormatMarkLoaded(args[0], static_cast<int>(args.size() - 1), response));
}

int CommitLog(const Args& args, Context& ctx) {
  v1::GetCommitLogResponse response;
  if (!Call(ctx, absl::StrCat("commit-log ", args[0]),
            &v1::SupervisorService::StubInterface::GetCommitLog, Ref<v1::GetCommitLogRequest>(args[0]), &response)) {
    return kExitRpcError;
  }
  return Print(ctx, response, FormatCommitLog(response));
}

int Verify(const Args& args, Context& ctx) {
  absl::StatusOr<kafka::ClusterKind> kind = kafka::ParseClusterKind(ctx.options.kafka_cluster);
  if (!kind.ok())
    return UsageError(ctx, absl::StrCat("--kafka_cluster: ", kind.status().message()));
  if (ctx.options.expect_records < -1) {
    return UsageError(ctx, "--expect_records must be >= 0 (or -1: not checked)");
  }
  audit::LiveAuditOptions options;
  options.datasource = args[0];
  options.bootstrap_servers = ctx.options.bootstrap;
  options.kafka_cluster = *kind;
  options.expect_records = ctx.options.expect_records;
  options.secret_policy = ctx.options.kafka_secret_policy;
  options.rpc_timeout = ctx.options.timeout;
  options.segment_files.deep_storage = ctx.options.deep_storage;
  options.segment_files.scratch_dir = ctx.options.scratch_dir;
  absl::StatusOr<audit::LiveAuditResult> result = audit::RunLiveAudit(ctx.stub, options);
  if (!result.ok()) {
    ctx.err << "sluicectl: verify " << args[0]
            << " failed: " << absl::StatusCodeToString(result.status().code()) << ": "
            << result.status().message() << "\n";
    return kExitRpcError;
  }
  ctx.out << (ctx.options.json ? AuditJson(*result) : result->ToString());
  return result->report.ok() ? kExitOk : kExitAuditFailed;
}

int Help(const Args&, Context& ctx) {
  ctx.out << Usage();
  return kExitOk;
}

constexpr size_t kAny = SIZE_MAX;

const CommandSpec kCommands[] = {
    {"submit", "[--druid] SPEC.json",
     "create or replace a supervisor from a spec file (- for stdin); --druid: a Druid Kafka "
     "supervisor spec (--allow_unsupported: ignore, with a warning, the fields sluice lacks)",
     1, 1, &Submit},
    {"get", "[--druid] DATASOURCE",
     "the stored spec, defaults filled in; --druid: as a Druid Kafka supervisor spec", 1, 1, &Get},
    {"list", "", "every supervisor with its state", 0, 0, &List},
    {"history", "DATASOURCE", "previous versions of the spec, newest first", 1, 1, &History},
    {"status", "DATASOURCE", "state, groups and tasks, per-partition offsets and lag", 1, 1,
     &Status},
    {"suspend", "DATASOURCE", "finish the running tasks and start no new ones", 1, 1, &Suspend},
    {"resume", "DATASOURCE", "start reading again", 1, 1, &Resume},
    {"reset", "DATASOURCE",
     "forget the stored offsets and restart reading (may skip or re-read data)", 1, 1, &Reset},
    {"reset-offsets", "DATASOURCE P=OFFSET... | --to_time=TIME DATASOURCE",
     "set the stored offsets of some partitions and restart their groups; --to_time: every "
     "partition to its first record at or after TIME (ISO-8601 or epoch ms), shown and "
     "confirmed first (--yes: not asked; Kafka reached as verify reaches it)",
     1, kAny, &ResetOffsets},
    {"handoff", "DATASOURCE [GROUP...]",
     "checkpoint reading groups now (all without GROUP): what they read publishes and hands "
     "off while they read on",
     1, kAny, &Handoff},
    {"compact", "DATASOURCE [START/END]",
     "compact the datasource's segments now (those overlapping START/END; all without it), "
     "regardless of skipOffsetFromLatest",
     1, 2, &Compact},
    {"terminate", "DATASOURCE", "stop the supervisor (its tasks publish); segments stay", 1, 1,
     &Terminate},
    {"segments", "DATASOURCE",
     "published segments (--include_unused, --limit, --interval=START/END)", 1, 1, &Segments},
    {"tasks", "[DATASOURCE]", "tasks the supervisor knows (--include_finished, --states)", 0, 1,
     &Tasks},
    {"workers", "", "registered task workers", 0, 0, &Workers},
    {"mark-loaded", "DATASOURCE SEGMENT_ID...",
     "confirm that a loader serves these segments (handoff mode LOADER)", 2, kAny, &MarkLoaded},
    {"commit-log", "DATASOURCE", "committed offsets, every committed sequence and scaling decision", 1, 1,
     &CommitLog},
    {"verify", "DATASOURCE",
     "exactly-once audit: commit log, segments, Kafka records, segment files, "
     "and the Iceberg table if any (--expect_records, --bootstrap, --kafka_cluster)",
     1, 1, &Verify},
    {"help", "", "this text", 0, 0, &Help},
};

// Commands whose first argument is a datasource.
bool TakesDatasource(absl::string_view name) {
  return name != "submit" && name != "list" && name != "workers" && name != "help";
}

}  // namespace

std::string Usage() {
  std::string out =
      "usage: sluicectl [--supervisor=HOST:PORT] [--json] [--timeout=30s] COMMAND [ARGS]\n"
      "\ncommands:\n";
  size_t width = 0;
  for (const CommandSpec& c : kCommands) {
    width = std::max(width, std::string(c.name).size() + 1 + std::string(c.args).size());
  }
  for (const CommandSpec& c : kCommands) {
    std::string synopsis = c.name;
    if (*c.args != '\0') absl::StrAppend(&synopsis, " ", c.args);
    synopsis.resize(width, ' ');
    absl::StrAppend(&out, "  ", synopsis, "  ", c.help, "\n");
  }
  absl::StrAppend(&out,
                  "\nflags: --supervisor (default $SLUICE_SUPERVISOR or 127.0.0.1:7070), "
                  "--json, --timeout,\n"
                  "  --tls_ca/--tls_cert/--tls_key, --include_unused, --limit, --interval,\n"
                  "  --include_finished, --states, --loader, --druid, --allow_unsupported,\n"
                  "  --expect_records, --bootstrap, --kafka_cluster (verify), --to_time, --yes\n"
                  "  (reset-offsets; --bootstrap, --kafka_cluster apply to it too)\n"
                  "  --deep_storage=s3://BUCKET/PREFIX, --s3_endpoint, --s3_region, --s3_path_style\n"
                  "    (verify: read s3:// segments; credentials from AWS_ACCESS_KEY_ID/...)\n"
                  "exit codes: 0 ok, 1 the RPC failed (gRPC code and message on stderr),\n"
                  "  2 bad usage or input (nothing sent), 3 verify found discrepancies (FAIL)\n");
  return out;
}

int RunCommand(const std::vector<std::string>& args, const CliOptions& options,
               v1::SupervisorService::StubInterface& stub, std::ostream& out, std::ostream& err) {
  Context ctx{options, stub, out, err};
  if (args.empty()) {
    err << Usage();
    return kExitUsage;
  }
  for (const CommandSpec& command : kCommands) {
    if (args[0] != command.name) continue;
    const Args rest(args.begin() + 1, args.end());
    if (rest.size() < command.min_args || rest.size() > command.max_args) {
      return UsageError(ctx, absl::StrCat("usage: sluicectl ", command.name,
                                          *command.args != '\0' ? " " : "", command.args));
    }
    if (TakesDatasource(command.name) && !rest.empty()) {
      if (absl::Status s = CheckDatasource(rest[0]); !s.ok()) return UsageError(ctx, s.message());
    }
    return command.run(rest, ctx);
  }
  return UsageError(ctx, absl::StrCat("unknown command \"", args[0], "\""));
}

absl::StatusOr<std::map<int32_t, int64_t>> ParsePartitionOffsets(
    const std::vector<std::string>& pairs) {
  std::map<int32_t, int64_t> offsets;
  for (const std::string& pair : pairs) {
    const std::vector<absl::string_view> parts = absl::StrSplit(pair, '=');
    int32_t partition;
    int64_t offset;
    if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &partition) ||
        !absl::SimpleAtoi(parts[1], &offset)) {
      return absl::InvalidArgumentError(
          absl::StrCat("\"", pair, "\" is not PARTITION=OFFSET (e.g. 0=1200)"));
    }
    if (partition < 0 || offset < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("\"", pair, "\": partition and offset must be >= 0"));
    }
    if (!offsets.emplace(partition, offset).second) {
      return absl::InvalidArgumentError(absl::StrCat("partition ", partition, " given twice"));
    }
  }
  return offsets;
}

absl::StatusOr<v1::Interval> ParseInterval(absl::string_view text) {
  const std::vector<absl::string_view> parts = absl::StrSplit(text, '/');
  if (parts.size() != 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("interval \"", text,
                     "\" is not START/END (e.g. 2026-01-01T00:00:00Z/2026-01-02T00:00:00Z)"));
  }
  absl::StatusOr<int64_t> start = ParseIsoInstantMillis(parts[0]);
  absl::StatusOr<int64_t> end = ParseIsoInstantMillis(parts[1]);
  if (!start.ok())
    return absl::InvalidArgumentError(absl::StrCat("interval start: ", start.status().message()));
  if (!end.ok())
    return absl::InvalidArgumentError(absl::StrCat("interval end: ", end.status().message()));
  if (*end <= *start) {
    return absl::InvalidArgumentError(
        absl::StrCat("interval \"", text, "\" ends before it starts"));
  }
  v1::Interval interval;
  interval.set_start_ms(*start);
  interval.set_end_ms(*end);
  return interval;
}

}  // namespace sluicectl
}  // namespace sluice
