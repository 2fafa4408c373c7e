#include "tools/audit/table_audit.h"

#include <cstdio>
#include <set>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "iceberg/table_reader.h"
#include "tools/audit/segment_file_verifier.h"

namespace sluice::audit {
namespace {

constexpr char kKafkaPrefix[] = "sluice.kafka.";
constexpr char kResetPrefix[] = "sluice.offset-reset.";

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
  // Oldest first: the ranges are chained in commit order.
  for (auto it = ancestry->rbegin(); it != ancestry->rend(); ++it) {
    const iceberg::SnapshotInfo& snapshot = **it;
    auto summary_value = [&](const std::string& key) -> const std::string* {
      auto found = snapshot.summary.find(key);
      return found == snapshot.summary.end() ? nullptr : &found->second;
    };
    const std::string* ds = summary_value("sluice.datasource");
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
    absl::StatusOr<std::string> list_bytes = files->Read(snapshot.manifest_list);
    absl::StatusOr<std::vector<iceberg::ManifestListEntry>> manifests =
        list_bytes.ok() ? iceberg::ReadManifestList(*list_bytes)
                        : absl::StatusOr<std::vector<iceberg::ManifestListEntry>>(list_bytes.status());
    if (!manifests.ok()) {
      fail(absl::StrCat(what, ": manifest list ", snapshot.manifest_list,
                        " cannot be read: ", manifests.status().ToString()));
      continue;
    }
    for (const iceberg::ManifestListEntry& m : *manifests) {
      if (m.added_snapshot_id != snapshot.snapshot_id) continue;
      if (m.content != 0) {
        fail(absl::StrCat(what, ": manifest ", m.manifest_path, " holds deletes"));
        continue;
      }
      absl::StatusOr<std::string> manifest_bytes = files->Read(m.manifest_path);
      if (manifest_bytes.ok() &&
          static_cast<int64_t>(manifest_bytes->size()) != m.manifest_length) {
        fail(absl::StrCat(what, ": manifest ", m.manifest_path, " is ", manifest_bytes->size(),
                          " bytes, the manifest list records ", m.manifest_length));
      }
      absl::StatusOr<std::vector<iceberg::ManifestEntryInfo>> entries =
          manifest_bytes.ok()
              ? iceberg::ReadManifest(*manifest_bytes)
              : absl::StatusOr<std::vector<iceberg::ManifestEntryInfo>>(manifest_bytes.status());
      if (!entries.ok()) {
        fail(absl::StrCat(what, ": manifest ", m.manifest_path,
                          " cannot be read: ", entries.status().ToString()));
        files_ok = false;
        continue;
      }
      int64_t manifest_records = 0, manifest_files = 0;
      for (const iceberg::ManifestEntryInfo& e : *entries) {
        if (e.status != iceberg::ManifestEntryInfo::kAdded ||
            e.snapshot_id.value_or(m.added_snapshot_id) != snapshot.snapshot_id) {
          continue;
        }
        ++manifest_files;
        manifest_records += e.record_count;
        ++report.data_files;
        const std::string file = absl::StrCat(what, ": data file ", e.file_path);
        if (!data_files_seen.insert(e.file_path).second) {
          fail(absl::StrCat(file, " was already added by an earlier snapshot"));
          files_ok = false;
          continue;
        }
        absl::StatusOr<std::string> bytes = files->Read(e.file_path);
        if (!bytes.ok()) {
          fail(absl::StrCat(file, absl::IsNotFound(bytes.status()) ? " is missing: "
                                                                   : " cannot be read: ",
                            bytes.status().ToString()));
          files_ok = false;
          continue;
        }
        if (static_cast<int64_t>(bytes->size()) != e.file_size_in_bytes) {
          fail(absl::StrCat(file, " is ", bytes->size(), " bytes, the manifest records ",
                            e.file_size_in_bytes));
          files_ok = false;
        }
        absl::StatusOr<iceberg::ParquetFileInfo> parquet =
            iceberg::ReadParquetFile(*bytes, options.count_column);
        if (!parquet.ok()) {
          fail(absl::StrCat(file, " is not a readable Parquet file: ", parquet.status().message()));
          files_ok = false;
          continue;
        }
        if (parquet->rows != e.record_count) {
          fail(absl::StrCat(file, " holds ", parquet->rows, " rows, the manifest records ",
                            e.record_count));
          files_ok = false;
        }
        rows += parquet->rows;
        inputs += parquet->sum.value_or(parquet->rows);
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
    const bool counted = options.count_column.has_value() || !options.rollup;
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
