// Process-level tests of the dev broker binary (//tools:sluice-devbroker):
// real process, real TCP, real Kafka clients (librdkafka and kcat).
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/kafka/metadata_client.h"
#include "common/kafka/producer.h"
#include "common/kafka/test_consumer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/subprocess.h"

namespace sluice {
namespace {

using ::sluice::testing::Subprocess;
using ::sluice::testing::SubprocessOptions;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// A running sluice-devbroker with its stdin/stdout as the control channel.
class DevBrokerProcess {
 public:
  // Starts the binary with `args` plus --bootstrap_file, and waits until the
  // bootstrap file is written (every topic exists then).
  static std::unique_ptr<DevBrokerProcess> Start(std::vector<std::string> args) {
    auto self = std::unique_ptr<DevBrokerProcess>(new DevBrokerProcess());
    auto dir = testing::MakeTempDir("devbroker");
    EXPECT_TRUE(dir.ok()) << dir.status();
    if (!dir.ok()) return nullptr;
    self->bootstrap_file_ = *dir + "/bootstrap";
    auto binary = testing::FindRunfile("tools/sluice-devbroker");
    EXPECT_TRUE(binary.ok()) << binary.status();
    if (!binary.ok()) return nullptr;
    SubprocessOptions options;
    options.binary = *binary;
    options.args = std::move(args);
    options.args.push_back("--bootstrap_file=" + self->bootstrap_file_);
    options.pipe_stdin = true;
    options.pipe_stdout = true;
    auto process = Subprocess::Start(options);
    EXPECT_TRUE(process.ok()) << process.status();
    if (!process.ok()) return nullptr;
    self->process_ = *std::move(process);
    auto content =
        testing::WaitForFile(self->bootstrap_file_, absl::Seconds(30), self->process_.get());
    EXPECT_TRUE(content.ok()) << content.status();
    if (!content.ok()) return nullptr;
    self->bootstrap_ = std::string(absl::StripTrailingAsciiWhitespace(*content));
    // The first stdout line is the same list.
    auto first = self->process_->ReadStdoutLine(absl::Seconds(10));
    EXPECT_TRUE(first.ok()) << first.status();
    EXPECT_EQ(first.ok() ? *first : "", self->bootstrap_);
    return self;
  }

  // Sends one control command and returns its reply line.
  std::string Command(const std::string& line) {
    absl::Status written = process_->WriteStdin(line + "\n");
    if (!written.ok()) return absl::StrCat("<", written.ToString(), ">");
    auto reply = process_->ReadStdoutLine(absl::Seconds(15));
    return reply.ok() ? *reply : absl::StrCat("<", reply.status().ToString(), ">");
  }

  kafka::KafkaProperties Props() const { return {{"bootstrap.servers", bootstrap_}}; }
  const std::string& bootstrap() const { return bootstrap_; }
  const std::string& bootstrap_file() const { return bootstrap_file_; }
  Subprocess& process() { return *process_; }

 private:
  DevBrokerProcess() = default;
  std::unique_ptr<Subprocess> process_;
  std::string bootstrap_file_;
  std::string bootstrap_;
};

bool FileExists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

TEST(DevBrokerProcessTest, NothingLostOrDuplicatedThroughTheBinary) {
  auto broker = DevBrokerProcess::Start({"--topic=wiki:4"});
  ASSERT_NE(broker, nullptr);
  EXPECT_THAT(broker->bootstrap(), StartsWith("127.0.0.1:"));

  constexpr int kRecords = 400;
  auto producer = kafka::Producer::Create(broker->Props());
  ASSERT_TRUE(producer.ok()) << producer.status();
  for (int i = 0; i < kRecords; ++i) {
    ASSERT_TRUE((*producer)
                    ->Produce("wiki", kafka::Producer::kAnyPartition,
                              absl::StrCat("{\"n\":", i, "}"), absl::StrCat("key", i))
                    .ok());
  }
  ASSERT_TRUE((*producer)->Flush(absl::Seconds(30)).ok());
  ASSERT_EQ((*producer)->stats().delivered, kRecords);

  // Read back exactly what each partition holds, from offset 0.
  auto metadata = kafka::MetadataClient::Create(broker->Props());
  ASSERT_TRUE(metadata.ok());
  auto marks = (*metadata)->QueryAllWatermarks("wiki", absl::Seconds(10));
  ASSERT_TRUE(marks.ok()) << marks.status();
  ASSERT_EQ(marks->size(), 4u);
  std::map<int32_t, kafka::OffsetRange> ranges;
  int64_t total = 0;
  for (const auto& [partition, m] : *marks) {
    EXPECT_EQ(m.earliest, 0);
    ranges[partition] = {m.earliest, m.latest};
    total += m.latest;
  }
  EXPECT_EQ(total, kRecords);
  auto records = kafka::ReadRecords(broker->Props(), "wiki", ranges, absl::Seconds(30));
  ASSERT_TRUE(records.ok()) << records.status();
  std::multiset<std::string> values;
  for (const auto& [partition, list] : *records) {
    for (size_t j = 0; j < list.size(); ++j) {
      EXPECT_EQ(list[j].offset, static_cast<int64_t>(j));
      EXPECT_EQ(list[j].key, absl::StrCat("key", std::stoi(list[j].value.substr(5))));
      values.insert(list[j].value);
    }
  }
  ASSERT_EQ(values.size(), static_cast<size_t>(kRecords));
  for (int i = 0; i < kRecords; ++i) {
    EXPECT_EQ(values.count(absl::StrCat("{\"n\":", i, "}")), 1u) << i;
  }

  // A clean stop removes the bootstrap file.
  auto exit = broker->process().Stop(absl::Seconds(20));
  ASSERT_TRUE(exit.ok()) << exit.status();
  EXPECT_TRUE(exit->success()) << exit->ToString() << "\n" << broker->process().StderrTail();
  EXPECT_FALSE(FileExists(broker->bootstrap_file()));
}

// > 5 MiB to one partition (the mock's default cap), all readable from 0.
TEST(DevBrokerProcessTest, RetentionCapIsLifted) {
  auto broker = DevBrokerProcess::Start({"--topic=big:1"});
  ASSERT_NE(broker, nullptr);
  EXPECT_THAT(broker->Command("status"), HasSubstr("big:1:uncapped"));
  auto producer =
      kafka::Producer::Create({{"bootstrap.servers", broker->bootstrap()}, {"linger.ms", "20"}});
  ASSERT_TRUE(producer.ok());
  constexpr int kRecords = 6500;  // 6.3 MiB of 1 KiB values.
  for (int i = 0; i < kRecords; ++i) {
    std::string value = absl::StrCat(i, ":");
    value.resize(1024, 'x');
    ASSERT_TRUE((*producer)->Produce("big", 0, value).ok());
  }
  ASSERT_TRUE((*producer)->Flush(absl::Seconds(60)).ok());
  auto records =
      kafka::ReadRecords(broker->Props(), "big", {{0, {0, kRecords}}}, absl::Seconds(60));
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->at(0).size(), static_cast<size_t>(kRecords));
  for (int i = 0; i < kRecords; ++i) {
    ASSERT_THAT(records->at(0)[i].value, StartsWith(absl::StrCat(i, ":")));
  }
}

TEST(DevBrokerProcessTest, BrokerDownAndUpThroughTheControlChannel) {
  auto broker = DevBrokerProcess::Start({"--topic=wiki:1"});
  ASSERT_NE(broker, nullptr);
  auto metadata = kafka::MetadataClient::Create(broker->Props());
  ASSERT_TRUE(metadata.ok());
  ASSERT_TRUE((*metadata)->QueryWatermarks("wiki", {0}, absl::Seconds(10)).ok());

  ASSERT_EQ(broker->Command("broker down 1"), "ok broker 1 down");
  EXPECT_THAT(broker->Command("status"), HasSubstr(":down"));
  EXPECT_EQ((*metadata)->QueryWatermarks("wiki", {0}, absl::Milliseconds(500)).status().code(),
            absl::StatusCode::kUnavailable);
  // A record produced while the broker is down is delivered once it is back.
  auto producer = kafka::Producer::Create(broker->Props());
  ASSERT_TRUE(producer.ok());
  ASSERT_TRUE((*producer)->Produce("wiki", 0, "during-outage").ok());
  EXPECT_EQ((*producer)->Flush(absl::Milliseconds(300)).code(), absl::StatusCode::kUnavailable);

  ASSERT_EQ(broker->Command("broker up 1"), "ok broker 1 up");
  ASSERT_TRUE((*producer)->Flush(absl::Seconds(30)).ok());
  auto records = kafka::ReadRecords(broker->Props(), "wiki", {{0, {0, 1}}}, absl::Seconds(30));
  ASSERT_TRUE(records.ok()) << records.status();
  EXPECT_EQ(records->at(0).at(0).value, "during-outage");

  EXPECT_THAT(broker->Command("broker down 7"), StartsWith("error INVALID_ARGUMENT"));
  EXPECT_EQ(broker->Command("quit"), "ok quitting");
  auto exit = broker->process().Wait(absl::Seconds(20));
  ASSERT_TRUE(exit.ok()) << exit.status();
  EXPECT_TRUE(exit->success()) << exit->ToString();
}

TEST(DevBrokerProcessTest, FixedPortsAndFifoControl) {
  auto base = testing::PickFreePortRange(2);
  ASSERT_TRUE(base.ok()) << base.status();
  auto dir = testing::MakeTempDir("fifo");
  ASSERT_TRUE(dir.ok());
  const std::string fifo = *dir + "/control";
  auto broker = DevBrokerProcess::Start({"--brokers=2", "--topic=a:1,b:2",
                                         absl::StrCat("--base_port=", *base),
                                         "--control_fifo=" + fifo, "--control_stdin=false"});
  ASSERT_NE(broker, nullptr);
  // Readiness (the bootstrap file) is announced only once the FIFO exists: a
  // writer that opened the path first would create a plain file, and the
  // broker would then refuse it and exit.
  struct stat st;
  ASSERT_EQ(stat(fifo.c_str(), &st), 0) << "no FIFO at readiness";
  ASSERT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_EQ(broker->bootstrap(), absl::StrCat("127.0.0.1:", *base, ",127.0.0.1:", *base + 1));
  ASSERT_TRUE(testing::WaitForPort(*base + 1, absl::Seconds(5), &broker->process()).ok());
  {
    // Commands through the FIFO, replies on stdout.
    const int fd = open(fifo.c_str(), O_WRONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0) << strerror(errno);
    const std::string commands = "create c 3\nstatus\n";
    ASSERT_EQ(write(fd, commands.data(), commands.size()),
              static_cast<ssize_t>(commands.size()));
    close(fd);
  }
  auto created = broker->process().ReadStdoutLine(absl::Seconds(10));
  ASSERT_TRUE(created.ok()) << created.status() << "\n" << broker->process().StderrTail();
  EXPECT_EQ(*created, "ok created c with 3 partition(s)");
  auto status = broker->process().ReadStdoutLine(absl::Seconds(10));
  ASSERT_TRUE(status.ok()) << status.status() << "\n" << broker->process().StderrTail();
  EXPECT_THAT(*status, HasSubstr("topics=a:1:uncapped,b:2:uncapped,c:3:uncapped"));
  auto metadata = kafka::MetadataClient::Create(broker->Props());
  ASSERT_TRUE(metadata.ok());
  auto partitions = (*metadata)->ListPartitions("c", absl::Seconds(10));
  ASSERT_TRUE(partitions.ok()) << partitions.status();
  EXPECT_EQ(partitions->size(), 3u);
  // SIGINT stops it cleanly too.
  ASSERT_TRUE(broker->process().Signal(SIGINT).ok());
  auto exit = broker->process().Wait(absl::Seconds(20));
  ASSERT_TRUE(exit.ok()) << exit.status();
  EXPECT_TRUE(exit->success()) << exit->ToString();
}

TEST(DevBrokerProcessTest, KillDashNineLeavesClientsUnavailable) {
  auto broker = DevBrokerProcess::Start({"--topic=wiki:1"});
  ASSERT_NE(broker, nullptr);
  auto metadata = kafka::MetadataClient::Create(broker->Props());
  ASSERT_TRUE(metadata.ok());
  ASSERT_TRUE((*metadata)->QueryWatermarks("wiki", {0}, absl::Seconds(10)).ok());
  auto exit = broker->process().Kill();
  ASSERT_TRUE(exit.ok());
  EXPECT_EQ(exit->signal, SIGKILL);
  EXPECT_EQ((*metadata)->QueryWatermarks("wiki", {0}, absl::Milliseconds(500)).status().code(),
            absl::StatusCode::kUnavailable);
}

TEST(DevBrokerProcessTest, BadFlagsExitWithUsageErrors) {
  auto binary = testing::FindRunfile("tools/sluice-devbroker");
  ASSERT_TRUE(binary.ok()) << binary.status();
  struct Case {
    std::vector<std::string> args;
    int code;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"--topic=wiki"}, 2, "expected NAME:PARTITIONS"},
      {{"--topic=wiki:0"}, 2, "partition count"},
      {{"--brokers=0"}, 1, "brokers must be in 1..32"},
      {{"stray"}, 2, "unexpected argument"},
  };
  for (const Case& c : cases) {
    SubprocessOptions options;
    options.binary = *binary;
    options.args = c.args;
    auto process = Subprocess::Start(options);
    ASSERT_TRUE(process.ok());
    auto exit = (*process)->Wait(absl::Seconds(20));
    ASSERT_TRUE(exit.ok()) << exit.status();
    EXPECT_EQ(exit->code, c.code) << c.args[0] << ": " << exit->ToString();
    EXPECT_THAT((*process)->StderrTail(), HasSubstr(c.message)) << c.args[0];
  }
}

// kcat in another process must be able to produce and consume.
TEST(DevBrokerProcessTest, KcatProducesAndConsumes) {
  auto kcat = testing::FindInPath("kcat");
  if (!kcat.ok()) GTEST_SKIP() << "kcat is not installed (apt-get install kcat): " << kcat.status();
  auto broker = DevBrokerProcess::Start({"--topic=wiki:2"});
  ASSERT_NE(broker, nullptr);

  SubprocessOptions produce;
  produce.binary = *kcat;
  produce.args = {"-b", broker->bootstrap(), "-P", "-t", "wiki", "-p", "1"};
  produce.pipe_stdin = true;
  auto producer = Subprocess::Start(produce);
  ASSERT_TRUE(producer.ok());
  std::string lines;
  for (int i = 0; i < 300; ++i) absl::StrAppend(&lines, "{\"kcat\":", i, "}\n");
  ASSERT_TRUE((*producer)->WriteStdin(lines).ok());
  (*producer)->CloseStdin();
  auto produced = (*producer)->Wait(absl::Seconds(30));
  ASSERT_TRUE(produced.ok()) << produced.status();
  ASSERT_TRUE(produced->success()) << produced->ToString() << (*producer)->StderrTail();

  SubprocessOptions consume;
  consume.binary = *kcat;
  consume.args = {"-b", broker->bootstrap(), "-C", "-t", "wiki", "-p", "1",
                  "-o", "beginning",         "-e", "-q"};
  auto consumer = Subprocess::Start(consume);
  ASSERT_TRUE(consumer.ok());
  auto consumed = (*consumer)->Wait(absl::Seconds(30));
  ASSERT_TRUE(consumed.ok()) << consumed.status();
  ASSERT_TRUE(consumed->success()) << consumed->ToString() << (*consumer)->StderrTail();
  std::string out;
  {
    FILE* f = fopen((*consumer)->stdout_path().c_str(), "r");
    ASSERT_NE(f, nullptr);
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0) out.append(buf, n);
    fclose(f);
  }
  EXPECT_EQ(out, lines);

  // And our own consumer sees kcat's records at offsets 0..299.
  auto records = kafka::ReadRecords(broker->Props(), "wiki", {{1, {0, 300}}}, absl::Seconds(30));
  ASSERT_TRUE(records.ok()) << records.status();
  EXPECT_EQ(records->at(1).back().value, "{\"kcat\":299}");
}

}  // namespace
}  // namespace sluice
