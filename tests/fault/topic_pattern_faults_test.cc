// Process-level scenario of a multi-topic datasource (ioConfig.topicPattern)
// on the dev broker, ending with the exactly-once audit.
#include <gtest/gtest.h>

#include <csignal>
#include <set>

#include "absl/strings/str_cat.h"
#include "tests/fault/fault_scenario.h"
#include "tests/fault/scenario_test_util.h"

namespace sluice::fault {
namespace {

// ioConfig.topicPattern (Druid's multi-topic ingestion): every topic that
// matches is read, a topic created while the datasource runs is picked up
// within a period (its partitions get the next stream partition ids and
// start at their earliest offset), a topic that does not match is never
// read, and a worker killed with -9 mid-run loses and duplicates nothing:
// the audit counts each stream partition's ranges in its own topic.
TEST(LifecycleFaults, ATopicPatternReadsEveryMatchingTopicAndOnesCreatedLater) {
  ScenarioOptions options;
  options.name = "topic_pattern";
  options.seed = 47;
  options.topic = "wiki-en";
  options.partitions = 2;
  options.topic_pattern = "wiki-.*";
  options.more_topics = {"wiki-de:1", "logs:1"};
  std::unique_ptr<FaultScenario> s = StartScenario(options);
  ASSERT_NE(s, nullptr);
  ASSERT_OK(s->ProduceTo("wiki-de", 3000));
  ASSERT_OK(s->ProduceTo("logs", 500, /*counted=*/false));
  s->StartProducing(kRecords, kProduceFor);  // into wiki-en
  ASSERT_OK(s->WaitUntilCommittedSequences(2));
  ASSERT_OK(s->CreateTopic("wiki-fr", 2));
  ASSERT_OK(s->ProduceTo("wiki-fr", 4000));
  absl::StatusOr<int> worker = s->WaitForWorkerWithTasks();
  ASSERT_TRUE(worker.ok()) << worker.status() << "\n" << s->Context();
  const std::string victim = cluster::WorkerName(*worker);
  ASSERT_OK(s->cluster().Kill(victim, SIGKILL));
  ASSERT_OK(s->RestartAndWait(victim));
  ASSERT_OK(s->Finish());

  absl::StatusOr<v1::GetCommitLogResponse> log = s->CommitLog();
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_EQ(log->topic_pattern(), "wiki-.*");
  EXPECT_TRUE(log->topic().empty());
  std::set<std::string> names;
  for (const v1::StreamPartition& p : log->stream_partitions()) {
    names.insert(absl::StrCat(p.topic(), "[", p.partition(), "]"));
  }
  EXPECT_EQ(names, (std::set<std::string>{"wiki-de[0]", "wiki-en[0]", "wiki-en[1]", "wiki-fr[0]",
                                          "wiki-fr[1]"}));
  // The two topics there from the start got ids 0..2, the later one 3 and 4.
  for (const v1::StreamPartition& p : log->stream_partitions()) {
    if (p.topic() == "wiki-fr") {
      EXPECT_GE(p.id(), 3) << p.ShortDebugString();
    }
  }
  absl::StatusOr<v1::SupervisorStatus> status = s->Status();
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_EQ(status->topic_pattern(), "wiki-.*");
  EXPECT_EQ(status->partitions(), 5);
  EXPECT_EQ(status->stream_partitions_size(), 5);
}

}  // namespace
}  // namespace sluice::fault
