// The bounds GrpcServer holds before any caller is authenticated: request
// size, serving threads, and what a caller's method names can create.
#include "common/grpc_server.h"

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <condition_variable>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/metrics/registry.h"
#include "tests/testing/raw_call.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpc/reflection/v1alpha/reflection.grpc.pb.h"

namespace sluice {
namespace {

int ThreadsOfThisProcess() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    int threads = 0;
    if (absl::StartsWith(line, "Threads:") &&
        absl::SimpleAtoi(absl::StripAsciiWhitespace(line.substr(8)), &threads)) {
      return threads;
    }
  }
  return -1;
}

using testing::CallRaw;

class GrpcServerBoundsTest : public ::testing::Test {
 protected:
  void Start(GrpcServerOptions options) {
    options.metrics = &registry_;
    auto server = GrpcServer::Start(std::move(options));
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    server_->SetServing(true);
    channel_ = grpc::CreateChannel(server_->address(), grpc::InsecureChannelCredentials());
  }

  metrics::Registry registry_;
  std::unique_ptr<GrpcServer> server_;
  std::shared_ptr<grpc::Channel> channel_;
};

TEST_F(GrpcServerBoundsTest, ARequestBeyondTheBoundIsRefusedBeforeItIsDecoded) {
  Start({});
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(std::string(5 << 20, 'x'));  // 5 MiB, over the 4 MiB bound
  grpc::Status status =
      CallRaw(channel_, "/grpc.health.v1.Health/Check", request.SerializeAsString());
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << status.error_message();

  request.set_service("");  // the server itself: answered as before
  status = CallRaw(channel_, "/grpc.health.v1.Health/Check", request.SerializeAsString());
  EXPECT_TRUE(status.ok()) << status.error_message();
}

// Each open stream held a thread of its own: 2,000 anonymous reflection
// streams made 2,000 threads.
TEST_F(GrpcServerBoundsTest, OpenStreamsCannotTakeMoreThanTheThreadBound) {
  GrpcServerOptions options;
  options.max_threads = 6;
  Start(std::move(options));
  const int before = ThreadsOfThisProcess();
  ASSERT_GT(before, 0);

  auto stub = grpc::reflection::v1alpha::ServerReflection::NewStub(channel_);
  struct Stream {
    grpc::ClientContext ctx;
    std::unique_ptr<grpc::ClientReaderWriter<grpc::reflection::v1alpha::ServerReflectionRequest,
                                             grpc::reflection::v1alpha::ServerReflectionResponse>>
        rw;
  };
  std::vector<std::unique_ptr<Stream>> streams;
  int accepted = 0;
  for (int i = 0; i < 40; ++i) {
    auto stream = std::make_unique<Stream>();
    stream->ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    stream->rw = stub->ServerReflectionInfo(&stream->ctx);
    // A request answered means a server thread now serves this stream.
    grpc::reflection::v1alpha::ServerReflectionRequest request;
    request.set_list_services("");
    grpc::reflection::v1alpha::ServerReflectionResponse response;
    if (stream->rw->Write(request) && stream->rw->Read(&response)) ++accepted;
    streams.push_back(std::move(stream));
  }
  const int during = ThreadsOfThisProcess();
  EXPECT_LT(accepted, 40);
  EXPECT_LE(during - before, 6 + 4) << "threads before " << before << ", with 40 streams " << during;

  int exhausted = 0;
  for (auto& stream : streams) {
    stream->rw->WritesDone();
    grpc::Status status = stream->rw->Finish();
    if (status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) ++exhausted;
  }
  EXPECT_GT(exhausted, 0);

  // Once the streams are gone the server answers again.
  grpc::health::v1::HealthCheckRequest request;
  EXPECT_TRUE(
      CallRaw(channel_, "/grpc.health.v1.Health/Check", request.SerializeAsString()).ok());
}

// Method names are the caller's to choose: none may become a series of its own.
TEST_F(GrpcServerBoundsTest, UnknownMethodsCreateNoMetricSeries) {
  Start({});
  for (int i = 0; i < 50; ++i) {
    grpc::Status status =
        CallRaw(channel_, absl::StrCat("/attacker.Service", i, "/M", i), "");
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNIMPLEMENTED);
  }
  const std::string text = registry_.Render();
  EXPECT_FALSE(absl::StrContains(text, "attacker")) << text;
}

TEST(GrpcServerOptionsTest, BoundsMustBePositive) {
  GrpcServerOptions options;
  options.max_threads = 0;
  EXPECT_EQ(GrpcServer::Start(options).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace sluice
