// Tests of segment_rows.h, the segment rows: a compaction's replacement of
// exactly the segments it read, and the removal of the replaced files; on
// SQLite, and on PostgreSQL in the _postgresql_test target.
#include "supervisor/store/segment_rows.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "common/status_macros.h"
#include "supervisor/store/store_test_fixture.h"

namespace sluice::supervisor {
namespace {

using store_testing::TestBackend;
using SegmentRowsTest = store_testing::StoreTest;

TEST_P(SegmentRowsTest, ReplaceSegmentsReplacesExactlyTheReadSet) {
  auto store = Open();
  ASSERT_TRUE(store.ok()) << store.status();
  auto segment = [](const std::string& id, const std::string& sequence, int64_t start_ms) {
    v1::SegmentDescriptor s;
    s.set_id(id);
    s.set_datasource("wiki");
    s.mutable_interval()->set_start_ms(start_ms);
    s.mutable_interval()->set_end_ms(start_ms + 3600000);
    s.set_version("v");
    s.set_num_rows(5);
    s.set_size_bytes(100);
    s.set_checksum("crc32c:00000000");
    s.set_path("file:///deep/" + id);
    s.set_sequence_name(sequence);
    return s;
  };
  int64_t commit_a = 0, commit_b = 0;
  ASSERT_TRUE((*store)
                  ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                    SLUICE_RETURN_IF_ERROR(
                        txn.InsertSpec("wiki", Spec("edits"), false, 1000).status());
                    SLUICE_ASSIGN_OR_RETURN(commit_a, txn.InsertCommittedSequence(
                                                          "wiki", "wiki_a_0", "t", {{0, 0}},
                                                          {{0, 5}}, {}, 1000));
                    SLUICE_RETURN_IF_ERROR(
                        txn.InsertSegment(segment("a", "wiki_a_0", 0), "", commit_a, "t", 1000));
                    SLUICE_ASSIGN_OR_RETURN(commit_b, txn.InsertCommittedSequence(
                                                          "wiki", "wiki_a_1", "t", {{0, 5}},
                                                          {{0, 10}}, {}, 1100));
                    SLUICE_RETURN_IF_ERROR(
                        txn.InsertSegment(segment("b", "wiki_a_1", 0), "", commit_b, "t", 1100));
                    SLUICE_RETURN_IF_ERROR(txn.InsertSegment(segment("b_next", "wiki_a_1", 3600000),
                                                             "", commit_b, "t", 1100));
                    return absl::OkStatus();
                  })
                  .ok());
  // A compaction reads a and b; meanwhile a sequence appends d to the interval.
  ASSERT_TRUE((*store)
                  ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                    SLUICE_ASSIGN_OR_RETURN(int64_t commit_c, txn.InsertCommittedSequence(
                                                                  "wiki", "wiki_a_2", "t",
                                                                  {{0, 10}}, {{0, 15}}, {}, 1200));
                    return txn.InsertSegment(segment("d", "wiki_a_2", 0), "", commit_c, "t", 1200);
                  })
                  .ok());
  auto used_ids = [&]() {
    std::vector<std::string> ids;
    EXPECT_TRUE((*store)
                    ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                      SLUICE_ASSIGN_OR_RETURN(auto listed, txn.ListSegments("wiki", nullptr, false, 100));
                      for (const auto& s : listed) ids.push_back(s.id());
                      std::sort(ids.begin(), ids.end());
                      return absl::OkStatus();
                    })
                    .ok());
    return ids;
  };
  auto replace = [&](std::vector<std::string> replaced, v1::SegmentDescriptor s) {
    return (*store)->InTransaction([&](StoreTxn& txn) {
      return txn.ReplaceSegments("wiki", replaced, {s}, "compactor", 2000);
    });
  };
  v1::SegmentDescriptor compacted = segment("ab", "", 0);
  compacted.set_sha256("sha256:" + std::string(64, 'c'));
  ASSERT_TRUE(replace({"a", "b"}, compacted).ok());
  EXPECT_EQ(used_ids(), (std::vector<std::string>{"ab", "b_next", "d"}));

  // A second compaction that read b (now replaced) and d: aborted, nothing changed.
  absl::Status again = replace({"d", "b"}, segment("bd", "", 0));
  EXPECT_EQ(again.code(), absl::StatusCode::kAborted) << again;
  EXPECT_NE(again.message().find("segment b "), std::string::npos) << again;
  EXPECT_EQ(used_ids(), (std::vector<std::string>{"ab", "b_next", "d"}));
  // Other refusals, nothing changed either.
  EXPECT_EQ(replace({"zzz"}, segment("x", "", 0)).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(replace({"d", "b_next"}, segment("x", "", 0)).code(),
            absl::StatusCode::kInvalidArgument);  // two intervals
  EXPECT_EQ(replace({"d"}, segment("x", "", 3600000)).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(replace({"d"}, segment("b_next", "", 0)).code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(used_ids(), (std::vector<std::string>{"ab", "b_next", "d"}));

  std::vector<v1::SegmentDescriptor> all;
  std::optional<v1::CommittedSequence> seq_b;
  std::vector<std::string> replaced_by, d_replaced_by;
  ASSERT_TRUE((*store)
                  ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                    SLUICE_ASSIGN_OR_RETURN(all, txn.ListSegments("wiki", nullptr, true, 100));
                    SLUICE_ASSIGN_OR_RETURN(seq_b, txn.CommittedSequence("wiki", "wiki_a_1"));
                    SLUICE_ASSIGN_OR_RETURN(replaced_by, txn.ReplacedBy("a"));
                    SLUICE_ASSIGN_OR_RETURN(d_replaced_by, txn.ReplacedBy("d"));
                    return absl::OkStatus();
                  })
                  .ok());
  EXPECT_EQ(replaced_by, (std::vector<std::string>{"ab"}));
  EXPECT_TRUE(d_replaced_by.empty());
  EXPECT_EQ(all.size(), 5u);  // a, b unused; no bd, no x
  for (const auto& s : all) {
    if (s.id() == "ab") {
      EXPECT_TRUE(s.used());
      EXPECT_EQ(s.sequence_name(), "");
      EXPECT_EQ(s.sha256(), compacted.sha256());
      EXPECT_EQ(s.handoff_state(), v1::HANDOFF_STATE_PENDING);
    }
    if (s.id() == "a" || s.id() == "b") {
      EXPECT_FALSE(s.used()) << s.id();
    }
  }
  // The commit record still lists what its sequence published.
  ASSERT_TRUE(seq_b.has_value());
  EXPECT_EQ(std::vector<std::string>(seq_b->segment_ids().begin(), seq_b->segment_ids().end()),
            (std::vector<std::string>{"b", "b_next"}));

  // The replaced segments' files are due once replaced long enough, the
  // longest replaced first, and each only until its removal is recorded.
  using Files = std::vector<std::pair<std::string, std::string>>;
  auto due = [&](int64_t before_ms) {
    Files files;
    EXPECT_TRUE((*store)
                    ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                      SLUICE_ASSIGN_OR_RETURN(files, txn.ReplacedSegmentFilesToRemove(before_ms, 10));
                      return absl::OkStatus();
                    })
                    .ok());
    return files;
  };
  EXPECT_TRUE(due(1999).empty());
  EXPECT_EQ(due(2000), (Files{{"a", "file:///deep/a"}, {"b", "file:///deep/b"}}));
  ASSERT_TRUE((*store)
                  ->InTransaction([&](StoreTxn& txn) {
                    // A used segment is never marked.
                    EXPECT_TRUE(txn.SetSegmentFileRemoved("ab", 3000).ok());
                    return txn.SetSegmentFileRemoved("a", 3000);
                  })
                  .ok());
  EXPECT_EQ(due(5000), (Files{{"b", "file:///deep/b"}}));
}

INSTANTIATE_TEST_SUITE_P(Backends, SegmentRowsTest, ::testing::ValuesIn(testing::TestBackends()),
                         store_testing::BackendTestName);

}  // namespace
}  // namespace sluice::supervisor
