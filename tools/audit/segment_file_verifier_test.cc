#include "tools/audit/segment_file_verifier.h"

#include <fstream>
#include <iterator>

#include "common/s3/digest.h"
#include "gtest/gtest.h"
#include "tests/testing/subprocess.h"
#include "tools/segment/segment_fixture.h"

namespace sluice::audit {
namespace {

class SegmentFileVerifierTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = testing::MakeTempDir("verifier");
    ASSERT_TRUE(dir.ok());
    fixture_ = tools::MakeFixture(*dir);
  }

  tools::Fixture fixture_;
  SegmentFileVerifier verifier_;
};

TEST_F(SegmentFileVerifierTest, ReportsWhatTheFileSaysAboutItself) {
  auto verified = verifier_.Verify("file://" + fixture_.segment);
  ASSERT_TRUE(verified.ok()) << verified.status();
  EXPECT_EQ(verified->num_rows, 4);
  EXPECT_EQ(verified->checksum.rfind("crc32c:", 0), 0u) << verified->checksum;
  EXPECT_FALSE(verified->segment_id.empty());
  // The SHA-256 of the file's bytes, as the supervisor records it at commit.
  std::ifstream in(fixture_.segment, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(verified->sha256, "sha256:" + s3::HexOf(s3::Sha256Of(bytes)));
  ASSERT_TRUE(verified->has_provenance);
  // The fixture's provenance: partition 0 [0, 5) with its 5 records, and an
  // empty range of partition 1.
  EXPECT_EQ(verified->provenance.topic(), "edits");
  ASSERT_EQ(verified->provenance.ranges_size(), 2);
  EXPECT_EQ(verified->provenance.ranges(0).partition(), 0);
  EXPECT_EQ(verified->provenance.ranges(0).end_offset(), 5);
  EXPECT_EQ(verified->provenance.ranges(0).rows(), 5);
  EXPECT_EQ(verified->provenance.ranges(1).partition(), 1);
  EXPECT_EQ(verified->provenance.ranges(1).rows(), 0);
  // A bare absolute path works too.
  EXPECT_TRUE(verifier_.Verify(fixture_.segment).ok());
}

TEST_F(SegmentFileVerifierTest, ADamagedFileIsDataLoss) {
  std::string bytes;
  {
    std::ifstream in(fixture_.segment, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  ASSERT_GT(bytes.size(), 100u);
  bytes[bytes.size() / 2] ^= 0x40;
  {
    std::ofstream out(fixture_.segment, std::ios::binary | std::ios::trunc);
    out << bytes;
  }
  EXPECT_EQ(verifier_.Verify("file://" + fixture_.segment).status().code(),
            absl::StatusCode::kDataLoss);
}

TEST_F(SegmentFileVerifierTest, MissingFilesSpillsAndOtherSchemes) {
  EXPECT_EQ(verifier_.Verify("file://" + fixture_.segment + ".gone").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(verifier_.Verify("file://" + fixture_.spill).status().code(),
            absl::StatusCode::kFailedPrecondition);
  // A remote URI needs the deep storage it lives in (tests/s3 reads one).
  EXPECT_EQ(verifier_.Verify("s3://bucket/wiki/x.seg").status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(LocalSegmentPath("file://relative/x").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(*LocalSegmentPath("file:///deep/wiki/x.seg"), "/deep/wiki/x.seg");
}

}  // namespace
}  // namespace sluice::audit
