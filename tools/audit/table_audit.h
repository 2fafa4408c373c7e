// The audit of an Iceberg datasource's table, from the table itself: does
// every committed sequence have its snapshot, and does each snapshot hold
// exactly what its Kafka ranges held?
//
// Walks the current snapshot and its ancestors (parent ids) in the table's
// metadata document and checks, naming the snapshot, file or partition in
// every failure:
//   - every snapshot of the datasource (summary sluice.datasource) carries
//     sluice.sequence and one sluice.kafka.<topic>.<partition> =
//     "<start>-<end>" per partition, exactly the commit log entry of that
//     sequence (no range more, none less, none different);
//   - per topic and partition, the snapshots' ranges follow each other with
//     no gap and no overlap, except where the later snapshot lists an offset
//     reset (sluice.offset-reset.<id>) of that partition that explains the
//     jump (reported as declared);
//   - every sequence the commit log holds from the table's first snapshot
//     of the datasource on has a snapshot, and no two snapshots have one;
//   - every data file a snapshot added (its manifests in the manifest list,
//     entries ADDED by it) exists, has the size the manifest records, is a
//     Parquet file whose every row decodes and whose row count is the
//     manifest's record_count; the manifests' and the summary's added counts
//     agree with the entries;
//   - the records: what Kafka holds in the snapshot's ranges (the segment
//     audit's count: Kafka is read once), minus the records the commit log
//     says were unparseable or thrown away, equals the records the data
//     files hold: the sum of the spec's count metric column when it has
//     one, the rows when rollup is off (as the segment audit counts rollup
//     inputs); and the data files hold exactly the rows of the sequence's
//     segments.
//   - a replace snapshot (operation replace: a compaction, sluice's or
//     another engine's; summary sluice.datasource ours or absent) carries
//     no sluice.sequence and no sluice.kafka.* range; its
//     sluice.rewritten.kafka.<topic>.<partition> ranges (listed in the
//     report) lie within what earlier snapshots committed; the files it
//     added are checked as an append's; the files it removed were live
//     (not removed before); and rows are conserved: the removed files hold
//     the records the added ones hold (count column sum, or rows without
//     rollup; without a count metric under rollup, the added rows are not
//     more than the removed);
//   - the current snapshot holds live every data file the checked
//     snapshots added and no replace removed, each once, and none a
//     replace removed: every committed range is accounted for once.
// Snapshots of other writers (no sluice.datasource, or another one, and not
// a replace) are counted and not checked.
#ifndef SLUICE_TOOLS_AUDIT_TABLE_AUDIT_H_
#define SLUICE_TOOLS_AUDIT_TABLE_AUDIT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/deep_storage.h"
#include "sluice/v1/supervisor_service.pb.h"

namespace sluice::audit {

// Reads a file of the table by its URI. NOT_FOUND for a missing file.
class TableFileReader {
 public:
  virtual ~TableFileReader() = default;
  virtual absl::StatusOr<std::string> Read(const std::string& uri) = 0;
};

// file:// (or an absolute path) in place; other URIs (s3://) through the
// deep storage (downloaded to scratch_dir, read, removed).
class DeepStorageFileReader : public TableFileReader {
 public:
  DeepStorageFileReader(DeepStorage* deep_storage, std::string scratch_dir)
      : deep_storage_(deep_storage), scratch_dir_(std::move(scratch_dir)) {}
  absl::StatusOr<std::string> Read(const std::string& uri) override;

 private:
  DeepStorage* deep_storage_;  // not owned; null: only file://
  std::string scratch_dir_;
};

// The Kafka records of each committed range the segment audit counted
// (sequence name -> partition -> records); a range absent was not counted
// (not re-readable, or Kafka failed) and its snapshot's records are then
// not compared.
using KafkaCounts = std::map<std::string, std::map<int32_t, int64_t>>;

struct TableAuditOptions {
  // The table's current metadata document (the catalog's metadata_location).
  std::string metadata_location;
  // How the data files' records are counted: the sum of this long column
  // (the spec's count metric) when set; else the rows when rollup is off;
  // else (rollup without a count metric) not at all.
  std::optional<std::string> count_column;
  bool rollup = true;
};

// The count column and rollup of a spec, for TableAuditOptions.
void SetRecordAccounting(const v1::SupervisorSpec& spec, TableAuditOptions* options);

struct TableAuditReport {
  std::string metadata_location;
  int64_t snapshots = 0;        // of the datasource, in the current ancestry
  int64_t other_snapshots = 0;  // of other writers (not checked)
  int64_t data_files = 0;
  int64_t rows = 0;     // in the data files
  int64_t records = 0;  // records they stand for (rollup inputs), when counted
  int64_t replaces = 0;       // replace snapshots in the current ancestry
  int64_t live_files = 0;     // of the checked snapshots, live at the current snapshot
  int64_t live_records = 0;   // the records those hold
  // Per replace snapshot: the Kafka ranges its added files hold rows of.
  std::vector<std::string> rewritten;
  // Offset resets listed by snapshots that explain a jump between ranges.
  std::vector<std::string> declared;
  // What could not be checked and why (not failures).
  std::vector<std::string> notes;
  std::vector<std::string> discrepancies;

  bool ok() const { return discrepancies.empty(); }
  // Lines ending with "Iceberg table: PASS" or "... FAIL (n discrepancies)".
  std::string ToString() const;
};

// Runs every check; reading errors are discrepancies (the metadata document
// unreadable: one discrepancy naming it). `segments`: the datasource's
// segments, used or not (a snapshot keeps what its sequence published).
TableAuditReport RunTableAudit(const v1::GetCommitLogResponse& commit_log,
                               const std::vector<v1::SegmentDescriptor>& segments,
                               const KafkaCounts& kafka_counts, const TableAuditOptions& options,
                               TableFileReader* files);

}  // namespace sluice::audit

#endif  // SLUICE_TOOLS_AUDIT_TABLE_AUDIT_H_
