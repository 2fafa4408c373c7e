// Compacting one interval against a real local deep storage: the rows are
// conserved (rolled up across inputs), the outputs are pushed and described,
// a damaged input is refused, and a rerun after a crash that left the
// outputs pushed succeeds with the same copies.
#include "supervisor/compaction/segment_compaction.h"

#include <sys/stat.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/local_deep_storage.h"
#include "common/segment/incremental_index.h"
#include "common/segment/segment_builder.h"
#include "common/segment/segment_reader.h"
#include "common/segment/test_damage.h"
#include "common/segment/test_rows.h"
#include "common/time_util.h"
#include "supervisor/naming.h"
#include "supervisor/segment_copy_check.h"

namespace sluice::supervisor {
namespace {

using segment::testing::OwnedRow;

constexpr char kVersion[] = "2026-11-30T02:00:00.000Z";

class SegmentCompactionTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    std::string tmpl = absl::StrCat(std::getenv("TEST_TMPDIR"), "/sc_XXXXXX");
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    auto deep = LocalDeepStorage::Open(dir_ + "/deep");
    ASSERT_TRUE(deep.ok()) << deep.status();
    deep_ = std::move(*deep);
    ASSERT_TRUE(MakeDirs(dir_ + "/build").ok());
    schema_ = segment::testing::TestSchema(GetParam(), false);
    const segment::Interval interval = segment::testing::TestInterval();
    interval_.set_start_ms(interval.start_ms);
    interval_.set_end_ms(interval.end_ms);
    rows_ = segment::testing::RandomRows(5, 900, schema_, 2);
  }

  // A published segment of the rows with offsets in [start, end) of every
  // partition, pushed as a task would push it.
  v1::SegmentDescriptor Publish(int64_t start, int64_t end, int partition_num) {
    std::vector<OwnedRow> rows;
    for (const OwnedRow& r : rows_) {
      if (r.offset >= start && r.offset < end) rows.push_back(r);
    }
    const std::string id = SegmentId("wiki", interval_.start_ms(), interval_.end_ms(), kVersion,
                                     partition_num);
    segment::testing::TestSegment build;
    build.path = absl::StrCat(dir_, "/build/", partition_num, ".seg");
    build.segment_id = id;
    build.version = kVersion;
    build.partition_num = partition_num;
    for (int p = 0; p < 2; ++p) build.ranges.push_back({p, start, end, 0});
    auto info = segment::testing::BuildTestSegment(rows, schema_, build);
    EXPECT_TRUE(info.ok()) << info.status();
    auto bytes = ReadFile(info->path);
    EXPECT_TRUE(bytes.ok());
    auto uri = deep_->Push(info->path, absl::StrCat("wiki/", partition_num, "/task_0.sluice"));
    EXPECT_TRUE(uri.ok()) << uri.status();
    v1::SegmentDescriptor d;
    d.set_id(id);
    d.set_datasource("wiki");
    *d.mutable_interval() = interval_;
    d.set_version(kVersion);
    d.set_partition_num(partition_num);
    d.set_num_rows(static_cast<int64_t>(info->num_rows));
    d.set_size_bytes(static_cast<int64_t>(info->size_bytes));
    d.set_checksum(info->checksum);
    d.set_path(*uri);
    d.set_sha256(Sha256Digest(*bytes));
    d.set_used(true);
    d.mutable_provenance()->set_topic("edits");
    for (const segment::PartitionRange& r : info->provenance.ranges) {
      v1::PartitionRange* range = d.mutable_provenance()->add_ranges();
      range->set_partition(r.partition);
      range->set_start_offset(r.start_offset);
      range->set_end_offset(r.end_offset);
      range->set_rows(r.rows);
    }
    return d;
  }

  IntervalCompactionRequest Request(std::vector<std::vector<v1::SegmentDescriptor>> groups) {
    IntervalCompactionRequest request;
    request.datasource = "wiki";
    request.interval = interval_;
    request.groups = std::move(groups);
    request.version = "2026-11-30T02:00:00.001Z";
    return request;
  }

  static std::vector<std::string> Sorted(std::vector<segment::testing::OutputRow> rows) {
    std::vector<std::string> out;
    for (const auto& r : rows) out.push_back(segment::testing::ToString(r));
    std::sort(out.begin(), out.end());
    return out;
  }

  std::string dir_;
  std::unique_ptr<LocalDeepStorage> deep_;
  segment::Schema schema_;
  v1::Interval interval_;
  std::vector<OwnedRow> rows_;
};

TEST_P(SegmentCompactionTest, ConservesTheRowsAndDescribesThePushedOutputs) {
  const std::vector<v1::SegmentDescriptor> inputs = {Publish(100, 300, 0), Publish(300, 350, 1),
                                                     Publish(350, 100000, 2)};
  const std::string scratch = dir_ + "/scratch";
  auto result = CompactInterval(deep_.get(), scratch, Request({inputs}));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->datasource, "wiki");
  ASSERT_EQ(result->replaced.size(), 3u);
  ASSERT_EQ(result->outputs.size(), 1u);
  const CompactedSegment& out = result->outputs[0];
  const v1::SegmentDescriptor& d = out.descriptor;
  EXPECT_EQ(d.id(), SegmentId("wiki", interval_.start_ms(), interval_.end_ms(),
                              "2026-11-30T02:00:00.001Z", 0));
  EXPECT_EQ(d.version(), "2026-11-30T02:00:00.001Z");
  EXPECT_EQ(d.sha256(), out.sha256);

  // The pushed copy is the local one, and passes the publisher's full check.
  auto pushed = ReadDeepStorageObject(*deep_, d.path(), scratch);
  ASSERT_TRUE(pushed.ok()) << pushed.status();
  auto local = ReadFile(out.local_path);
  ASSERT_TRUE(local.ok());
  EXPECT_EQ(*pushed, *local);
  EXPECT_EQ(Sha256Digest(*pushed), d.sha256());
  SegmentExpectation expected = ExpectationOf(d);
  expected.sha256 = d.sha256();
  expected.depth = CopyCheckDepth::kFull;
  EXPECT_TRUE(VerifySegmentCopy(deep_.get(), scratch, expected).ok())
      << VerifySegmentCopy(deep_.get(), scratch, expected);
  EXPECT_EQ(d.path().find(deep_->UriForKey("wiki/")), 0u) << d.path();

  // Rows: every record once; the provenance is the inputs' ranges.
  int64_t records = 0;
  for (const v1::PartitionRange& r : d.provenance().ranges()) records += r.rows();
  EXPECT_EQ(records, static_cast<int64_t>(rows_.size()));
  EXPECT_EQ(d.provenance().ranges_size(), 6);
  const std::vector<segment::testing::OutputRow> reference =
      segment::testing::ReferenceRows(rows_, schema_);
  auto reader = segment::SegmentReader::Open(out.local_path);
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ(d.num_rows(), static_cast<int64_t>(reference.size()));
  int64_t input_rows = 0;
  for (const auto& s : inputs) input_rows += s.num_rows();
  if (GetParam()) {
    EXPECT_LT(d.num_rows(), input_rows);  // rolled up across inputs
  } else {
    EXPECT_EQ(d.num_rows(), input_rows);
    EXPECT_EQ(Sorted(segment::testing::ReadRows(reader->get())), Sorted(reference));
  }
  // Scratch holds the compacted file only (the inputs were never copied
  // from a local deep storage; nothing else is left).
  auto listed = ListDirectory(scratch);
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(*listed, (std::vector<std::string>{"compacted_0.sluice"}));
}

TEST_P(SegmentCompactionTest, TwoGroupsTwoPartitions) {
  const std::vector<v1::SegmentDescriptor> inputs = {Publish(100, 200, 0), Publish(200, 300, 1),
                                                     Publish(300, 400, 2), Publish(400, 100000, 3)};
  auto result = CompactInterval(deep_.get(), dir_ + "/scratch",
                                Request({{inputs[0], inputs[1]}, {inputs[2], inputs[3]}}));
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->outputs.size(), 2u);
  EXPECT_EQ(result->outputs[0].descriptor.partition_num(), 0);
  EXPECT_EQ(result->outputs[1].descriptor.partition_num(), 1);
  EXPECT_NE(result->outputs[0].descriptor.path(), result->outputs[1].descriptor.path());
  EXPECT_EQ(result->replaced.size(), 4u);
}

TEST_P(SegmentCompactionTest, RefusesADamagedInput) {
  std::vector<v1::SegmentDescriptor> inputs = {Publish(100, 300, 0), Publish(300, 100000, 1)};
  // A change that keeps the CRC-32C: only the SHA-256 recorded at the commit sees it.
  const std::string path = inputs[1].path().substr(std::string("file://").size());
  ASSERT_EQ(chmod(path.c_str(), 0644), 0);
  auto changed = segment::testing::ChangeKeepingChecksum(path);
  ASSERT_TRUE(changed.ok()) << changed.status();
  auto result = CompactInterval(deep_.get(), dir_ + "/scratch", Request({inputs}));
  EXPECT_EQ(result.status().code(), absl::StatusCode::kDataLoss) << result.status();
  EXPECT_NE(result.status().message().find(inputs[1].id()), std::string::npos) << result.status();
  EXPECT_NE(result.status().message().find("SHA-256"), std::string::npos) << result.status();
  // Nothing pushed, nothing left in scratch.
  auto pushed = deep_->List("wiki/" + std::to_string(interval_.start_ms()) + "_");
  ASSERT_TRUE(pushed.ok());
  EXPECT_TRUE(pushed->empty());
  auto listed = ListDirectory(dir_ + "/scratch");
  ASSERT_TRUE(listed.ok());
  EXPECT_TRUE(listed->empty());

  // A descriptor whose checksum is not the file's: refused too.
  std::vector<v1::SegmentDescriptor> other = {inputs[0], Publish(300, 100000, 2)};
  other[1].set_checksum("crc32c:00000000");
  result = CompactInterval(deep_.get(), dir_ + "/scratch", Request({other}));
  EXPECT_EQ(result.status().code(), absl::StatusCode::kDataLoss) << result.status();
}

TEST_P(SegmentCompactionTest, ARerunAfterACrashThatLeftTheOutputPushedSucceeds) {
  const std::vector<v1::SegmentDescriptor> inputs = {Publish(100, 300, 0), Publish(300, 100000, 1)};
  auto first = CompactInterval(deep_.get(), dir_ + "/scratch1", Request({inputs}));
  ASSERT_TRUE(first.ok()) << first.status();
  // The crash: nothing committed, the local copy gone, the pushed one kept.
  ASSERT_TRUE(RemoveAll(dir_ + "/scratch1").ok());
  auto again = CompactInterval(deep_.get(), dir_ + "/scratch2", Request({inputs}));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->outputs[0].descriptor.path(), first->outputs[0].descriptor.path());
  EXPECT_EQ(again->outputs[0].sha256, first->outputs[0].sha256);

  // A key taken by other bytes: the next key.
  const std::string taken = first->outputs[0].descriptor.path();
  ASSERT_TRUE(deep_->Delete(taken).ok());
  const std::string other = dir_ + "/other";
  ASSERT_TRUE(WriteFileAtomically(other, "not a segment").ok());
  const std::string key = taken.substr(deep_->UriForKey("").size());
  ASSERT_TRUE(deep_->Push(other, key).ok());
  auto third = CompactInterval(deep_.get(), dir_ + "/scratch3", Request({inputs}));
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_NE(third->outputs[0].descriptor.path(), taken);
  EXPECT_EQ(third->outputs[0].sha256, first->outputs[0].sha256);
  EXPECT_NE(third->outputs[0].descriptor.path().find("_1.sluice"), std::string::npos);
}

TEST_P(SegmentCompactionTest, RefusesBadRequests) {
  const std::vector<v1::SegmentDescriptor> inputs = {Publish(100, 300, 0), Publish(300, 100000, 1)};
  IntervalCompactionRequest request = Request({{inputs[0]}});
  EXPECT_EQ(CompactInterval(deep_.get(), dir_ + "/s", request).status().code(),
            absl::StatusCode::kInvalidArgument);
  request = Request({inputs});
  request.version.clear();
  EXPECT_EQ(CompactInterval(deep_.get(), dir_ + "/s", request).status().code(),
            absl::StatusCode::kInvalidArgument);
  request = Request({inputs});
  request.interval.set_end_ms(request.interval.end_ms() + 1);
  EXPECT_EQ(CompactInterval(deep_.get(), dir_ + "/s", request).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(CompactionVersion, IsLaterThanNowAndEveryVersion) {
  v1::SegmentDescriptor a, b;
  a.set_version("2026-11-30T02:00:00.000Z");
  b.set_version("2026-12-01T00:00:00.000Z");
  const absl::Time early = absl::FromUnixMillis(0);
  EXPECT_EQ(CompactionVersion(early, {a, b}), "2026-12-01T00:00:00.001Z");
  const absl::Time late = absl::FromUnixMillis(*ParseIsoInstantMillis("2027-01-01T00:00:00.000Z"));
  EXPECT_EQ(CompactionVersion(late, {a, b}), "2027-01-01T00:00:00.000Z");
}

INSTANTIATE_TEST_SUITE_P(Rollup, SegmentCompactionTest, ::testing::Bool());

}  // namespace
}  // namespace sluice::supervisor
