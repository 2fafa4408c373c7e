// A server interceptor that gives a request gRPC could not parse a status a
// caller can act on. gRPC's own answer is INTERNAL with an empty message
// (the generated handler's deserializer), which reads as a server fault; the
// interceptor turns it into INVALID_ARGUMENT naming the method and the
// request type it expected. Installed on every sluice server (GrpcServer).
#ifndef SLUICE_COMMON_UNPARSEABLE_REQUEST_H_
#define SLUICE_COMMON_UNPARSEABLE_REQUEST_H_

#include <grpcpp/support/server_interceptor.h>

#include <memory>

namespace sluice {

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
NewUnparseableRequestInterceptorFactory();

}  // namespace sluice

#endif  // SLUICE_COMMON_UNPARSEABLE_REQUEST_H_
