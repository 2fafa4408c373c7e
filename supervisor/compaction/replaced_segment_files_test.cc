#include "supervisor/compaction/replaced_segment_files.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "common/file_util.h"
#include "supervisor/testing/test_util.h"
#include "common/local_deep_storage.h"
#include "common/status_macros.h"
#include "supervisor/testing/test_store.h"

namespace sluice::supervisor {
namespace {

class ReplacedSegmentFilesTest : public ::testing::TestWithParam<testing::TestBackend> {};

v1::SegmentDescriptor Segment(const std::string& id, const std::string& path) {
  v1::SegmentDescriptor s;
  s.set_id(id);
  s.set_datasource("wiki");
  s.mutable_interval()->set_start_ms(0);
  s.mutable_interval()->set_end_ms(3600000);
  s.set_version("v");
  s.set_num_rows(5);
  s.set_size_bytes(5);
  s.set_checksum("crc32c:00000000");
  s.set_path(path);
  return s;
}

v1::SupervisorSpec Spec() {
  v1::SupervisorSpec spec;
  spec.set_datasource("wiki");
  spec.mutable_io_config()->set_topic("edits");
  return spec;
}

// Two segments replaced by a compaction: their files stay for the
// retention, then go (once); the compacted segment's file stays.
TEST_P(ReplacedSegmentFilesTest, RemovesReplacedFilesAfterTheRetentionOnly) {
  testing::TempDir tmp;
  const std::string* dir = &tmp.path();
  auto options = testing::TestStoreOptions(GetParam(), *dir);
  ASSERT_TRUE(options.ok()) << options.status();
  auto store = MetadataStore::Open(*options);
  ASSERT_TRUE(store.ok()) << store.status();
  auto storage = LocalDeepStorage::Open(*dir + "/deep");
  ASSERT_TRUE(storage.ok()) << storage.status();
  std::string paths[3];
  const char* names[3] = {"a", "b", "ab"};
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(WriteFileAtomically(*dir + "/" + names[i], names[i]).ok());
    auto uri = (*storage)->Push(*dir + "/" + names[i], std::string("wiki/") + names[i]);
    ASSERT_TRUE(uri.ok()) << uri.status();
    paths[i] = *uri;
  }
  ASSERT_TRUE((*store)
                  ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                    SLUICE_RETURN_IF_ERROR(txn.InsertSpec("wiki", Spec(), false, 1000).status());
                    SLUICE_ASSIGN_OR_RETURN(int64_t commit,
                                            txn.InsertCommittedSequence("wiki", "wiki_a_0", "t",
                                                                        {{0, 0}}, {{0, 10}}, {},
                                                                        1000));
                    SLUICE_RETURN_IF_ERROR(
                        txn.InsertSegment(Segment("a", paths[0]), "", commit, "t", 1000));
                    SLUICE_RETURN_IF_ERROR(
                        txn.InsertSegment(Segment("b", paths[1]), "", commit, "t", 1000));
                    return txn.ReplaceSegments("wiki", {"a", "b"}, {Segment("ab", paths[2])},
                                               "compactor", 60000);
                  })
                  .ok());
  const absl::Duration retention = absl::Minutes(10);
  const absl::Time replaced = absl::FromUnixMillis(60000);
  auto removed = RemoveReplacedSegmentFiles(**store, **storage, retention,
                                            replaced + retention - absl::Milliseconds(1));
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_EQ(*removed, 0);
  for (const std::string& path : paths) EXPECT_TRUE((*storage)->Stat(path).ok()) << path;

  removed = RemoveReplacedSegmentFiles(**store, **storage, retention, replaced + retention);
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_EQ(*removed, 2);
  EXPECT_EQ((*storage)->Stat(paths[0]).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ((*storage)->Stat(paths[1]).status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE((*storage)->Stat(paths[2]).ok());  // the compacted segment's file stays
  // Recorded: not due again.
  removed = RemoveReplacedSegmentFiles(**store, **storage, retention, replaced + 2 * retention);
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_EQ(*removed, 0);
}

INSTANTIATE_TEST_SUITE_P(Backends, ReplacedSegmentFilesTest,
                         ::testing::ValuesIn(testing::TestBackends()),
                         [](const ::testing::TestParamInfo<testing::TestBackend>& info) {
                           return testing::BackendName(info.param);
                         });

}  // namespace
}  // namespace sluice::supervisor
