#include "tools/devbroker/control_command.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sluice {
namespace devbroker {
namespace {

using ::testing::HasSubstr;
using Kind = ControlCommand::Kind;

ControlCommand Parse(absl::string_view line) {
  absl::StatusOr<ControlCommand> cmd = ParseControlCommand(line);
  EXPECT_TRUE(cmd.ok()) << line << ": " << cmd.status();
  return cmd.ok() ? *cmd : ControlCommand{};
}

std::string ParseError(absl::string_view line) {
  absl::StatusOr<ControlCommand> cmd = ParseControlCommand(line);
  EXPECT_EQ(cmd.status().code(), absl::StatusCode::kInvalidArgument) << line;
  return std::string(cmd.status().message());
}

TEST(ControlCommandTest, BlankAndCommentLinesAreNothing) {
  EXPECT_EQ(Parse("").kind, Kind::kNone);
  EXPECT_EQ(Parse("   \t").kind, Kind::kNone);
  EXPECT_EQ(Parse("# broker down 1").kind, Kind::kNone);
}

TEST(ControlCommandTest, Broker) {
  ControlCommand down = Parse("broker down 2");
  EXPECT_EQ(down.kind, Kind::kBrokerDown);
  EXPECT_EQ(down.broker, 2);
  ControlCommand up = Parse("  BROKER  Up 1 ");
  EXPECT_EQ(up.kind, Kind::kBrokerUp);
  EXPECT_EQ(up.broker, 1);
  EXPECT_THAT(ParseError("broker sideways 1"), HasSubstr("unknown broker action"));
  EXPECT_THAT(ParseError("broker down"), HasSubstr("usage: broker down N"));
  EXPECT_THAT(ParseError("broker down zero"), HasSubstr("bad broker id"));
  EXPECT_THAT(ParseError("broker down 0"), HasSubstr("bad broker id"));
}

TEST(ControlCommandTest, Rtt) {
  ControlCommand cmd = Parse("rtt 1 250");
  EXPECT_EQ(cmd.kind, Kind::kRtt);
  EXPECT_EQ(cmd.broker, 1);
  EXPECT_EQ(cmd.rtt_ms, 250);
  EXPECT_THAT(ParseError("rtt 1 -5"), HasSubstr("bad rtt"));
}

TEST(ControlCommandTest, RequestErrorsByNameOrNumber) {
  ControlCommand cmd = Parse("error Produce NOT_LEADER_FOR_PARTITION 3");
  EXPECT_EQ(cmd.kind, Kind::kRequestErrors);
  EXPECT_EQ(cmd.api_key, 0);
  EXPECT_EQ(cmd.error, RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION);
  EXPECT_EQ(cmd.count, 3);
  ControlCommand numeric = Parse("error 1 7 2");
  EXPECT_EQ(numeric.api_key, 1);
  EXPECT_EQ(numeric.error, RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT);
  ControlCommand prefixed = Parse("error fetch rd_kafka_resp_err__transport 1");
  EXPECT_EQ(prefixed.api_key, 1);
  EXPECT_EQ(prefixed.error, RD_KAFKA_RESP_ERR__TRANSPORT);
  EXPECT_THAT(ParseError("error Frobnicate NOT_LEADER_FOR_PARTITION 1"),
              HasSubstr("unknown Kafka API"));
  EXPECT_THAT(ParseError("error Produce NOT_A_REAL_ERROR 1"), HasSubstr("unknown Kafka error"));
  // A number librdkafka has no error for is not an rd_kafka_resp_err_t.
  EXPECT_THAT(ParseError("error Produce 313 1"), HasSubstr("unknown Kafka error"));
  EXPECT_THAT(ParseError("error wiki 313"), HasSubstr("unknown Kafka error"));
  EXPECT_THAT(ParseError("error Produce NOT_LEADER_FOR_PARTITION 0"), HasSubstr("bad count"));
}

TEST(ControlCommandTest, TopicError) {
  ControlCommand cmd = Parse("error wiki UNKNOWN_TOPIC_OR_PART");
  EXPECT_EQ(cmd.kind, Kind::kTopicError);
  EXPECT_EQ(cmd.topic, "wiki");
  EXPECT_EQ(cmd.error, RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART);
  EXPECT_EQ(Parse("error wiki NO_ERROR").error, RD_KAFKA_RESP_ERR_NO_ERROR);
}

TEST(ControlCommandTest, PerTopicRequestErrorsAreExplainedNotFaked) {
  EXPECT_THAT(ParseError("error wiki Produce NOT_LEADER_FOR_PARTITION 3"),
              HasSubstr("not supported by librdkafka's mock cluster"));
}

TEST(ControlCommandTest, CreateAndLeader) {
  ControlCommand create = Parse("create events 8");
  EXPECT_EQ(create.kind, Kind::kCreateTopic);
  EXPECT_EQ(create.topic, "events");
  EXPECT_EQ(create.partitions, 8);
  EXPECT_THAT(ParseError("create bad/name 1"), HasSubstr("invalid topic name"));
  EXPECT_THAT(ParseError("create events 0"), HasSubstr("bad partition count"));
  ControlCommand leader = Parse("leader events 3 2");
  EXPECT_EQ(leader.kind, Kind::kSetLeader);
  EXPECT_EQ(leader.partition, 3);
  EXPECT_EQ(leader.broker, 2);
  EXPECT_EQ(Parse("leader events 3 -1").broker, -1);
  EXPECT_THAT(ParseError("leader events 3 0"), HasSubstr("bad broker id"));
}

TEST(ControlCommandTest, NoArgumentCommands) {
  EXPECT_EQ(Parse("status").kind, Kind::kStatus);
  EXPECT_EQ(Parse("help").kind, Kind::kHelp);
  EXPECT_EQ(Parse("quit").kind, Kind::kQuit);
  EXPECT_THAT(ParseError("quit now"), HasSubstr("takes no arguments"));
  EXPECT_THAT(ParseError("reboot"), HasSubstr("unknown command \"reboot\""));
}

TEST(ControlCommandTest, NamesRoundTrip) {
  EXPECT_EQ(ApiKeyName(0), "Produce");
  EXPECT_EQ(ApiKeyName(999), "999");
  EXPECT_EQ(*ParseApiKey("listoffsets"), 2);
}

TEST(TopicNameTest, FollowsKafkasRule) {
  EXPECT_TRUE(ValidateTopicName("wiki.edits_v2-x").ok());
  EXPECT_FALSE(ValidateTopicName("").ok());
  EXPECT_FALSE(ValidateTopicName("..").ok());
  EXPECT_FALSE(ValidateTopicName("a b").ok());
  EXPECT_FALSE(ValidateTopicName(std::string(250, 'a')).ok());
}

}  // namespace
}  // namespace devbroker
}  // namespace sluice
