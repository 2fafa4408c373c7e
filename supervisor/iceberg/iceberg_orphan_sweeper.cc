#include "supervisor/iceberg/iceberg_orphan_sweeper.h"

#include <set>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "iceberg/table_reader.h"

namespace sluice::supervisor {
namespace {

// The path of `uri` under the table's location ("data/x.parquet"); empty
// when the URI is not under it.
std::string UnderLocation(const std::string& uri, const std::string& location_key) {
  const std::string marker = absl::StrCat("/", location_key, "/");
  const size_t at = uri.rfind(marker);
  if (at == std::string::npos) return "";
  return uri.substr(at + marker.size());
}

absl::StatusOr<std::string> Read(DeepStorage* storage, const std::string& scratch_dir,
                                 const std::string& uri) {
  return ReadDeepStorageObject(*storage, uri, scratch_dir);
}

}  // namespace

absl::StatusOr<int64_t> IcebergOrphanSweeper::Sweep(
    const std::string& location_key, const std::string& metadata_location, absl::Time now,
    const std::function<absl::StatusOr<std::string>()>& current_location) {
  absl::MutexLock lock(&mu_);
  // 1. Everything the current metadata references, every document read.
  std::set<std::string> referenced;
  auto reference = [&](const std::string& uri) {
    const std::string path = UnderLocation(uri, location_key);
    if (!path.empty()) referenced.insert(path);
  };
  auto context = [&](const absl::Status& status, const std::string& what) {
    return absl::Status(status.code(),
                        absl::StrCat("Iceberg table ", location_key, ": ", what, ": ",
                                     status.message(), " (nothing removed)"));
  };
  SLUICE_RETURN_IF_ERROR(MakeDirs(options_.scratch_dir));
  absl::StatusOr<std::string> metadata_json = Read(storage_, options_.scratch_dir, metadata_location);
  if (!metadata_json.ok()) return context(metadata_json.status(), metadata_location);
  absl::StatusOr<iceberg::TableMetadataInfo> metadata = iceberg::ReadTableMetadata(*metadata_json);
  if (!metadata.ok()) return context(metadata.status(), metadata_location);
  reference(metadata_location);
  for (const std::string& previous : metadata->metadata_log) reference(previous);
  std::set<std::string> manifests_read;
  for (const iceberg::SnapshotInfo& snapshot : metadata->snapshots) {
    reference(snapshot.manifest_list);
    absl::StatusOr<std::string> list = Read(storage_, options_.scratch_dir, snapshot.manifest_list);
    if (!list.ok()) return context(list.status(), snapshot.manifest_list);
    absl::StatusOr<std::vector<iceberg::ManifestListEntry>> manifests =
        iceberg::ReadManifestList(*list);
    if (!manifests.ok()) return context(manifests.status(), snapshot.manifest_list);
    for (const iceberg::ManifestListEntry& m : *manifests) {
      reference(m.manifest_path);
      if (!manifests_read.insert(m.manifest_path).second) continue;
      absl::StatusOr<std::string> bytes = Read(storage_, options_.scratch_dir, m.manifest_path);
      if (!bytes.ok()) return context(bytes.status(), m.manifest_path);
      absl::StatusOr<std::vector<iceberg::ManifestEntryInfo>> entries =
          iceberg::ReadManifest(*bytes);
      if (!entries.ok()) return context(entries.status(), m.manifest_path);
      for (const iceberg::ManifestEntryInfo& e : *entries) reference(e.file_path);
    }
  }

  // 2. The files there, after the documents were read: a file a commit
  // referenced after that is seen unreferenced once, never removed on it.
  std::map<std::string, absl::Time>& seen = first_seen_[location_key];
  std::set<std::string> unreferenced;
  for (const char* dir : {"/data/", "/metadata/"}) {
    absl::StatusOr<std::vector<DeepStorageFileInfo>> files =
        storage_->List(absl::StrCat(location_key, dir));
    if (!files.ok()) return context(files.status(), absl::StrCat("listing ", dir));
    for (const DeepStorageFileInfo& f : *files) {
      const std::string path = UnderLocation(f.uri, location_key);
      if (path.empty() || referenced.count(path)) continue;
      unreferenced.insert(path);
    }
  }
  // Forget what is referenced or gone now: the age counts without a break.
  for (auto it = seen.begin(); it != seen.end();) {
    it = unreferenced.count(it->first) ? std::next(it) : seen.erase(it);
  }
  std::vector<std::string> old_enough;
  for (const std::string& path : unreferenced) {
    auto [it, inserted] = seen.emplace(path, now);
    if (!inserted && now - it->second >= options_.min_age) old_enough.push_back(path);
  }
  if (old_enough.empty()) return 0;
  // 3. No publish of the table under way, and the catalog still at the
  // metadata read in 1: nothing judged orphan was staged or committed since.
  if (options_.locks != nullptr && !options_.locks->TryExclusive(location_key)) return 0;
  struct Release {
    IcebergTableLocks* locks;
    const std::string& key;
    ~Release() {
      if (locks != nullptr) locks->ReleaseExclusive(key);
    }
  } release{options_.locks, location_key};
  if (current_location) {
    absl::StatusOr<std::string> current = current_location();
    if (!current.ok()) return context(current.status(), "reading the catalog again");
    if (*current != metadata_location) return 0;  // committed meanwhile: next pass
  }
  int64_t removed = 0;
  absl::Status first_error;
  for (const std::string& path : old_enough) {
    auto it = seen.find(path);
    const std::string uri = storage_->UriForKey(absl::StrCat(location_key, "/", path));
    if (absl::Status deleted = storage_->Delete(uri); !deleted.ok()) {
      if (first_error.ok()) first_error = context(deleted, uri);
      continue;
    }
    seen.erase(it);
    ++removed;
  }
  if (removed == 0 && !first_error.ok()) return first_error;
  return removed;
}

int64_t IcebergOrphanSweeper::Pending(const std::string& location_key) const {
  absl::MutexLock lock(&mu_);
  auto it = first_seen_.find(location_key);
  return it == first_seen_.end() ? 0 : static_cast<int64_t>(it->second.size());
}

}  // namespace sluice::supervisor
