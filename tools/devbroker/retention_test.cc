#include "tools/devbroker/retention.h"

#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sluice {
namespace devbroker {
namespace {

using ::testing::HasSubstr;
namespace layout = layout_v2_12;

constexpr int kVersion2121 = 0x020c01ff;

// A fake mock cluster laid out like librdkafka 2.12.1's, to check that the
// guard lifts exactly what it should and refuses every mismatch.
class FakeCluster {
 public:
  FakeCluster() {
    memset(&head_, 0, sizeof(head_));
    strcpy(head_.id, "mockCluster1234");
    head_.rk = rk();
    head_.broker_cnt = 3;
    AddTopic("other", 2);
    AddTopic("wiki", 3);
  }

  void AddTopic(const std::string& name, int partitions) {
    names_.push_back(name);
    partitions_.emplace_back(partitions);
    topics_.emplace_back();
    layout::Topic& t = topics_.back();
    memset(&t, 0, sizeof(t));
    t.name = names_.back().data();
    t.partitions = partitions_.back().data();
    t.partition_cnt = partitions;
    t.cluster = &head_;
    for (int i = 0; i < partitions; ++i) {
      layout::Partition& p = partitions_.back()[i];
      memset(&p, 0, sizeof(p));
      p.id = i;
      p.topic = &t;
      p.max_size = kMockDefaultMaxBytes;
      p.max_cnt = kMockDefaultMaxBatches;
    }
    // Link as a TAILQ: first -> ... -> last.
    if (topics_.size() == 1) {
      head_.topics.first = &t;
    } else {
      topics_[topics_.size() - 2].link.next = &t;
    }
    head_.topic_cnt = static_cast<int>(topics_.size());
  }

  static rd_kafka_t* rk() { return reinterpret_cast<rd_kafka_t*>(0x1000); }
  void* cluster() { return &head_; }
  layout::ClusterHead& head() { return head_; }
  layout::Topic& topic(int i) { return topics_[i]; }
  layout::Partition& partition(int topic, int i) { return partitions_[topic][i]; }

  absl::Status Lift(absl::string_view topic = "wiki", int partitions = 3,
                    int version = kVersion2121) {
    return LiftRetentionCapAt(cluster(), rk(), 3, topic, partitions, version);
  }

  bool Untouched(int topic) {
    for (const layout::Partition& p : partitions_[topic]) {
      if (p.max_size != kMockDefaultMaxBytes || p.max_cnt != kMockDefaultMaxBatches) return false;
    }
    return true;
  }

 private:
  layout::ClusterHead head_;
  std::deque<std::string> names_;
  std::deque<std::vector<layout::Partition>> partitions_;
  std::deque<layout::Topic> topics_;
};

TEST(RetentionTest, LiftsEveryPartitionOfTheNamedTopicOnly) {
  FakeCluster fake;
  ASSERT_TRUE(fake.Lift().ok()) << fake.Lift();
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(fake.partition(1, i).max_size, kLiftedMaxBytes);
    EXPECT_EQ(fake.partition(1, i).max_cnt, kLiftedMaxBatches);
  }
  EXPECT_TRUE(fake.Untouched(0));
}

TEST(RetentionTest, LiftingTwiceIsHarmless) {
  FakeCluster fake;
  ASSERT_TRUE(fake.Lift().ok());
  EXPECT_TRUE(fake.Lift().ok());
}

TEST(RetentionTest, RefusesOtherLibrdkafkaVersions) {
  FakeCluster fake;
  const absl::Status s = fake.Lift("wiki", 3, 0x020300ff);
  ASSERT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("2.3.0"));
  EXPECT_THAT(s.message(), HasSubstr("--allow_retention_cap"));
  EXPECT_TRUE(fake.Untouched(1));
  EXPECT_EQ(CheckSupportedVersion(0x010902ff).code(), absl::StatusCode::kFailedPrecondition);
  // Debian 12's 2.0.2 has another layout.
  EXPECT_EQ(CheckSupportedVersion(0x020002ff).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(CheckSupportedVersion(0x020c01ff).ok());
  EXPECT_TRUE(CheckSupportedVersion(0x020c00ff).ok());
}

TEST(RetentionTest, RefusesAForeignClusterHandle) {
  FakeCluster fake;
  fake.head().rk = reinterpret_cast<rd_kafka_t*>(0x2000);
  const absl::Status s = fake.Lift();
  ASSERT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("rd_kafka_t back-pointer"));
  EXPECT_TRUE(fake.Untouched(1));
}

TEST(RetentionTest, RefusesAWrongBrokerCount) {
  FakeCluster fake;
  fake.head().broker_cnt = 5;
  EXPECT_THAT(fake.Lift().message(), HasSubstr("5 brokers, expected 3"));
}

TEST(RetentionTest, RefusesATopicThatDoesNotPointBackToItsCluster) {
  FakeCluster fake;
  fake.topic(0).cluster = nullptr;
  const absl::Status s = fake.Lift();
  ASSERT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("topic #1 does not point back"));
  EXPECT_TRUE(fake.Untouched(1));
}

TEST(RetentionTest, RefusesAPartitionCountMismatch) {
  FakeCluster fake;
  EXPECT_THAT(fake.Lift("wiki", 4).message(), HasSubstr("has 3 partitions"));
  EXPECT_TRUE(fake.Untouched(1));
}

TEST(RetentionTest, RefusesAPartitionIdThatIsNotItsIndex) {
  FakeCluster fake;
  fake.partition(1, 2).id = 7;
  const absl::Status s = fake.Lift();
  ASSERT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("partition 2 has id 7"));
  // Checked before anything is written: partitions 0 and 1 keep the cap too.
  EXPECT_TRUE(fake.Untouched(1));
}

TEST(RetentionTest, RefusesAPartitionThatDoesNotPointBackToItsTopic) {
  FakeCluster fake;
  fake.partition(1, 1).topic = &fake.topic(0);
  EXPECT_THAT(fake.Lift().message(), HasSubstr("partition 1 does not point back to its topic"));
  EXPECT_TRUE(fake.Untouched(1));
}

TEST(RetentionTest, RefusesUnexpectedLimits) {
  FakeCluster fake;
  fake.partition(1, 0).max_size = 10 * 1024 * 1024;
  const absl::Status s = fake.Lift();
  ASSERT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("has limits 10485760 bytes / 100000 batches"));
  // Nothing was written.
  EXPECT_EQ(fake.partition(1, 0).max_cnt, kMockDefaultMaxBatches);
  EXPECT_EQ(fake.partition(1, 1).max_size, kMockDefaultMaxBytes);
}

TEST(RetentionTest, UnknownTopicIsNotFound) {
  FakeCluster fake;
  EXPECT_EQ(fake.Lift("nope", 1).code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace devbroker
}  // namespace sluice
