#include "tools/audit/table_audit.h"

#include <cstdio>
#include <set>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "iceberg/table_reader.h"
#include "tools/audit/segment_file_verifier.h"

namespace sluice::audit {
namespace {

constexpr char kKafkaPrefix[] = "sluice.kafka.";
constexpr char kResetPrefix[] = "sluice.offset-reset.";
constexpr char kRewrittenPrefix[] = "sluice.rewritten.kafka.";

struct Range {
  int64_t start = 0;
  int64_t end = 0;
};

// "<start>-<end>" with 0 <= start <= end.
std::optional<Range> ParseRange(const std::string& text) {
  std::vector<std::string> parts = absl::StrSplit(text, absl::MaxSplits('-', 1));
  Range r;
  if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &r.start) ||
      !absl::SimpleAtoi(parts[1], &r.end) || r.start < 0 || r.end < r.start) {
    return std::nullopt;
  }
  return r;
}

// A listed reset "sluice.kafka.<topic>.<partition> <old> -> <new> at ...":
// its key and new offset (nullopt: "none", reading restarted anywhere).
struct ListedReset {
  std::string id;
  std::string key;
  std::optional<int64_t> new_offset;
  std::string text;
};

std::optional<ListedReset> ParseReset(const std::string& id, const std::string& text) {
  std::vector<std::string> tokens = absl::StrSplit(text, ' ');
  if (tokens.size() < 4 || tokens[2] != "->") return std::nullopt;
  ListedReset r{id, tokens[0], std::nullopt, text};
  if (tokens[3] != "none") {
    int64_t v = 0;
    if (!absl::SimpleAtoi(tokens[3], &v)) return std::nullopt;
    r.new_offset = v;
  }
  return r;
}

}  // namespace

absl::StatusOr<std::string> DeepStorageFileReader::Read(const std::string& uri) {
  const bool remote = !absl::StartsWith(uri, "file://") && !absl::StartsWith(uri, "/") &&
                      uri.find("://") != std::string::npos;
  if (!remote) {
    SLUICE_ASSIGN_OR_RETURN(std::string local, LocalSegmentPath(uri));
    return ReadFile(local);
  }
  if (deep_storage_ == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        uri, " is in remote deep storage; the audit needs that deep storage to read it"));
  }
  SLUICE_ASSIGN_OR_RETURN(const std::string local,
                          deep_storage_->LocalPathForRead(uri, scratch_dir_));
  absl::StatusOr<std::string> bytes = ReadFile(local);
  if (local != uri) std::remove(local.c_str());
  return bytes;
}

void SetRecordAccounting(const v1::SupervisorSpec& spec, TableAuditOptions* options) {
  const v1::GranularitySpec& g = spec.data_schema().granularity_spec();
  options->rollup = g.has_rollup() ? g.rollup() : true;
  options->count_column.reset();
  for (const v1::MetricSpec& m : spec.data_schema().metrics_spec()) {
    if (m.type() == "count") {
      options->count_column = m.name();
      break;
    }
  }
}

std::string TableAuditReport::ToString() const {
  std::string out = absl::StrCat("Iceberg table audit of ", metadata_location, "\n",
                                 "  snapshots of the datasource ", snapshots, " (other writers' ",
                                 other_snapshots, ", not checked), data files ", data_files,
                                 ", rows ", rows, ", records they hold ", records, "\n");
  if (replaces > 0) {
    absl::StrAppend(&out, "  replace snapshots ", replaces, "; live at the current snapshot: ",
                    live_files, " data files holding ", live_records, " records\n");
  }
  for (const std::string& r : rewritten) absl::StrAppend(&out, "  REWRITTEN: ", r, "\n");
  for (const std::string& d : declared) absl::StrAppend(&out, "  DECLARED: ", d, "\n");
  for (const std::string& n : notes) absl::StrAppend(&out, "  NOT CHECKED: ", n, "\n");
  for (const std::string& d : discrepancies) absl::StrAppend(&out, "  FAIL: ", d, "\n");
  absl::StrAppend(&out, "Iceberg table: ",
                  ok() ? std::string("PASS")
                       : absl::StrCat("FAIL (", discrepancies.size(), " discrepancies)"));
  return out;
}

TableAuditReport RunTableAudit(const v1::GetCommitLogResponse& log,
                               const std::vector<v1::SegmentDescriptor>& segments,
                               const KafkaCounts& kafka_counts, const TableAuditOptions& options,
                               TableFileReader* files) {
  TableAuditReport report;
  report.metadata_location = options.metadata_location;
  auto fail = [&report](std::string message) {
    report.discrepancies.push_back(std::move(message));
  };
  absl::StatusOr<std::string> metadata_json = files->Read(options.metadata_location);
  if (!metadata_json.ok()) {
    fail(absl::StrCat("table metadata ", options.metadata_location,
                      " cannot be read: ", metadata_json.status().ToString()));
    return report;
  }
  absl::StatusOr<iceberg::TableMetadataInfo> metadata = iceberg::ReadTableMetadata(*metadata_json);
  if (!metadata.ok()) {
    fail(absl::StrCat("table metadata ", options.metadata_location,
                      " is not readable: ", metadata.status().ToString()));
    return report;
  }
  absl::StatusOr<std::vector<const iceberg::SnapshotInfo*>> ancestry = metadata->CurrentAncestry();
  if (!ancestry.ok()) {
    fail(absl::StrCat("table metadata ", options.metadata_location, ": ",
                      ancestry.status().message()));
    return report;
  }

  // The commit log: sequences by name and position; the summary key of
  // every stream partition.
  std::map<std::string, int> position;
  for (int i = 0; i < log.sequences_size(); ++i) position[log.sequences(i).sequence_name()] = i;
  std::map<int32_t, std::string> key_of;
  for (const v1::StreamPartition& p : log.stream_partitions()) {
    key_of[p.id()] = absl::StrCat(kKafkaPrefix, p.topic(), ".", p.partition());
  }
  auto kafka_key = [&](int32_t partition) {
    auto it = key_of.find(partition);
    if (it != key_of.end() && !log.topic_pattern().empty()) return it->second;
    return absl::StrCat(kKafkaPrefix, log.topic(), ".", partition);
  };
  std::map<std::string, int64_t> rows_of_segment;  // segment id -> rows
  for (const v1::SegmentDescriptor& s : segments) rows_of_segment[s.id()] = s.num_rows();

  std::map<std::string, int64_t> last_end;  // kafka key -> end of the previous snapshot
  std::map<std::string, int64_t> snapshot_of_sequence;
  std::set<std::string> data_files_seen;
  int first_position = -1;
  const bool counted = options.count_column.has_value() || !options.rollup;
  // Data files added by the snapshots checked (appends of the datasource,
  // replaces), while no replace removed them: what the current snapshot
  // must hold live.
  struct TrackedFile {
    int64_t rows = 0;
    int64_t inputs = 0;  // the count column's sum, or the rows
    int64_t snapshot_id = 0;
  };
  std::map<std::string, TrackedFile> tracked;
  std::map<std::string, int64_t> removed_by;  // data file -> the replace snapshot
  int64_t appended_inputs = 0;  // of the files the appends added
  // Reads a data file a manifest names and checks it against the entry:
  // its rows and inputs, or nullopt after a discrepancy.
  auto check_data_file = [&](const std::string& label, const iceberg::ManifestEntryInfo& e)
      -> std::optional<TrackedFile> {
    absl::StatusOr<std::string> bytes = files->Read(e.file_path);
    if (!bytes.ok()) {
      fail(absl::StrCat(label, absl::IsNotFound(bytes.status()) ? " is missing: "
                                                                : " cannot be read: ",
                        bytes.status().ToString()));
      return std::nullopt;
    }
    bool ok = true;
    if (static_cast<int64_t>(bytes->size()) != e.file_size_in_bytes) {
      fail(absl::StrCat(label, " is ", bytes->size(), " bytes, the manifest records ",
                        e.file_size_in_bytes));
      ok = false;
    }
    absl::StatusOr<iceberg::ParquetFileInfo> parquet =
        iceberg::ReadParquetFile(*bytes, options.count_column);
    if (!parquet.ok()) {
      fail(absl::StrCat(label, " is not a readable Parquet file: ", parquet.status().message()));
      return std::nullopt;
    }
    if (parquet->rows != e.record_count) {
      fail(absl::StrCat(label, " holds ", parquet->rows, " rows, the manifest records ",
                        e.record_count));
      ok = false;
    }
    if (!ok) return std::nullopt;
    return TrackedFile{parquet->rows, parquet->sum.value_or(parquet->rows), 0};
  };
  // A data file snapshot `snapshot_id` added: never added before (nor
  // `repeated` within the snapshot), checked, then tracked. Null after a
  // discrepancy (reported).
  auto track_added = [&](const std::string& label, const iceberg::ManifestEntryInfo& e,
                         int64_t snapshot_id, bool repeated) -> const TrackedFile* {
    if (repeated || tracked.count(e.file_path) || removed_by.count(e.file_path)) {
      fail(absl::StrCat(label, " was already added by an earlier snapshot"));
      return nullptr;
    }
    std::optional<TrackedFile> f = check_data_file(label, e);
    if (!f.has_value()) return nullptr;
    f->snapshot_id = snapshot_id;
    return &(tracked[e.file_path] = *f);
  };
  // Reads the manifests a snapshot wrote (added_snapshot_id) and their
  // entries, or nullopt after a discrepancy.
  using Written = std::vector<std::pair<iceberg::ManifestListEntry,
                                        std::vector<iceberg::ManifestEntryInfo>>>;
  auto manifests_written_by = [&](const iceberg::SnapshotInfo& snapshot,
                                  const std::string& what) -> std::optional<Written> {
    absl::StatusOr<std::string> list_bytes = files->Read(snapshot.manifest_list);
    absl::StatusOr<std::vector<iceberg::ManifestListEntry>> manifests =
        list_bytes.ok() ? iceberg::ReadManifestList(*list_bytes)
                        : absl::StatusOr<std::vector<iceberg::ManifestListEntry>>(list_bytes.status());
    if (!manifests.ok()) {
      fail(absl::StrCat(what, ": manifest list ", snapshot.manifest_list,
                        " cannot be read: ", manifests.status().ToString()));
      return std::nullopt;
    }
    Written out;
    for (const iceberg::ManifestListEntry& m : *manifests) {
      if (m.added_snapshot_id != snapshot.snapshot_id) continue;
      if (m.content != 0) {
        fail(absl::StrCat(what, ": manifest ", m.manifest_path, " holds deletes"));
        return std::nullopt;
      }
      absl::StatusOr<std::string> bytes = files->Read(m.manifest_path);
      if (bytes.ok() && static_cast<int64_t>(bytes->size()) != m.manifest_length) {
        fail(absl::StrCat(what, ": manifest ", m.manifest_path, " is ", bytes->size(),
                          " bytes, the manifest list records ", m.manifest_length));
      }
      absl::StatusOr<std::vector<iceberg::ManifestEntryInfo>> entries =
          bytes.ok() ? iceberg::ReadManifest(*bytes)
                     : absl::StatusOr<std::vector<iceberg::ManifestEntryInfo>>(bytes.status());
      if (!entries.ok()) {
        fail(absl::StrCat(what, ": manifest ", m.manifest_path,
                          " cannot be read: ", entries.status().ToString()));
        return std::nullopt;
      }
      out.emplace_back(m, std::move(*entries));
    }
    return out;
  };
  // A replace snapshot (a compaction): no sequence and no new Kafka
  // ranges; the files it removed were live and hold the records the files
  // it added hold.
  auto audit_replace = [&](const iceberg::SnapshotInfo& snapshot) {
    ++report.replaces;
    const std::string what = absl::StrCat("snapshot ", snapshot.snapshot_id, " (replace)");
    std::vector<std::string> rewritten;
    for (const auto& [key, value] : snapshot.summary) {
      if (key == "sluice.sequence" || absl::StartsWith(key, kKafkaPrefix)) {
        fail(absl::StrCat(what, " carries ", key, ": a replace commits no sequence and no new "
                          "Kafka records"));
      } else if (absl::StartsWith(key, kRewrittenPrefix)) {
        const std::string kafka_key =
            absl::StrCat(kKafkaPrefix, key.substr(sizeof(kRewrittenPrefix) - 1));
        for (absl::string_view part : absl::StrSplit(value, ',')) {
          std::optional<Range> r = ParseRange(std::string(part));
          auto end = last_end.find(kafka_key);
          if (!r.has_value()) {
            fail(absl::StrCat(what, ": ", key, " = \"", value, "\" is not <start>-<end>[,...]"));
            break;
          }
          if (end == last_end.end() || r->end > end->second) {
            fail(absl::StrCat(what, ": ", key, " lists [", r->start, ", ", r->end,
                              "), beyond what earlier snapshots committed"));
          }
        }
        rewritten.push_back(absl::StrCat(key.substr(sizeof(kRewrittenPrefix) - 1), " ", value));
      }
    }
    report.rewritten.push_back(absl::StrCat(
        what, ": ", rewritten.empty() ? std::string("no ranges listed")
                                      : absl::StrJoin(rewritten, "; ")));
    std::optional<Written> written = manifests_written_by(snapshot, what);
    if (!written.has_value()) return;
    int64_t added_rows = 0, added_inputs = 0, removed_rows = 0, removed_inputs = 0;
    int64_t added_records = 0, deleted_records = 0;
    bool ok = true;
    for (const auto& [m, entries] : *written) {
      for (const iceberg::ManifestEntryInfo& e : entries) {
        const std::string file = absl::StrCat(what, ": data file ", e.file_path);
        const int64_t entry_snapshot = e.snapshot_id.value_or(m.added_snapshot_id);
        if (e.status == iceberg::ManifestEntryInfo::kAdded &&
            entry_snapshot == snapshot.snapshot_id) {
          added_records += e.record_count;
          const TrackedFile* f = track_added(file, e, snapshot.snapshot_id, false);
          if (f == nullptr) {
            ok = false;
            continue;
          }
          added_rows += f->rows;
          added_inputs += f->inputs;
        } else if (e.status == iceberg::ManifestEntryInfo::kDeleted &&
                   entry_snapshot == snapshot.snapshot_id) {
          deleted_records += e.record_count;
          if (auto earlier = removed_by.find(e.file_path); earlier != removed_by.end()) {
            fail(absl::StrCat(file, " was already removed by snapshot ", earlier->second));
            ok = false;
            continue;
          }
          std::optional<TrackedFile> f;
          if (auto t = tracked.find(e.file_path); t != tracked.end()) {
            f = t->second;
            tracked.erase(t);
          } else {
            f = check_data_file(file, e);  // added by a snapshot not checked
          }
          removed_by[e.file_path] = snapshot.snapshot_id;
          if (!f.has_value()) {
            ok = false;
            continue;
          }
          removed_rows += f->rows;
          removed_inputs += f->inputs;
        }
      }
    }
    for (const auto& [key, n] : {std::pair<const char*, int64_t>{"added-records", added_records},
                                 {"deleted-records", deleted_records}}) {
      auto v = snapshot.summary.find(key);
      int64_t got = 0;
      if (v != snapshot.summary.end() && (!absl::SimpleAtoi(v->second, &got) || got != n)) {
        fail(absl::StrCat(what, ": the summary's ", key, " is ", v->second,
                          ", its manifests say ", n));
      }
    }
    if (!ok) return;
    if (counted && added_inputs != removed_inputs) {
      fail(absl::StrCat(what, ": rows not conserved: the files it removed hold ", removed_inputs,
                        " records, the files it added ", added_inputs,
                        options.count_column
                            ? absl::StrCat(" (sum of ", *options.count_column, ")")
                            : std::string(" (rows)")));
    } else if (!counted && added_rows > removed_rows) {
      fail(absl::StrCat(what, ": the files it added hold ", added_rows,
                        " rows, more than the ", removed_rows, " of the files it removed"));
    }
  };
  // Oldest first: the ranges are chained in commit order.
  for (auto it = ancestry->rbegin(); it != ancestry->rend(); ++it) {
    const iceberg::SnapshotInfo& snapshot = **it;
    auto summary_value = [&](const std::string& key) -> const std::string* {
      auto found = snapshot.summary.find(key);
      return found == snapshot.summary.end() ? nullptr : &found->second;
    };
    const std::string* ds = summary_value("sluice.datasource");
    const std::string* operation = summary_value("operation");
    if (operation != nullptr && *operation == "replace" &&
        (ds == nullptr || *ds == log.datasource())) {
      // Any writer's rewrite (sluice's compaction, another engine's).
      audit_replace(snapshot);
      continue;
    }
    if (ds == nullptr || *ds != log.datasource()) {
      ++report.other_snapshots;
      continue;
    }
    ++report.snapshots;
    const std::string name = absl::StrCat("snapshot ", snapshot.snapshot_id);
    const std::string* sequence = summary_value("sluice.sequence");
    if (sequence == nullptr || sequence->empty()) {
      fail(absl::StrCat(name, " has no sluice.sequence"));
      continue;
    }
    const std::string what = absl::StrCat(name, " (sequence ", *sequence, ")");
    if (auto [prev, inserted] = snapshot_of_sequence.emplace(*sequence, snapshot.snapshot_id);
        !inserted) {
      fail(absl::StrCat(what, ": sequence already committed by snapshot ", prev->second));
      continue;
    }
    // Ranges in the summary.
    std::map<std::string, Range> ranges;
    std::vector<ListedReset> resets;
    bool resets_omitted = false;
    for (const auto& [key, value] : snapshot.summary) {
      if (absl::StartsWith(key, kKafkaPrefix)) {
        std::optional<Range> r = ParseRange(value);
        if (!r.has_value()) {
          fail(absl::StrCat(what, ": ", key, " = \"", value, "\" is not <start>-<end>"));
          continue;
        }
        ranges[key] = *r;
      } else if (absl::StartsWith(key, kResetPrefix)) {
        std::optional<ListedReset> r = ParseReset(key.substr(sizeof(kResetPrefix) - 1), value);
        if (r.has_value()) {
          resets.push_back(*r);
        } else {
          fail(absl::StrCat(what, ": ", key, " = \"", value, "\" is not an offset reset"));
        }
      } else if (key == "sluice.offset-resets.omitted") {
        resets_omitted = true;
      }
    }
    if (ranges.empty()) fail(absl::StrCat(what, " has no sluice.kafka.<topic>.<partition> range"));
    // Against the commit log entry.
    auto pos = position.find(*sequence);
    const v1::CommittedSequence* committed = nullptr;
    if (pos == position.end()) {
      fail(absl::StrCat(what, ": the commit log has no such committed sequence"));
    } else {
      committed = &log.sequences(pos->second);
      if (first_position < 0 || pos->second < first_position) first_position = pos->second;
      std::map<std::string, Range> expected;
      for (const auto& [p, start] : committed->start_offsets()) {
        auto end = committed->end_offsets().find(p);
        if (end != committed->end_offsets().end()) expected[kafka_key(p)] = {start, end->second};
      }
      for (const auto& [key, r] : expected) {
        auto got = ranges.find(key);
        if (got == ranges.end()) {
          fail(absl::StrCat(what, ": no ", key, "; the commit log has [", r.start, ", ", r.end,
                            ")"));
        } else if (got->second.start != r.start || got->second.end != r.end) {
          fail(absl::StrCat(what, ": ", key, " is [", got->second.start, ", ", got->second.end,
                            "), the commit log has [", r.start, ", ", r.end, ")"));
        }
      }
      for (const auto& [key, r] : ranges) {
        if (!expected.count(key)) {
          fail(absl::StrCat(what, ": ", key, " [", r.start, ", ", r.end,
                            ") is not a range of the committed sequence"));
        }
      }
    }
    // Chained from the table's own earlier snapshots.
    for (const auto& [key, r] : ranges) {
      auto prev = last_end.find(key);
      if (prev != last_end.end() && prev->second != r.start) {
        const ListedReset* reset = nullptr;
        for (const ListedReset& l : resets) {
          if (l.key == key && (!l.new_offset.has_value() || *l.new_offset == r.start)) reset = &l;
        }
        const std::string jump =
            r.start > prev->second
                ? absl::StrCat("gap [", prev->second, ", ", r.start, ")")
                : absl::StrCat("overlap [", r.start, ", ", prev->second, ")");
        if (reset != nullptr) {
          report.declared.push_back(absl::StrCat(what, ": ", key, " ", jump, ": offset reset ",
                                                 reset->id, " (", reset->text, ")"));
        } else if (resets_omitted) {
          report.notes.push_back(absl::StrCat(what, ": ", key, " ", jump,
                                              ": resets omitted from the summary may explain it"));
        } else {
          fail(absl::StrCat(what, ": ", key, " ", jump,
                            " after the previous snapshot, and no listed offset reset explains it"));
        }
      }
      last_end[key] = r.end;
    }

    // Data files this snapshot added.
    int64_t rows = 0, inputs = 0, entries_records = 0;
    bool files_ok = true;
    std::optional<Written> written = manifests_written_by(snapshot, what);
    if (!written.has_value()) continue;
    for (const auto& [m, entries] : *written) {
      int64_t manifest_records = 0, manifest_files = 0;
      for (const iceberg::ManifestEntryInfo& e : entries) {
        if (e.status != iceberg::ManifestEntryInfo::kAdded ||
            e.snapshot_id.value_or(m.added_snapshot_id) != snapshot.snapshot_id) {
          continue;
        }
        ++manifest_files;
        manifest_records += e.record_count;
        ++report.data_files;
        const std::string file = absl::StrCat(what, ": data file ", e.file_path);
        const TrackedFile* f = track_added(file, e, snapshot.snapshot_id,
                                           !data_files_seen.insert(e.file_path).second);
        if (f == nullptr) {
          files_ok = false;
          continue;
        }
        rows += f->rows;
        inputs += f->inputs;
        appended_inputs += f->inputs;
      }
      if (m.added_files_count >= 0 && m.added_files_count != manifest_files) {
        fail(absl::StrCat(what, ": manifest ", m.manifest_path, " adds ", manifest_files,
                          " data files, the manifest list records ", m.added_files_count));
      }
      if (m.added_rows_count >= 0 && m.added_rows_count != manifest_records) {
        fail(absl::StrCat(what, ": manifest ", m.manifest_path, " adds ", manifest_records,
                          " records, the manifest list records ", m.added_rows_count));
      }
      entries_records += manifest_records;
    }
    if (const std::string* added = summary_value("added-records"); added != nullptr) {
      int64_t n = 0;
      if (!absl::SimpleAtoi(*added, &n) || n != entries_records) {
        fail(absl::StrCat(what, ": the summary's added-records is ", *added,
                          ", its manifests add ", entries_records));
      }
    }
    report.rows += rows;
    if (!files_ok || committed == nullptr) continue;
    // The rows are the sequence's segments' rows.
    // The segments the sequence committed (its commit log entry's).
    int64_t native_rows = 0;
    std::vector<std::string> unlisted;
    for (const std::string& id : committed->segment_ids()) {
      auto seg = rows_of_segment.find(id);
      if (seg == rows_of_segment.end()) {
        unlisted.push_back(id);
      } else {
        native_rows += seg->second;
      }
    }
    if (!unlisted.empty()) {
      report.notes.push_back(absl::StrCat(what, ": ", unlisted.size(),
                                          " of its segments are not listed (", unlisted[0],
                                          "...): its rows are not compared with them"));
    } else if (rows != native_rows) {
      fail(absl::StrCat(what, ": its data files hold ", rows, " rows, the sequence's segments ",
                        native_rows));
    }
    // The records against Kafka's.
    if (!counted) {
      report.notes.push_back(absl::StrCat(
          what, ": rollup without a count metric: the records behind its rows are not known"));
      continue;
    }
    report.records += inputs;
    auto counts = kafka_counts.find(*sequence);
    int64_t in_kafka = 0, unparseable = 0, thrown_away = 0;
    bool all_counted = true;
    for (const auto& [p, start] : committed->start_offsets()) {
      auto end = committed->end_offsets().find(p);
      if (end == committed->end_offsets().end() || end->second == start) continue;
      const int64_t* n = nullptr;
      if (counts != kafka_counts.end()) {
        auto c = counts->second.find(p);
        if (c != counts->second.end()) n = &c->second;
      }
      if (n == nullptr) {
        all_counted = false;
        break;
      }
      in_kafka += *n;
    }
    if (!all_counted) {
      report.notes.push_back(absl::StrCat(
          what, ": some of its ranges were not re-read from Kafka (see the segment audit)"));
      continue;
    }
    for (const v1::PartitionRange& s : committed->partition_stats()) {
      unparseable += s.unparseable();
      thrown_away += s.thrown_away();
    }
    if (in_kafka - unparseable - thrown_away != inputs) {
      fail(absl::StrCat(what, ": Kafka holds ", in_kafka, " records in its ranges; minus ",
                        unparseable, " unparseable and ", thrown_away, " thrown away that is ",
                        in_kafka - unparseable - thrown_away, ", but its data files hold ",
                        inputs, options.count_column ? absl::StrCat(" (sum of ",
                                                                    *options.count_column, ")")
                                                     : std::string(" rows")));
    }
  }
  // The current snapshot holds every file the checked snapshots added and
  // no replace removed, each once: every committed range is still there.
  if (!tracked.empty() || !removed_by.empty()) {
    const iceberg::SnapshotInfo& current = *ancestry->front();
    const std::string what = absl::StrCat("the current snapshot ", current.snapshot_id);
    absl::StatusOr<std::string> list_bytes = files->Read(current.manifest_list);
    absl::StatusOr<std::vector<iceberg::ManifestListEntry>> manifests =
        list_bytes.ok() ? iceberg::ReadManifestList(*list_bytes)
                        : absl::StatusOr<std::vector<iceberg::ManifestListEntry>>(list_bytes.status());
    std::set<std::string> live;
    bool read_all = manifests.ok();
    if (!manifests.ok()) {
      fail(absl::StrCat(what, ": manifest list ", current.manifest_list,
                        " cannot be read: ", manifests.status().ToString()));
    } else {
      for (const iceberg::ManifestListEntry& m : *manifests) {
        if (m.content != 0) continue;
        absl::StatusOr<std::string> bytes = files->Read(m.manifest_path);
        absl::StatusOr<std::vector<iceberg::ManifestEntryInfo>> entries =
            bytes.ok() ? iceberg::ReadManifest(*bytes)
                       : absl::StatusOr<std::vector<iceberg::ManifestEntryInfo>>(bytes.status());
        if (!entries.ok()) {
          fail(absl::StrCat(what, ": manifest ", m.manifest_path,
                            " cannot be read: ", entries.status().ToString()));
          read_all = false;
          continue;
        }
        for (const iceberg::ManifestEntryInfo& e : *entries) {
          if (e.status == iceberg::ManifestEntryInfo::kDeleted) continue;
          if (!live.insert(e.file_path).second) {
            fail(absl::StrCat(what, ": data file ", e.file_path,
                              " is live twice (its rows would be read twice)"));
          }
          if (auto r = removed_by.find(e.file_path); r != removed_by.end()) {
            fail(absl::StrCat(what, ": data file ", e.file_path, " is live, but replace snapshot ",
                              r->second, " removed it (its rows would be read twice)"));
          }
        }
      }
    }
    if (read_all) {
      int64_t live_inputs = 0;
      for (const auto& [path, f] : tracked) {
        if (live.count(path) == 0) {
          fail(absl::StrCat(what, ": data file ", path, " of snapshot ", f.snapshot_id,
                            " is not live, and no replace snapshot removed it: its rows are "
                            "gone from the table"));
        } else {
          ++report.live_files;
          live_inputs += f.inputs;
        }
      }
      report.live_records = live_inputs;
      if (counted && report.replaces > 0 && live_inputs != appended_inputs) {
        fail(absl::StrCat(what, ": its live files hold ", live_inputs,
                          " records, the appends committed ", appended_inputs));
      }
    }
  }
  // Every sequence committed since the table's first snapshot has its own.
  if (first_position >= 0) {
    for (int i = first_position; i < log.sequences_size(); ++i) {
      const v1::CommittedSequence& seq = log.sequences(i);
      if (!snapshot_of_sequence.count(seq.sequence_name())) {
        fail(absl::StrCat("sequence ", seq.sequence_name(), " was committed (at ",
                          seq.committed_at_ms(), " ms) but the table has no snapshot of it"));
      }
    }
  } else if (log.sequences_size() > 0) {
    report.notes.push_back("the table has no snapshot of the datasource yet");
  }
  return report;
}

}  // namespace sluice::audit
