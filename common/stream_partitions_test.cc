#include "common/stream_partitions.h"

#include <gtest/gtest.h>

namespace sluice {
namespace {

v1::StreamPartition Entry(int32_t id, const std::string& topic, int32_t partition) {
  v1::StreamPartition entry;
  entry.set_id(id);
  entry.set_topic(topic);
  entry.set_partition(partition);
  return entry;
}

TEST(StreamPartitionIdsTest, NewPartitionsGetTheNextIdsInTopicPartitionOrder) {
  StreamPartitionIds ids;
  EXPECT_EQ(ids.IdsOf({{"b", 0}, {"a", 1}, {"a", 0}, {"a", 0}}), (std::vector<int32_t>{0, 1, 2}));
  EXPECT_EQ(ids.Find(0)->topic, "a");
  EXPECT_EQ(ids.Find(0)->partition, 0);
  EXPECT_EQ(ids.Find(2)->topic, "b");
  // A topic that appears later sorts before "b" but gets the next id: ids
  // never move.
  EXPECT_EQ(ids.IdsOf({{"b", 0}, {"a", 0}, {"a", 1}, {"a-new", 0}}),
            (std::vector<int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(ids.Find(3)->topic, "a-new");
  // A topic that went away keeps its id; it is only not listed.
  EXPECT_EQ(ids.IdsOf({{"a-new", 0}}), (std::vector<int32_t>{3}));
  EXPECT_EQ(ids.next_id(), 4);
  EXPECT_FALSE(ids.Find(4).has_value());
  ASSERT_EQ(ids.From(3).size(), 1u);
  EXPECT_EQ(ids.From(3)[0].topic(), "a-new");
  EXPECT_EQ(ids.From(0).size(), 4u);
}

TEST(StreamPartitionIdsTest, RestoredIdsAreKeptAndContradictionsRefused) {
  StreamPartitionIds ids;
  ASSERT_TRUE(ids.Restore({Entry(1, "t", 7), Entry(0, "u", 0)}).ok());
  EXPECT_EQ(ids.IdsOf({{"t", 7}, {"new", 0}}), (std::vector<int32_t>{1, 2}));
  // Restoring what is known already is fine (a reload).
  EXPECT_TRUE(ids.Restore({Entry(0, "u", 0)}).ok());
  EXPECT_FALSE(ids.Restore({Entry(0, "other", 0)}).ok());
  EXPECT_FALSE(ids.Restore({Entry(5, "t", 7)}).ok());
  EXPECT_FALSE(ids.Restore({Entry(-1, "x", 0)}).ok());
  EXPECT_FALSE(ids.Restore({Entry(9, "x", 0)}).ok()) << "a gap";
  // Nothing changed by the refusals.
  EXPECT_EQ(ids.next_id(), 3);
  EXPECT_EQ(ids.Find(0)->topic, "u");
}

TEST(StreamNameTest, ATopicOrAPatternWithAPrefixNoTopicNameHas) {
  v1::IoConfig io;
  io.set_topic("wiki");
  EXPECT_EQ(StreamNameOf(io), "wiki");
  EXPECT_FALSE(TopicPatternOf("wiki").has_value());
  io.clear_topic();
  io.set_topic_pattern("wiki-.*");
  EXPECT_EQ(StreamNameOf(io), "topicPattern:wiki-.*");
  EXPECT_EQ(TopicPatternOf(StreamNameOf(io)).value_or(""), "wiki-.*");
  v1::Provenance provenance;
  provenance.set_topic_pattern("wiki-.*");
  EXPECT_EQ(StreamNameOf(provenance), StreamNameOf(io));
}

TEST(StreamPartitionMapTest, LooksUpBothWaysAndRefusesRepeats) {
  google::protobuf::RepeatedPtrField<v1::StreamPartition> entries;
  *entries.Add() = Entry(4, "a", 0);
  *entries.Add() = Entry(9, "b", 3);
  absl::StatusOr<StreamPartitionMap> map = StreamPartitionMap::Create(entries);
  ASSERT_TRUE(map.ok()) << map.status();
  EXPECT_EQ(map->Find(9)->topic, "b");
  EXPECT_EQ(map->Find(5), nullptr);
  EXPECT_EQ(map->IdOf("a", 0), 4);
  EXPECT_EQ(map->IdOf("a", 1), -1);
  EXPECT_EQ(map->IdOf("c", 0), -1);
  ASSERT_NE(map->Topic("b"), nullptr);
  EXPECT_EQ(map->Topic("b")->at(3), 9);

  *entries.Add() = Entry(4, "c", 0);
  EXPECT_FALSE(StreamPartitionMap::Create(entries).ok()) << "id repeated";
  entries.RemoveLast();
  *entries.Add() = Entry(5, "a", 0);
  EXPECT_FALSE(StreamPartitionMap::Create(entries).ok()) << "name repeated";
}

}  // namespace
}  // namespace sluice
