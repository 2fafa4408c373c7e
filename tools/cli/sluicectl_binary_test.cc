// The sluicectl binary as a user runs it, against the fake supervisor over
// loopback gRPC: flag handling, stdout/stderr, exit codes.
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/subprocess.h"
#include "tools/cli/fake_supervisor.h"

namespace sluice {
namespace sluicectl {
namespace {

using ::sluice::testing::Subprocess;
using ::sluice::testing::SubprocessOptions;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

struct CliRun {
  int code = -1;
  std::string out;
  std::string err;
};

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

class SluicectlBinaryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto fake = FakeSupervisor::Start();
    ASSERT_TRUE(fake.ok()) << fake.status();
    fake_ = *std::move(fake);
    auto binary = testing::FindRunfile("tools/sluicectl");
    ASSERT_TRUE(binary.ok()) << binary.status();
    binary_ = *binary;
  }

  CliRun Sluicectl(std::vector<std::string> args, std::map<std::string, std::string> env = {}) {
    SubprocessOptions options;
    options.binary = binary_;
    options.args = std::move(args);
    options.env = std::move(env);
    CliRun run;
    auto process = Subprocess::Start(options);
    EXPECT_TRUE(process.ok()) << process.status();
    if (!process.ok()) return run;
    auto exit = (*process)->Wait(absl::Seconds(30));
    EXPECT_TRUE(exit.ok()) << exit.status();
    if (!exit.ok()) return run;
    EXPECT_TRUE(exit->exited) << exit->ToString();
    run.code = exit->code;
    run.out = Slurp((*process)->stdout_path());
    run.err = (*process)->StderrTail(100000);
    return run;
  }

  std::string Supervisor() const { return "--supervisor=" + fake_->address(); }

  std::unique_ptr<FakeSupervisor> fake_;
  std::string binary_;
};

TEST_F(SluicectlBinaryTest, ListPrintsATable) {
  v1::ListSupervisorsResponse list;
  auto* s = list.add_supervisors();
  s->set_datasource("wiki");
  s->set_state(v1::SUPERVISOR_STATE_RUNNING);
  s->set_healthy(true);
  s->set_spec_version(1);
  fake_->SetResponse("ListSupervisors", list);
  CliRun r = Sluicectl({Supervisor(), "list"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "DATASOURCE  STATE    HEALTHY  SUSPENDED  SPEC  MESSAGE\n"
            "wiki        RUNNING  yes      no           v1\n");
  EXPECT_THAT(r.err, IsEmpty());
}

TEST_F(SluicectlBinaryTest, FlagsMayFollowTheCommandAndJsonIsJson) {
  v1::GetSupervisorStatusResponse response;
  v1::SupervisorStatus* status = response.mutable_status();
  status->set_datasource("wiki");
  status->set_state(v1::SUPERVISOR_STATE_SUSPENDED);
  fake_->SetResponse("GetSupervisorStatus", response);
  CliRun r = Sluicectl({"status", "wiki", "--json", Supervisor()});
  EXPECT_EQ(r.code, 0) << r.err;
  // The RPC's answer as protobuf JSON: wrapped, the enum value by its full name.
  EXPECT_EQ(r.out,
            "{\n \"status\": {\n  \"datasource\": \"wiki\",\n  \"state\": "
            "\"SUPERVISOR_STATE_SUSPENDED\"\n }\n}\n");
}

TEST_F(SluicectlBinaryTest, SupervisorAddressFromTheEnvironment) {
  fake_->SetResponse("ListWorkers", v1::ListWorkersResponse());
  CliRun r = Sluicectl({"workers"}, {{"SLUICE_SUPERVISOR", fake_->address()}});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "no workers\n");
}

TEST_F(SluicectlBinaryTest, ExitCodes) {
  // 2: usage (nothing sent).
  CliRun r = Sluicectl({Supervisor(), "status"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("usage: sluicectl status DATASOURCE"));
  r = Sluicectl({Supervisor(), "--timeout=soon", "list"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("--timeout=soon is not a positive duration"));
  r = Sluicectl({Supervisor()});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("usage: sluicectl"));
  EXPECT_TRUE(fake_->Calls().empty());
  // 1: the RPC failed, with its gRPC code.
  fake_->SetError("TerminateSupervisor",
                  grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "already terminated"));
  r = Sluicectl({Supervisor(), "terminate", "wiki"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "sluicectl: terminate wiki failed: FAILED_PRECONDITION: already terminated\n");
  EXPECT_THAT(r.out, IsEmpty());
  r = Sluicectl({"--supervisor=127.0.0.1:1", "--timeout=5s", "list"});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("list failed: UNAVAILABLE"));
  // 0: help.
  r = Sluicectl({"help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_THAT(r.out, HasSubstr("commands:"));
}

TEST_F(SluicectlBinaryTest, SubmitFromStdinDash) {
  // "-" reads the spec from stdin: here /dev/null, an empty document.
  CliRun r = Sluicectl({Supervisor(), "submit", "-"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("<stdin>:1:1: expected a value, found the end of the file"));
}

// The flags as the issue writes them: after the command, before the file.
TEST_F(SluicectlBinaryTest, SubmitDruidAndGetDruidAsWritten) {
  const std::string path = absl::StrCat(getenv("TEST_TMPDIR"), "/druid.json");
  std::ofstream(path) << R"({"type": "kafka", "spec": {
    "dataSchema": {"dataSource": "wikipedia", "timestampSpec": {"column": "time"}},
    "ioConfig": {"topic": "wikipedia", "consumerProperties": {"bootstrap.servers": "k:9092"}},
    "tuningConfig": {"type": "kafka", "workerThreads": 2}}})";
  CliRun r = Sluicectl({Supervisor(), "submit", "--druid", path});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("spec.tuningConfig.workerThreads is not supported by sluice"));
  EXPECT_THAT(fake_->Calls(), IsEmpty());

  v1::SubmitSupervisorResponse response;
  response.mutable_spec()->set_datasource("wikipedia");
  response.set_version(1);
  response.add_warnings("spec.tuningConfig.workerThreads is not supported by sluice; ignored");
  fake_->SetResponse("SubmitSupervisor", response);
  r = Sluicectl({Supervisor(), "submit", "--druid", "--allow_unsupported", path});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "wikipedia: stored spec version 1 (new supervisor)\n");
  EXPECT_THAT(r.err, HasSubstr("sluicectl: warning: spec.tuningConfig.workerThreads"));

  fake_->SetResponse("GetSupervisor", response);
  r = Sluicectl({Supervisor(), "get", "--druid", "wikipedia"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\"dataSource\": \"wikipedia\""));
  EXPECT_THAT(r.out, HasSubstr("\"type\": \"kafka\""));
}

}  // namespace
}  // namespace sluicectl
}  // namespace sluice
