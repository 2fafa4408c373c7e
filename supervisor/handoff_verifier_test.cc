#include "supervisor/handoff_verifier.h"

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/granularity.h"
#include "common/open_deep_storage.h"
#include "common/segment/segment_reader.h"
#include "common/segment/test_damage.h"
#include "supervisor/allocator.h"
#include "supervisor/publisher.h"
#include "supervisor/segment_copy_check.h"
#include "supervisor/testing/segment_files.h"
#include "supervisor/testing/test_util.h"
#include "supervisor/used_segment_verifier.h"

namespace sluice::supervisor {
namespace {

class HandoffVerifierTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = testing::OpenTestStore(dir_.path());
    auto deep = OpenDeepStorage("file://" + dir_.path() + "/deep");
    ASSERT_TRUE(deep.ok());
    deep_ = std::move(*deep);
    ASSERT_TRUE(MakeDirs(dir_.path() + "/work").ok());
    ASSERT_TRUE(MakeDirs(dir_.path() + "/scratch").ok());
  }

  void CreateDatasource(v1::HandoffMode mode) {
    v1::SupervisorSpec spec = testing::TestSpec("wiki");
    spec.mutable_tuning_config()->set_handoff_mode(mode);
    ASSERT_TRUE(store_
                    ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                      auto v = txn.InsertSpec("wiki", spec, false, 1);
                      if (!v.ok()) return v.status();
                      return txn.RecordInitialOffsets("wiki", "events", {{0, 0}}, 1).status();
                    })
                    .ok());
  }

  // Allocates, builds and pushes a real segment; publishes it as sequence
  // `n` (with `tamper` applied to the descriptor first).
  v1::SegmentDescriptor PublishOne(int n,
                                   std::function<void(v1::SegmentDescriptor*)> tamper = nullptr) {
    const std::string sequence = absl::StrCat("wiki_seq_", n);
    Allocator allocator({store_.get(), &clock_});
    v1::AllocateSegmentRequest allocate;
    allocate.set_datasource("wiki");
    allocate.set_sequence_name(sequence);
    allocate.mutable_interval()->set_start_ms(testing::SegmentHourStartMs());
    allocate.mutable_interval()->set_end_ms(testing::SegmentHourStartMs() + 3600 * 1000);
    auto allocated = allocator.Allocate(allocate, Granularity(Granularity::Unit::kHour));
    EXPECT_TRUE(allocated.ok()) << allocated.status();
    auto segment = testing::PushSegment(deep_.get(), dir_.path() + "/work",
                                        absl::StrCat("wiki/seg", n, ".sluice"), "wiki", *allocated,
                                        50, {{0, {n, n + 1}}});
    EXPECT_TRUE(segment.ok()) << segment.status();
    if (tamper) tamper(&*segment);
    v1::PublishSegmentsRequest publish;
    publish.set_datasource("wiki");
    publish.set_task_id("t");
    publish.set_sequence_name(sequence);
    (*publish.mutable_start_offsets())[0] = n;
    (*publish.mutable_end_offsets())[0] = n + 1;
    *publish.add_segments() = *segment;
    // A tampered descriptor would be refused by the publisher's own file check;
    // commit it without that check to see the verifier catch it afterwards.
    Publisher publisher({store_.get(), tamper ? nullptr : deep_.get(), &clock_});
    auto published = publisher.Publish(publish);
    EXPECT_TRUE(published.ok()) << published.status();
    return *segment;
  }

  HandoffVerifier Verifier() {
    HandoffVerifierOptions options;
    options.store = store_.get();
    options.deep_storage = deep_.get();
    options.clock = &clock_;
    options.scratch_dir = dir_.path() + "/scratch";
    return HandoffVerifier(options);
  }

  v1::HandoffState State(const std::string& id) {
    std::map<std::string, v1::HandoffState> states;
    EXPECT_TRUE(store_
                    ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                      auto s = txn.HandoffStates("wiki", {id});
                      if (s.ok()) states = *s;
                      return s.status();
                    })
                    .ok());
    return states.count(id) ? states[id] : v1::HANDOFF_STATE_UNSPECIFIED;
  }

  testing::TempDir dir_;
  FakeClock clock_;
  std::unique_ptr<MetadataStore> store_;
  std::unique_ptr<DeepStorage> deep_;
};

TEST_F(HandoffVerifierTest, AVerifiedCopyIsHandedOff) {
  CreateDatasource(v1::HANDOFF_MODE_DEEP_STORAGE);
  const v1::SegmentDescriptor s = PublishOne(0);
  EXPECT_EQ(State(s.id()), v1::HANDOFF_STATE_PENDING);
  HandoffVerifier verifier = Verifier();
  auto pass = verifier.VerifyOnce();
  ASSERT_TRUE(pass.ok()) << pass.status();
  EXPECT_EQ(pass->handed_off, 1);
  EXPECT_EQ(State(s.id()), v1::HANDOFF_STATE_HANDED_OFF);
  pass = verifier.VerifyOnce();
  EXPECT_EQ(pass->examined, 0);  // done with it
}

TEST_F(HandoffVerifierTest, ACopyThatIsNotWhatWasPublishedFails) {
  CreateDatasource(v1::HANDOFF_MODE_DEEP_STORAGE);
  const v1::SegmentDescriptor wrong_checksum =
      PublishOne(0, [](v1::SegmentDescriptor* s) { s->set_checksum("crc32c:00000000"); });
  const v1::SegmentDescriptor wrong_rows =
      PublishOne(1, [](v1::SegmentDescriptor* s) { s->set_num_rows(s->num_rows() + 1); });
  const v1::SegmentDescriptor damaged = PublishOne(2);
  // Flip one byte in the middle: same size, bad CRC.
  const std::string path = dir_.path() + "/deep/wiki/seg2.sluice";
  auto bytes = ReadFile(path);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  (*bytes)[bytes->size() / 2] ^= 0x5a;
  ASSERT_TRUE(WriteFileAtomically(path, *bytes).ok());

  auto pass = Verifier().VerifyOnce();
  ASSERT_TRUE(pass.ok());
  EXPECT_EQ(pass->failed, 3);
  EXPECT_EQ(State(wrong_checksum.id()), v1::HANDOFF_STATE_FAILED);
  EXPECT_EQ(State(wrong_rows.id()), v1::HANDOFF_STATE_FAILED);
  EXPECT_EQ(State(damaged.id()), v1::HANDOFF_STATE_FAILED);
}

// Whoever can write deep storage can change a committed file and keep its
// CRC-32C (and size, structure and header): the SHA-256 the publisher
// recorded at the commit is what tells. A segment committed without a digest
// (no deep storage at the commit, or before schema version 7) is checked as
// before.
TEST_F(HandoffVerifierTest, AFileChangedAfterItsCommitFailsThoughItsCrcStillMatches) {
  CreateDatasource(v1::HANDOFF_MODE_DEEP_STORAGE);
  const v1::SegmentDescriptor changed = PublishOne(0);
  const v1::SegmentDescriptor without_digest = PublishOne(1, [](v1::SegmentDescriptor*) {});
  const std::string path = dir_.path() + "/deep/wiki/seg0.sluice";
  auto before = ReadFile(path);
  ASSERT_TRUE(before.ok()) << before.status();
  std::vector<HandoffCandidate> candidates;
  ASSERT_TRUE(store_
                  ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                    auto c = txn.HandoffCandidates(10);
                    if (c.ok()) candidates = *c;
                    return c.status();
                  })
                  .ok());
  ASSERT_EQ(candidates.size(), 2u);
  ASSERT_EQ(candidates[0].id, changed.id());
  EXPECT_EQ(candidates[0].sha256, Sha256Digest(*before));
  ASSERT_EQ(candidates[1].id, without_digest.id());
  EXPECT_EQ(candidates[1].sha256, "");

  auto offset = segment::testing::ChangeKeepingChecksum(path);
  ASSERT_TRUE(offset.ok()) << offset.status();
  auto after = ReadFile(path);
  ASSERT_TRUE(after.ok()) << after.status();
  ASSERT_NE(*after, *before);
  ASSERT_EQ(after->size(), before->size());
  auto reader = segment::SegmentReader::Open(path);
  ASSERT_TRUE(reader.ok()) << reader.status();
  ASSERT_EQ((*reader)->checksum(), changed.checksum());  // the CRC cannot tell

  const absl::Status check = CheckSegmentCopy(deep_.get(), dir_.path() + "/scratch",
                                              candidates[0], CopyCheckDepth::kChecksum);
  EXPECT_EQ(check.code(), absl::StatusCode::kDataLoss) << check;
  EXPECT_NE(check.message().find(absl::StrCat("segment ", changed.id())), std::string::npos)
      << check;
  EXPECT_NE(check.message().find("changed after its commit"), std::string::npos) << check;

  auto pass = Verifier().VerifyOnce();
  ASSERT_TRUE(pass.ok()) << pass.status();
  EXPECT_EQ(pass->failed, 1);
  EXPECT_EQ(pass->handed_off, 1);
  EXPECT_EQ(State(changed.id()), v1::HANDOFF_STATE_FAILED);
  EXPECT_EQ(State(without_digest.id()), v1::HANDOFF_STATE_HANDED_OFF);
}

// The periodic re-verification of handed-off segments checks the digest too.
TEST_F(HandoffVerifierTest, ReverificationFindsAFileChangedAfterItsHandoff) {
  CreateDatasource(v1::HANDOFF_MODE_DEEP_STORAGE);
  const v1::SegmentDescriptor s = PublishOne(0);
  ASSERT_EQ(Verifier().VerifyOnce()->handed_off, 1);
  ASSERT_TRUE(segment::testing::ChangeKeepingChecksum(dir_.path() + "/deep/wiki/seg0.sluice").ok());
  UsedSegmentVerifierOptions options;
  options.store = store_.get();
  options.deep_storage = deep_.get();
  options.clock = &clock_;
  options.scratch_dir = dir_.path() + "/scratch";
  UsedSegmentVerifier reverify(options);
  auto pass = reverify.VerifyOnce();
  ASSERT_TRUE(pass.ok()) << pass.status();
  EXPECT_EQ(pass->examined, 1);
  EXPECT_EQ(pass->failed, 1);
  EXPECT_EQ(State(s.id()), v1::HANDOFF_STATE_FAILED);
}

TEST_F(HandoffVerifierTest, LoaderModeWaitsForTheLoader) {
  CreateDatasource(v1::HANDOFF_MODE_LOADER);
  const v1::SegmentDescriptor s = PublishOne(0);
  HandoffVerifier verifier = Verifier();
  ASSERT_EQ(verifier.VerifyOnce()->handed_off, 0);
  EXPECT_EQ(State(s.id()), v1::HANDOFF_STATE_PENDING);
  ASSERT_TRUE(store_
                  ->InTransaction([&](StoreTxn& txn) {
                    return txn.MarkLoaded("wiki", {s.id()}, "historical-1", 5).status();
                  })
                  .ok());
  ASSERT_EQ(verifier.VerifyOnce()->handed_off, 1);
  EXPECT_EQ(State(s.id()), v1::HANDOFF_STATE_HANDED_OFF);
}

}  // namespace
}  // namespace sluice::supervisor
