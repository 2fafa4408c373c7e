// One unary call with a request given as raw bytes, whatever the method:
// for tests that send what no generated stub would (oversized or malformed
// messages, unknown methods), waiting up to 60 s for the status.
#ifndef SLUICE_TESTS_TESTING_RAW_CALL_H_
#define SLUICE_TESTS_TESTING_RAW_CALL_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

namespace sluice::testing {

grpc::Status CallRaw(const std::shared_ptr<grpc::Channel>& channel, const std::string& method,
                     const std::string& payload);

}  // namespace sluice::testing

#endif  // SLUICE_TESTS_TESTING_RAW_CALL_H_
