// The spec the in-process cluster tests submit: topic "wiki" read from the
// earliest offset, millisecond timestamps, one count metric, short start
// delay and poll timeout; what varies per test is an option.
#ifndef SLUICE_TESTS_WIKI_COUNT_SPEC_H_
#define SLUICE_TESTS_WIKI_COUNT_SPEC_H_

#include <string>

#include "absl/status/status.h"
#include "sluice/v1/supervisor_service.grpc.pb.h"

namespace sluice::testing {

struct WikiCountSpecOptions {
  std::string datasource;
  std::string bootstrap_servers;
  int task_count = 1;
  int replicas = 1;
  std::string period = "PT0.1S";
};

v1::SupervisorSpec WikiCountSpec(const WikiCountSpecOptions& options);

// SubmitSupervisor; a refusal is INTERNAL with the server's message.
absl::Status SubmitSpec(v1::SupervisorService::Stub* stub, const v1::SupervisorSpec& spec);

}  // namespace sluice::testing

#endif  // SLUICE_TESTS_WIKI_COUNT_SPEC_H_
