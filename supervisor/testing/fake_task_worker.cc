#include "supervisor/testing/fake_task_worker.h"

#include <glog/logging.h>
#include <grpcpp/grpcpp.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/grpc_server.h"
#include "common/spec.h"

namespace sluice::supervisor::testing {
namespace {

grpc::Status Error(grpc::StatusCode code, const std::string& message) {
  return grpc::Status(code, message);
}

}  // namespace

class FakeTaskWorker::Service final : public v1::TaskService::Service {
 public:
  explicit Service(FakeTaskWorker* worker) : w_(worker) {}

  grpc::Status RunTask(grpc::ServerContext* context, const v1::RunTaskRequest* request,
                       v1::RunTaskResponse* response) override {
    absl::Duration delay;
    {
      absl::MutexLock lock(&w_->mu_);
      delay = w_->run_task_delay_;
    }
    absl::SleepFor(delay);
    const grpc::Status status = DoRunTask(context, request, response);
    w_->AfterCall("RunTask", request->spec().task_id());
    return status;
  }

  grpc::Status DoRunTask(grpc::ServerContext*, const v1::RunTaskRequest* request,
                         v1::RunTaskResponse* response) {
    absl::MutexLock lock(&w_->mu_);
    const v1::TaskSpec& spec = request->spec();
    w_->Log("RunTask", spec.task_id());
    auto it = w_->tasks_.find(spec.task_id());
    if (it != w_->tasks_.end()) {
      *response->mutable_status() = w_->StatusLocked(it->second);
      response->set_already_running(true);
      return grpc::Status::OK;
    }
    int running = 0;
    for (const auto& [id, task] : w_->tasks_) running += IsRunning(task.state) ? 1 : 0;
    if (running >= w_->options_.capacity) {
      return Error(grpc::StatusCode::RESOURCE_EXHAUSTED, "every slot is taken");
    }
    FakeTask task;
    task.spec = spec;
    task.script = w_->default_script_;
    task.start_time_ms = absl::ToUnixMillis(absl::Now());
    std::vector<v1::Checkpoint> checkpoints(spec.checkpoints().begin(), spec.checkpoints().end());
    std::sort(checkpoints.begin(), checkpoints.end(),
              [](const auto& a, const auto& b) { return a.sequence_id() < b.sequence_id(); });
    if (checkpoints.empty()) {
      v1::Checkpoint first;
      *first.mutable_offsets() = spec.start_offsets();
      checkpoints.push_back(first);
    }
    for (size_t i = 0; i < checkpoints.size(); ++i) {
      FakeSequence sequence;
      sequence.id = checkpoints[i].sequence_id();
      sequence.start = FromProto(checkpoints[i].offsets());
      if (i + 1 < checkpoints.size()) {
        sequence.end = FromProto(checkpoints[i + 1].offsets());
        sequence.checkpointed = true;
      } else {
        for (const auto& [p, o] : sequence.start) sequence.end[p] = kEndOfPartition;
      }
      task.sequences.push_back(sequence);
    }
    task.current = task.sequences.front().start;
    for (const auto& [p, o] : FromProto(spec.start_offsets()))
      task.end_offsets[p] = kEndOfPartition;
    task.state = v1::TASK_STATE_READING;
    auto& stored = w_->tasks_[spec.task_id()] = std::move(task);
    *response->mutable_status() = w_->StatusLocked(stored);
    return grpc::Status::OK;
  }

  grpc::Status StopTask(grpc::ServerContext*, const v1::StopTaskRequest* request,
                        v1::StopTaskResponse* response) override {
    absl::MutexLock lock(&w_->mu_);
    w_->Log("StopTask", absl::StrCat(request->task_id(), " ", v1::StopMode_Name(request->mode())));
    FakeTask* task = Find(request->task_id());
    if (task == nullptr) return NotFound(request->task_id());
    if (!IsTerminal(task->state)) {
      if (request->mode() == v1::STOP_MODE_KILL) {
        task->state = v1::TASK_STATE_FAILED;
        task->error = absl::StrCat("killed by supervisor: ", request->reason());
      } else {
        task->state = v1::TASK_STATE_STOPPED;
        task->error = absl::StrCat("stopped: ", request->reason());
      }
      task->paused = false;
      task->end_time_ms = absl::ToUnixMillis(absl::Now());
    }
    *response->mutable_status() = w_->StatusLocked(*task);
    return grpc::Status::OK;
  }

  grpc::Status ListTasks(grpc::ServerContext*, const v1::ListTasksRequest* request,
                         v1::ListTasksResponse* response) override {
    absl::MutexLock lock(&w_->mu_);
    w_->Log("ListTasks", request->datasource());
    for (const auto& [id, task] : w_->tasks_) {
      if (!request->datasource().empty() && task.spec.datasource() != request->datasource()) {
        continue;
      }
      *response->add_tasks() = w_->StatusLocked(task);
    }
    return grpc::Status::OK;
  }

  grpc::Status Pause(grpc::ServerContext*, const v1::PauseRequest* request,
                     v1::PauseResponse* response) override {
    absl::MutexLock lock(&w_->mu_);
    w_->Log("Pause", request->task_id());
    FakeTask* task = Find(request->task_id());
    if (task == nullptr) return NotFound(request->task_id());
    if (task->state != v1::TASK_STATE_READING && task->state != v1::TASK_STATE_PAUSED) {
      return Error(grpc::StatusCode::FAILED_PRECONDITION,
                   absl::StrCat("task is ", v1::TaskState_Name(task->state), ", not pausable"));
    }
    switch (task->script.pause) {
      case PauseBehavior::kNeverPause:
        return Error(grpc::StatusCode::UNAVAILABLE, "read loop has not parked yet");
      case PauseBehavior::kRefuse:
        return Error(grpc::StatusCode::FAILED_PRECONDITION, "scripted refusal to pause");
      case PauseBehavior::kPause:
        break;
    }
    task->paused = true;
    task->state = v1::TASK_STATE_PAUSED;
    response->set_state(v1::TASK_STATE_PAUSED);
    ToProto(task->current, response->mutable_current_offsets());
    return grpc::Status::OK;
  }

  grpc::Status Resume(grpc::ServerContext*, const v1::ResumeRequest* request,
                      v1::ResumeResponse* response) override {
    absl::MutexLock lock(&w_->mu_);
    w_->Log("Resume", request->task_id());
    FakeTask* task = Find(request->task_id());
    if (task == nullptr) return NotFound(request->task_id());
    if (task->state == v1::TASK_STATE_PAUSED) {
      task->paused = false;
      task->awaiting_checkpoint = false;
      task->state = v1::TASK_STATE_READING;
    }
    response->set_state(task->state);
    return grpc::Status::OK;
  }

  grpc::Status SetEndOffsets(grpc::ServerContext* context, const v1::SetEndOffsetsRequest* request,
                             v1::SetEndOffsetsResponse* response) override {
    const grpc::Status status = DoSetEndOffsets(context, request, response);
    w_->AfterCall("SetEndOffsets", request->task_id());
    return status;
  }

  grpc::Status DoSetEndOffsets(grpc::ServerContext*, const v1::SetEndOffsetsRequest* request,
                               v1::SetEndOffsetsResponse* response) {
    absl::MutexLock lock(&w_->mu_);
    const OffsetMap offsets = FromProto(request->end_offsets());
    w_->Log("SetEndOffsets", absl::StrCat(request->task_id(), " ", FormatOffsets(offsets),
                                          request->finish() ? " finish" : ""));
    FakeTask* task = Find(request->task_id());
    if (task == nullptr) return NotFound(request->task_id());
    if (task->script.reject_set_end_offsets) {
      return Error(grpc::StatusCode::INVALID_ARGUMENT, "scripted rejection of SetEndOffsets");
    }
    for (const auto& [p, o] : offsets) {
      if (!task->end_offsets.count(p)) {
        return Error(grpc::StatusCode::INVALID_ARGUMENT,
                     absl::StrCat("partition ", p, " does not belong to the task"));
      }
    }
    FakeSequence& latest = task->sequences.back();
    const bool duplicate = (!request->finish() && offsets == latest.start) ||
                           (request->finish() && latest.checkpointed && offsets == latest.end);
    if (duplicate) {
      if (task->state == v1::TASK_STATE_PAUSED) task->state = v1::TASK_STATE_READING;
      task->paused = false;
      task->awaiting_checkpoint = false;
      response->set_duplicate(true);
      ToProto(latest.end, response->mutable_end_offsets());
      response->set_latest_sequence_id(latest.id);
      return grpc::Status::OK;
    }
    if (latest.checkpointed) {
      return Error(grpc::StatusCode::FAILED_PRECONDITION,
                   absl::StrCat("sequence ", latest.id, " already has end offsets"));
    }
    // A real task takes a checkpoint's end while reading (its claims are
    // its current offsets here); a final end wants a pause.
    if (!task->paused && (!task->script.pauseless || request->finish())) {
      return Error(grpc::StatusCode::FAILED_PRECONDITION,
                   "task must be paused before changing the end offsets");
    }
    // Offsets before the latest start move it back (task/sequences.h), as a
    // real task does: not past what was read, not before the previous start.
    bool lowers = false;
    for (const auto& [p, o] : offsets) lowers = lowers || o < latest.start.at(p);
    if (lowers) {
      if (task->sequences.size() < 2) {
        return Error(grpc::StatusCode::INVALID_ARGUMENT, "the previous sequence is published");
      }
      FakeSequence& previous = task->sequences[task->sequences.size() - 2];
      OffsetMap boundary = latest.start;
      for (const auto& [p, o] : offsets) boundary[p] = std::min(o, latest.start.at(p));
      for (const auto& [p, o] : boundary) {
        if (o < latest.start.at(p) && o < task->current[p]) {
          return Error(grpc::StatusCode::ABORTED,
                       absl::StrCat("already read past: end offset ", o, " of partition ", p,
                                    " is before the current offset ", task->current[p]));
        }
        if (o < previous.start.at(p)) {
          return Error(grpc::StatusCode::INVALID_ARGUMENT, "before the previous sequence's start");
        }
      }
      previous.end = boundary;
      latest.start = boundary;
      if (!request->finish() && boundary == offsets) {
        task->paused = false;
        task->awaiting_checkpoint = false;
        task->state = v1::TASK_STATE_READING;
        ToProto(boundary, response->mutable_end_offsets());
        response->set_latest_sequence_id(latest.id);
        return grpc::Status::OK;
      }
    }
    for (const auto& [p, o] : offsets) {
      if (o < task->current[p]) {
        return Error(task->paused ? grpc::StatusCode::INVALID_ARGUMENT : grpc::StatusCode::ABORTED,
                     absl::StrCat(task->paused ? "" : "already read past: ", "end offset ", o,
                                  " of partition ", p, " is before the current offset ",
                                  task->current[p]));
      }
    }
    latest.end = offsets;
    latest.checkpointed = true;
    if (request->finish()) {
      task->end_offsets = offsets;
      task->state = v1::TASK_STATE_PUBLISHING;
    } else {
      FakeSequence next;
      next.id = latest.id + 1;
      next.start = offsets;
      for (const auto& [p, o] : offsets) next.end[p] = kEndOfPartition;
      task->sequences.push_back(next);
      task->state = v1::TASK_STATE_READING;
    }
    task->paused = false;
    task->awaiting_checkpoint = false;
    ToProto(offsets, response->mutable_end_offsets());
    response->set_latest_sequence_id(task->sequences.back().id);
    return grpc::Status::OK;
  }

  grpc::Status GetCurrentOffsets(grpc::ServerContext*, const v1::GetCurrentOffsetsRequest* request,
                                 v1::GetCurrentOffsetsResponse* response) override {
    absl::MutexLock lock(&w_->mu_);
    w_->Log("GetCurrentOffsets", request->task_id());
    FakeTask* task = Find(request->task_id());
    if (task == nullptr) return NotFound(request->task_id());
    ToProto(task->current, response->mutable_offsets());
    // Reads on right after answering (while the supervisor decides).
    if (!task->paused && task->state == v1::TASK_STATE_READING) {
      for (auto& [p, o] : task->current) o += task->script.read_after_offsets;
    }
    return grpc::Status::OK;
  }

  grpc::Status GetEndOffsets(grpc::ServerContext*, const v1::GetEndOffsetsRequest* request,
                             v1::GetEndOffsetsResponse* response) override {
    absl::MutexLock lock(&w_->mu_);
    w_->Log("GetEndOffsets", request->task_id());
    FakeTask* task = Find(request->task_id());
    if (task == nullptr) return NotFound(request->task_id());
    ToProto(task->end_offsets, response->mutable_offsets());
    return grpc::Status::OK;
  }

  grpc::Status GetCheckpoints(grpc::ServerContext*, const v1::GetCheckpointsRequest* request,
                              v1::GetCheckpointsResponse* response) override {
    absl::MutexLock lock(&w_->mu_);
    w_->Log("GetCheckpoints", request->task_id());
    FakeTask* task = Find(request->task_id());
    if (task == nullptr) return NotFound(request->task_id());
    *response->mutable_checkpoints() = w_->StatusLocked(*task).checkpoints();
    return grpc::Status::OK;
  }

  grpc::Status GetTaskStatus(grpc::ServerContext*, const v1::GetTaskStatusRequest* request,
                             v1::GetTaskStatusResponse* response) override {
    absl::MutexLock lock(&w_->mu_);
    w_->Log("GetTaskStatus", request->task_id());
    FakeTask* task = Find(request->task_id());
    if (task == nullptr) return NotFound(request->task_id());
    *response->mutable_status() = w_->StatusLocked(*task);
    return grpc::Status::OK;
  }

 private:
  static bool IsRunning(v1::TaskState state) {
    return state != v1::TASK_STATE_SUCCESS && state != v1::TASK_STATE_FAILED && state != v1::TASK_STATE_STOPPED;
  }
  static bool IsTerminal(v1::TaskState state) { return !IsRunning(state); }
  static grpc::Status NotFound(const std::string& id) {
    return Error(grpc::StatusCode::NOT_FOUND, absl::StrCat("no task ", id));
  }
  FakeTask* Find(const std::string& id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(w_->mu_) {
    auto it = w_->tasks_.find(id);
    return it == w_->tasks_.end() ? nullptr : &it->second;
  }

  FakeTaskWorker* w_;
};

FakeTaskWorker::FakeTaskWorker(FakeTaskWorkerOptions options) : options_(std::move(options)) {}

absl::StatusOr<std::unique_ptr<FakeTaskWorker>> FakeTaskWorker::Start(
    FakeTaskWorkerOptions options) {
  std::unique_ptr<FakeTaskWorker> worker(new FakeTaskWorker(std::move(options)));
  worker->service_ = std::make_unique<Service>(worker.get());
  GrpcServerOptions grpc_options;
  grpc_options.listen_address = "127.0.0.1:0";
  grpc_options.services = {worker->service_.get()};
  auto server = GrpcServer::Start(std::move(grpc_options));
  if (!server.ok()) return server.status();
  worker->server_ = std::move(*server);
  worker->server_->SetServing(true);
  worker->address_ = worker->server_->address();
  if (!worker->options_.supervisor_address.empty()) {
    worker->heartbeat_thread_ = std::thread([w = worker.get()] { w->HeartbeatLoop(); });
  }
  return worker;
}

FakeTaskWorker::~FakeTaskWorker() {
  stop_heartbeats_.Notify();
  if (heartbeat_thread_.joinable()) heartbeat_thread_.join();
  Shutdown();
}

void FakeTaskWorker::Shutdown() {
  if (server_) server_->Shutdown(absl::ZeroDuration());
}

void FakeTaskWorker::HeartbeatLoop() {
  auto stub = v1::SupervisorService::NewStub(
      grpc::CreateChannel(options_.supervisor_address, grpc::InsecureChannelCredentials()));
  bool registered = false;
  absl::Duration interval = absl::Milliseconds(100);
  while (!stop_heartbeats_.HasBeenNotified()) {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(2)));
    if (!registered) {
      v1::RegisterWorkerResponse response;
      grpc::Status status = stub->RegisterWorker(&context, RegistrationRequest(), &response);
      if (status.ok()) {
        registered = true;
        if (response.heartbeat_interval_ms() > 0) {
          interval = absl::Milliseconds(response.heartbeat_interval_ms());
        }
      }
    } else {
      v1::WorkerHeartbeatResponse response;
      grpc::Status status = stub->WorkerHeartbeat(&context, HeartbeatRequest(), &response);
      if (status.error_code() == grpc::StatusCode::NOT_FOUND) registered = false;
      for (const std::string& id : response.stop_task_ids()) {
        absl::MutexLock lock(&mu_);
        auto it = tasks_.find(id);
        if (it != tasks_.end() && it->second.state != v1::TASK_STATE_SUCCESS &&
            it->second.state != v1::TASK_STATE_FAILED && it->second.state != v1::TASK_STATE_STOPPED) {
          it->second.state = v1::TASK_STATE_STOPPED;
          it->second.error = "stopped: the supervisor no longer wants it";
        }
      }
    }
    stop_heartbeats_.WaitForNotificationWithTimeout(registered ? interval : absl::Milliseconds(50));
  }
}

v1::TaskStatus FakeTaskWorker::StatusLocked(const FakeTask& task) const {
  v1::TaskStatus status;
  status.set_task_id(task.spec.task_id());
  status.set_datasource(task.spec.datasource());
  status.set_group_id(task.spec.group_id());
  status.set_base_sequence_name(task.spec.base_sequence_name());
  status.set_state(task.state);
  status.set_worker_id(options_.worker_id);
  if (!task.sequences.empty())
    ToProto(task.sequences.front().start, status.mutable_start_offsets());
  ToProto(task.current, status.mutable_current_offsets());
  ToProto(task.end_offsets, status.mutable_end_offsets());
  for (const FakeSequence& sequence : task.sequences) {
    v1::Checkpoint* checkpoint = status.add_checkpoints();
    checkpoint->set_sequence_id(sequence.id);
    ToProto(sequence.start, checkpoint->mutable_offsets());
  }
  status.set_error(task.error);
  status.set_start_time_ms(task.start_time_ms);
  status.set_awaiting_checkpoint(task.awaiting_checkpoint);
  if (!task.sequences.empty()) status.set_latest_sequence_id(task.sequences.back().id);
  status.set_end_time_ms(task.end_time_ms);
  return status;
}

void FakeTaskWorker::SetRunTaskDelay(absl::Duration delay) {
  absl::MutexLock lock(&mu_);
  run_task_delay_ = delay;
}

void FakeTaskWorker::SetAfterCallHook(AfterCallHook hook) {
  absl::MutexLock lock(&mu_);
  after_call_ = std::move(hook);
}

void FakeTaskWorker::AfterCall(const std::string& method, const std::string& task_id) {
  AfterCallHook hook;
  {
    absl::MutexLock lock(&mu_);
    hook = after_call_;
  }
  if (hook) hook(method, task_id);
}

void FakeTaskWorker::Log(const std::string& method, const std::string& line) {
  ++calls_[method];
  call_log_.push_back(absl::StrCat(method, " ", line));
}

v1::RegisterWorkerRequest FakeTaskWorker::RegistrationRequest() {
  v1::RegisterWorkerRequest request;
  v1::WorkerInfo* info = request.mutable_worker();
  info->set_worker_id(options_.worker_id);
  info->set_address(address_);
  info->set_capacity(options_.capacity);
  info->set_version("fake");
  absl::MutexLock lock(&mu_);
  for (const auto& [id, task] : tasks_) *request.add_tasks() = StatusLocked(task);
  return request;
}

v1::WorkerHeartbeatRequest FakeTaskWorker::HeartbeatRequest() {
  v1::WorkerHeartbeatRequest request;
  request.set_worker_id(options_.worker_id);
  absl::MutexLock lock(&mu_);
  for (const auto& [id, task] : tasks_) *request.add_tasks() = StatusLocked(task);
  return request;
}

v1::TaskStatus FakeTaskWorker::Status(const std::string& task_id) {
  absl::MutexLock lock(&mu_);
  auto it = tasks_.find(task_id);
  CHECK(it != tasks_.end()) << "no task " << task_id;
  return StatusLocked(it->second);
}

std::vector<std::string> FakeTaskWorker::TaskIds() {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> ids;
  for (const auto& [id, task] : tasks_) ids.push_back(id);
  return ids;
}

std::optional<FakeTask> FakeTaskWorker::Task(const std::string& task_id) {
  absl::MutexLock lock(&mu_);
  auto it = tasks_.find(task_id);
  if (it == tasks_.end()) return std::nullopt;
  return it->second;
}

void FakeTaskWorker::SetDefaultScript(FakeTaskScript script) {
  absl::MutexLock lock(&mu_);
  default_script_ = script;
}

void FakeTaskWorker::SetScript(const std::string& task_id, FakeTaskScript script) {
  absl::MutexLock lock(&mu_);
  tasks_.at(task_id).script = script;
}

void FakeTaskWorker::Read(const std::string& task_id, const OffsetMap& offsets) {
  absl::MutexLock lock(&mu_);
  FakeTask& task = tasks_.at(task_id);
  if (task.paused || (task.state != v1::TASK_STATE_READING && task.state != v1::TASK_STATE_PUBLISHING)) return;
  for (const auto& [p, o] : offsets) {
    auto end = task.end_offsets.find(p);
    if (end == task.end_offsets.end()) continue;
    task.current[p] = std::max(task.current[p], std::min(o, end->second));
  }
}

v1::CheckpointDataSourceMetadataRequest FakeTaskWorker::RequestCheckpoint(
    const std::string& task_id) {
  absl::MutexLock lock(&mu_);
  FakeTask& task = tasks_.at(task_id);
  task.awaiting_checkpoint = true;
  if (!task.script.pauseless) {  // a pauseless task asks early and reads on
    task.paused = true;
    task.state = v1::TASK_STATE_PAUSED;
  }
  v1::CheckpointDataSourceMetadataRequest request;
  request.set_datasource(task.spec.datasource());
  request.set_task_id(task_id);
  request.set_group_id(task.spec.group_id());
  request.set_base_sequence_name(task.spec.base_sequence_name());
  request.set_sequence_id(task.sequences.back().id);
  ToProto(task.sequences.back().start, request.mutable_start_offsets());
  return request;
}

void FakeTaskWorker::SetState(const std::string& task_id, v1::TaskState state,
                              const std::string& error) {
  absl::MutexLock lock(&mu_);
  FakeTask& task = tasks_.at(task_id);
  task.state = state;
  task.error = error;
  task.paused = state == v1::TASK_STATE_PAUSED;
  if (state == v1::TASK_STATE_SUCCESS || state == v1::TASK_STATE_FAILED || state == v1::TASK_STATE_STOPPED) {
    task.end_time_ms = absl::ToUnixMillis(absl::Now());
  }
}

void FakeTaskWorker::ForgetTasks() {
  absl::MutexLock lock(&mu_);
  tasks_.clear();
}

void FakeTaskWorker::AddTask(FakeTask task) {
  absl::MutexLock lock(&mu_);
  const std::string id = task.spec.task_id();
  tasks_[id] = std::move(task);
}

int FakeTaskWorker::Calls(const std::string& method) {
  absl::MutexLock lock(&mu_);
  auto it = calls_.find(method);
  return it == calls_.end() ? 0 : it->second;
}

std::vector<std::string> FakeTaskWorker::CallLog() {
  absl::MutexLock lock(&mu_);
  return call_log_;
}

}  // namespace sluice::supervisor::testing
