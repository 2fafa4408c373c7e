// The commit of a compaction, on SQLite and PostgreSQL: the replacement and
// the Iceberg swap in one transaction; an input lost to a concurrent commit
// or a table moved by another writer changes nothing.
#include "supervisor/compaction/compaction_commit.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "common/status_macros.h"
#include "supervisor/testing/test_util.h"

namespace sluice::supervisor {
namespace {

v1::SegmentDescriptor Segment(const std::string& id) {
  v1::SegmentDescriptor s;
  s.set_id(id);
  s.set_datasource("wiki");
  s.mutable_interval()->set_start_ms(0);
  s.mutable_interval()->set_end_ms(3600000);
  s.set_version("1970-01-01T00:00:00.000Z");
  s.set_num_rows(5);
  s.set_size_bytes(100);
  s.set_checksum("crc32c:00000000");
  s.set_path("file:///deep/wiki/" + id);
  return s;
}

IntervalCompaction Compaction(const std::vector<std::string>& inputs, const std::string& output) {
  IntervalCompaction c;
  c.datasource = "wiki";
  c.interval = Segment("x").interval();
  for (const std::string& id : inputs) c.replaced.push_back(Segment(id));
  CompactedSegment out;
  out.descriptor = Segment(output);
  out.sha256 = "sha256:" + std::string(64, 'a');
  c.outputs.push_back(out);
  return c;
}

class CompactionCommitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = testing::OpenTestStore(dir_.path());
    ASSERT_TRUE(store_->InTransaction([&](StoreTxn& txn) -> absl::Status {
                        SLUICE_RETURN_IF_ERROR(
                            txn.InsertSpec("wiki", testing::TestSpec("wiki"), false, 1000).status());
                        SLUICE_ASSIGN_OR_RETURN(int64_t commit,
                                                txn.InsertCommittedSequence(
                                                    "wiki", "wiki_a_0", "t", {{0, 0}}, {{0, 15}},
                                                    {}, 1000));
                        for (const char* id : {"a", "b", "c"}) {
                          v1::SegmentDescriptor s = Segment(id);
                          s.set_sequence_name("wiki_a_0");
                          SLUICE_RETURN_IF_ERROR(txn.InsertSegment(s, "", commit, "t", 1000));
                        }
                        return absl::OkStatus();
                      })
                    .ok());
  }

  std::vector<std::string> Used() {
    std::vector<std::string> ids;
    EXPECT_TRUE(store_->InTransaction([&](StoreTxn& txn) -> absl::Status {
                        SLUICE_ASSIGN_OR_RETURN(auto listed,
                                                txn.ListSegments("wiki", nullptr, false, 100));
                        for (const auto& s : listed) ids.push_back(s.id());
                        return absl::OkStatus();
                      })
                    .ok());
    std::sort(ids.begin(), ids.end());
    return ids;
  }

  std::optional<std::string> Table() {
    std::optional<std::string> location;
    EXPECT_TRUE(store_->InTransaction([&](StoreTxn& txn) -> absl::Status {
                        SLUICE_ASSIGN_OR_RETURN(location,
                                                txn.IcebergMetadataLocation("sluice", "wiki"));
                        return absl::OkStatus();
                      })
                    .ok());
    return location;
  }

  testing::TempDir dir_;
  std::unique_ptr<MetadataStore> store_;
};

TEST_F(CompactionCommitTest, ReplacesTheInputsOrNothing) {
  auto committed = CommitCompaction(store_.get(), Compaction({"a", "b"}, "ab"), std::nullopt,
                                    absl::FromUnixMillis(2000));
  ASSERT_TRUE(committed.ok()) << committed.status();
  EXPECT_EQ(committed->outcome, CompactionCommitOutcome::kCommitted) << committed->detail;
  EXPECT_EQ(Used(), (std::vector<std::string>{"ab", "c"}));
  // The compacted segment carries its digest and publisher; the inputs point at it.
  ASSERT_TRUE(store_->InTransaction([&](StoreTxn& txn) -> absl::Status {
                      SLUICE_ASSIGN_OR_RETURN(auto listed,
                                              txn.ListSegments("wiki", nullptr, false, 100));
                      for (const auto& s : listed) {
                        if (s.id() != "ab") continue;
                        EXPECT_EQ(s.sha256(), "sha256:" + std::string(64, 'a'));
                        EXPECT_EQ(s.published_by_task(), kCompactionPublisher);
                        EXPECT_EQ(s.handoff_state(), v1::HANDOFF_STATE_PENDING);
                      }
                      SLUICE_ASSIGN_OR_RETURN(auto by, txn.ReplacedBy("a"));
                      EXPECT_EQ(by, (std::vector<std::string>{"ab"}));
                      return absl::OkStatus();
                    })
                  .ok());

  // A compaction planned before that commit, reading b and c: input lost,
  // nothing changed.
  auto lost = CommitCompaction(store_.get(), Compaction({"c", "b"}, "bc"), std::nullopt,
                               absl::FromUnixMillis(3000));
  ASSERT_TRUE(lost.ok()) << lost.status();
  EXPECT_EQ(lost->outcome, CompactionCommitOutcome::kInputLost);
  EXPECT_NE(lost->detail.find("segment b "), std::string::npos) << lost->detail;
  EXPECT_EQ(Used(), (std::vector<std::string>{"ab", "c"}));

  // Other refusals are errors, nothing changed either.
  auto twice = CommitCompaction(store_.get(), Compaction({"c"}, "ab"), std::nullopt,
                                absl::FromUnixMillis(3000));
  EXPECT_EQ(twice.status().code(), absl::StatusCode::kAlreadyExists) << twice.status();
  EXPECT_EQ(Used(), (std::vector<std::string>{"ab", "c"}));
}

TEST_F(CompactionCommitTest, MovesTheIcebergTableInTheSameTransaction) {
  // The table as the publisher left it.
  ASSERT_TRUE(store_->InTransaction([&](StoreTxn& txn) -> absl::Status {
                      SLUICE_ASSIGN_OR_RETURN(bool swapped, txn.SwapIcebergMetadataLocation(
                                                                "sluice", "wiki", std::nullopt,
                                                                "file:///t/m0.json"));
                      EXPECT_TRUE(swapped);
                      return absl::OkStatus();
                    })
                  .ok());
  IcebergSwap swap{"sluice", "wiki", "file:///t/other.json", "file:///t/m1.json", 7};

  // Staged on metadata the table no longer points at: table moved, the
  // segments are not replaced.
  auto moved = CommitCompaction(store_.get(), Compaction({"a", "b"}, "ab"), swap,
                                absl::FromUnixMillis(2000));
  ASSERT_TRUE(moved.ok()) << moved.status();
  EXPECT_EQ(moved->outcome, CompactionCommitOutcome::kTableMoved);
  EXPECT_EQ(Used(), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(Table(), "file:///t/m0.json");

  // Staged on the current metadata: both move.
  swap.expected = "file:///t/m0.json";
  auto committed = CommitCompaction(store_.get(), Compaction({"a", "b"}, "ab"), swap,
                                    absl::FromUnixMillis(2000));
  ASSERT_TRUE(committed.ok()) << committed.status();
  EXPECT_EQ(committed->outcome, CompactionCommitOutcome::kCommitted) << committed->detail;
  EXPECT_EQ(Used(), (std::vector<std::string>{"ab", "c"}));
  EXPECT_EQ(Table(), "file:///t/m1.json");

  // An input lost: the table does not move either.
  IcebergSwap next{"sluice", "wiki", "file:///t/m1.json", "file:///t/m2.json", 8};
  auto lost = CommitCompaction(store_.get(), Compaction({"b", "c"}, "bc"), next,
                               absl::FromUnixMillis(3000));
  ASSERT_TRUE(lost.ok()) << lost.status();
  EXPECT_EQ(lost->outcome, CompactionCommitOutcome::kInputLost);
  EXPECT_EQ(Table(), "file:///t/m1.json");
  EXPECT_EQ(Used(), (std::vector<std::string>{"ab", "c"}));
}

}  // namespace
}  // namespace sluice::supervisor
