#include "task/sequence_publisher.h"

#include <glog/logging.h>

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/fault_injection.h"
#include "common/file_util.h"
#include "common/retry.h"
#include "common/status_macros.h"

namespace sluice::task {
namespace {

bool ZeroRange(const Sequence& sequence) {
  for (const auto& [p, start] : sequence.start) {
    if (sequence.end.at(p) != start) return false;
  }
  return true;
}

}  // namespace

SequencePublisher::SequencePublisher(SequencePublisherOptions options)
    : options_(std::move(options)), files_(options_.task_dir) {}

SequencePublisher::~SequencePublisher() { Stop(); }

void SequencePublisher::Start() {
  thread_ = std::thread([this] { Run(); });
}

void SequencePublisher::Enqueue(ClosedSequence sequence) {
  absl::MutexLock lock(&mu_);
  queue_.push_back(std::move(sequence));
}

void SequencePublisher::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

bool SequencePublisher::Idle() const {
  absl::MutexLock lock(&mu_);
  return queue_.empty() && !in_flight_ && handoffs_waiting_ == 0;
}

bool SequencePublisher::WaitIdle(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto done = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return (queue_.empty() && !in_flight_ && handoffs_waiting_ == 0) || !failure_.ok() || stop_;
  };
  mu_.AwaitWithTimeout(absl::Condition(&done), timeout);
  return queue_.empty() && !in_flight_ && handoffs_waiting_ == 0;
}

absl::Status SequencePublisher::failure() const {
  absl::MutexLock lock(&mu_);
  return failure_;
}

int SequencePublisher::pending() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(queue_.size());
}

bool SequencePublisher::stopping() const {
  absl::MutexLock lock(&mu_);
  return stop_;
}

bool SequencePublisher::Sleep(absl::Duration d) {
  absl::MutexLock lock(&mu_);
  mu_.AwaitWithTimeout(absl::Condition(&stop_), d);
  return !stop_;
}

RetryOptions SequencePublisher::retry_options() const {
  RetryOptions retry;
  retry.initial_backoff = options_.min_backoff;
  retry.max_backoff = options_.max_backoff;
  return retry;
}

void SequencePublisher::Run() {
  while (true) {
    ClosedSequence next;
    bool have = false;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stop_ || (!queue_.empty() && failure_.ok());
      };
      mu_.AwaitWithTimeout(absl::Condition(&ready),
                           handoffs_.empty() ? absl::Hours(1) : options_.handoff_poll_interval);
      if (stop_) break;
      if (!queue_.empty() && failure_.ok()) {
        next = queue_.front();
        in_flight_ = true;
        have = true;
      }
    }
    if (have) {
      const absl::Status status = PublishOne(next);
      absl::MutexLock lock(&mu_);
      in_flight_ = false;
      if (status.ok()) {
        queue_.pop_front();
      } else if (!stop_) {
        failure_ = status;
        LOG(ERROR) << options_.log_prefix << " cannot publish " << next.sequence.name << ": "
                   << status;
      }
    }
    PollHandoffs(false);
  }
}

absl::Status SequencePublisher::PublishOne(const ClosedSequence& sequence) {
  if (sequence.durable) {
    SLUICE_RETURN_IF_ERROR(sequence.durable([this] { return stopping(); }));
  }
  std::vector<std::string> segment_ids;
  for (const state::SegmentState& s : sequence.segments) segment_ids.push_back(s.segment_id());
  std::vector<std::string> spill_files;
  for (const state::SegmentState& s : sequence.segments) {
    for (const std::string& name : s.spill_files()) {
      spill_files.push_back(files_.spill(name));
    }
    if (!s.built_file().empty()) {
      spill_files.push_back(files_.spill(s.built_file()));
    }
  }
  if (ZeroRange(sequence.sequence)) {
    // Nothing was in the range: no commit needed (the offsets do not move).
    LOG(INFO) << options_.log_prefix << " sequence " << sequence.sequence.name << " is empty ("
              << FormatOffsets(sequence.sequence.start) << "): nothing to publish";
    return Committed(sequence, {}, spill_files);
  }
  if (sequence.restored) {
    SLUICE_ASSIGN_OR_RETURN(const bool published, CommittedAsOurs(sequence, segment_ids));
    if (published) {
      LOG(INFO) << options_.log_prefix << " sequence " << sequence.sequence.name
                << " was published before the restart; dropping it";
      return Committed(sequence, segment_ids, spill_files);
    }
  }
  const absl::Time started = absl::Now();
  SLUICE_ASSIGN_OR_RETURN(std::vector<PushedSegment> pushed, BuildAndPush(sequence));
  SLUICE_RETURN_IF_ERROR(SLUICE_FAULT_POINT("task.after_push"));
  const absl::Time pushed_at = absl::Now();

  v1::PublishSegmentsRequest request;
  request.set_datasource(options_.datasource);
  request.set_task_id(options_.task_id);
  request.set_group_id(options_.group_id);
  request.set_sequence_name(sequence.sequence.name);
  ToProto(sequence.sequence.start, request.mutable_start_offsets());
  ToProto(sequence.sequence.end, request.mutable_end_offsets());
  std::vector<std::string> local_files = spill_files;
  for (const PushedSegment& p : pushed) {
    *request.add_segments() = p.descriptor;
    local_files.push_back(p.local_path);
  }
  for (const auto& [p, start] : sequence.sequence.start) {
    v1::PartitionRange* range = request.add_partition_stats();
    range->set_partition(p);
    NameRange(range);
    range->set_start_offset(start);
    range->set_end_offset(sequence.sequence.end.at(p));
    const auto counts = sequence.counts.find(p);
    if (counts != sequence.counts.end()) {
      range->set_rows(counts->second.rows());
      range->set_unparseable(counts->second.unparseable());
      range->set_thrown_away(counts->second.thrown_away());
    }
  }

  // An unknown outcome is retried with the same request (and pushed files):
  // the commit is idempotent and ABORTED tells a repeat from a conflict.
  int attempts = 0;
  const absl::StatusOr<v1::PublishSegmentsResponse> response =
      RetryCall<v1::PublishSegmentsResponse>(
          retry_options(), [this](absl::Duration d) { return Sleep(d); },
          [&]() -> absl::StatusOr<v1::PublishSegmentsResponse> {
            absl::StatusOr<v1::PublishSegmentsResponse> r =
                options_.supervisor->PublishSegments(request);
            ++attempts;
            LOG_IF(WARNING, !r.ok() && IsOutcomeUnknown(r.status()) &&
                                (attempts == 1 || attempts % 10 == 0))
                << options_.log_prefix << " publish of " << sequence.sequence.name
                << " (attempt " << attempts << "): " << r.status() << "; retrying";
            return r;
          },
          IsOutcomeUnknown);
  if (response.ok()) {
    // Where the time from closing to committing went (the publish latency).
    absl::Duration built, pushes;
    for (const PushedSegment& p : pushed) {
      built += p.build_time;
      pushes += p.push_time;
    }
    const absl::Duration waited =
        sequence.closed_at == absl::Time() ? absl::ZeroDuration() : started - sequence.closed_at;
    LOG(INFO) << options_.log_prefix << " published " << sequence.sequence.name << " "
              << FormatOffsets(sequence.sequence.start) << " -> "
              << FormatOffsets(sequence.sequence.end) << " with " << pushed.size()
              << " segment(s) [" << absl::StrJoin(segment_ids, ", ") << "] (closed -> "
              << "publisher " << absl::ToInt64Milliseconds(waited) << " ms, build "
              << absl::ToInt64Milliseconds(built) << " ms, push "
              << absl::ToInt64Milliseconds(pushes) << " ms, commit "
              << absl::ToInt64Milliseconds(absl::Now() - pushed_at) << " ms)";
    return Committed(sequence, segment_ids, local_files);
  }
  const absl::Status& status = response.status();
  if (status.code() == absl::StatusCode::kAborted) {
    SLUICE_ASSIGN_OR_RETURN(const bool ours, CommittedAsOurs(sequence, segment_ids));
    if (!ours) {
      return absl::FailedPreconditionError(absl::StrCat(
          "publish of ", sequence.sequence.name, " ", FormatOffsets(sequence.sequence.start),
          " -> ", FormatOffsets(sequence.sequence.end),
          " was rejected and the sequence is not committed with these segments: ",
          status.message()));
    }
    LOG(INFO) << options_.log_prefix << " " << sequence.sequence.name
              << " is already committed with the same segments (a replica published it, or"
              << " our own answer was lost)";
    DeleteCopiesNotPublished(pushed);
    return Committed(sequence, segment_ids, local_files);
  }
  // CANCELLED is retried as an unknown outcome, so here it means we stop.
  if (absl::IsCancelled(status)) return status;
  return Annotate(status, absl::StrCat("publishing ", sequence.sequence.name));
}

void SequencePublisher::NameRange(v1::PartitionRange* range) const {
  if (const TopicPartition* name = options_.stream_partitions.Find(range->partition())) {
    range->set_topic(name->topic);
    range->set_topic_partition(name->partition);
  }
}

absl::StatusOr<std::vector<SequencePublisher::PushedSegment>> SequencePublisher::BuildAndPush(
    const ClosedSequence& sequence) {
  SLUICE_RETURN_IF_ERROR(MakeDirs(files_.segment_dir()));
  std::vector<PushedSegment> pushed;
  for (const state::SegmentState& s : sequence.segments) {
    const SegmentBuildInfo info = BuildInfo(sequence.sequence, s);
    std::vector<std::string> spills;
    for (const std::string& name : s.spill_files()) {
      spills.push_back(files_.spill(name));
    }
    std::string local_path = files_.built_segment(sequence.sequence.id, s.interval_start_ms());
    absl::StatusOr<BuiltSegment> building;
    const absl::Time build_start = absl::Now();
    if (!s.built_file().empty()) {
      // Built by the persister straight from the rows in memory, and read
      // back then; once more after a restart (the file outlived a crash).
      local_path = files_.spill(s.built_file());
      building = options_.engine->DescribeBuilt(local_path, info, /*check=*/sequence.restored);
    } else {
      BuildSlot slot(options_.build_slots, [this] { return stopping(); });
      if (!slot.held()) {
        return absl::CancelledError(absl::StrCat("stopping before building ", s.segment_id()));
      }
      building = options_.engine->BuildSegment(spills, info, local_path);
    }
    SLUICE_ASSIGN_OR_RETURN(BuiltSegment built, std::move(building));
    const std::string key_stem =
        absl::StrCat(options_.datasource, "/", s.interval_start_ms(), "_", s.interval_end_ms(), "/",
                     s.version(), "/", s.partition_num(), "/", options_.task_id);
    const absl::Time push_start = absl::Now();
    SLUICE_ASSIGN_OR_RETURN(std::string uri, Push(local_path, key_stem));

    PushedSegment p;
    p.build_time = push_start - build_start;
    p.push_time = absl::Now() - push_start;
    p.local_path = local_path;
    v1::SegmentDescriptor& d = p.descriptor;
    d.set_id(s.segment_id());
    d.set_datasource(options_.datasource);
    *d.mutable_interval() = info.interval;
    d.set_version(s.version());
    d.set_partition_num(s.partition_num());
    d.set_num_rows(built.rows);
    d.set_size_bytes(built.size_bytes);
    d.set_checksum(built.checksum);
    d.set_path(uri);
    *d.mutable_provenance() = info.provenance;
    d.set_sequence_name(sequence.sequence.name);
    pushed.push_back(std::move(p));
  }
  return pushed;
}

SegmentBuildInfo SequencePublisher::BuildInfo(const Sequence& sequence,
                                              const state::SegmentState& s) const {
  SegmentBuildInfo info;
  info.segment_id = s.segment_id();
  info.datasource = options_.datasource;
  info.interval.set_start_ms(s.interval_start_ms());
  info.interval.set_end_ms(s.interval_end_ms());
  info.version = s.version();
  info.partition_num = s.partition_num();
  info.sequence_name = sequence.name;
  info.read_back_decodes_blocks = !options_.supervisor_decodes_segments;
  info.provenance.set_topic(options_.topic);
  info.provenance.set_topic_pattern(options_.topic_pattern);
  for (const auto& [p, start] : sequence.start) {
    v1::PartitionRange* range = info.provenance.add_ranges();
    range->set_partition(p);
    NameRange(range);
    range->set_start_offset(start);
    range->set_end_offset(sequence.end.at(p));
    const auto rows = s.records_by_partition().find(p);
    range->set_rows(rows == s.records_by_partition().end() ? 0 : rows->second);
  }
  return info;
}

absl::StatusOr<std::string> SequencePublisher::Push(const std::string& local_path,
                                                    const std::string& key_stem) {
  // Shared by the keys: an ALREADY_EXISTS moves to the next key at once.
  Backoff backoff(retry_options());
  // The attempt number makes the key unique: a push never overwrites, so a
  // copy left by an earlier run of this task (crash after the push) keeps
  // its key and this one takes the next.
  for (int attempt = 0; attempt < 1000;) {
    const std::string key = absl::StrCat(key_stem, "_", attempt, ".sluice");
    absl::StatusOr<std::string> uri = options_.deep_storage->Push(local_path, key);
    if (uri.ok()) {
      options_.metrics.segments_pushed->Increment();
      return uri;
    }
    if (uri.status().code() == absl::StatusCode::kAlreadyExists) {
      ++attempt;
      continue;
    }
    if (uri.status().code() != absl::StatusCode::kUnavailable) {
      return Annotate(uri.status(), absl::StrCat("pushing ", local_path));
    }
    LOG_EVERY_N(WARNING, 10) << options_.log_prefix << " push of " << key << ": " << uri.status()
                             << "; retrying";
    if (!Sleep(backoff.Next())) return absl::CancelledError("stopped");
  }
  return absl::ResourceExhaustedError(absl::StrCat("1000 pushes of ", key_stem, " exist"));
}

absl::StatusOr<bool> SequencePublisher::CommittedAsOurs(
    const ClosedSequence& sequence, const std::vector<std::string>& segment_ids) {
  v1::GetPublishedSegmentsRequest request;
  request.set_datasource(options_.datasource);
  for (const std::string& id : segment_ids) request.add_segment_ids(id);
  request.set_sequence_name(sequence.sequence.name);
  const absl::StatusOr<v1::GetPublishedSegmentsResponse> response =
      RetryCall<v1::GetPublishedSegmentsResponse>(
          retry_options(), [this](absl::Duration d) { return Sleep(d); },
          [&] { return options_.supervisor->GetPublishedSegments(request); }, IsOutcomeUnknown);
  if (!response.ok()) {
    // CANCELLED is retried as an unknown outcome, so here it means we stop.
    if (absl::IsCancelled(response.status())) return response.status();
    return Annotate(response.status(),
                    absl::StrCat("checking whether ", sequence.sequence.name, " is published"));
  }
  if (!response->sequence_committed()) return false;
  const OffsetMap start = FromProto(response->sequence_start_offsets());
  const OffsetMap end = FromProto(response->sequence_end_offsets());
  if (start != sequence.sequence.start || end != sequence.sequence.end) {
    return absl::FailedPreconditionError(
        absl::StrCat("sequence ", sequence.sequence.name, " is committed as ",
                     FormatOffsets(start), " -> ", FormatOffsets(end),
                     " but this task has it as ", FormatOffsets(sequence.sequence.start),
                     " -> ", FormatOffsets(sequence.sequence.end)));
  }
  const std::set<std::string> published(response->published_segment_ids().begin(),
                                        response->published_segment_ids().end());
  for (const std::string& id : segment_ids) {
    if (published.count(id) == 0) return false;
  }
  return true;
}

void SequencePublisher::DeleteCopiesNotPublished(const std::vector<PushedSegment>& pushed) {
  for (const PushedSegment& p : pushed) {
    v1::ListSegmentsRequest request;
    request.set_datasource(options_.datasource);
    *request.mutable_interval() = p.descriptor.interval();
    absl::StatusOr<v1::ListSegmentsResponse> response = options_.supervisor->ListSegments(request);
    if (!response.ok()) {
      LOG(WARNING) << options_.log_prefix << " keeping " << p.descriptor.path()
                   << ": cannot tell whether it is the published copy (" << response.status()
                   << ")";
      continue;
    }
    bool found = false;
    for (const v1::SegmentDescriptor& d : response->segments()) {
      if (d.id() != p.descriptor.id()) continue;
      found = true;
      if (d.path() == p.descriptor.path()) {
        LOG(INFO) << options_.log_prefix << " our copy " << d.path() << " is the published one";
      } else if (d.checksum() != p.descriptor.checksum() || d.num_rows() != p.descriptor.num_rows()) {
        // Replicas are meant to be byte-identical; the supervisor raised the
        // alert (replica divergence). Both files stay for inspection.
        LOG(ERROR) << options_.log_prefix << " keeping our copy " << p.descriptor.path()
                   << " for inspection: it differs from the published " << d.path()
                   << " (checksum " << p.descriptor.checksum() << " vs " << d.checksum()
                   << ", rows " << p.descriptor.num_rows() << " vs " << d.num_rows() << ")";
      } else if (absl::Status s = options_.deep_storage->Delete(p.descriptor.path()); s.ok()) {
        LOG(INFO) << options_.log_prefix << " deleted our copy " << p.descriptor.path()
                  << " (published: " << d.path() << ")";
      } else {
        LOG(WARNING) << options_.log_prefix << " cannot delete " << p.descriptor.path() << ": "
                     << s;
      }
    }
    if (!found) {
      LOG(WARNING) << options_.log_prefix << " keeping " << p.descriptor.path() << ": "
                   << p.descriptor.id() << " is not listed";
    }
  }
}

absl::Status SequencePublisher::Committed(const ClosedSequence& sequence,
                                          std::vector<std::string> segment_ids,
                                          std::vector<std::string> local_files) {
  SLUICE_RETURN_IF_ERROR(SLUICE_FAULT_POINT("task.after_publish"));
  SLUICE_RETURN_IF_ERROR(options_.listener->OnPublished(sequence.sequence.id));
  const absl::Time now = absl::Now();
  if (sequence.closed_at != absl::Time()) {
    options_.metrics.publish_seconds->ObserveDuration(now - sequence.closed_at);
  }
  options_.metrics.segments_published->Increment(segment_ids.size());
  sequences_published_.fetch_add(1);
  segments_published_.fetch_add(static_cast<int64_t>(segment_ids.size()));
  if (segment_ids.empty()) {
    for (const std::string& file : local_files) RemoveAll(file).IgnoreError();
    return absl::OkStatus();
  }
  HandoffWait wait;
  wait.sequence_id = sequence.sequence.id;
  wait.segment_ids = std::move(segment_ids);
  wait.local_files = std::move(local_files);
  wait.committed_at = now;
  wait.deadline = options_.handoff_timeout == absl::InfiniteDuration()
                      ? absl::InfiniteFuture()
                      : now + options_.handoff_timeout;
  wait.next_poll = now;
  handoffs_.push_back(std::move(wait));
  absl::MutexLock lock(&mu_);
  handoffs_waiting_ = handoffs_.size();
  return absl::OkStatus();
}

void SequencePublisher::PollHandoffs(bool force) {
  const absl::Time now = absl::Now();
  for (auto it = handoffs_.begin(); it != handoffs_.end();) {
    HandoffWait& wait = *it;
    if (!force && wait.next_poll > now) {
      ++it;
      continue;
    }
    bool done = false;
    v1::GetHandoffStatusRequest request;
    request.set_datasource(options_.datasource);
    for (const std::string& id : wait.segment_ids) request.add_segment_ids(id);
    absl::StatusOr<v1::GetHandoffStatusResponse> response =
        options_.supervisor->GetHandoffStatus(request);
    if (response.ok()) {
      const std::set<std::string> handed(response->handed_off_segment_ids().begin(),
                                         response->handed_off_segment_ids().end());
      bool all = true;
      for (const std::string& id : wait.segment_ids) all = all && handed.count(id) > 0;
      if (all) {
        options_.metrics.handoff_seconds->ObserveDuration(now - wait.committed_at);
        LOG(INFO) << options_.log_prefix << " segments of sequence " << wait.sequence_id
                  << " are handed off";
        done = true;
      } else if (response->failed_segment_ids_size() > 0) {
        LOG(ERROR) << options_.log_prefix << " ALERT: handoff failed for segment(s) "
                   << absl::StrJoin(response->failed_segment_ids(), ", ")
                   << " (deep storage copy failed verification)";
        done = true;
      }
    } else {
      LOG_EVERY_N(WARNING, 10) << options_.log_prefix << " handoff status: " << response.status();
    }
    if (!done && now >= wait.deadline) {
      options_.metrics.handoff_timeouts->Increment();
      LOG(ERROR) << options_.log_prefix << " ALERT: timeout waiting for handoff of "
                 << absl::StrJoin(wait.segment_ids, ", ") << "; going on";
      done = true;
    }
    if (done) {
      for (const std::string& file : wait.local_files) RemoveAll(file).IgnoreError();
      it = handoffs_.erase(it);
    } else {
      wait.next_poll = now + options_.handoff_poll_interval;
      ++it;
    }
  }
  absl::MutexLock lock(&mu_);
  handoffs_waiting_ = handoffs_.size();
}

}  // namespace sluice::task
