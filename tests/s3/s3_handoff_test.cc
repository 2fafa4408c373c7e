// The supervisor's segment checks on S3 deep storage: a real segment file
// pushed to s3s-fs passes the publisher's file check and the handoff check
// (full decode of the downloaded copy) and the used-segment re-verification;
// a copy damaged at rest, or deleted, fails them, and no download is left in
// the scratch directory.
#include <gtest/gtest.h>

#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/s3/s3_deep_storage.h"
#include "supervisor/allocator.h"
#include "supervisor/clock.h"
#include "supervisor/handoff_verifier.h"
#include "supervisor/publisher.h"
#include "supervisor/testing/segment_files.h"
#include "supervisor/testing/test_util.h"
#include "supervisor/used_segment_verifier.h"
#include "tests/s3/s3_server.h"
#include "tools/audit/segment_file_verifier.h"

namespace sluice::supervisor {
namespace {

class S3HandoffTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = s3::testing::SharedS3Server();
    ASSERT_NE(server_, nullptr);
    bucket_ = s3::testing::UniqueBucket();
    ASSERT_TRUE(server_->CreateBucket(bucket_).ok());
    auto deep = s3::S3DeepStorage::Open(absl::StrCat("s3://", bucket_, "/deep"),
                                        server_->Options());
    ASSERT_TRUE(deep.ok()) << deep.status();
    deep_ = *std::move(deep);
    store_ = testing::OpenTestStore(dir_.path());
    ASSERT_TRUE(MakeDirs(dir_.path() + "/work").ok());
    ASSERT_TRUE(MakeDirs(dir_.path() + "/scratch").ok());
    v1::SupervisorSpec spec = testing::TestSpec("wiki");
    spec.mutable_tuning_config()->set_handoff_mode(v1::HANDOFF_MODE_DEEP_STORAGE);
    ASSERT_TRUE(store_
                    ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                      auto v = txn.InsertSpec("wiki", spec, false, 1);
                      if (!v.ok()) return v.status();
                      return txn.RecordInitialOffsets("wiki", "events", {{0, 0}}, 1).status();
                    })
                    .ok());
  }

  // Builds, pushes (to S3) and publishes (with the publisher's own check of
  // the S3 copy) segment `n`.
  v1::SegmentDescriptor PublishOne(int n) {
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
    EXPECT_TRUE(absl::StartsWith(segment->path(), "s3://")) << segment->path();
    v1::PublishSegmentsRequest publish;
    publish.set_datasource("wiki");
    publish.set_task_id("t");
    publish.set_sequence_name(sequence);
    (*publish.mutable_start_offsets())[0] = n;
    (*publish.mutable_end_offsets())[0] = n + 1;
    *publish.add_segments() = *segment;
    PublisherOptions options{store_.get(), deep_.get(), &clock_};
    options.scratch_dir = dir_.path() + "/scratch";
    Publisher publisher(options);
    auto published = publisher.Publish(publish);
    EXPECT_TRUE(published.ok()) << published.status();
    return *segment;
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

  // Damages an object at rest, behind the server's back.
  static void FlipMiddleByte(const std::string& path) {
    auto bytes = ReadFile(path);
    ASSERT_TRUE(bytes.ok()) << bytes.status();
    (*bytes)[bytes->size() / 2] ^= 0x5a;
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << *bytes;
  }

  std::vector<std::string> Scratch() {
    return ListDirectory(dir_.path() + "/scratch").value_or(std::vector<std::string>{"?"});
  }

  s3::testing::S3Server* server_ = nullptr;
  std::string bucket_;
  testing::TempDir dir_;
  FakeClock clock_;
  std::unique_ptr<MetadataStore> store_;
  std::unique_ptr<s3::S3DeepStorage> deep_;
};

TEST_F(S3HandoffTest, HandoffAndReverificationReadFromS3) {
  const v1::SegmentDescriptor good = PublishOne(0);
  const v1::SegmentDescriptor damaged = PublishOne(1);
  const v1::SegmentDescriptor deleted = PublishOne(2);

  HandoffVerifierOptions handoff;
  handoff.store = store_.get();
  handoff.deep_storage = deep_.get();
  handoff.clock = &clock_;
  handoff.scratch_dir = dir_.path() + "/scratch";
  auto pass = HandoffVerifier(handoff).VerifyOnce();
  ASSERT_TRUE(pass.ok()) << pass.status();
  EXPECT_EQ(pass->handed_off, 3);
  EXPECT_EQ(State(good.id()), v1::HANDOFF_STATE_HANDED_OFF);
  EXPECT_TRUE(Scratch().empty()) << "downloads are removed after the check";

  // Behind the server's back: one object gets a flipped byte, one is gone.
  const std::string damaged_path = server_->ObjectPath(bucket_, "deep/wiki/seg1.sluice");
  FlipMiddleByte(damaged_path);
  ASSERT_TRUE(deep_->Delete(deleted.path()).ok());

  UsedSegmentVerifierOptions reverify;
  reverify.store = store_.get();
  reverify.deep_storage = deep_.get();
  reverify.clock = &clock_;
  reverify.scratch_dir = dir_.path() + "/scratch";
  auto used = UsedSegmentVerifier(reverify).VerifyOnce();
  ASSERT_TRUE(used.ok()) << used.status();
  EXPECT_EQ(used->examined, 3);
  EXPECT_EQ(used->failed, 2);
  EXPECT_EQ(State(good.id()), v1::HANDOFF_STATE_HANDED_OFF);
  EXPECT_EQ(State(damaged.id()), v1::HANDOFF_STATE_FAILED);
  EXPECT_EQ(State(deleted.id()), v1::HANDOFF_STATE_FAILED);
  EXPECT_TRUE(Scratch().empty());
}

// The exactly-once audit's segment check (tools/audit) reads S3 segments
// through the deep storage: a good copy verifies with the file's own rows and
// provenance, a copy damaged at rest is DATA_LOSS, no download is left, and
// without the deep storage an s3:// path is refused, not misread.
TEST_F(S3HandoffTest, AuditVerifiesSegmentsOnS3) {
  const v1::SegmentDescriptor good = PublishOne(0);
  const v1::SegmentDescriptor damaged = PublishOne(1);
  audit::SegmentFileVerifierOptions options;
  options.deep_storage = deep_.get();
  options.scratch_dir = dir_.path() + "/scratch";
  audit::SegmentFileVerifier verifier(options);

  auto verified = verifier.Verify(good.path());
  ASSERT_TRUE(verified.ok()) << verified.status();
  EXPECT_EQ(verified->num_rows, good.num_rows());
  EXPECT_EQ(verified->checksum, good.checksum());
  EXPECT_EQ(verified->segment_id, good.id());
  ASSERT_EQ(verified->provenance.ranges_size(), 1);
  EXPECT_EQ(verified->provenance.ranges(0).start_offset(), 0);
  EXPECT_TRUE(Scratch().empty());

  const std::string damaged_path = server_->ObjectPath(bucket_, "deep/wiki/seg1.sluice");
  FlipMiddleByte(damaged_path);
  EXPECT_EQ(verifier.Verify(damaged.path()).status().code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(Scratch().empty());

  EXPECT_EQ(audit::SegmentFileVerifier().Verify(good.path()).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace sluice::supervisor
