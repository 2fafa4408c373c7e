// The two clients a stream supervisor talks to its tasks with, made from
// the spec's tuningConfig (ChatOptionsFromTuning): the chat (status,
// checkpoints, stops; retried as tuningConfig says), and one for RunTask
// only: a single attempt with a deadline of at most two seconds, so a frozen
// worker never keeps a replacement task waiting.
#ifndef SLUICE_SUPERVISOR_TASK_CLIENTS_H_
#define SLUICE_SUPERVISOR_TASK_CLIENTS_H_

#include <functional>
#include <memory>

#include "sluice/v1/spec.pb.h"
#include "supervisor/task_client.h"

namespace sluice::supervisor {

using TaskClientFactory = std::function<std::unique_ptr<TaskClient>(const ChatOptions&)>;

class TaskClients {
 public:
  TaskClients(const TaskClientFactory& factory, const v1::TuningConfig& tuning);
  TaskClients(const TaskClients&) = delete;
  TaskClients& operator=(const TaskClients&) = delete;

  TaskClient* chat() const { return chat_.get(); }
  // RunTask only.
  TaskClient* run() const { return run_.get(); }

 private:
  std::unique_ptr<TaskClient> chat_;
  std::unique_ptr<TaskClient> run_;
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_TASK_CLIENTS_H_
