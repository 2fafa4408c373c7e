// The three pools a stream supervisor runs on: its loop's strand, the
// background Kafka queries, and the RunTask calls. The manager shares one
// of each among every datasource; a supervisor built alone (unit tests)
// makes a pool of its own for each it uses, on first use, and owns it.
//
// Asked only while the supervisor starts (not thread-safe). Declared before
// the strands and jobs that run on the pools, so the pools of its own go
// after them.
#ifndef SLUICE_SUPERVISOR_SUPERVISOR_POOLS_H_
#define SLUICE_SUPERVISOR_SUPERVISOR_POOLS_H_

#include <memory>
#include <string>

#include "supervisor/clock.h"
#include "supervisor/strand_executor.h"

namespace sluice::supervisor {

struct SupervisorPoolsOptions {
  // The shared pools (not owned; they must outlive this); null: one of its
  // own.
  StrandExecutor* loops = nullptr;
  StrandExecutor* queries = nullptr;
  StrandExecutor* task_rpcs = nullptr;
  // The clock of a loop pool of its own (the queries and RunTask calls
  // always run on real time).
  Clock* clock = Clock::Real();
  // Names the pools of its own in logs.
  std::string datasource;
};

class SupervisorPools {
 public:
  explicit SupervisorPools(SupervisorPoolsOptions options);
  SupervisorPools(const SupervisorPools&) = delete;
  SupervisorPools& operator=(const SupervisorPools&) = delete;

  // The loop's pool (one thread of its own, on the clock).
  StrandExecutor* loops();
  // The background Kafka queries' pool (one thread of its own).
  StrandExecutor* queries();
  // The RunTask calls' pool (two threads of its own).
  StrandExecutor* task_rpcs();

 private:
  const SupervisorPoolsOptions options_;
  std::unique_ptr<StrandExecutor> own_loops_;
  std::unique_ptr<StrandExecutor> own_queries_;
  std::unique_ptr<StrandExecutor> own_task_rpcs_;
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_SUPERVISOR_POOLS_H_
