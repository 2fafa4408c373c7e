// Iceberg v2 manifests and manifest lists (Avro, with the spec's field ids
// and file metadata). A manifest lists the data files an append adds; the
// snapshot's manifest list carries the parent snapshot's manifests (read
// from the parent's manifest list, whoever wrote it) plus the new ones.
// Bytes come back to the caller to store; output is deterministic.
#ifndef SLUICE_ICEBERG_MANIFEST_WRITER_H_
#define SLUICE_ICEBERG_MANIFEST_WRITER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "iceberg/append_plan.h"
#include "iceberg/data_file.h"

namespace sluice {
namespace iceberg {

// A data file as a manifest lists it: where it is stored (a full URI, e.g.
// s3://bucket/table/data/...parquet) and its metrics.
struct ManifestEntry {
  std::string file_path;
  DataFile file;
};

// A written manifest as the manifest list records it.
struct ManifestFile {
  std::string path;
  int64_t length = 0;
  int64_t added_rows_count = 0;
  // The same, as the library returned it (passed to WriteManifestList).
  std::string json;
};

struct WrittenManifest {
  std::string bytes;
  ManifestFile file;
};

// A manifest of `entries` added by snapshot `snapshot_id`, to be stored
// at `manifest_path`.
absl::StatusOr<WrittenManifest> WriteManifest(const AppendPlan& plan, int64_t snapshot_id,
                                              const std::string& manifest_path,
                                              absl::Span<const ManifestEntry> entries);

// The manifest list of snapshot `snapshot_id`, to be stored at
// `manifest_list_path`. `parent_manifest_list` holds the bytes of the file at
// plan.parent_manifest_list (required when the plan has a parent).
absl::StatusOr<std::string> WriteManifestList(
    const AppendPlan& plan, int64_t snapshot_id, const std::string& manifest_list_path,
    std::optional<absl::string_view> parent_manifest_list,
    absl::Span<const ManifestFile> manifests);

}  // namespace iceberg
}  // namespace sluice

#endif  // SLUICE_ICEBERG_MANIFEST_WRITER_H_
