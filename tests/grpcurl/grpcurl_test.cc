// Both services driven with the real grpcurl binary only (grpcurl_env.h):
// reflection (list/describe), health, the README's spec submitted and
// ingested until committed, segments, suspend/resume, reset offsets,
// terminate, the TaskService reads; bearer tokens, client certificates and no
// authentication; and the status code and message grpcurl prints for bad
// calls. grpcurl's output is parsed back into the proto messages with
// protobuf's JSON parser (int64 fields arrive as JSON strings).
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "google/protobuf/util/json_util.h"
#include "sluice/v1/supervisor_service.pb.h"
#include "sluice/v1/task_service.pb.h"
#include "tests/grpcurl/grpcurl_env.h"

namespace sluice::grpcurl {
namespace {

using Args = std::vector<std::string>;

template <typename Message>
Message Parse(const Result& result) {
  Message message;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;
  auto status = google::protobuf::util::JsonStringToMessage(result.out, &message, options);
  EXPECT_TRUE(status.ok()) << status << "\n" << result.out;
  return message;
}

// -plaintext [-H authorization...] [-d DATA] ADDRESS METHOD
Args Call(const std::string& address, const std::string& method, const std::string& data = "",
          const std::string& principal = "admin") {
  Args args = {"-plaintext"};
  if (!principal.empty()) {
    Args bearer = BearerArgs(principal);
    args.insert(args.end(), bearer.begin(), bearer.end());
  }
  if (!data.empty()) args.insert(args.end(), {"-d", data});
  args.insert(args.end(), {address, method});
  return args;
}

std::string Supervisor() { return Cluster() != nullptr ? Cluster()->supervisor_address() : ""; }
std::string Worker(int i) { return Cluster() != nullptr ? Cluster()->worker_address(i) : ""; }

// The README's spec for datasource `name` on the cluster's broker, with the
// supervisor's period and start delay shortened and a short task duration,
// so groups roll over and commit within seconds.
std::string ReadmeSpecFor(const std::string& name) {
  absl::StatusOr<std::string> spec = ReadmeSpec();
  EXPECT_TRUE(spec.ok()) << spec.status();
  if (!spec.ok() || Cluster() == nullptr) return "";
  return absl::StrReplaceAll(
      *spec, {{"\"datasource\": \"wiki\"", absl::StrCat("\"datasource\": \"", name, "\"")},
              {"127.0.0.1:9092", Cluster()->bootstrap_servers()},
              {"\"taskDuration\": \"PT1H\"",
               "\"taskDuration\": \"PT4S\", \"period\": \"PT0.5S\", \"startDelay\": \"PT0.1S\""}});
}

int64_t Sum(const google::protobuf::Map<int32_t, int64_t>& offsets) {
  int64_t sum = 0;
  for (const auto& [p, o] : offsets) sum += o;
  return sum;
}

TEST(GrpcurlTest, ListAndDescribeBothServices) {
  Result list = Grpcurl({"-plaintext", Supervisor(), "list"});
  ASSERT_TRUE(list.ok()) << list.Describe();
  EXPECT_TRUE(absl::StrContains(list.out, "sluice.v1.SupervisorService")) << list.out;
  EXPECT_TRUE(absl::StrContains(list.out, "grpc.health.v1.Health")) << list.out;
  EXPECT_TRUE(absl::StrContains(list.out, "grpc.reflection.v1alpha.ServerReflection")) << list.out;
  Result methods = Grpcurl({"-plaintext", Supervisor(), "list", "sluice.v1.SupervisorService"});
  ASSERT_TRUE(methods.ok()) << methods.Describe();
  for (const char* m : {"SubmitSupervisor", "GetSupervisorStatus", "ListSegments", "ResetOffsets",
                        "TerminateSupervisor"}) {
    EXPECT_TRUE(absl::StrContains(methods.out, absl::StrCat("sluice.v1.SupervisorService.", m)))
        << methods.out;
  }
  Result describe = Grpcurl({"-plaintext", Supervisor(), "describe", "sluice.v1.SupervisorSpec"});
  ASSERT_TRUE(describe.ok()) << describe.Describe();
  EXPECT_TRUE(absl::StrContains(describe.out, "message SupervisorSpec")) << describe.out;

  Result worker = Grpcurl({"-plaintext", Worker(0), "list"});
  ASSERT_TRUE(worker.ok()) << worker.Describe();
  EXPECT_TRUE(absl::StrContains(worker.out, "sluice.v1.TaskService")) << worker.out;
  Result task = Grpcurl({"-plaintext", Worker(0), "describe", "sluice.v1.TaskService"});
  ASSERT_TRUE(task.ok()) << task.Describe();
  EXPECT_TRUE(absl::StrContains(task.out, "rpc GetTaskStatus")) << task.out;
}

TEST(GrpcurlTest, HealthOfEveryServerWithoutCredentials) {
  // Reflection describes the health service (it did not: common/grpc_server.cc).
  Result describe = Grpcurl({"-plaintext", Supervisor(), "describe", "grpc.health.v1.Health"});
  ASSERT_TRUE(describe.ok()) << describe.Describe();
  EXPECT_TRUE(absl::StrContains(describe.out, "rpc Check")) << describe.out;
  for (const std::string& address : {Supervisor(), Worker(0), Worker(1)}) {
    Result health = Grpcurl({"-plaintext", address, "grpc.health.v1.Health/Check"});
    ASSERT_TRUE(health.ok()) << address << ": " << health.Describe();
    EXPECT_TRUE(absl::StrContains(health.out, "\"status\": \"SERVING\"")) << health.out;
  }
}

// The whole life of a datasource over grpcurl.
TEST(GrpcurlTest, ReadmeSpecIngestsAndIsOperatedWithGrpcurl) {
  ASSERT_NE(Cluster(), nullptr);
  const std::string ds = "wiki";
  Result submit = Grpcurl({"-plaintext", BearerArgs("admin")[0], BearerArgs("admin")[1], "-d", "@",
                           Supervisor(), "sluice.v1.SupervisorService/SubmitSupervisor"},
                          absl::StrCat("{\"spec\": ", ReadmeSpecFor(ds), "}"));
  ASSERT_TRUE(submit.ok()) << submit.Describe();
  EXPECT_TRUE(absl::StrContains(submit.out, "\"datasource\": \"wiki\"")) << submit.out;

  // Status until everything produced is committed (4 partitions).
  const Args status = Call(Supervisor(), "sluice.v1.SupervisorService/GetSupervisorStatus",
                           "{\"datasource\": \"wiki\"}", "reader");
  Result committed = PollUntil(
      status,
      [](const std::string& out) {
        Result r;
        r.out = out;
        return Sum(Parse<v1::GetSupervisorStatusResponse>(r).status().committed_offsets()) ==
               kRecordsPerTopic;
      },
      absl::Seconds(60));
  ASSERT_TRUE(committed.ok()) << committed.Describe();
  v1::SupervisorStatus s = Parse<v1::GetSupervisorStatusResponse>(committed).status();
  ASSERT_EQ(Sum(s.committed_offsets()), kRecordsPerTopic) << committed.out;
  EXPECT_EQ(s.partitions(), 4);
  // grpcurl prints the proto field names (committed_offsets) and int64
  // values as JSON strings (proto3 JSON mapping), map keys always as strings.
  EXPECT_TRUE(absl::StrContains(committed.out, "\"committed_offsets\": {")) << committed.out;
  EXPECT_TRUE(absl::StrContains(committed.out, "\"segments_published\": \"")) << committed.out;

  Result segments = Grpcurl(Call(Supervisor(), "sluice.v1.SupervisorService/ListSegments",
                                 "{\"datasource\": \"wiki\", \"limit\": 1000}", "reader"));
  ASSERT_TRUE(segments.ok()) << segments.Describe();
  v1::ListSegmentsResponse listed = Parse<v1::ListSegmentsResponse>(segments);
  ASSERT_GT(listed.segments_size(), 0) << segments.out;
  int64_t rows = 0;
  for (const auto& seg : listed.segments()) rows += seg.num_rows();
  EXPECT_GT(rows, 0);

  // TaskService reads on a worker, with the reader token: a task of this
  // datasource, its status, offsets and checkpoints.
  std::string task_id;
  int worker = 0;
  for (int i = 0; i < 2 && task_id.empty(); ++i) {
    Result tasks = Grpcurl(Call(Worker(i), "sluice.v1.TaskService/ListTasks", "", "reader"));
    ASSERT_TRUE(tasks.ok()) << tasks.Describe();
    const v1::ListTasksResponse listed_tasks = Parse<v1::ListTasksResponse>(tasks);
    for (const auto& t : listed_tasks.tasks()) {
      if (t.datasource() == ds) {
        task_id = t.task_id();
        worker = i;
        break;
      }
    }
  }
  ASSERT_FALSE(task_id.empty()) << "no task of wiki on either worker";
  const std::string ref = absl::StrCat("{\"taskId\": \"", task_id, "\"}");
  for (const char* method : {"GetTaskStatus", "GetCurrentOffsets", "GetEndOffsets",
                             "GetCheckpoints"}) {
    Result r = Grpcurl(Call(Worker(worker), absl::StrCat("sluice.v1.TaskService/", method), ref,
                            "reader"));
    // A task may finish between ListTasks and this call (roll-over every 4 s).
    EXPECT_TRUE(r.ok() || ErrorCode(r) == "NotFound") << method << ": " << r.Describe();
  }

  // Suspend, then resume.
  const std::string ref_ds = "{\"datasource\": \"wiki\"}";
  Result suspend = Grpcurl(Call(Supervisor(), "sluice.v1.SupervisorService/SuspendSupervisor", ref_ds));
  ASSERT_TRUE(suspend.ok()) << suspend.Describe();
  EXPECT_TRUE(Parse<v1::SuspendSupervisorResponse>(suspend).supervisor().suspended()) << suspend.out;
  Result suspended = PollUntil(status, [](const std::string& out) {
    return absl::StrContains(out, "\"state\": \"SUPERVISOR_STATE_SUSPENDED\"");
  }, absl::Seconds(30));
  // Enum values by their full, prefixed names (buf's ENUM_VALUE_PREFIX).
  ASSERT_TRUE(absl::StrContains(suspended.out, "\"state\": \"SUPERVISOR_STATE_SUSPENDED\""))
      << suspended.Describe();
  Result resume = Grpcurl(Call(Supervisor(), "sluice.v1.SupervisorService/ResumeSupervisor", ref_ds));
  ASSERT_TRUE(resume.ok()) << resume.Describe();
  EXPECT_FALSE(Parse<v1::ResumeSupervisorResponse>(resume).supervisor().suspended()) << resume.out;

  // Reset partition 0 to offset 100 (offsets as JSON strings, as grpcurl
  // prints them; numbers are accepted too): it is re-read and committed
  // again from there, and the reset is in the commit log.
  Result reset = Grpcurl(Call(Supervisor(), "sluice.v1.SupervisorService/ResetOffsets",
                              "{\"datasource\": \"wiki\", \"offsets\": {\"0\": \"100\", \"1\": 200}}"));
  ASSERT_TRUE(reset.ok()) << reset.Describe();
  // The resets are in the commit log (old -> new offset), then everything
  // after them is read and committed again.
  auto reset_to = [](const std::string& out) {
    Result r;
    r.out = out;
    std::map<int, int64_t> to;
    const v1::GetCommitLogResponse commit_log = Parse<v1::GetCommitLogResponse>(r);
    for (const auto& reset : commit_log.resets()) {
      to[reset.partition()] = reset.new_offset();
    }
    return to;
  };
  Result log = PollUntil(
      Call(Supervisor(), "sluice.v1.SupervisorService/GetCommitLog", ref_ds, "reader"),
      [&](const std::string& out) { return reset_to(out).size() == 2; }, absl::Seconds(30));
  std::map<int, int64_t> expected_resets = {{0, 100}, {1, 200}};
  EXPECT_EQ(reset_to(log.out), expected_resets) << log.Describe();
  Result recommitted = PollUntil(status, [&](const std::string& out) {
    Result r;
    r.out = out;
    return Sum(Parse<v1::GetSupervisorStatusResponse>(r).status().committed_offsets()) ==
           kRecordsPerTopic;
  }, absl::Seconds(60));
  EXPECT_EQ(Sum(Parse<v1::GetSupervisorStatusResponse>(recommitted).status().committed_offsets()),
            kRecordsPerTopic)
      << recommitted.Describe();

  // Terminate: gone from the list of running supervisors' reads.
  Result terminate = Grpcurl(Call(Supervisor(), "sluice.v1.SupervisorService/TerminateSupervisor", ref_ds));
  ASSERT_TRUE(terminate.ok()) << terminate.Describe();
  Result after = PollUntil(Call(Supervisor(), "sluice.v1.SupervisorService/ListSupervisors", "{}",
                                "reader"),
                           [](const std::string& out) {
                             return !absl::StrContains(out, "\"datasource\": \"wiki\"");
                           },
                           absl::Seconds(30));
  EXPECT_TRUE(after.ok() && !absl::StrContains(after.out, "\"datasource\": \"wiki\""))
      << after.Describe();
  Result gone = Grpcurl(status);
  EXPECT_EQ(ErrorCode(gone), "NotFound") << gone.Describe();
}

TEST(GrpcurlTest, BadInputGetsTheCodeAndMessageGrpcurlPrints) {
  ASSERT_NE(Cluster(), nullptr);
  // A spec with taskCount 0.
  std::string spec = ReadmeSpecFor("bad");
  absl::StrReplaceAll({{"\"taskCount\": 2", "\"taskCount\": 0"}}, &spec);
  Result bad = Grpcurl({"-plaintext", BearerArgs("admin")[0], BearerArgs("admin")[1], "-d",
                        absl::StrCat("{\"spec\": ", spec, "}"), Supervisor(),
                        "sluice.v1.SupervisorService/SubmitSupervisor"});
  EXPECT_EQ(ErrorCode(bad), "InvalidArgument") << bad.Describe();
  EXPECT_EQ(ErrorMessage(bad), "spec.ioConfig.taskCount must be at least 1 (got 0)") << bad.Describe();
  EXPECT_EQ(bad.exit_code, 64 + 3) << "grpcurl exits with 64 + the status code";

  Result unknown = Grpcurl(Call(Supervisor(), "sluice.v1.SupervisorService/GetSupervisorStatus",
                                "{\"datasource\": \"no-such-datasource\"}"));
  EXPECT_EQ(ErrorCode(unknown), "NotFound") << unknown.Describe();
  EXPECT_TRUE(absl::StrContains(ErrorMessage(unknown), "no-such-datasource")) << unknown.Describe();
  EXPECT_EQ(unknown.exit_code, 64 + 5);

  // A reader may read but not submit.
  Result reader = Grpcurl({"-plaintext", BearerArgs("reader")[0], BearerArgs("reader")[1], "-d",
                           absl::StrCat("{\"spec\": ", ReadmeSpecFor("readers"), "}"), Supervisor(),
                           "sluice.v1.SupervisorService/SubmitSupervisor"});
  EXPECT_EQ(ErrorCode(reader), "PermissionDenied") << reader.Describe();
  EXPECT_TRUE(absl::StrContains(ErrorMessage(reader), "admin")) << reader.Describe();
  Result reader_on_worker = Grpcurl(Call(Worker(0), "sluice.v1.TaskService/StopTask",
                                         "{\"taskId\": \"x\"}", "reader"));
  EXPECT_EQ(ErrorCode(reader_on_worker), "PermissionDenied") << reader_on_worker.Describe();

  // No token, or one the server does not know.
  Result none = Grpcurl(Call(Supervisor(), "sluice.v1.SupervisorService/ListSupervisors", "", ""));
  EXPECT_EQ(ErrorCode(none), "Unauthenticated") << none.Describe();
  EXPECT_EQ(none.exit_code, 64 + 16);
  Result none_worker = Grpcurl(Call(Worker(1), "sluice.v1.TaskService/ListTasks", "", ""));
  EXPECT_EQ(ErrorCode(none_worker), "Unauthenticated") << none_worker.Describe();
  Result wrong = Grpcurl({"-plaintext", "-H", "authorization: Bearer 0123456789abcdef",
                          Supervisor(), "sluice.v1.SupervisorService/ListSupervisors"});
  EXPECT_EQ(ErrorCode(wrong), "Unauthenticated") << wrong.Describe();

  // A request grpcurl itself cannot encode never reaches the server.
  Result typo = Grpcurl(Call(Supervisor(), "sluice.v1.SupervisorService/GetSupervisorStatus",
                             "{\"dataSource\": \"wiki\"}"));
  EXPECT_NE(typo.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(typo.err, "dataSource")) << typo.Describe();
}

// Client certificates against the mutual-TLS supervisor.
TEST(GrpcurlTest, ClientCertificates) {
  ASSERT_NE(Cluster(), nullptr);
  const std::string dir = CertDir();
  auto tls = [&](const std::string& who) -> Args {
    return {"-cacert", dir + "/ca.crt", "-cert", dir + "/" + who + ".crt", "-key",
            dir + "/" + who + ".key"};
  };
  auto with = [](Args a, const Args& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  Result list = Grpcurl(with(tls("operator"), {TlsSupervisorAddress(), "list"}));
  ASSERT_TRUE(list.ok()) << list.Describe();
  EXPECT_TRUE(absl::StrContains(list.out, "sluice.v1.SupervisorService")) << list.out;
  Result health = Grpcurl(with(tls("grafana"), {TlsSupervisorAddress(), "grpc.health.v1.Health/Check"}));
  EXPECT_TRUE(health.ok() && absl::StrContains(health.out, "SERVING")) << health.Describe();

  // The operator's certificate is an admin: submit; grafana's a reader.
  Result submit = Grpcurl(
      with(tls("operator"), {"-d", absl::StrCat("{\"spec\": ", ReadmeSpecFor("wiki-tls"), "}"),
                             TlsSupervisorAddress(), "sluice.v1.SupervisorService/SubmitSupervisor"}));
  ASSERT_TRUE(submit.ok()) << submit.Describe();
  Result read = Grpcurl(with(tls("grafana"), {TlsSupervisorAddress(),
                                              "sluice.v1.SupervisorService/ListSupervisors"}));
  ASSERT_TRUE(read.ok()) << read.Describe();
  EXPECT_TRUE(absl::StrContains(read.out, "wiki-tls")) << read.out;
  Result denied = Grpcurl(with(tls("grafana"), {"-d", "{\"datasource\": \"wiki-tls\"}",
                                                TlsSupervisorAddress(),
                                                "sluice.v1.SupervisorService/TerminateSupervisor"}));
  EXPECT_EQ(ErrorCode(denied), "PermissionDenied") << denied.Describe();
  EXPECT_TRUE(absl::StrContains(ErrorMessage(denied), "cert:grafana")) << denied.Describe();
  Result terminate = Grpcurl(with(tls("operator"), {"-d", "{\"datasource\": \"wiki-tls\"}",
                                                    TlsSupervisorAddress(),
                                                    "sluice.v1.SupervisorService/TerminateSupervisor"}));
  EXPECT_TRUE(terminate.ok()) << terminate.Describe();

  // Without a client certificate, or in plaintext, nothing is served.
  Result no_cert = Grpcurl({"-cacert", dir + "/ca.crt", TlsSupervisorAddress(), "list"});
  EXPECT_NE(no_cert.exit_code, 0) << no_cert.Describe();
  Result plaintext = Grpcurl({"-plaintext", TlsSupervisorAddress(), "list"});
  EXPECT_NE(plaintext.exit_code, 0) << plaintext.Describe();
}

// --insecure_no_auth (loopback only): every call without a credential.
TEST(GrpcurlTest, WithoutAuthentication) {
  ASSERT_NE(Cluster(), nullptr);
  const std::string address = NoAuthSupervisorAddress();
  Result submit = Grpcurl({"-plaintext", "-d", absl::StrCat("{\"spec\": ", ReadmeSpecFor("open"), "}"),
                           address, "sluice.v1.SupervisorService/SubmitSupervisor"});
  ASSERT_TRUE(submit.ok()) << submit.Describe();
  Result list = Grpcurl({"-plaintext", address, "sluice.v1.SupervisorService/ListSupervisors"});
  ASSERT_TRUE(list.ok()) << list.Describe();
  EXPECT_TRUE(absl::StrContains(list.out, "\"datasource\": \"open\"")) << list.out;
  Result terminate = Grpcurl({"-plaintext", "-d", "{\"datasource\": \"open\"}", address,
                              "sluice.v1.SupervisorService/TerminateSupervisor"});
  EXPECT_TRUE(terminate.ok()) << terminate.Describe();
}

}  // namespace
}  // namespace sluice::grpcurl
