// A test helper (testonly): an Iceberg table written snapshot by snapshot
// with the real writers (//iceberg) into a local directory, as the
// supervisor's publisher writes one: one Parquet data file per snapshot
// (rows with a time, a page and a "count" column), its manifest, the
// manifest list (the parent's manifests carried over) and the next
// metadata document. Tests of the table audit and the orphan sweeper use it.
#ifndef SLUICE_ICEBERG_TEST_TABLE_H_
#define SLUICE_ICEBERG_TEST_TABLE_H_

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "iceberg/manifest_writer.h"
#include "iceberg/parquet_file_writer.h"
#include "iceberg/replace_snapshot.h"
#include "iceberg/table_metadata.h"

namespace sluice::iceberg::testing {

inline constexpr int64_t kT0 = 1709211600000000;  // 2024-02-29T13:00:00Z

inline void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

struct TestSnapshot {
  std::string sequence;
  std::map<int32_t, std::pair<int64_t, int64_t>> ranges;  // partition -> [start, end)
  std::vector<int64_t> counts;  // one row per value: the count column
  std::map<std::string, std::string> extra_summary;
  int64_t record_count_delta = 0;  // added to the manifest's record_count
  int64_t time_us = kT0;           // every row's __time (its partition)
};

inline std::vector<FieldSpec> Fields() {
  return {{"__time", FieldType::kTimestamptz, true},
          {"page", FieldType::kString},
          {"count", FieldType::kLong}};
}

// A table in the directory `root` (file://<root> is its location), written
// snapshot by snapshot with the writer API, as the publisher does.
class TestTable {
 public:
  explicit TestTable(std::string root) : root_(std::move(root)) {
    std::filesystem::create_directories(root_ + "/data");
    std::filesystem::create_directories(root_ + "/metadata");
    NewTableOptions options;
    options.table_uuid = "9c12d441-03fe-4693-9a96-a0705ddf69c1";
    options.location = Uri("");
    options.fields = Fields();
    options.time_column = "__time";
    options.partitioning = TimePartitioning::kDay;
    metadata_ = *NewTableMetadata(options);
  }

  std::string Uri(const std::string& rel) const { return "file://" + root_ + rel; }
  std::string Path(const std::string& rel) const { return root_ + rel; }
  const std::string& metadata_location() const { return metadata_location_; }
  const std::string& metadata() const { return metadata_; }

  // Reads a file:// URI of the table (a TableFileLoader).
  static absl::StatusOr<std::string> Load(const std::string& uri) {
    if (uri.rfind("file://", 0) != 0) return absl::InvalidArgumentError("not a file:// URI: " + uri);
    std::ifstream in(uri.substr(7), std::ios::binary);
    if (!in) return absl::NotFoundError("no file " + uri);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  // A data file of `counts` (one row per value, at time_us) written with the
  // current plan and stored at /data/<name>.parquet; not in any snapshot.
  ManifestEntry WriteDataFile(const std::string& name, const std::vector<int64_t>& counts,
                              int64_t time_us = kT0) {
    absl::StatusOr<AppendPlan> plan = PlanAppend(metadata_, {});
    EXPECT_TRUE(plan.ok()) << plan.status();
    std::vector<int64_t> times(counts.size(), time_us);
    std::vector<std::optional<std::string>> pages(counts.size(), std::string("Main"));
    absl::StatusOr<WrittenDataFile> data = WriteParquetDataFile(
        *plan,
        {Int64Column("__time", times), StringColumn("page", pages), Int64Column("count", counts)},
        counts.size());
    EXPECT_TRUE(data.ok()) << data.status();
    const std::string rel = absl::StrCat("/data/", name, ".parquet");
    WriteBytes(Path(rel), data->bytes);
    return ManifestEntry{Uri(rel), data->file};
  }

  // Stages a replace (snapshot id 1000 + the next version) on the current
  // metadata, stores its files and makes its document current. `name` names
  // the manifest and list files.
  absl::StatusOr<StagedReplace> Replace(const std::string& name, ReplaceFiles r) {
    const int64_t id = 1000 + version_ + 1;
    r.snapshot_id = id;
    r.timestamp_ms = 1709211600000 + version_ + 1;
    r.manifest_path = Uri(absl::StrCat("/metadata/", name, "-m0.avro"));
    r.manifest_list_path = Uri(absl::StrCat("/metadata/snap-", id, ".avro"));
    r.summary["sluice.datasource"] = "wiki";
    if (!metadata_location_.empty()) r.previous_metadata_location = metadata_location_;
    absl::StatusOr<StagedReplace> staged = StageReplace(metadata_, r, &TestTable::Load);
    if (!staged.ok()) return staged;
    for (const auto& [uri, bytes] : staged->files) WriteBytes(uri.substr(7), bytes);
    ++version_;
    metadata_ = staged->metadata_json;
    const std::string rel = absl::StrCat("/metadata/", version_, ".metadata.json");
    WriteBytes(Path(rel), metadata_);
    metadata_location_ = Uri(rel);
    return staged;
  }

  // The id the next snapshot staged on the table gets.
  int64_t NextSnapshotId() const { return 1000 + version_ + 1; }

  // Stores `files` ((file:// uri, bytes) pairs) and makes `metadata_json`,
  // staged on the current document, the current one.
  void Adopt(const std::vector<std::pair<std::string, std::string>>& files,
             const std::string& metadata_json) {
    for (const auto& [uri, bytes] : files) WriteBytes(uri.substr(7), bytes);
    ++version_;
    metadata_ = metadata_json;
    const std::string rel = absl::StrCat("/metadata/", version_, ".metadata.json");
    WriteBytes(Path(rel), metadata_);
    metadata_location_ = Uri(rel);
  }

  // Returns the data file's path relative to root ("/data/<sequence>.parquet").
  std::string Append(const TestSnapshot& s) {
    ++version_;
    const int64_t id = 1000 + version_;
    absl::StatusOr<AppendPlan> plan = PlanAppend(metadata_, Fields());
    EXPECT_TRUE(plan.ok()) << plan.status();
    std::vector<ManifestFile> manifests;
    SnapshotCommit commit;
    std::string data_rel;
    if (!s.counts.empty()) {
      std::vector<int64_t> times(s.counts.size(), s.time_us);
      std::vector<std::optional<std::string>> pages(s.counts.size(), std::string("Main"));
      absl::StatusOr<WrittenDataFile> data = WriteParquetDataFile(
          *plan,
          {Int64Column("__time", times), StringColumn("page", pages),
           Int64Column("count", s.counts)},
          s.counts.size());
      EXPECT_TRUE(data.ok()) << data.status();
      data_rel = absl::StrCat("/data/", s.sequence, ".parquet");
      WriteBytes(Path(data_rel), data->bytes);
      DataFile file = data->file;
      if (s.record_count_delta != 0) {
        file.metrics_json = absl::StrReplaceAll(
            file.metrics_json, {{absl::StrCat("\"record_count\":", file.record_count),
                                 absl::StrCat("\"record_count\":",
                                              file.record_count + s.record_count_delta)}});
      }
      const std::string manifest_rel = absl::StrCat("/metadata/", s.sequence, "-m0.avro");
      absl::StatusOr<WrittenManifest> manifest =
          WriteManifest(*plan, id, Uri(manifest_rel), {{Uri(data_rel), file}});
      EXPECT_TRUE(manifest.ok()) << manifest.status();
      WriteBytes(Path(manifest_rel), manifest->bytes);
      manifests.push_back(manifest->file);
      file.record_count += s.record_count_delta;
      commit.AddDataFile(file);
    }
    std::optional<std::string> parent;
    if (plan->parent_manifest_list.has_value()) {
      std::ifstream in(plan->parent_manifest_list->substr(7), std::ios::binary);
      parent = std::string(std::istreambuf_iterator<char>(in), {});
    }
    std::optional<absl::string_view> parent_view;
    if (parent.has_value()) parent_view = *parent;
    const std::string list_rel = absl::StrCat("/metadata/snap-", id, ".avro");
    absl::StatusOr<std::string> list =
        WriteManifestList(*plan, id, Uri(list_rel), parent_view, manifests);
    EXPECT_TRUE(list.ok()) << list.status();
    WriteBytes(Path(list_rel), *list);
    commit.snapshot_id = id;
    commit.timestamp_ms = 1709211600000 + version_;
    commit.manifest_list = Uri(list_rel);
    commit.summary = s.extra_summary;
    commit.summary["sluice.datasource"] = "wiki";
    commit.summary["sluice.sequence"] = s.sequence;
    for (const auto& [p, r] : s.ranges) {
      commit.summary[absl::StrCat("sluice.kafka.wiki.", p)] = absl::StrCat(r.first, "-", r.second);
    }
    if (!metadata_location_.empty()) commit.previous_metadata_location = metadata_location_;
    absl::StatusOr<std::string> next = AppendSnapshot(metadata_, *plan, commit);
    EXPECT_TRUE(next.ok()) << next.status();
    metadata_ = *next;
    const std::string rel = absl::StrCat("/metadata/", version_, ".metadata.json");
    WriteBytes(Path(rel), metadata_);
    metadata_location_ = Uri(rel);
    return data_rel;
  }

 private:
  std::string root_;
  std::string metadata_;
  std::string metadata_location_;
  int version_ = 0;
};

}  // namespace sluice::iceberg::testing

#endif  // SLUICE_ICEBERG_TEST_TABLE_H_
