// Snapshot expiry on a table's metadata JSON (Iceberg's expire-snapshots
// action, the metadata half): the next document without the snapshots no
// one needs any more. Kept: the current snapshot and its newest ancestors
// (`retain_last` snapshots of the current chain, the current one included,
// as Iceberg's history.expire.min-snapshots-to-keep counts), every snapshot
// at or after `older_than_ms` (history.expire.max-snapshot-age-ms), and every
// snapshot a ref (branch or tag) points at; refs are kept as they are. The
// snapshot-log keeps the entries after the last expired one (as Iceberg's
// writers do: the history before a removed snapshot is no longer a chain);
// statistics and partition-statistics files of expired snapshots go; the
// metadata-log gains the document being replaced and keeps its last 100
// entries (as an append does, kMaxMetadataLog); last-updated-ms moves to
// max(now_ms, the document's). Every other field, other writers' included,
// is kept as it is, in the document's order.
//
// Pure: nothing is read or stored; the files only the expired snapshots
// referenced (manifest lists, manifests, data files) become orphans, for
// the orphan sweeper to remove once the new document is the table's.
#ifndef SLUICE_ICEBERG_EXPIRE_SNAPSHOTS_H_
#define SLUICE_ICEBERG_EXPIRE_SNAPSHOTS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace sluice {
namespace iceberg {

// metadata-log entries a document keeps (Iceberg's
// write.metadata.previous-versions-max default; the append keeps as many).
inline constexpr size_t kMaxMetadataLog = 100;

struct ExpireSnapshotsOptions {
  // Snapshots with timestamp-ms >= older_than_ms are kept.
  int64_t older_than_ms = 0;
  // Snapshots of the current chain kept whatever their age, the current one
  // included; at least 1.
  int32_t retain_last = 1;
  int64_t now_ms = 0;
  // Where the document given is stored (the metadata-log's new entry);
  // nullopt: the log is only bounded.
  std::optional<std::string> metadata_location;
};

struct ExpiredSnapshots {
  std::vector<int64_t> expired;  // ids, in the document's order; empty: none
  // The next document (the input unchanged when nothing expires).
  std::string metadata_json;
};

// INVALID_ARGUMENT for a document that is not a JSON object, whose
// `snapshots`, `snapshot-log`, `metadata-log` or `refs` has the wrong type,
// a snapshot without an id, a current snapshot the document lacks, or
// retain_last < 1; RESOURCE_EXHAUSTED for a document over 64 MiB.
absl::StatusOr<ExpiredSnapshots> ExpireSnapshots(absl::string_view metadata_json,
                                                 const ExpireSnapshotsOptions& options);

}  // namespace iceberg
}  // namespace sluice

#endif  // SLUICE_ICEBERG_EXPIRE_SNAPSHOTS_H_
