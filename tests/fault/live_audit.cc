#include "tests/fault/live_audit.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/grpc_status.h"
#include "common/kafka/test_consumer.h"
#include "common/segment/segment_reader.h"
#include "common/status_macros.h"

namespace sluice::fault {

absl::Status KafkaRecordCounter::Prefetch(
    const std::string& topic, const std::map<int32_t, std::pair<int64_t, int64_t>>& ranges) {
  if (!topic_.empty() && topic_ != topic) {
    return absl::InvalidArgumentError(absl::StrCat("counting ", topic_, ", not ", topic));
  }
  topic_ = topic;
  std::map<int32_t, kafka::OffsetRange> wanted;
  for (const auto& [p, range] : ranges) {
    int64_t start = range.first;
    int64_t end = range.second;
    auto have = reads_.find(p);
    if (have != reads_.end()) {
      if (have->second.start <= start && end <= have->second.end) continue;
      start = std::min(start, have->second.start);
      end = std::max(end, have->second.end);
    }
    if (end > start) wanted[p] = {start, end};
  }
  if (wanted.empty()) return absl::OkStatus();
  SLUICE_ASSIGN_OR_RETURN(
      auto records,
      kafka::ReadRecords({{"bootstrap.servers", bootstrap_servers_}}, topic, wanted, timeout_));
  for (const auto& [p, range] : wanted) {
    Read read;
    read.start = range.start;
    read.end = range.end;
    for (const kafka::ConsumedRecord& r : records[p]) read.offsets.insert(r.offset);
    reads_[p] = std::move(read);
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> KafkaRecordCounter::CountRecords(const std::string& topic,
                                                         int32_t partition, int64_t start,
                                                         int64_t end) {
  if (end <= start) return 0;
  SLUICE_RETURN_IF_ERROR(Prefetch(topic, {{partition, {start, end}}}));
  const Read& read = reads_.at(partition);
  return static_cast<int64_t>(std::distance(read.offsets.lower_bound(start),
                                            read.offsets.lower_bound(end)));
}

absl::StatusOr<std::unique_ptr<SegmentFileVerifier>> SegmentFileVerifier::Open(
    const std::string& deep_storage_uri) {
  SLUICE_ASSIGN_OR_RETURN(auto storage, OpenDeepStorage(deep_storage_uri));
  return std::unique_ptr<SegmentFileVerifier>(new SegmentFileVerifier(std::move(storage)));
}

absl::StatusOr<audit::VerifiedSegment> SegmentFileVerifier::Verify(const std::string& path) {
  SLUICE_ASSIGN_OR_RETURN(std::string local, storage_->LocalPathForRead(path, "/tmp"));
  SLUICE_ASSIGN_OR_RETURN(auto reader, segment::SegmentReader::Open(local));
  SLUICE_RETURN_IF_ERROR(reader->Verify());
  audit::VerifiedSegment verified;
  verified.num_rows = static_cast<int64_t>(reader->num_rows());
  verified.checksum = reader->checksum();
  return verified;
}

absl::StatusOr<AuditInputs> FetchAuditInputs(v1::SupervisorService::Stub* supervisor,
                                             const std::string& datasource,
                                             absl::Duration timeout) {
  AuditInputs inputs;
  v1::SupervisorRef ref;
  ref.set_datasource(datasource);
  {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
    SLUICE_RETURN_IF_ERROR(
        FromGrpcStatus(supervisor->GetCommitLog(&context, ref, &inputs.commit_log)));
  }
  v1::ListSegmentsRequest request;
  request.set_datasource(datasource);
  request.set_limit(1000000);
  v1::ListSegmentsResponse response;
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  SLUICE_RETURN_IF_ERROR(FromGrpcStatus(supervisor->ListSegments(&context, request, &response)));
  for (v1::SegmentDescriptor& s : *response.mutable_segments()) {
    if (s.used()) inputs.used_segments.push_back(std::move(s));
  }
  return inputs;
}

}  // namespace sluice::fault
