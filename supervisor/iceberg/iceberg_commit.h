// The Iceberg side of a publish (docs/iceberg.md): when a datasource's spec
// names an Iceberg table, the publisher turns the sequence's verified
// segments into Parquet data files, writes them with a manifest, a manifest
// list and the next table metadata document into deep storage ("staging",
// before its transaction), and then, in the SAME metadata-store transaction
// that checks and advances the Kafka offsets, swaps the SQL catalog's
// metadata_location from the document it planned on to the staged one
// (StoreTxn::SwapIcebergMetadataLocation). A swap that misses (another
// writer moved the table) rolls everything back; the publisher stages again
// on top of the other writer's snapshot.
//
// Layout under the deep storage root: iceberg/<namespace>/<table>/data/ and
// iceberg/<namespace>/<table>/metadata/. Every name is a function of what
// the file holds (digests of the segment id or sequence name and of the
// bytes; short, as S3-compatible stores keeping objects as files limit them),
// so a retry writes the same paths and a file already there with the same
// bytes is taken as written; a file is never overwritten.
#ifndef SLUICE_SUPERVISOR_ICEBERG_ICEBERG_COMMIT_H_
#define SLUICE_SUPERVISOR_ICEBERG_ICEBERG_COMMIT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/deep_storage.h"
#include "common/granularity.h"
#include "iceberg/append_plan.h"
#include "iceberg/parquet_file_writer.h"
#include "iceberg/table_metadata.h"
#include "sluice/v1/common.pb.h"
#include "sluice/v1/spec.pb.h"

namespace sluice::supervisor {

// The Iceberg time column: the segment's __time, as timestamptz micros.
inline constexpr char kIcebergTimeColumn[] = "__time";
// Publish attempts against a table other writers keep moving.
inline constexpr int kIcebergCommitAttempts = 5;

struct IcebergTarget {
  std::string datasource;
  std::string table_namespace;
  std::string table_name;
  // The partition transform a new table gets (an existing table keeps its own).
  iceberg::TimePartitioning partitioning = iceberg::TimePartitioning::kDay;
  // "iceberg/<namespace>/<table>" and its deep-storage URI.
  std::string location_key;
  std::string location;

  std::string QualifiedName() const { return table_namespace + "." + table_name; }
};

// The finest of hour/day/month/year whose buckets hold a whole segment of
// `segment_granularity` (sub-hour: hour; SIX_HOUR: day; WEEK: day, a week's
// segment is written as one file per day; QUARTER: year).
iceberg::TimePartitioning PartitioningFor(const Granularity& segment_granularity);

// The table a normalized spec names; nullopt when it names none.
std::optional<IcebergTarget> IcebergTargetOf(const v1::SupervisorSpec& spec,
                                             const DeepStorage& storage);

// A segment file's rows as Iceberg data files: one per partition of the
// plan's spec the rows fall in (one for a segment of the table's own
// granularity), rows in the segment's order.
struct SegmentDataFile {
  int32_t partition_value = 0;
  iceberg::WrittenDataFile file;
};
// The table fields a segment's rows need: __time, its dimensions (string),
// its metrics (long or double).
absl::StatusOr<std::vector<iceberg::FieldSpec>> SegmentFields(const std::string& local_path);
absl::StatusOr<std::vector<SegmentDataFile>> SegmentToDataFiles(const std::string& local_path,
                                                                const iceberg::AppendPlan& plan);

struct IcebergCommitInput {
  std::string sequence_name;
  std::vector<v1::SegmentDescriptor> segments;
  // Extra snapshot summary entries: "sluice.kafka.<topic>.<partition>" ->
  // "<start>-<end>".
  std::map<std::string, std::string> kafka_ranges;
  // Every offset reset of the datasource (operator resets, automatic ones),
  // by ascending id, with the text the summary gives it. The snapshot lists
  // those after the last id the table's snapshots of this datasource
  // recorded ("sluice.offset-reset.<id>", at most kMaxResetsPerSnapshot) and
  // records the newest id ("sluice.offset-resets.through"), so a reader can
  // tell a reset from loss or duplication between two snapshots' ranges. A
  // table's first snapshot lists none (nothing before it to explain).
  struct OffsetReset {
    int64_t id = 0;
    std::string description;
  };
  std::vector<OffsetReset> offset_resets;
  int64_t now_ms = 0;
};

inline constexpr int kMaxResetsPerSnapshot = 100;

struct StagedIcebergCommit {
  // The metadata location the staged document was planned on; nullopt: the
  // table did not exist (the commit creates it).
  std::optional<std::string> base;
  // Where the staged metadata document is.
  std::string metadata_location;
  int64_t snapshot_id = 0;
  int64_t data_files = 0;
  int64_t records = 0;
};

// Writes the data files, the manifest, the manifest list and the metadata
// document of the sequence's snapshot on top of the document at `base`
// (nullopt: a new table). Nothing is visible to readers until the catalog
// swap. FAILED_PRECONDITION when the table cannot take the rows (a column's
// type changed); UNAVAILABLE for transient storage errors.
absl::StatusOr<StagedIcebergCommit> StageIcebergCommit(DeepStorage* storage,
                                                       const std::string& scratch_dir,
                                                       const IcebergTarget& target,
                                                       const std::optional<std::string>& base,
                                                       const IcebergCommitInput& input);

// The snapshot id of a sequence: positive, the same for every attempt.
int64_t IcebergSnapshotId(const std::string& datasource, const std::string& sequence_name);

// ---- Naming and storing a table's files (the append above and the
// compaction's replace, supervisor/compaction/iceberg_replace.h) ----

// The first 16 hex digits of the SHA-256 of `bytes`.
std::string IcebergShortDigest(absl::string_view bytes);
// The SHA-256 of `bytes` (32 raw bytes), as VerifyStoredIcebergDataFiles
// takes it.
std::string IcebergSha256(absl::string_view bytes);
// <location_key>/data/p<partition>-<digest of segment_id>-<digest of bytes>.parquet
std::string IcebergDataFileKey(const IcebergTarget& target, int32_t partition_value,
                               const std::string& segment_id, absl::string_view bytes);
// The segment-id digest of a data file named by IcebergDataFileKey (any
// directory before the name); nullopt for another writer's name.
std::optional<std::string> SegmentDigestOfDataFile(absl::string_view path);
// The version of a metadata location named NNNNN-<uuid>.metadata.json
// (sluice's, pyiceberg's, Java's naming); 0 for another name.
int IcebergMetadataVersion(const std::string& location);
// <location_key>/metadata/NNNNN-<uuid from the document>.metadata.json, the
// version one past base's (0 for a new table).
std::string IcebergMetadataKey(const IcebergTarget& target, const std::optional<std::string>& base,
                               absl::string_view next_metadata_json);
// Stores `bytes` at `key`; a file already there with the same bytes (an
// earlier attempt) counts as written, other bytes are FAILED_PRECONDITION
// (never overwritten). Returns its URI.
absl::StatusOr<std::string> PutIcebergFile(DeepStorage* storage, const std::string& scratch_dir,
                                           const std::string& key, const std::string& bytes);
// Stores staged table files given as (URI under the table's location,
// bytes), each with PutIcebergFile; INTERNAL for a URI outside the table.
absl::Status PutStagedIcebergFiles(DeepStorage* storage, const std::string& scratch_dir,
                                   const IcebergTarget& target,
                                   const std::vector<std::pair<std::string, std::string>>& files);
// Each staged data file (uri, SHA-256 of the bytes written), read back from
// deep storage, holds exactly those bytes; checked after the last file is
// stored and before the commit makes them visible. UNAVAILABLE naming the
// file when a copy is missing or differs (nothing is committed; the retry
// finds it).
absl::Status VerifyStoredIcebergDataFiles(
    DeepStorage* storage, const std::string& scratch_dir,
    const std::vector<std::pair<std::string, std::string>>& uri_and_digest);

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_ICEBERG_ICEBERG_COMMIT_H_
