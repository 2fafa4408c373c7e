// Shared pieces of the task worker's tests: specs, records, a TaskService
// client, waiting, and the exactly-once check of what a fake supervisor
// committed.
#ifndef SLUICE_TESTS_TASK_TEST_UTIL_H_
#define SLUICE_TESTS_TASK_TEST_UTIL_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/deep_storage.h"
#include "sluice/v1/task_service.grpc.pb.h"
#include "common/offsets.h"
#include "tests/task_fake_supervisor.h"

namespace sluice::testing {

// A fresh temporary directory (removed by the caller).
std::string MakeTempDir(const std::string& name);

// 2026-11-30T00:00:00Z: the test data's epoch.
inline constexpr int64_t kBaseTimeMs = 1795996800000;

// A valid record: {"timestamp": <ms>, "key": "p<partition>-<n>", ...}.
// Records with even n fall in the first hour, odd n in the second.
std::string Record(int32_t partition, int64_t n);
// The key of a record made by Record(), or "" if `json` has none.
std::string KeyOf(const std::string& json);

struct SpecOptions {
  std::string task_id;
  std::string base_sequence_name;
  std::string datasource = "wiki";
  std::string topic = "wiki";
  std::string bootstrap;
  OffsetMap start;
  int64_t max_rows_per_segment = 1000000;
  int64_t max_rows_in_memory = 1000000;
  int64_t max_total_rows = 10000000;
  std::string intermediate_persist_period = "PT10M";
  std::string intermediate_handoff_period;
  std::string checkpoint_retry_period = "PT0.5S";
  // A pause without follow-up ends after 2 x chatTimeout x chatRetries.
  std::string chat_timeout = "PT5S";
  std::string handoff_condition_timeout = "PT10S";
  std::optional<int64_t> max_parse_exceptions;
  int32_t max_saved_parse_exceptions = 5;
  int64_t minimum_message_time_ms = 0;
  int64_t maximum_message_time_ms = 0;
  int64_t poll_timeout_ms = 50;
};
v1::TaskSpec MakeSpec(const SpecOptions& options);

// A TaskService client over a real channel.
class TaskClient {
 public:
  explicit TaskClient(const std::string& address);
  void Connect(const std::string& address);

  absl::StatusOr<v1::RunTaskResponse> RunTask(const v1::TaskSpec& spec);
  absl::StatusOr<v1::TaskStatus> Status(const std::string& task_id);
  absl::StatusOr<OffsetMap> Pause(const std::string& task_id, int64_t timeout_ms = 2000);
  absl::StatusOr<v1::ResumeResponse> Resume(const std::string& task_id);
  absl::StatusOr<v1::SetEndOffsetsResponse> SetEndOffsets(const std::string& task_id,
                                                          const OffsetMap& offsets,
                                                          bool finish);
  absl::StatusOr<OffsetMap> CurrentOffsets(const std::string& task_id);
  absl::StatusOr<v1::StopTaskResponse> Stop(const std::string& task_id, v1::StopMode mode);
  absl::StatusOr<v1::ListTasksResponse> List();

 private:
  std::unique_ptr<v1::TaskService::Stub> stub_;
};

// Polls `done` every 20 ms until it is true or `timeout` passed.
bool WaitFor(const std::function<bool()>& done, absl::Duration timeout);

// What a test produced to Kafka: the values of each partition from offset 0.
using Produced = std::map<int32_t, std::vector<std::string>>;

// The exactly-once audit of a fake supervisor's commit log against the
// records produced, for records [initial, final) of every partition:
// - committed sequences are named <base>_<n>, n increasing, none twice;
// - they cover each partition from `initial` to `final` with no gap and no
//   overlap;
// - per sequence and partition, rows + unparseable + thrown_away equals the
//   range size, and rows equals the valid records of the range (those with a
//   key, inside the time window);
// - every committed segment exists in deep storage, reads back intact, and
//   its provenance rows add up to the sequence's rows;
// - the rows of all segments are exactly the valid records of the ranges:
//   each once, in the segment of the sequence whose range holds its offset.
absl::Status VerifyExactlyOnce(const FakeSupervisor& supervisor, DeepStorage* deep_storage,
                               const std::string& base_sequence_name, const Produced& produced,
                               const OffsetMap& initial, const OffsetMap& final,
                               int64_t min_time_ms = 0, int64_t max_time_ms = 0);

// The same over a commit log and the published segments from anywhere (e.g.
// the real supervisor's GetCommitLog and ListSegments). An empty
// `base_sequence_name` skips the naming check (several task groups, each
// with its own base name, committed in turn).
absl::Status VerifyCommitLog(const std::vector<v1::CommittedSequence>& log,
                             const std::vector<v1::SegmentDescriptor>& published,
                             DeepStorage* deep_storage, const std::string& base_sequence_name,
                             const Produced& produced, const OffsetMap& initial,
                             const OffsetMap& final, int64_t min_time_ms = 0,
                             int64_t max_time_ms = 0);

}  // namespace sluice::testing

#endif  // SLUICE_TESTS_TASK_TEST_UTIL_H_
