// The exactly-once audit's two windows on the real world, for the fault
// suite: the records Kafka holds (read back with an assign() consumer) and
// the segment files in a file:// deep storage (opened, checksum checked,
// every block decoded and verified). Plus reading the audit's inputs from a
// running supervisor.
#ifndef SLUICE_TESTS_FAULT_LIVE_AUDIT_H_
#define SLUICE_TESTS_FAULT_LIVE_AUDIT_H_

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/deep_storage.h"
#include "sluice/v1/supervisor_service.grpc.pb.h"
#include "tools/audit/exactly_once_audit.h"

namespace sluice::fault {

// Counts records by reading them. Each partition is read once from the
// lowest to the highest offset asked so far (Prefetch, or the first
// CountRecords) and counted from memory after that.
class KafkaRecordCounter : public audit::RecordCounter {
 public:
  KafkaRecordCounter(std::string bootstrap_servers, absl::Duration timeout)
      : bootstrap_servers_(std::move(bootstrap_servers)), timeout_(timeout) {}

  // Reads [start, end) of each partition of `topic` in one pass.
  absl::Status Prefetch(const std::string& topic, const std::map<int32_t, std::pair<int64_t, int64_t>>& ranges);

  absl::StatusOr<int64_t> CountRecords(const std::string& topic, int32_t partition, int64_t start,
                                       int64_t end) override;

 private:
  struct Read {
    int64_t start = 0;
    int64_t end = 0;
    std::set<int64_t> offsets;  // of the records present in [start, end)
  };
  const std::string bootstrap_servers_;
  const absl::Duration timeout_;
  std::string topic_;
  std::map<int32_t, Read> reads_;
};

// Verifies files of a local deep storage with the segment reader.
class SegmentFileVerifier : public audit::SegmentVerifier {
 public:
  // `deep_storage_uri`: file:///path.
  static absl::StatusOr<std::unique_ptr<SegmentFileVerifier>> Open(
      const std::string& deep_storage_uri);
  absl::StatusOr<audit::VerifiedSegment> Verify(const std::string& path) override;

 private:
  explicit SegmentFileVerifier(std::unique_ptr<DeepStorage> storage)
      : storage_(std::move(storage)) {}
  std::unique_ptr<DeepStorage> storage_;
};

// The audit's inputs as the supervisor reports them.
struct AuditInputs {
  v1::GetCommitLogResponse commit_log;
  std::vector<v1::SegmentDescriptor> used_segments;
};
absl::StatusOr<AuditInputs> FetchAuditInputs(v1::SupervisorService::Stub* supervisor,
                                             const std::string& datasource,
                                             absl::Duration timeout);

}  // namespace sluice::fault

#endif  // SLUICE_TESTS_FAULT_LIVE_AUDIT_H_
