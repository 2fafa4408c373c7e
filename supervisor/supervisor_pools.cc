// The pools of a stream supervisor, shared or its own (supervisor_pools.h).
#include "supervisor/supervisor_pools.h"

#include <utility>

namespace sluice::supervisor {
namespace {

// The pool the manager shares, or one of its own, made once and kept in
// `own`.
StrandExecutor* SharedOrOwn(StrandExecutor* shared, std::unique_ptr<StrandExecutor>* own,
                            StrandExecutorOptions options) {
  if (shared != nullptr) return shared;
  if (*own == nullptr) *own = std::make_unique<StrandExecutor>(std::move(options));
  return own->get();
}

}  // namespace

SupervisorPools::SupervisorPools(SupervisorPoolsOptions options) : options_(std::move(options)) {}

StrandExecutor* SupervisorPools::loops() {
  return SharedOrOwn(
      options_.loops, &own_loops_,
      {.threads = 1, .clock = options_.clock, .name = "supervisor " + options_.datasource});
}

StrandExecutor* SupervisorPools::queries() {
  return SharedOrOwn(options_.queries, &own_queries_,
                     {.threads = 1, .name = "stream queries " + options_.datasource});
}

StrandExecutor* SupervisorPools::task_rpcs() {
  return SharedOrOwn(options_.task_rpcs, &own_task_rpcs_,
                     {.threads = 2, .name = "task rpcs " + options_.datasource});
}

}  // namespace sluice::supervisor
