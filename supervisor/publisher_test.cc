#include "supervisor/publisher.h"

#include "common/status_macros.h"

#include "supervisor/testing/segment_files.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/deep_storage.h"
#include "common/open_deep_storage.h"
#include "common/fault_injection.h"
#include "common/file_util.h"
#include "common/granularity.h"
#include "common/segment/test_damage.h"
#include "supervisor/allocator.h"
#include "supervisor/naming.h"
#include "supervisor/testing/segment_files.h"
#include "supervisor/testing/test_util.h"

namespace sluice::supervisor {
namespace {

constexpr int64_t kHour = 3600 * 1000;
constexpr int64_t kT0 = 1'800'000'000'000 / kHour * kHour;

class PublisherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = testing::OpenTestStore(dir_.path());
    ASSERT_TRUE(
        store_
            ->InTransaction([&](StoreTxn& txn) -> absl::Status {
              auto v = txn.InsertSpec("wiki", testing::TestSpec("wiki"), false, 1);
              if (!v.ok()) return v.status();
              return txn.RecordInitialOffsets("wiki", "events", {{0, 0}, {1, 0}}, 1).status();
            })
            .ok());
  }
  void TearDown() override { ConfigureFaultPoints("").IgnoreError(); }

  Publisher MakePublisher(MetadataStore* store = nullptr, DeepStorage* deep = nullptr) {
    PublisherOptions options;
    options.store = store ? store : store_.get();
    options.deep_storage = deep;
    options.clock = &clock_;
    return Publisher(options);
  }

  // Allocates a segment of `sequence` in hour `hour` and describes it.
  v1::SegmentDescriptor Segment(const std::string& sequence, int hour,
                                const std::string& path = "file:///nowhere/x.sluice",
                                int64_t size = 100) {
    Allocator allocator({store_.get(), &clock_});
    v1::AllocateSegmentRequest request;
    request.set_datasource("wiki");
    request.set_task_id("task");
    request.set_sequence_name(sequence);
    request.mutable_interval()->set_start_ms(kT0 + hour * kHour);
    request.mutable_interval()->set_end_ms(kT0 + (hour + 1) * kHour);
    auto allocated = allocator.Allocate(request, Granularity(Granularity::Unit::kHour));
    EXPECT_TRUE(allocated.ok()) << allocated.status();
    v1::SegmentDescriptor s;
    s.set_id(allocated->segment_id());
    s.set_datasource("wiki");
    *s.mutable_interval() = allocated->interval();
    s.set_version(allocated->version());
    s.set_partition_num(allocated->partition_num());
    s.set_num_rows(10);
    s.set_size_bytes(size);
    s.set_checksum("crc32c:00000000");
    s.set_path(path);
    s.set_sequence_name(sequence);
    return s;
  }

  // Allocates a segment of `sequence` in hour 0, builds a real file of 50
  // records for it (partition 0, offsets [0, 150)) and pushes it to `deep`
  // under `key`: the descriptor a task would publish.
  absl::StatusOr<v1::SegmentDescriptor> PushAllocatedSegment(DeepStorage* deep,
                                                             const std::string& sequence,
                                                             const std::string& key) {
    const v1::SegmentDescriptor allocated = Segment(sequence, 0);
    v1::AllocateSegmentResponse allocation;
    allocation.set_segment_id(allocated.id());
    *allocation.mutable_interval() = allocated.interval();
    allocation.set_version(allocated.version());
    allocation.set_partition_num(allocated.partition_num());
    SLUICE_RETURN_IF_ERROR(MakeDirs(dir_.path() + "/work"));
    return testing::PushSegment(deep, dir_.path() + "/work", key, "wiki", allocation, 50,
                                {{0, {0, 150}}});
  }

  static v1::PublishSegmentsRequest Request(const std::string& sequence, const OffsetMap& start,
                                            const OffsetMap& end,
                                            std::vector<v1::SegmentDescriptor> segments = {}) {
    v1::PublishSegmentsRequest r;
    r.set_datasource("wiki");
    r.set_task_id("task-a");
    r.set_sequence_name(sequence);
    ToProto(start, r.mutable_start_offsets());
    ToProto(end, r.mutable_end_offsets());
    for (auto& s : segments) {
      // What a task states: the sequence's ranges, from the datasource's topic.
      if (s.provenance().ranges().empty()) {
        s.mutable_provenance()->set_topic("events");
        for (const auto& [p, o] : start) {
          v1::PartitionRange* range = s.mutable_provenance()->add_ranges();
          range->set_partition(p);
          range->set_start_offset(o);
          range->set_end_offset(end.count(p) ? end.at(p) : o);
        }
      }
      *r.add_segments() = std::move(s);
    }
    for (const auto& [p, o] : start) {
      if (!end.count(p)) continue;
      v1::PartitionRange* range = r.add_partition_stats();
      range->set_partition(p);
      range->set_start_offset(o);
      range->set_end_offset(end.at(p));
      range->set_rows(end.at(p) - o);
    }
    return r;
  }

  OffsetMap Committed() {
    OffsetMap out;
    EXPECT_TRUE(store_
                    ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                      auto c = txn.CommittedOffsets("wiki");
                      if (c.ok()) out = *c;
                      return c.status();
                    })
                    .ok());
    return out;
  }

  testing::TempDir dir_;
  FakeClock clock_;
  std::unique_ptr<MetadataStore> store_;
};

// A sequence has one name: an alias of "wiki_b_0" ("wiki_b_00") is refused,
// naming it, so it cannot commit sequence 0's range under another commit-log
// key (after which every honest publish of "wiki_b_0" would be refused).
TEST_F(PublisherTest, ANonCanonicalSequenceNameIsRefused) {
  TaskGroupRecord group;
  group.base_sequence_name = "wiki_b";
  group.datasource = "wiki";
  group.start_offsets = {{0, 0}, {1, 0}};
  group.checkpoints = {{0, {{0, 0}, {1, 0}}}, {1, {{0, 60}, {1, 70}}}};
  ASSERT_TRUE(store_->InTransaction([&](StoreTxn& txn) { return txn.InsertTaskGroup(group); }).ok());
  Publisher publisher = MakePublisher();
  for (const char* alias : {"wiki_b_00", "wiki_b_+0", "wiki_b_ 0"}) {
    auto aliased = publisher.Publish(Request(alias, {{0, 0}, {1, 0}}, {{0, 60}, {1, 70}}), "wiki_b");
    EXPECT_EQ(aliased.status().code(), absl::StatusCode::kInvalidArgument) << aliased.status();
    EXPECT_TRUE(absl::StrContains(aliased.status().message(), alias)) << aliased.status();
    EXPECT_EQ(Committed(), (OffsetMap{{0, 0}, {1, 0}}));
  }
  auto honest =
      publisher.Publish(Request("wiki_b_0", {{0, 0}, {1, 0}}, {{0, 60}, {1, 70}}), "wiki_b");
  ASSERT_TRUE(honest.ok()) << honest.status();
  EXPECT_EQ(Committed(), (OffsetMap{{0, 60}, {1, 70}}));
}

// With the publishing task's group named, the publish transaction checks
// the sequence's range against the recorded checkpoints, atomically with
// the commit: once a checkpoint is moved back (docs/protocol.md "Moving a
// checkpoint back"), a publish with the old end is refused and one with the
// new end commits.
TEST_F(PublisherTest, TheRangeIsCheckedAgainstTheRecordedCheckpointsInTheTransaction) {
  TaskGroupRecord group;
  group.base_sequence_name = "wiki_b";
  group.datasource = "wiki";
  group.start_offsets = {{0, 0}, {1, 0}};
  group.checkpoints = {{0, {{0, 0}, {1, 0}}}, {1, {{0, 60}, {1, 70}}}};
  ASSERT_TRUE(store_->InTransaction([&](StoreTxn& txn) { return txn.InsertTaskGroup(group); }).ok());
  ASSERT_TRUE(store_
                  ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                    SLUICE_RETURN_IF_ERROR(txn.RemoveLatestCheckpoint("wiki_b", 1));
                    return txn.AppendCheckpoint("wiki_b", 1, {{0, 50}, {1, 60}}, 2);
                  })
                  .ok());
  Publisher publisher = MakePublisher();
  auto old_end =
      publisher.Publish(Request("wiki_b_0", {{0, 0}, {1, 0}}, {{0, 60}, {1, 70}}), "wiki_b");
  EXPECT_EQ(old_end.status().code(), absl::StatusCode::kPermissionDenied) << old_end.status();
  EXPECT_EQ(Committed(), (OffsetMap{{0, 0}, {1, 0}}));
  auto moved =
      publisher.Publish(Request("wiki_b_0", {{0, 0}, {1, 0}}, {{0, 50}, {1, 60}}), "wiki_b");
  ASSERT_TRUE(moved.ok()) << moved.status();
  EXPECT_EQ(Committed(), (OffsetMap{{0, 50}, {1, 60}}));
}

TEST_F(PublisherTest, MatchingStartCommitsSegmentsAndAdvancesOffsets) {
  Publisher publisher = MakePublisher();
  auto response = publisher.Publish(
      Request("wiki_seq_0", {{0, 0}, {1, 0}}, {{0, 10}, {1, 5}}, {Segment("wiki_seq_0", 0)}));
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->inserted_segment_ids_size(), 1);
  EXPECT_EQ(FromProto(response->committed_offsets()), (OffsetMap{{0, 10}, {1, 5}}));
  EXPECT_EQ(Committed(), (OffsetMap{{0, 10}, {1, 5}}));

  std::vector<v1::CommittedSequence> log;
  ASSERT_TRUE(store_
                  ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                    auto l = txn.CommitLog("wiki");
                    if (l.ok()) log = *l;
                    return l.status();
                  })
                  .ok());
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0].sequence_name(), "wiki_seq_0");
  EXPECT_EQ(log[0].segment_ids_size(), 1);
  EXPECT_EQ(log[0].partition_stats(0).rows(), 10);

  // The next sequence starts where this one ended.
  response = publisher.Publish(
      Request("wiki_seq_1", {{0, 10}, {1, 5}}, {{0, 12}, {1, 9}}, {Segment("wiki_seq_1", 0)}));
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(Committed(), (OffsetMap{{0, 12}, {1, 9}}));
}

TEST_F(PublisherTest, StartBehindIsAbortedAndAheadIsUnavailable) {
  Publisher publisher = MakePublisher();
  ASSERT_TRUE(publisher.Publish(Request("wiki_a_0", {{0, 0}, {1, 0}}, {{0, 10}, {1, 10}})).ok());

  auto behind = publisher.Publish(Request("wiki_b_0", {{0, 0}, {1, 0}}, {{0, 8}, {1, 8}}));
  EXPECT_EQ(behind.status().code(), absl::StatusCode::kAborted);
  EXPECT_TRUE(absl::StrContains(behind.status().message(), "behind")) << behind.status();

  auto ahead = publisher.Publish(Request("wiki_c_0", {{0, 20}, {1, 10}}, {{0, 30}, {1, 10}}));
  EXPECT_EQ(ahead.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(absl::StrContains(ahead.status().message(), "ahead")) << ahead.status();

  // A sequence covering only one partition is compared on that partition only.
  ASSERT_TRUE(publisher.Publish(Request("wiki_d_0", {{1, 10}}, {{1, 15}})).ok());
  EXPECT_EQ(Committed(), (OffsetMap{{0, 10}, {1, 15}}));
}

TEST_F(PublisherTest, FirstPublishIsCheckedAgainstTheRecordedInitialOffsets) {
  ASSERT_TRUE(store_
                  ->InTransaction([](StoreTxn& txn) {
                    return txn.RecordInitialOffsets("wiki", "events", {{5, 100}}, 1).status();
                  })
                  .ok());
  Publisher publisher = MakePublisher();
  EXPECT_EQ(publisher.Publish(Request("wiki_x_0", {{5, 0}}, {{5, 100}})).status().code(),
            absl::StatusCode::kAborted);
  EXPECT_EQ(publisher.Publish(Request("wiki_x_0", {{5, 150}}, {{5, 160}})).status().code(),
            absl::StatusCode::kUnavailable);
  EXPECT_TRUE(publisher.Publish(Request("wiki_x_0", {{5, 100}}, {{5, 110}})).ok());

  // A partition with no recorded offset cannot be published at all.
  auto unknown = publisher.Publish(Request("wiki_y_0", {{9, 0}}, {{9, 10}}));
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kFailedPrecondition) << unknown.status();
}

TEST_F(PublisherTest, RepublishingACommittedSequenceIsAbortedAndVisibleAsPublished) {
  Publisher publisher = MakePublisher();
  auto request = Request("wiki_s_0", {{0, 0}, {1, 0}}, {{0, 0}, {1, 0}});  // empty: start == end
  ASSERT_TRUE(publisher.Publish(request).ok());
  auto again = publisher.Publish(request);
  EXPECT_EQ(again.status().code(), absl::StatusCode::kAborted);
  EXPECT_TRUE(absl::StrContains(again.status().message(), "already committed"));

  v1::GetPublishedSegmentsRequest query;
  query.set_datasource("wiki");
  query.set_sequence_name("wiki_s_0");
  auto published = publisher.GetPublished(query);
  ASSERT_TRUE(published.ok());
  EXPECT_TRUE(published->sequence_committed());
}

// The second replica's publish of a committed sequence is compared with what
// was committed: a segment of the same id with another checksum (or rows) is
// a divergence, reported once per segment with both paths; the same bytes
// (and the committing task's own retry) are not.
TEST_F(PublisherTest, ALateReplicaWithDifferentSegmentsIsReportedAsDivergence) {
  std::vector<ReplicaDivergence> seen;
  PublisherOptions options;
  options.store = store_.get();
  options.clock = &clock_;
  options.on_replica_divergence = [&](const ReplicaDivergence& d) { seen.push_back(d); };
  Publisher publisher(options);
  const OffsetMap start = {{0, 0}, {1, 0}};
  const OffsetMap end = {{0, 5}, {1, 5}};
  std::vector<v1::SegmentDescriptor> segments = {Segment("wiki_d_0", 0, "file:///a/0.sluice"),
                                                 Segment("wiki_d_0", 1, "file:///a/1.sluice")};
  ASSERT_TRUE(publisher.Publish(Request("wiki_d_0", start, end, segments)).ok());

  // The committing task's own retry: never compared.
  EXPECT_TRUE(absl::IsAborted(publisher.Publish(Request("wiki_d_0", start, end, segments)).status()));
  EXPECT_TRUE(seen.empty());

  // A replica with identical segments (its own paths): no divergence.
  std::vector<v1::SegmentDescriptor> same = segments;
  same[0].set_path("file:///b/0.sluice");
  same[1].set_path("file:///b/1.sluice");
  v1::PublishSegmentsRequest replica = Request("wiki_d_0", start, end, same);
  replica.set_task_id("task-b");
  EXPECT_TRUE(absl::IsAborted(publisher.Publish(replica).status()));
  EXPECT_TRUE(seen.empty());

  // A replica whose second segment differs.
  same[1].set_checksum("crc32c:deadbeef");
  same[1].set_num_rows(11);
  replica = Request("wiki_d_0", start, end, same);
  replica.set_task_id("task-b");
  const absl::Status refused = publisher.Publish(replica).status();
  EXPECT_TRUE(absl::IsAborted(refused)) << refused;
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].segment_id, segments[1].id());
  EXPECT_EQ(seen[0].committed_task_id, "task-a");
  EXPECT_EQ(seen[0].replica_task_id, "task-b");
  EXPECT_EQ(seen[0].committed_path, "file:///a/1.sluice");
  EXPECT_EQ(seen[0].replica_path, "file:///b/1.sluice");
  EXPECT_EQ(seen[0].replica_rows, 11);
  const std::string line = seen[0].Describe();
  EXPECT_TRUE(absl::StrContains(line, "crc32c:deadbeef")) << line;
  EXPECT_TRUE(absl::StrContains(line, "both files are kept")) << line;
}

TEST_F(PublisherTest, TwoReplicasRacingForTheSameSequenceBothSucceedOnce) {
  // Two connections to the same file, as two supervisors' worth of threads.
  auto other_store = testing::OpenTestStore(dir_.path());
  Publisher a = MakePublisher(store_.get());
  Publisher b = MakePublisher(other_store.get());

  OffsetMap start = {{0, 0}, {1, 0}};
  for (int round = 0; round < 20; ++round) {
    const std::string sequence = absl::StrCat("wiki_race_", round);
    const OffsetMap end = {{0, start[0] + 7}, {1, start[1] + 3}};
    std::vector<v1::SegmentDescriptor> segments = {Segment(sequence, round % 3),
                                                   Segment(sequence, round % 3 + 1)};
    const auto request = Request(sequence, start, end, segments);
    std::atomic<int> ok{0};
    std::atomic<int> aborted{0};
    absl::StatusCode other_code = absl::StatusCode::kOk;
    auto run = [&](Publisher* publisher) {
      auto result = publisher->Publish(request);
      if (result.ok()) {
        ++ok;
      } else if (absl::IsAborted(result.status())) {
        ++aborted;
      } else {
        other_code = result.status().code();
      }
    };
    std::thread ta(run, &a);
    std::thread tb(run, &b);
    ta.join();
    tb.join();
    ASSERT_EQ(other_code, absl::StatusCode::kOk);
    EXPECT_EQ(ok.load(), 1) << "round " << round;
    EXPECT_EQ(aborted.load(), 1) << "round " << round;

    // The loser's "already published" check: same ids, sequence committed.
    v1::GetPublishedSegmentsRequest query;
    query.set_datasource("wiki");
    query.set_sequence_name(sequence);
    for (const auto& s : segments) query.add_segment_ids(s.id());
    auto published = b.GetPublished(query);
    ASSERT_TRUE(published.ok());
    EXPECT_TRUE(published->sequence_committed());
    EXPECT_EQ(published->published_segment_ids_size(), 2);
    EXPECT_EQ(FromProto(published->sequence_end_offsets()), end);
    EXPECT_EQ(Committed(), end);
    start = end;
  }
}

TEST_F(PublisherTest, IdenticalSegmentIdsAreInsertedOnce) {
  Publisher publisher = MakePublisher();
  v1::SegmentDescriptor s = Segment("wiki_dup_0", 0);
  auto response = publisher.Publish(Request("wiki_dup_0", {{0, 0}}, {{0, 4}}, {s, s}));
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->inserted_segment_ids_size(), 1);
  int64_t count = 0;
  ASSERT_TRUE(store_
                  ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                    auto c = txn.CountSegments("wiki");
                    if (c.ok()) count = *c;
                    return c.status();
                  })
                  .ok());
  EXPECT_EQ(count, 1);
}

TEST_F(PublisherTest, SegmentsMustHaveBeenAllocatedForTheSequence) {
  Publisher publisher = MakePublisher();
  v1::SegmentDescriptor other = Segment("wiki_other_0", 0);
  other.set_sequence_name("");
  auto response = publisher.Publish(Request("wiki_mine_0", {{0, 0}}, {{0, 4}}, {other}));
  EXPECT_EQ(response.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(response.status().message(), "not allocated"));
  EXPECT_EQ(Committed(), (OffsetMap{{0, 0}, {1, 0}}));  // rolled back
}

TEST_F(PublisherTest, MalformedRequestsAreInvalid) {
  Publisher publisher = MakePublisher();
  EXPECT_EQ(publisher.Publish(Request("s", {{0, 5}}, {{0, 4}})).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(publisher.Publish(Request("s", {{0, 5}}, {{1, 6}})).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(publisher.Publish(Request("", {{0, 0}}, {{0, 1}})).status().code(),
            absl::StatusCode::kInvalidArgument);
  v1::SegmentDescriptor s = Segment("s", 0);
  s.set_partition_num(s.partition_num() + 1);  // id no longer matches
  EXPECT_EQ(publisher.Publish(Request("s", {{0, 0}}, {{0, 1}}, {s})).status().code(),
            absl::StatusCode::kInvalidArgument);
  auto unknown = Request("s", {{0, 0}}, {{0, 1}});
  unknown.set_datasource("nobody");
  EXPECT_EQ(publisher.Publish(unknown).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(PublisherTest, SegmentFilesAreCheckedInDeepStorage) {
  auto deep = OpenDeepStorage("file://" + dir_.path() + "/deep");
  ASSERT_TRUE(deep.ok());
  Publisher publisher = MakePublisher(nullptr, deep->get());
  const OffsetMap start{{0, 0}}, end{{0, 150}};
  auto real = PushAllocatedSegment(deep->get(), "wiki_f_0", "wiki/seg/0/task_0.sluice");
  ASSERT_TRUE(real.ok()) << real.status();
  auto with = [&](auto change) {
    v1::SegmentDescriptor d = *real;
    change(d);
    return publisher.Publish(Request("wiki_f_0", start, end, {d}));
  };
  auto refused = [](const absl::StatusOr<v1::PublishSegmentsResponse>& r) {
    return r.status().code() == absl::StatusCode::kFailedPrecondition;
  };
  EXPECT_TRUE(refused(with([&](auto& d) { d.set_path((*deep)->UriForKey("wiki/x")); })));
  EXPECT_TRUE(refused(with([](auto& d) { d.set_size_bytes(d.size_bytes() - 1); })));
  EXPECT_TRUE(refused(with([](auto& d) { d.set_num_rows(d.num_rows() + 1); })));
  EXPECT_TRUE(refused(with([](auto& d) { d.set_checksum("crc32c:00000000"); })));
  // A file outside the datasource's own prefix, even a real one.
  auto elsewhere = (*deep)->Push(dir_.path() + "/deep/wiki/seg/0/task_0.sluice", "other/x.sluice");
  ASSERT_TRUE(elsewhere.ok()) << elsewhere.status();
  EXPECT_TRUE(refused(with([&](auto& d) { d.set_path(*elsewhere); })));
  // The file's provenance is what the descriptor claims, and it is this
  // sequence's range: another sequence's file does not fit.
  EXPECT_TRUE(refused(with([](auto& d) {
    d.mutable_provenance()->mutable_ranges(0)->set_end_offset(99);
  })));
  auto ok = with([](auto&) {});
  EXPECT_TRUE(ok.ok()) << ok.status();
}

// A task told that the supervisor decodes what it pushes (TaskSpec.
// supervisor_decodes_segments) checks only the structure of its file: the
// publisher's decode of every block is what refuses damage behind a valid
// checksum, and nothing is committed.
TEST_F(PublisherTest, DamageBehindAValidChecksumIsRefusedBeforeTheCommit) {
  auto deep = OpenDeepStorage("file://" + dir_.path() + "/deep");
  ASSERT_TRUE(deep.ok());
  Publisher publisher = MakePublisher(nullptr, deep->get());
  const OffsetMap start{{0, 0}}, end{{0, 150}};
  auto pushed = PushAllocatedSegment(deep->get(), "wiki_d_0", "wiki/seg/0/task_d.sluice");
  ASSERT_TRUE(pushed.ok()) << pushed.status();
  absl::StatusOr<std::string> resealed =
      segment::testing::DamageBlocksKeepingChecksum(dir_.path() + "/deep/wiki/seg/0/task_d.sluice");
  ASSERT_TRUE(resealed.ok()) << resealed.status();
  v1::SegmentDescriptor claimed = *pushed;
  claimed.set_checksum(*resealed);  // what the damaged file's trailer says
  auto refused = publisher.Publish(Request("wiki_d_0", start, end, {claimed}));
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition) << refused.status();
  EXPECT_NE(refused.status().message().find("deep-storage copy refused"), std::string::npos)
      << refused.status();
  EXPECT_EQ(Committed(), (OffsetMap{{0, 0}, {1, 0}}));
}

TEST_F(PublisherTest, ASegmentOfAnotherSequencesRangeIsRefused) {
  // Empty range [20, 20) pointing at a file built from [0, 20): the forged
  // "start = end" publish that would count those rows twice.
  ASSERT_TRUE(MakePublisher().Publish(Request("wiki_a_0", {{0, 0}, {1, 0}}, {{0, 20}, {1, 0}})).ok());
  v1::SegmentDescriptor s = Segment("wiki_b_0", 0);
  s.mutable_provenance()->set_topic("events");
  v1::PartitionRange* range = s.mutable_provenance()->add_ranges();
  range->set_partition(0);
  range->set_start_offset(0);
  range->set_end_offset(20);
  auto forged = MakePublisher().Publish(Request("wiki_b_0", {{0, 20}, {1, 0}}, {{0, 20}, {1, 0}}, {s}));
  EXPECT_EQ(forged.status().code(), absl::StatusCode::kFailedPrecondition) << forged.status();
  EXPECT_EQ(Committed(), (OffsetMap{{0, 20}, {1, 0}}));
}

TEST_F(PublisherTest, FaultBeforeCommitRollsBackAndAfterCommitLosesOnlyTheAnswer) {
  Publisher publisher = MakePublisher();
  const auto request = Request("wiki_fault_0", {{0, 0}}, {{0, 9}}, {Segment("wiki_fault_0", 0)});

  ASSERT_TRUE(ConfigureFaultPoints("supervisor.publish.before_commit=error").ok());
  EXPECT_EQ(publisher.Publish(request).status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(Committed(), (OffsetMap{{0, 0}, {1, 0}}));

  ASSERT_TRUE(ConfigureFaultPoints("supervisor.publish.after_commit=error").ok());
  EXPECT_EQ(publisher.Publish(request).status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(Committed(), (OffsetMap{{0, 9}, {1, 0}}));
  ASSERT_TRUE(ConfigureFaultPoints("").ok());
  // The task retries: the sequence is already committed.
  EXPECT_EQ(publisher.Publish(request).status().code(), absl::StatusCode::kAborted);
}

}  // namespace
}  // namespace sluice::supervisor
