// sluicectl's commands: argument checking, the admin RPC each one makes, and
// what it prints. main() only reads flags and builds the stub; everything
// else is here, testable against any SupervisorService (tests use an
// in-process fake behind a real gRPC channel).
//
//   CliOptions options;
//   options.json = FLAGS_json;
//   int code = RunCommand({"status", "wiki"}, options, *stub, std::cout, std::cerr);
#ifndef SLUICE_TOOLS_SLUICECTL_COMMANDS_H_
#define SLUICE_TOOLS_SLUICECTL_COMMANDS_H_

#include <cstdint>
#include <functional>
#include <istream>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/deep_storage.h"
#include "common/kafka/property_policy.h"
#include "sluice/v1/supervisor_service.grpc.pb.h"

namespace sluice {
namespace sluicectl {

// Exit codes.
inline constexpr int kExitOk = 0;
// The RPC failed; stderr has the gRPC code and message.
inline constexpr int kExitRpcError = 1;
// Bad usage or input: unknown command, wrong arguments, unreadable or
// invalid spec file. Nothing was sent.
inline constexpr int kExitUsage = 2;
// verify: the audit ran and found discrepancies (FAIL).
inline constexpr int kExitAuditFailed = 3;

struct CliOptions {
  // Print responses as JSON (camelCase, the form grpcurl shows) instead of
  // tables.
  bool json = false;
  // Deadline of each RPC.
  absl::Duration timeout = absl::Seconds(30);
  // segments: also unused segments; at most `limit` (0: the server's default);
  // only those overlapping `interval` ("START/END", ISO-8601 instants).
  bool include_unused = false;
  int32_t limit = 0;
  std::string interval;
  // tasks: include finished tasks; only these states (e.g. "READING,PAUSED").
  bool include_finished = false;
  std::string states;
  // mark-loaded: who confirms (logged by the supervisor).
  std::string loader = "sluicectl";
  // reset-offsets: instead of P=OFFSET pairs, every partition to its first
  // record at or after this time (ISO-8601 or epoch ms), looked up in Kafka
  // with the options verify uses below; shown, then confirmed on
  // `confirm_in` (a "y" line) unless `yes`. Null confirm_in and no `yes`:
  // refused, nothing sent.
  std::string to_time;
  bool yes = false;
  std::istream* confirm_in = nullptr;
  // verify, reset-offsets --to_time: Kafka's address (empty: the spec's
  // bootstrap.servers), the kind
  // of cluster for the consumer settings ("kafka" or "dev"), and the records
  // produced to the topic (-1: not checked), which must all be committed.
  std::string bootstrap;
  std::string kafka_cluster = "kafka";
  int64_t expect_records = -1;
  // verify, reset-offsets --to_time: resolve the spec's secret references under this policy (see
  // audit::LiveAuditOptions::secret_policy); unset: they are not resolved.
  std::optional<kafka::PropertyPolicyOptions> kafka_secret_policy;
  // verify: where segments outside file:// (s3://) are read from, and the
  // directory their downloads go to (each removed after its check). Null:
  // file:// segments only; others fail the check, saying what is missing.
  DeepStorage* deep_storage = nullptr;
  std::string scratch_dir;
  // submit: the file is a Druid Kafka supervisor spec (sent as
  // druid_spec_json); with allow_unsupported its unsupported fields are
  // ignored, a warning each. get: print the spec in Druid's shape.
  bool druid = false;
  bool allow_unsupported = false;
  // Clock for "last heartbeat 3s ago" (tests pin it).
  std::function<int64_t()> now_ms;
};

// The usage text (commands, arguments, exit codes).
std::string Usage();

// Runs `args` = {command, arguments...} against `stub`. Results go to `out`,
// problems to `err` ("sluicectl: ..."). Returns kExitOk, kExitRpcError,
// kExitUsage or (verify) kExitAuditFailed.
int RunCommand(const std::vector<std::string>& args, const CliOptions& options,
               v1::SupervisorService::StubInterface& stub, std::ostream& out, std::ostream& err);

// "P=OFFSET" pairs (e.g. {"0=120", "3=0"}) as a partition -> offset map.
// INVALID_ARGUMENT naming the bad pair (not a pair, negative, repeated).
absl::StatusOr<std::map<int32_t, int64_t>> ParsePartitionOffsets(
    const std::vector<std::string>& pairs);

// "START/END" with ISO-8601 instants -> [start_ms, end_ms).
absl::StatusOr<v1::Interval> ParseInterval(absl::string_view text);

}  // namespace sluicectl
}  // namespace sluice

#endif  // SLUICE_TOOLS_SLUICECTL_COMMANDS_H_
