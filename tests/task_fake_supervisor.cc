#include "tests/task_fake_supervisor.h"

#include <grpcpp/grpcpp.h>

#include <deque>
#include <functional>
#include <set>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/grpc_server.h"
#include "common/grpc_status.h"
#include "common/status_macros.h"
#include "common/time_util.h"
#include "sluice/v1/supervisor_service.grpc.pb.h"
#include "sluice/v1/task_service.grpc.pb.h"

namespace sluice::testing {

using ::sluice::OffsetMap;

namespace {

grpc::Status Error(absl::StatusCode code, const std::string& message) {
  return ToGrpcStatus(absl::Status(code, message));
}

std::string SegmentId(const std::string& datasource, const v1::Interval& interval,
                      const std::string& version, int32_t partition) {
  return absl::StrCat(datasource, "_", FormatIsoInstant(interval.start_ms()), "_",
                      FormatIsoInstant(interval.end_ms()), "_", version, "_", partition);
}

}  // namespace

class FakeSupervisor::Impl final : public v1::SupervisorService::Service {
 public:
  explicit Impl(FakeSupervisorOptions options) : options_(std::move(options)) {}
  ~Impl() override { StopRounds(); }

  absl::Status StartServer() {
    GrpcServerOptions grpc_options;
    grpc_options.listen_address = "127.0.0.1:0";
    grpc_options.services = {this};
    auto server = GrpcServer::Start(std::move(grpc_options));
    if (!server.ok()) return server.status();
    server_ = std::move(*server);
    server_->SetServing(true);
    rounds_ = std::thread([this] { RunRounds(); });
    return absl::OkStatus();
  }
  void StopRounds() {
    {
      absl::MutexLock lock(&mu_);
      stop_ = true;
    }
    if (rounds_.joinable()) rounds_.join();
    if (server_) server_->Shutdown(absl::ZeroDuration());
  }
  const std::string& address() const { return server_->address(); }

  // ---- scripting ----

  void SetStoredOffsets(const OffsetMap& offsets) {
    absl::MutexLock lock(&mu_);
    stored_ = offsets;
  }
  void AddGroup(int32_t group_id, const std::string& base, const OffsetMap& start) {
    absl::MutexLock lock(&mu_);
    Group& group = groups_[group_id];
    group.base = base;
    group.checkpoints = {{0, start}};
  }
  void AddTask(int32_t group_id, const std::string& task_id) {
    absl::MutexLock lock(&mu_);
    groups_[group_id].tasks.push_back(task_id);
  }
  void LosePublishAnswers(int n) {
    absl::MutexLock lock(&mu_);
    lose_answers_ = n;
  }

  absl::StatusOr<OffsetMap> Finish(int32_t group_id, absl::Duration timeout) {
    return Round(group_id, /*finish=*/true, absl::Now() + timeout);
  }

  // ---- inspection ----

  std::vector<v1::CommittedSequence> CommitLog() const {
    absl::MutexLock lock(&mu_);
    return commit_log_;
  }
  OffsetMap StoredOffsets() const {
    absl::MutexLock lock(&mu_);
    return stored_;
  }
  std::vector<v1::SegmentDescriptor> Segments() const {
    absl::MutexLock lock(&mu_);
    std::vector<v1::SegmentDescriptor> out;
    for (const auto& [id, d] : segments_) out.push_back(d);
    return out;
  }
  std::vector<std::pair<int32_t, OffsetMap>> Checkpoints(int32_t group_id) const {
    absl::MutexLock lock(&mu_);
    const auto it = groups_.find(group_id);
    if (it == groups_.end()) return {};
    return it->second.checkpoints;
  }
  std::vector<v1::CheckpointDataSourceMetadataRequest> CheckpointRequests() const {
    absl::MutexLock lock(&mu_);
    return checkpoint_requests_;
  }
  int publish_calls() const {
    absl::MutexLock lock(&mu_);
    return publish_calls_;
  }
  std::vector<v1::PublishSegmentsRequest> publish_requests() const {
    absl::MutexLock lock(&mu_);
    return publish_requests_;
  }
  int publish_aborted() const {
    absl::MutexLock lock(&mu_);
    return publish_aborted_;
  }
  int registrations() const {
    absl::MutexLock lock(&mu_);
    return registrations_;
  }
  std::vector<v1::ReportOffsetOutOfRangeRequest> OffsetOutOfRangeReports() const {
    absl::MutexLock lock(&mu_);
    return out_of_range_;
  }
  absl::StatusOr<v1::TaskStatus> LastStatus(const std::string& task_id) const {
    absl::MutexLock lock(&mu_);
    const auto it = statuses_.find(task_id);
    if (it == statuses_.end()) return absl::NotFoundError(task_id);
    return it->second;
  }
  absl::StatusOr<std::string> TaskAddress(const std::string& task_id) const {
    absl::MutexLock lock(&mu_);
    return TaskAddressLocked(task_id);
  }

  // ---- SupervisorService ----

  grpc::Status CheckpointDataSourceMetadata(
      grpc::ServerContext*, const v1::CheckpointDataSourceMetadataRequest* request,
      v1::CheckpointDataSourceMetadataResponse* response) override {
    absl::MutexLock lock(&mu_);
    checkpoint_requests_.push_back(*request);
    if (request->datasource() != options_.datasource) {
      return Error(absl::StatusCode::kNotFound, "unknown datasource");
    }
    auto it = groups_.find(request->group_id());
    if (it == groups_.end()) {
      return Error(absl::StatusCode::kFailedPrecondition, "unknown group");
    }
    Group& group = it->second;
    const OffsetMap start = FromProto(request->start_offsets());
    for (size_t k = 0; k < group.checkpoints.size(); ++k) {
      if (group.checkpoints[k].second != start) continue;
      if (!options_.auto_checkpoint) {
        response->set_accepted(true);
        response->set_message("recorded (no automatic rounds)");
        return grpc::Status::OK;
      }
      const int32_t group_id = request->group_id();
      if (k + 1 == group.checkpoints.size()) {
        response->set_accepted(true);
        if (!group.round_queued) {
          group.round_queued = true;
          jobs_.push_back([this, group_id] {
            const auto done = Round(group_id, false, absl::Now() + absl::Seconds(30));
            absl::MutexLock lock(&mu_);
            groups_[group_id].round_queued = false;
            if (!done.ok()) round_errors_.push_back(done.status().ToString());
          });
        }
      } else {
        response->set_accepted(false);
        response->set_message("already checkpointed");
        const OffsetMap end = group.checkpoints[k + 1].second;
        const std::string task_id = request->task_id();
        jobs_.push_back([this, task_id, end] {
          SendEndOffsets(task_id, end, false, absl::Now() + absl::Seconds(30)).IgnoreError();
        });
      }
      return grpc::Status::OK;
    }
    return Error(absl::StatusCode::kFailedPrecondition,
                 absl::StrCat("no checkpoint ", FormatOffsets(start)));
  }

  grpc::Status PublishSegments(grpc::ServerContext*, const v1::PublishSegmentsRequest* request,
                               v1::PublishSegmentsResponse* response) override {
    absl::MutexLock lock(&mu_);
    ++publish_calls_;
    publish_requests_.push_back(*request);
    if (request->datasource() != options_.datasource) {
      return Error(absl::StatusCode::kNotFound, "unknown datasource");
    }
    bool behind = false, ahead = false;
    for (const auto& [p, start] : request->start_offsets()) {
      const auto stored = stored_.find(p);
      if (stored == stored_.end()) {
        return Error(absl::StatusCode::kFailedPrecondition,
                     absl::StrCat("no stored offset for partition ", p));
      }
      behind = behind || start < stored->second;
      ahead = ahead || start > stored->second;
    }
    if (behind) {
      ++publish_aborted_;
      return Error(absl::StatusCode::kAborted,
                   absl::StrCat("start ",
                                FormatOffsets(FromProto(request->start_offsets())),
                                " is behind the stored offsets ", FormatOffsets(stored_)));
    }
    if (ahead) {
      return Error(absl::StatusCode::kUnavailable, "start is ahead of the stored offsets");
    }
    for (const v1::SegmentDescriptor& d : request->segments()) {
      if (options_.deep_storage != nullptr && !options_.deep_storage->Stat(d.path()).ok()) {
        return Error(absl::StatusCode::kFailedPrecondition,
                     absl::StrCat("segment file ", d.path(), " is missing"));
      }
    }
    v1::CommittedSequence committed;
    committed.set_sequence_name(request->sequence_name());
    committed.set_task_id(request->task_id());
    committed.set_committed_at_ms(NowMillis());
    *committed.mutable_start_offsets() = request->start_offsets();
    *committed.mutable_end_offsets() = request->end_offsets();
    *committed.mutable_partition_stats() = request->partition_stats();
    for (const v1::SegmentDescriptor& d : request->segments()) {
      committed.add_segment_ids(d.id());
      if (segments_.count(d.id()) == 0) {
        v1::SegmentDescriptor stored = d;
        stored.set_used(true);
        stored.set_published_by_task(request->task_id());
        segments_[d.id()] = stored;
        response->add_inserted_segment_ids(d.id());
      }
    }
    commit_log_.push_back(committed);
    for (const auto& [p, end] : request->end_offsets()) stored_[p] = end;
    for (const auto& [p, o] : stored_) (*response->mutable_committed_offsets())[p] = o;
    if (lose_answers_ > 0) {
      --lose_answers_;
      return Error(absl::StatusCode::kUnavailable, "the answer was lost (test)");
    }
    return grpc::Status::OK;
  }

  grpc::Status GetPublishedSegments(grpc::ServerContext*,
                                    const v1::GetPublishedSegmentsRequest* request,
                                    v1::GetPublishedSegmentsResponse* response) override {
    absl::MutexLock lock(&mu_);
    for (const std::string& id : request->segment_ids()) {
      if (segments_.count(id)) response->add_published_segment_ids(id);
    }
    for (const v1::CommittedSequence& c : commit_log_) {
      if (c.sequence_name() == request->sequence_name()) {
        response->set_sequence_committed(true);
        *response->mutable_sequence_start_offsets() = c.start_offsets();
        *response->mutable_sequence_end_offsets() = c.end_offsets();
      }
    }
    return grpc::Status::OK;
  }

  grpc::Status AllocateSegment(grpc::ServerContext*, const v1::AllocateSegmentRequest* request,
                               v1::AllocateSegmentResponse* response) override {
    absl::MutexLock lock(&mu_);
    const auto key = std::make_pair(request->sequence_name(), request->interval().start_ms());
    auto it = allocations_.find(key);
    if (it == allocations_.end()) {
      const int64_t start = request->interval().start_ms();
      if (versions_.count(start) == 0) versions_[start] = FormatIsoInstant(NowMillis());
      const int32_t partition = next_partition_[start]++;
      v1::AllocateSegmentResponse allocation;
      *allocation.mutable_interval() = request->interval();
      allocation.set_version(versions_[start]);
      allocation.set_partition_num(partition);
      allocation.set_segment_id(
          SegmentId(options_.datasource, request->interval(), versions_[start], partition));
      it = allocations_.emplace(key, allocation).first;
    }
    *response = it->second;
    return grpc::Status::OK;
  }

  grpc::Status GetHandoffStatus(grpc::ServerContext*, const v1::GetHandoffStatusRequest* request,
                                v1::GetHandoffStatusResponse* response) override {
    absl::MutexLock lock(&mu_);
    for (const std::string& id : request->segment_ids()) {
      const auto it = segments_.find(id);
      if (it == segments_.end() || !options_.hand_off) continue;
      if (options_.deep_storage == nullptr || options_.deep_storage->Stat(it->second.path()).ok()) {
        response->add_handed_off_segment_ids(id);
      } else {
        response->add_failed_segment_ids(id);
      }
    }
    return grpc::Status::OK;
  }

  grpc::Status ListSegments(grpc::ServerContext*, const v1::ListSegmentsRequest* request,
                            v1::ListSegmentsResponse* response) override {
    absl::MutexLock lock(&mu_);
    for (const auto& [id, d] : segments_) {
      if (request->has_interval() && (d.interval().end_ms() <= request->interval().start_ms() ||
                                      d.interval().start_ms() >= request->interval().end_ms())) {
        continue;
      }
      *response->add_segments() = d;
    }
    return grpc::Status::OK;
  }

  grpc::Status ReportOffsetOutOfRange(grpc::ServerContext*,
                                      const v1::ReportOffsetOutOfRangeRequest* request,
                                      v1::ReportOffsetOutOfRangeResponse* response) override {
    absl::MutexLock lock(&mu_);
    out_of_range_.push_back(*request);
    response->set_reset(false);
    response->set_message("recorded");
    return grpc::Status::OK;
  }

  grpc::Status RegisterWorker(grpc::ServerContext*, const v1::RegisterWorkerRequest* request,
                              v1::RegisterWorkerResponse* response) override {
    absl::MutexLock lock(&mu_);
    ++registrations_;
    workers_[request->worker().worker_id()] = request->worker().address();
    for (const v1::TaskStatus& status : request->tasks()) Remember(status);
    response->set_heartbeat_interval_ms(options_.heartbeat_interval_ms);
    response->set_supervisor_instance_id("fake-supervisor");
    return grpc::Status::OK;
  }

  grpc::Status WorkerHeartbeat(grpc::ServerContext*, const v1::WorkerHeartbeatRequest* request,
                               v1::WorkerHeartbeatResponse* response) override {
    absl::MutexLock lock(&mu_);
    if (workers_.count(request->worker_id()) == 0) {
      return Error(absl::StatusCode::kNotFound, "unknown worker");
    }
    for (const v1::TaskStatus& status : request->tasks()) Remember(status);
    response->set_supervisor_instance_id("fake-supervisor");
    return grpc::Status::OK;
  }

  grpc::Status ReportTaskStatus(grpc::ServerContext*, const v1::ReportTaskStatusRequest* request,
                                v1::ReportTaskStatusResponse*) override {
    absl::MutexLock lock(&mu_);
    Remember(request->status());
    return grpc::Status::OK;
  }

 private:
  struct Group {
    std::string base;
    std::vector<std::pair<int32_t, OffsetMap>> checkpoints;
    std::vector<std::string> tasks;
    bool round_queued = false;
  };

  void Remember(const v1::TaskStatus& status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    statuses_[status.task_id()] = status;
  }

  absl::StatusOr<std::string> TaskAddressLocked(const std::string& task_id) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const auto status = statuses_.find(task_id);
    if (status == statuses_.end()) return absl::NotFoundError(task_id + " never reported");
    const auto worker = workers_.find(status->second.worker_id());
    if (worker == workers_.end()) return absl::NotFoundError("its worker is not registered");
    return worker->second;
  }

  std::unique_ptr<v1::TaskService::Stub> StubFor(const std::string& task_id) {
    absl::StatusOr<std::string> address;
    {
      absl::MutexLock lock(&mu_);
      address = TaskAddressLocked(task_id);
    }
    if (!address.ok()) return nullptr;
    return v1::TaskService::NewStub(
        grpc::CreateChannel(*address, grpc::InsecureChannelCredentials()));
  }

  // Pause with retries (the worker may be restarting) until `deadline`.
  absl::StatusOr<OffsetMap> PauseTask(const std::string& task_id, absl::Time deadline) {
    while (true) {
      absl::Status last = absl::UnavailableError("no address");
      if (auto stub = StubFor(task_id)) {
        grpc::ClientContext context;
        context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
        v1::PauseRequest request;
        request.set_task_id(task_id);
        request.set_timeout_ms(1000);
        v1::PauseResponse response;
        last = FromGrpcStatus(stub->Pause(&context, request, &response));
        if (last.ok()) return FromProto(response.current_offsets());
        if (last.code() != absl::StatusCode::kUnavailable &&
            last.code() != absl::StatusCode::kDeadlineExceeded) {
          return last;
        }
      }
      if (absl::Now() >= deadline || stopping()) return last;
      absl::SleepFor(absl::Milliseconds(50));
    }
  }

  bool stopping() const {
    absl::MutexLock lock(&mu_);
    return stop_;
  }

  // SetEndOffsets; if the task is not paused (e.g. its worker restarted),
  // pauses it again first.
  absl::Status SendEndOffsets(const std::string& task_id, const OffsetMap& end, bool finish,
                              absl::Time deadline) {
    while (true) {
      absl::Status last = absl::UnavailableError("no address");
      if (auto stub = StubFor(task_id)) {
        grpc::ClientContext context;
        context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
        v1::SetEndOffsetsRequest request;
        request.set_task_id(task_id);
        ToProto(end, request.mutable_end_offsets());
        request.set_finish(finish);
        v1::SetEndOffsetsResponse response;
        last = FromGrpcStatus(stub->SetEndOffsets(&context, request, &response));
        if (last.ok()) return last;
        if (last.code() == absl::StatusCode::kFailedPrecondition &&
            absl::StrContains(last.message(), "must be paused")) {
          if (absl::Status paused = PauseTask(task_id, deadline).status(); !paused.ok()) {
            return paused;
          }
          continue;
        }
        if (last.code() != absl::StatusCode::kUnavailable &&
            last.code() != absl::StatusCode::kDeadlineExceeded) {
          return last;
        }
      }
      if (absl::Now() >= deadline || stopping()) return last;
      absl::SleepFor(absl::Milliseconds(50));
    }
  }

  absl::Status ResumeTask(const std::string& task_id) {
    auto stub = StubFor(task_id);
    if (stub == nullptr) return absl::UnavailableError("no address");
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
    v1::ResumeRequest request;
    request.set_task_id(task_id);
    v1::ResumeResponse response;
    return FromGrpcStatus(stub->Resume(&context, request, &response));
  }

  absl::StatusOr<OffsetMap> Round(int32_t group_id, bool finish, absl::Time deadline) {
    std::vector<std::string> tasks;
    OffsetMap latest;
    {
      absl::MutexLock lock(&mu_);
      const auto it = groups_.find(group_id);
      if (it == groups_.end()) return absl::NotFoundError("unknown group");
      tasks = it->second.tasks;
      latest = it->second.checkpoints.back().second;
    }
    OffsetMap max = latest;
    for (const std::string& task_id : tasks) {
      absl::StatusOr<OffsetMap> offsets = PauseTask(task_id, deadline);
      if (!offsets.ok()) return Annotate(offsets.status(), absl::StrCat("pausing ", task_id));
      for (const auto& [p, o] : *offsets) max[p] = std::max(max[p], o);
    }
    if (!finish && max == latest) {
      for (const std::string& task_id : tasks) ResumeTask(task_id).IgnoreError();
      return max;
    }
    if (!finish) {
      absl::MutexLock lock(&mu_);
      Group& group = groups_[group_id];
      group.checkpoints.emplace_back(group.checkpoints.back().first + 1, max);
    }
    for (const std::string& task_id : tasks) {
      const absl::Status sent = SendEndOffsets(task_id, max, finish, deadline);
      if (!sent.ok()) return Annotate(sent, absl::StrCat("SetEndOffsets on ", task_id));
    }
    return max;
  }

  void RunRounds() {
    while (true) {
      std::function<void()> job;
      {
        absl::MutexLock lock(&mu_);
        auto ready = [this]()
                         ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_ || !jobs_.empty(); };
        mu_.Await(absl::Condition(&ready));
        if (stop_) return;
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      job();
    }
  }

  const FakeSupervisorOptions options_;
  std::unique_ptr<GrpcServer> server_;
  std::thread rounds_;

  mutable absl::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::deque<std::function<void()>> jobs_ ABSL_GUARDED_BY(mu_);
  OffsetMap stored_ ABSL_GUARDED_BY(mu_);
  std::map<int32_t, Group> groups_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::CommittedSequence> commit_log_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, v1::SegmentDescriptor> segments_ ABSL_GUARDED_BY(mu_);
  std::map<std::pair<std::string, int64_t>, v1::AllocateSegmentResponse> allocations_
      ABSL_GUARDED_BY(mu_);
  std::map<int64_t, std::string> versions_ ABSL_GUARDED_BY(mu_);
  std::map<int64_t, int32_t> next_partition_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::string> workers_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, v1::TaskStatus> statuses_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::CheckpointDataSourceMetadataRequest> checkpoint_requests_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::ReportOffsetOutOfRangeRequest> out_of_range_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> round_errors_ ABSL_GUARDED_BY(mu_);
  int publish_calls_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<v1::PublishSegmentsRequest> publish_requests_ ABSL_GUARDED_BY(mu_);
  int publish_aborted_ ABSL_GUARDED_BY(mu_) = 0;
  int registrations_ ABSL_GUARDED_BY(mu_) = 0;
  int lose_answers_ ABSL_GUARDED_BY(mu_) = 0;
};

absl::StatusOr<std::unique_ptr<FakeSupervisor>> FakeSupervisor::Start(
    FakeSupervisorOptions options) {
  auto impl = std::make_unique<Impl>(std::move(options));
  if (absl::Status s = impl->StartServer(); !s.ok()) return s;
  return std::unique_ptr<FakeSupervisor>(new FakeSupervisor(std::move(impl)));
}

FakeSupervisor::FakeSupervisor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
FakeSupervisor::~FakeSupervisor() { impl_->StopRounds(); }

const std::string& FakeSupervisor::address() const { return impl_->address(); }
void FakeSupervisor::SetStoredOffsets(const OffsetMap& offsets) {
  impl_->SetStoredOffsets(offsets);
}
void FakeSupervisor::AddGroup(int32_t group_id, const std::string& base, const OffsetMap& start) {
  impl_->AddGroup(group_id, base, start);
}
void FakeSupervisor::AddTask(int32_t group_id, const std::string& task_id) {
  impl_->AddTask(group_id, task_id);
}
absl::StatusOr<OffsetMap> FakeSupervisor::Finish(int32_t group_id, absl::Duration timeout) {
  return impl_->Finish(group_id, timeout);
}
void FakeSupervisor::LosePublishAnswers(int n) { impl_->LosePublishAnswers(n); }
std::vector<v1::CommittedSequence> FakeSupervisor::CommitLog() const { return impl_->CommitLog(); }
OffsetMap FakeSupervisor::StoredOffsets() const { return impl_->StoredOffsets(); }
std::vector<v1::SegmentDescriptor> FakeSupervisor::Segments() const { return impl_->Segments(); }
std::vector<std::pair<int32_t, OffsetMap>> FakeSupervisor::Checkpoints(int32_t group_id) const {
  return impl_->Checkpoints(group_id);
}
std::vector<v1::CheckpointDataSourceMetadataRequest> FakeSupervisor::CheckpointRequests() const {
  return impl_->CheckpointRequests();
}
int FakeSupervisor::publish_calls() const { return impl_->publish_calls(); }
std::vector<v1::PublishSegmentsRequest> FakeSupervisor::PublishRequests() const {
  return impl_->publish_requests();
}
int FakeSupervisor::publish_aborted() const { return impl_->publish_aborted(); }
int FakeSupervisor::registrations() const { return impl_->registrations(); }
std::vector<v1::ReportOffsetOutOfRangeRequest> FakeSupervisor::OffsetOutOfRangeReports() const {
  return impl_->OffsetOutOfRangeReports();
}
absl::StatusOr<v1::TaskStatus> FakeSupervisor::LastStatus(const std::string& task_id) const {
  return impl_->LastStatus(task_id);
}
absl::StatusOr<std::string> FakeSupervisor::TaskAddress(const std::string& task_id) const {
  return impl_->TaskAddress(task_id);
}

}  // namespace sluice::testing
