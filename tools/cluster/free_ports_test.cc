#include "tools/cluster/free_ports.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <set>

#include "gtest/gtest.h"

namespace sluice {
namespace cluster {
namespace {

TEST(FreePortsTest, RangeEndsWhereTheKernelsEphemeralRangeStarts) {
  const auto [low, high] = StablePortRange();
  EXPECT_EQ(low, 10000);
  EXPECT_GT(high, low);
  EXPECT_LE(high, 65536);
}

TEST(FreePortsTest, PicksDistinctFreePortsInTheStableRange) {
  auto ports = PickStablePorts(8);
  ASSERT_TRUE(ports.ok()) << ports.status();
  ASSERT_EQ(ports->size(), 8u);
  const auto [low, high] = StablePortRange();
  std::set<int> distinct(ports->begin(), ports->end());
  EXPECT_EQ(distinct.size(), 8u);
  for (int port : *ports) {
    EXPECT_GE(port, low);
    EXPECT_LT(port, high);
    EXPECT_TRUE(PortIsFree(port)) << port;
  }
}

TEST(FreePortsTest, APortInUseIsNotFree) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&sin), sizeof(sin)), 0);
  socklen_t len = sizeof(sin);
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&sin), &len), 0);
  EXPECT_FALSE(PortIsFree(ntohs(sin.sin_port)));
  close(fd);
}

TEST(FreePortsTest, RunIsConsecutiveAndFree) {
  auto first = PickStablePortRun(3);
  ASSERT_TRUE(first.ok()) << first.status();
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(PortIsFree(*first + i));
  EXPECT_EQ(PickStablePortRun(0).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace cluster
}  // namespace sluice
