// The sluice-produce binary against the sluice-devbroker binary.
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/subprocess.h"

namespace sluice {
namespace {

using testing::ExitStatus;
using ::testing::HasSubstr;
using testing::Subprocess;
using testing::SubprocessOptions;

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class SluiceProduceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = testing::MakeTempDir("produce");
    ASSERT_TRUE(dir.ok());
    dir_ = *dir;
    SubprocessOptions options;
    options.binary = *testing::FindRunfile("tools/sluice-devbroker");
    options.args = {"--topic=wiki:2", "--bootstrap_file=" + dir_ + "/bootstrap",
                    "--control_stdin=false"};
    auto broker = Subprocess::Start(options);
    ASSERT_TRUE(broker.ok()) << broker.status();
    broker_ = *std::move(broker);
    auto bootstrap = testing::WaitForFile(dir_ + "/bootstrap", absl::Seconds(20), broker_.get());
    ASSERT_TRUE(bootstrap.ok()) << bootstrap.status();
  }

  ExitStatus Produce(std::vector<std::string> args) {
    SubprocessOptions options;
    options.binary = *testing::FindRunfile("tools/sluice-produce");
    options.args = std::move(args);
    options.stdout_path = dir_ + "/stdout";
    options.stderr_path = dir_ + "/stderr";
    auto process = Subprocess::Start(options);
    EXPECT_TRUE(process.ok()) << process.status();
    auto exit = (*process)->Wait(absl::Seconds(60));
    EXPECT_TRUE(exit.ok()) << exit.status();
    return *exit;
  }

  std::string dir_;
  std::unique_ptr<Subprocess> broker_;
};

TEST_F(SluiceProduceTest, ReportsPerPartitionCountsAndWritesTheSummary) {
  const ExitStatus exit =
      Produce({"--bootstrap_file=" + dir_ + "/bootstrap", "--topic=wiki", "--records=1001",
               "--malformed_fraction=0.01", "--summary_json=" + dir_ + "/summary.json"});
  ASSERT_TRUE(exit.success()) << exit.ToString() << Slurp(dir_ + "/stderr");
  const std::string out = Slurp(dir_ + "/stdout");
  EXPECT_THAT(out, HasSubstr("partition 0: 501 records"));
  EXPECT_THAT(out, HasSubstr("offsets [0, 501)"));
  EXPECT_THAT(out, HasSubstr("partition 1: 500 records"));
  EXPECT_THAT(out, HasSubstr("total: 1001 records"));
  EXPECT_THAT(Slurp(dir_ + "/stderr"), HasSubstr("[produce]"));
  EXPECT_THAT(Slurp(dir_ + "/summary.json"), HasSubstr("{\"topic\":\"wiki\",\"records\":1001,"));
}

TEST_F(SluiceProduceTest, ExitCodes) {
  EXPECT_EQ(Produce({"--topic=wiki"}).code, 2);  // no bootstrap
  EXPECT_THAT(Slurp(dir_ + "/stderr"), HasSubstr("give --bootstrap or --bootstrap_file"));
  EXPECT_EQ(Produce({"--bootstrap_file=" + dir_ + "/bootstrap", "--duration=soon"}).code, 2);
  EXPECT_EQ(Produce({"--bootstrap=127.0.0.1:1", "--records=5", "--metadata_timeout=2s"}).code,
            1);  // nothing listens
  EXPECT_THAT(Slurp(dir_ + "/stderr"), HasSubstr("UNAVAILABLE"));
}

}  // namespace
}  // namespace sluice
