#include "iceberg/expire_snapshots.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "iceberg/table_reader.h"

namespace sluice {
namespace iceberg {
namespace {

// A v2 document with snapshots 1..5 (a chain, timestamps 1000..5000), main
// at 5, a tag at 2, statistics of 1 and 4, `log_entries` metadata-log
// entries and a field of another writer.
std::string Document(int log_entries = 3) {
  std::vector<std::string> snapshots, snapshot_log, metadata_log;
  for (int i = 1; i <= 5; ++i) {
    snapshots.push_back(absl::StrCat(
        "{\"snapshot-id\":", i, i > 1 ? absl::StrCat(",\"parent-snapshot-id\":", i - 1) : "",
        ",\"sequence-number\":", i, ",\"timestamp-ms\":", i * 1000,
        ",\"manifest-list\":\"file:///t/metadata/snap-", i,
        ".avro\",\"summary\":{\"operation\":\"append\"},\"schema-id\":0}"));
    snapshot_log.push_back(absl::StrCat("{\"timestamp-ms\":", i * 1000, ",\"snapshot-id\":", i, "}"));
  }
  for (int i = 0; i < log_entries; ++i) {
    metadata_log.push_back(absl::StrCat("{\"timestamp-ms\":", i,
                                        ",\"metadata-file\":\"file:///t/metadata/", i,
                                        ".metadata.json\"}"));
  }
  return absl::StrCat(
      "{\"format-version\":2,\"table-uuid\":\"9c12d441-03fe-4693-9a96-a0705ddf69c1\","
      "\"location\":\"file:///t\",\"last-sequence-number\":5,\"last-updated-ms\":5000,"
      "\"last-column-id\":1,\"current-schema-id\":0,\"schemas\":[{\"type\":\"struct\","
      "\"schema-id\":0,\"fields\":[{\"id\":1,\"name\":\"__time\",\"required\":true,"
      "\"type\":\"timestamptz\"}]}],\"default-spec-id\":0,\"partition-specs\":[{\"spec-id\":0,"
      "\"fields\":[]}],\"last-partition-id\":999,\"default-sort-order-id\":0,\"sort-orders\":"
      "[{\"order-id\":0,\"fields\":[]}],\"properties\":{\"owner\":\"x\"},"
      "\"current-snapshot-id\":5,\"refs\":{\"main\":{\"snapshot-id\":5,\"type\":\"branch\"},"
      "\"audit\":{\"snapshot-id\":2,\"type\":\"tag\"}},\"snapshots\":[",
      absl::StrJoin(snapshots, ","), "],\"statistics\":[{\"snapshot-id\":1,\"statistics-path\":"
      "\"file:///t/s1.puffin\"},{\"snapshot-id\":4,\"statistics-path\":\"file:///t/s4.puffin\"}],"
      "\"snapshot-log\":[",
      absl::StrJoin(snapshot_log, ","), "],\"metadata-log\":[", absl::StrJoin(metadata_log, ","),
      "],\"another-writer\":{\"k\":[1,2.5,\"\\u00e9\"]}}");
}

std::vector<int64_t> Ids(const TableMetadataInfo& m) {
  std::vector<int64_t> ids;
  for (const SnapshotInfo& s : m.snapshots) ids.push_back(s.snapshot_id);
  return ids;
}

TEST(ExpireSnapshots, KeepsTheCurrentChainTheRecentOnesAndTheRefs) {
  ExpireSnapshotsOptions options;
  options.older_than_ms = 4500;  // 5 is recent
  options.retain_last = 2;       // 5 and 4
  options.now_ms = 9000;
  options.metadata_location = "file:///t/metadata/00009-x.metadata.json";
  auto expired = ExpireSnapshots(Document(), options);
  ASSERT_TRUE(expired.ok()) << expired.status();
  EXPECT_EQ(expired->expired, (std::vector<int64_t>{1, 3}));  // 2 is tagged
  auto m = ReadTableMetadata(expired->metadata_json);
  ASSERT_TRUE(m.ok()) << m.status() << expired->metadata_json;
  EXPECT_EQ(Ids(*m), (std::vector<int64_t>{2, 4, 5}));
  EXPECT_EQ(m->current_snapshot_id, 5);
  // The log gained the replaced document.
  ASSERT_EQ(m->metadata_log.size(), 4u);
  EXPECT_EQ(m->metadata_log.back(), "file:///t/metadata/00009-x.metadata.json");
  const std::string& json = expired->metadata_json;
  EXPECT_NE(json.find("\"last-updated-ms\":9000"), std::string::npos);
  EXPECT_NE(json.find("{\"timestamp-ms\":5000,\"metadata-file\":\"file:///t/metadata/00009-x"),
            std::string::npos);
  // snapshot-log: the entries after the last expired one (3).
  EXPECT_NE(json.find("\"snapshot-log\":[{\"timestamp-ms\":4000,\"snapshot-id\":4},"
                      "{\"timestamp-ms\":5000,\"snapshot-id\":5}]"),
            std::string::npos)
      << json;
  // Statistics of expired snapshots go; refs and other fields stay.
  EXPECT_EQ(json.find("s1.puffin"), std::string::npos);
  EXPECT_NE(json.find("s4.puffin"), std::string::npos);
  EXPECT_NE(json.find("\"audit\":{\"snapshot-id\":2,\"type\":\"tag\"}"), std::string::npos);
  EXPECT_NE(json.find("\"another-writer\":{\"k\":[1,2.5,\"\xc3\xa9\"]}"), std::string::npos) << json;
  EXPECT_NE(json.find("\"properties\":{\"owner\":\"x\"}"), std::string::npos);
}

TEST(ExpireSnapshots, NothingOldEnoughLeavesTheDocumentAsItIs) {
  ExpireSnapshotsOptions options;
  options.older_than_ms = 500;  // all newer
  options.retain_last = 1;
  options.metadata_location = "file:///t/metadata/00009-x.metadata.json";
  auto expired = ExpireSnapshots(Document(), options);
  ASSERT_TRUE(expired.ok()) << expired.status();
  EXPECT_TRUE(expired->expired.empty());
  EXPECT_EQ(expired->metadata_json, Document());
  // retain_last covering the chain keeps everything too.
  options.older_than_ms = 1 << 30;
  options.retain_last = 5;
  expired = ExpireSnapshots(Document(), options);
  ASSERT_TRUE(expired.ok()) << expired.status();
  EXPECT_TRUE(expired->expired.empty());
}

TEST(ExpireSnapshots, TheMetadataLogIsBounded) {
  ExpireSnapshotsOptions options;
  options.older_than_ms = 1 << 30;
  options.retain_last = 1;
  options.metadata_location = "file:///t/metadata/new.metadata.json";
  auto expired = ExpireSnapshots(Document(/*log_entries=*/kMaxMetadataLog), options);
  ASSERT_TRUE(expired.ok()) << expired.status();
  EXPECT_EQ(expired->expired, (std::vector<int64_t>{1, 3, 4}));
  auto m = ReadTableMetadata(expired->metadata_json);
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->metadata_log.size(), kMaxMetadataLog);
  EXPECT_EQ(m->metadata_log.front(), "file:///t/metadata/1.metadata.json");
  EXPECT_EQ(m->metadata_log.back(), "file:///t/metadata/new.metadata.json");
  // The snapshot-log: after 4, only 5.
  EXPECT_NE(expired->metadata_json.find("\"snapshot-log\":[{\"timestamp-ms\":5000,\"snapshot-id\":5}]"),
            std::string::npos);
}

TEST(ExpireSnapshots, RefusesWhatIsNotAMetadataDocument) {
  ExpireSnapshotsOptions options;
  EXPECT_TRUE(absl::IsInvalidArgument(ExpireSnapshots("[1]", options).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(ExpireSnapshots("{\"snapshots\":3}", options).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(
      ExpireSnapshots("{\"current-snapshot-id\":7,\"snapshots\":[{\"snapshot-id\":1}]}", options)
          .status()));
  options.retain_last = 0;
  EXPECT_TRUE(absl::IsInvalidArgument(ExpireSnapshots(Document(), options).status()));
}

}  // namespace
}  // namespace iceberg
}  // namespace sluice
