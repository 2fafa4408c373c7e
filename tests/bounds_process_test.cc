// Process level, authentication on: what an anonymous caller can make the
// real supervisor and worker binaries spend before anyone knows who it is.
// Requests near the receive bound are decoded and refused (UNAUTHENTICATED),
// larger ones are refused undecoded (RESOURCE_EXHAUSTED); memory grows by
// what the concurrent decodes need and is not kept; open streams cannot take
// more than the server's thread bound; and the servers keep answering their
// health checks and authenticated callers throughout. Before the bounds, one
// such request took a supervisor from ~200 MiB to ~1.9 GiB and kept most of
// it, and 2,000 open streams made 2,000 threads.
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/auth/grpc_auth.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpc/reflection/v1alpha/reflection.grpc.pb.h"
#include "sluice/v1/supervisor_service.grpc.pb.h"
#include "tests/testing/raw_call.h"
#include "tests/testing/subprocess.h"
#include "tools/cluster/process_cluster.h"

namespace sluice {
namespace {

// A field of /proc/<pid>/status, in its unit (kB for VmRSS); -1 if absent.
int64_t ProcStatus(pid_t pid, const std::string& key) {
  std::ifstream status(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(status, line)) {
    if (!absl::StartsWith(line, key + ":")) continue;
    std::string value(absl::StripAsciiWhitespace(line.substr(key.size() + 1)));
    value = value.substr(0, value.find(' '));
    int64_t n = -1;
    if (absl::SimpleAtoi(value, &n)) return n;
  }
  return -1;
}

using testing::CallRaw;

std::shared_ptr<grpc::Channel> Dial(const std::string& address) {
  grpc::ChannelArguments args;
  args.SetMaxSendMessageSize(64 << 20);
  return grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
}

class BoundsProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto root = testing::MakeTempDir("bounds_process");
    ASSERT_TRUE(root.ok()) << root.status();
    cluster::ProcessClusterOptions options;
    options.root_dir = *root;
    options.workers = 1;
    options.topics = {"wiki:1"};
    options.authentication = true;
    auto cluster = cluster::ProcessCluster::Create(options);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
    ASSERT_TRUE(cluster_->Start().ok());
    ASSERT_TRUE(cluster_->WaitHealthy(absl::Seconds(60)).ok());
  }

  // Anonymous requests of `bytes` (a ListSegments-shaped message: one string
  // field) from `callers` threads, `rounds` each; the codes they got.
  std::map<grpc::StatusCode, int> Flood(const std::string& address, const std::string& method,
                                        size_t bytes, int callers, int rounds) {
    std::string payload = "\x0a";  // field 1, length-delimited
    size_t n = bytes;
    do {
      payload.push_back(static_cast<char>((n & 0x7f) | (n > 0x7f ? 0x80 : 0)));
      n >>= 7;
    } while (n > 0);
    payload.append(bytes, 'd');
    std::map<grpc::StatusCode, int> codes;
    std::mutex mu;
    std::vector<std::thread> threads;
    for (int c = 0; c < callers; ++c) {
      threads.emplace_back([&] {
        auto channel = Dial(address);
        for (int r = 0; r < rounds; ++r) {
          grpc::StatusCode code = CallRaw(channel, method, payload).error_code();
          std::lock_guard<std::mutex> lock(mu);
          ++codes[code];
        }
      });
    }
    for (auto& t : threads) t.join();
    return codes;
  }

  std::unique_ptr<cluster::ProcessCluster> cluster_;
};

TEST_F(BoundsProcessTest, AnonymousCallersCannotGrowAServerOrTakeItsThreads) {
  struct Target {
    std::string name, address, method;
    size_t receive_bound;  // the largest request bound of the server's methods
  };
  for (const Target& target :
       {Target{cluster::kSupervisor, cluster_->supervisor_address(),
               "/sluice.v1.SupervisorService/ListSegments", 4 << 20},
        Target{cluster::WorkerName(0), cluster_->worker_address(0),
               "/sluice.v1.TaskService/GetTaskStatus", 2 << 20}}) {
    SCOPED_TRACE(target.name);
    const pid_t pid = cluster_->pid(target.name);
    ASSERT_GT(pid, 0);
    const int64_t rss_before = ProcStatus(pid, "VmRSS");
    const int64_t threads_before = ProcStatus(pid, "Threads");

    // Over the receive bound: refused before it is decoded.
    std::map<grpc::StatusCode, int> over =
        Flood(target.address, target.method, target.receive_bound + 64, 1, 1);
    EXPECT_EQ(over[grpc::StatusCode::RESOURCE_EXHAUSTED], 1);
    // Just under it: decoded, then refused for want of a credential. Eight
    // at a time, four rounds each.
    std::atomic<int64_t> rss_peak{rss_before};
    std::atomic<bool> done{false};
    std::thread sampler([&] {
      while (!done) {
        rss_peak = std::max<int64_t>(rss_peak, ProcStatus(pid, "VmRSS"));
        absl::SleepFor(absl::Milliseconds(20));
      }
    });
    std::map<grpc::StatusCode, int> near =
        Flood(target.address, target.method, target.receive_bound - 64, 8, 4);
    done = true;
    sampler.join();
    EXPECT_EQ(near[grpc::StatusCode::UNAUTHENTICATED], 32);
    absl::SleepFor(absl::Milliseconds(500));
    const int64_t rss_after = ProcStatus(pid, "VmRSS");
    std::cerr << "[bounds] " << target.name << ": RSS " << rss_before / 1024 << " MiB, peak "
              << rss_peak / 1024 << " MiB during 8 concurrent anonymous requests of "
              << (target.receive_bound >> 20) << " MiB, "
              << rss_after / 1024 << " MiB after\n";
    // Eight decodes in flight cost tens of MiB; gigabytes was the bug.
    EXPECT_LT(rss_peak - rss_before, 400 * 1024) << "kB";
    EXPECT_LT(rss_after - rss_before, 200 * 1024) << "kB kept after the requests";

    // 300 anonymous reflection streams held open, over 6 connections (one
    // connection carries at most 64 calls at once).
    struct Stream {
      grpc::ClientContext ctx;
      std::unique_ptr<grpc::ClientReaderWriter<grpc::reflection::v1alpha::ServerReflectionRequest,
                                               grpc::reflection::v1alpha::ServerReflectionResponse>>
          rw;
    };
    std::vector<std::unique_ptr<grpc::reflection::v1alpha::ServerReflection::Stub>> stubs;
    for (int c = 0; c < 6; ++c) {
      grpc::ChannelArguments args;
      args.SetInt("sluice.test_connection", c);  // a connection of its own
      stubs.push_back(grpc::reflection::v1alpha::ServerReflection::NewStub(
          grpc::CreateCustomChannel(target.address, grpc::InsecureChannelCredentials(), args)));
    }
    std::vector<std::unique_ptr<Stream>> streams;
    for (int i = 0; i < 300; ++i) {
      auto stream = std::make_unique<Stream>();
      stream->ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
      stream->rw = stubs[i % stubs.size()]->ServerReflectionInfo(&stream->ctx);
      streams.push_back(std::move(stream));
    }
    absl::SleepFor(absl::Seconds(1));
    const int64_t threads_during = ProcStatus(pid, "Threads");
    std::cerr << "[bounds] " << target.name << ": " << threads_before << " threads, "
              << threads_during << " with 300 open anonymous streams\n";
    // The server's thread bound is 128 (common/grpc_server.h), plus the
    // process's own threads.
    EXPECT_LE(threads_during - threads_before, 128 + 8);
    for (auto& stream : streams) {
      stream->ctx.TryCancel();
      stream->rw->Finish();
    }
    stubs.clear();
    // Still answering.
    grpc::health::v1::HealthCheckRequest health;
    EXPECT_TRUE(CallRaw(Dial(target.address), "/grpc.health.v1.Health/Check",
                        health.SerializeAsString())
                    .ok());
  }
  // An authenticated admin is served as before.
  auto admin = v1::SupervisorService::NewStub(
      auth::NewChannel(cluster_->supervisor_address(), grpc::InsecureChannelCredentials(),
                       auth::ClientAuth{*auth::ReadTokenFile(cluster_->token_file("admin"))}));
  grpc::ClientContext ctx;
  v1::ListSupervisorsResponse listed;
  EXPECT_TRUE(admin->ListSupervisors(&ctx, v1::ListSupervisorsRequest(), &listed).ok());
}

}  // namespace
}  // namespace sluice
