#include "supervisor/iceberg/iceberg_commit.h"

#include <simdjson.h>
#include <unistd.h>

#include <atomic>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/civil_time.h"
#include "absl/time/time.h"
#include "common/file_util.h"
#include "common/retry.h"
#include "common/s3/digest.h"
#include "common/segment/segment_reader.h"
#include "common/status_macros.h"
#include "iceberg/manifest_writer.h"

namespace sluice::supervisor {
namespace {

using iceberg::TimePartitioning;

// A UUID (lowercase 8-4-4-4-12, version 4 and variant bits set) from a
// digest of `seed`: deterministic.
std::string UuidFrom(absl::string_view seed) {
  std::string raw = s3::Sha256Of(seed).substr(0, 16);
  raw[6] = static_cast<char>((raw[6] & 0x0f) | 0x40);
  raw[8] = static_cast<char>((raw[8] & 0x3f) | 0x80);
  const std::string hex = s3::HexOf(raw);
  return absl::StrCat(hex.substr(0, 8), "-", hex.substr(8, 4), "-", hex.substr(12, 4), "-",
                      hex.substr(16, 4), "-", hex.substr(20, 12));
}

absl::StatusOr<std::string> ReadUri(DeepStorage* storage, const std::string& scratch_dir,
                                    const std::string& uri) {
  return ReadDeepStorageObject(*storage, uri, scratch_dir);
}

// The transform of the table's time partition field, from the plan's spec.
std::optional<TimePartitioning> TransformOf(absl::string_view spec_json) {
  const size_t at = spec_json.find("\"transform\"");
  if (at == absl::string_view::npos) return std::nullopt;
  const size_t open = spec_json.find('"', spec_json.find(':', at) + 1);
  const size_t close = spec_json.find('"', open + 1);
  if (open == absl::string_view::npos || close == absl::string_view::npos) return std::nullopt;
  const absl::string_view name = spec_json.substr(open + 1, close - open - 1);
  if (name == "hour") return TimePartitioning::kHour;
  if (name == "day") return TimePartitioning::kDay;
  if (name == "month") return TimePartitioning::kMonth;
  if (name == "year") return TimePartitioning::kYear;
  return std::nullopt;
}

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

int32_t PartitionOf(TimePartitioning partitioning, int64_t ms) {
  switch (partitioning) {
    case TimePartitioning::kHour:
      return static_cast<int32_t>(FloorDiv(ms, 3600000));
    case TimePartitioning::kDay:
      return static_cast<int32_t>(FloorDiv(ms, 86400000));
    case TimePartitioning::kMonth:
    case TimePartitioning::kYear: {
      const absl::CivilSecond t = absl::ToCivilSecond(absl::FromUnixMillis(ms), absl::UTCTimeZone());
      const int64_t years = t.year() - 1970;
      return static_cast<int32_t>(partitioning == TimePartitioning::kYear
                                      ? years
                                      : years * 12 + (t.month() - 1));
    }
  }
  return 0;
}

// The newest offset reset id the table's snapshots of `datasource`
// recorded; nullopt when none of them did.
std::optional<int64_t> RecordedResetsThrough(absl::string_view metadata,
                                             const std::string& datasource) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  simdjson::padded_string padded(metadata.data(), metadata.size());
  if (parser.parse(padded).get(doc) != simdjson::SUCCESS) return std::nullopt;
  simdjson::dom::array snapshots;
  if (doc["snapshots"].get(snapshots) != simdjson::SUCCESS) return std::nullopt;
  std::optional<int64_t> through;
  for (simdjson::dom::element snapshot : snapshots) {
    std::string_view ds, text;
    if (snapshot["summary"]["sluice.datasource"].get(ds) != simdjson::SUCCESS ||
        ds != datasource ||
        snapshot["summary"]["sluice.offset-resets.through"].get(text) != simdjson::SUCCESS) {
      continue;
    }
    int64_t id = 0;
    if (absl::SimpleAtoi(absl::string_view(text.data(), text.size()), &id)) {
      through = std::max(through.value_or(id), id);
    }
  }
  return through;
}

absl::Status AsPrecondition(const absl::Status& status, const IcebergTarget& target) {
  if (status.ok() || IsRetryable(status)) return status;
  if (absl::IsAborted(status)) {
    return absl::UnavailableError(absl::StrCat("Iceberg table ", target.QualifiedName(),
                                               " moved while staging: ", status.message()));
  }
  return absl::FailedPreconditionError(
      absl::StrCat("Iceberg table ", target.QualifiedName(), ": ", status.message()));
}

}  // namespace

std::string IcebergShortDigest(absl::string_view bytes) {
  return s3::HexOf(s3::Sha256Of(bytes)).substr(0, 16);
}

std::string IcebergSha256(absl::string_view bytes) { return s3::Sha256Of(bytes); }

absl::StatusOr<std::string> PutIcebergFile(DeepStorage* storage, const std::string& scratch_dir,
                                           const std::string& key, const std::string& bytes) {
  static std::atomic<uint64_t> counter{0};
  SLUICE_RETURN_IF_ERROR(MakeDirs(scratch_dir));
  const std::string local = absl::StrCat(scratch_dir, "/iceberg-", getpid(), "-", counter++);
  SLUICE_RETURN_IF_ERROR(WriteFileAtomically(local, bytes));
  absl::StatusOr<std::string> uri = storage->Push(local, key);
  RemoveAll(local).IgnoreError();
  if (uri.ok()) return uri;
  if (!absl::IsAlreadyExists(uri.status())) return uri.status();
  const std::string there = storage->UriForKey(key);
  SLUICE_ASSIGN_OR_RETURN(std::string existing,
                          ReadDeepStorageObject(*storage, there, scratch_dir));
  if (existing != bytes) {
    return absl::FailedPreconditionError(
        absl::StrCat("deep storage already has ", there, " with other bytes; not overwriting it"));
  }
  return there;
}

absl::Status VerifyStoredIcebergDataFiles(
    DeepStorage* storage, const std::string& scratch_dir,
    const std::vector<std::pair<std::string, std::string>>& uri_and_digest) {
  for (const auto& [uri, digest] : uri_and_digest) {
    absl::StatusOr<std::string> stored = ReadDeepStorageObject(*storage, uri, scratch_dir);
    if (!stored.ok()) {
      return absl::UnavailableError(absl::StrCat("data file ", uri,
                                                 " cannot be read back before the commit: ",
                                                 stored.status().message()));
    }
    if (s3::Sha256Of(*stored) != digest) {
      return absl::UnavailableError(absl::StrCat(
          "data file ", uri, " in deep storage does not hold the bytes written (", stored->size(),
          " bytes read back); not committing it"));
    }
  }
  return absl::OkStatus();
}

std::string IcebergDataFileKey(const IcebergTarget& target, int32_t partition_value,
                               const std::string& segment_id, absl::string_view bytes) {
  return absl::StrCat(target.location_key, "/data/p", partition_value, "-",
                      IcebergShortDigest(segment_id), "-", IcebergShortDigest(bytes), ".parquet");
}

std::optional<std::string> SegmentDigestOfDataFile(absl::string_view path) {
  const size_t slash = path.rfind('/');
  absl::string_view name = path.substr(slash == absl::string_view::npos ? 0 : slash + 1);
  if (!absl::ConsumePrefix(&name, "p") || !absl::ConsumeSuffix(&name, ".parquet")) {
    return std::nullopt;
  }
  const std::vector<absl::string_view> parts = absl::StrSplit(name, '-');
  // p<partition>-<segment digest>-<bytes digest>; a negative partition
  // (before 1970) starts with '-'.
  if (parts.size() < 3) return std::nullopt;
  const absl::string_view digest = parts[parts.size() - 2];
  if (digest.size() != 16 || parts.back().size() != 16) return std::nullopt;
  return std::string(digest);
}

int IcebergMetadataVersion(const std::string& location) {
  const size_t slash = location.rfind('/');
  const std::string name = location.substr(slash == std::string::npos ? 0 : slash + 1);
  int version = 0;
  if (!absl::SimpleAtoi(name.substr(0, name.find('-')), &version)) return 0;
  return version;
}

std::string IcebergMetadataKey(const IcebergTarget& target, const std::optional<std::string>& base,
                               absl::string_view next_metadata_json) {
  const int version = base.has_value() ? IcebergMetadataVersion(*base) + 1 : 0;
  return absl::StrFormat("%s/metadata/%05d-%s.metadata.json", target.location_key, version,
                         UuidFrom(absl::StrCat("sluice metadata\n", next_metadata_json)));
}

TimePartitioning PartitioningFor(const Granularity& g) {
  switch (g.unit()) {
    case Granularity::Unit::kNone:
    case Granularity::Unit::kSecond:
    case Granularity::Unit::kMinute:
    case Granularity::Unit::kFiveMinute:
    case Granularity::Unit::kTenMinute:
    case Granularity::Unit::kFifteenMinute:
    case Granularity::Unit::kThirtyMinute:
    case Granularity::Unit::kHour:
      return TimePartitioning::kHour;
    case Granularity::Unit::kSixHour:
    case Granularity::Unit::kDay:
    case Granularity::Unit::kWeek:
      return TimePartitioning::kDay;
    case Granularity::Unit::kMonth:
      return TimePartitioning::kMonth;
    case Granularity::Unit::kQuarter:
    case Granularity::Unit::kYear:
      return TimePartitioning::kYear;
  }
  return TimePartitioning::kDay;
}

std::optional<IcebergTarget> IcebergTargetOf(const v1::SupervisorSpec& spec,
                                             const DeepStorage& storage) {
  if (!spec.has_iceberg_table()) return std::nullopt;
  IcebergTarget t;
  t.datasource = spec.datasource();
  t.table_namespace = spec.iceberg_table().table_namespace();
  t.table_name = spec.iceberg_table().table_name();
  auto g = Granularity::Parse(spec.data_schema().granularity_spec().segment_granularity());
  t.partitioning = PartitioningFor(g.ok() ? *g : Granularity(Granularity::Unit::kHour));
  t.location_key = absl::StrCat("iceberg/", t.table_namespace, "/", t.table_name);
  t.location = storage.UriForKey(t.location_key);
  return t;
}

int64_t IcebergSnapshotId(const std::string& datasource, const std::string& sequence_name) {
  const std::string digest =
      s3::Sha256Of(absl::StrCat("sluice snapshot\n", datasource, "\n", sequence_name));
  uint64_t id = 0;
  for (int i = 0; i < 8; ++i) id = (id << 8) | static_cast<unsigned char>(digest[i]);
  id &= 0x7fffffffffffffffULL;
  return id == 0 ? 1 : static_cast<int64_t>(id);
}

absl::StatusOr<std::vector<iceberg::FieldSpec>> SegmentFields(const std::string& local_path) {
  segment::SegmentReader::Options options;
  options.verify_checksum = false;  // checked before (segment_copy_check.h)
  options.load_dictionaries = false;
  SLUICE_ASSIGN_OR_RETURN(auto reader, segment::SegmentReader::Open(local_path, options));
  std::vector<iceberg::FieldSpec> fields;
  fields.push_back({kIcebergTimeColumn, iceberg::FieldType::kTimestamptz, true});
  for (const std::string& d : reader->header().dimensions) {
    fields.push_back({d, iceberg::FieldType::kString, false});
  }
  for (const segment::MetricSpec& m : reader->header().schema.metrics) {
    fields.push_back({m.name,
                      segment::IsLongMetric(m.type) ? iceberg::FieldType::kLong
                                                    : iceberg::FieldType::kDouble,
                      false});
  }
  return fields;
}

namespace {

// A segment's columns, whole: the time (ms), each dimension's ids, each
// metric's values (longs or doubles by the metric's type).
struct SegmentColumns {
  std::vector<int64_t> times;
  std::vector<std::vector<uint32_t>> ids;
  std::vector<std::vector<int64_t>> longs;
  std::vector<std::vector<double>> doubles;
};

// Every column in one pass over the blocks: each block is decoded once (the
// reader's whole-column reads decode every column of every block per call,
// which for 1 + dimensions + metrics calls decoded the segment that many
// times). Values as ReadTimes, ReadDimensionIds, ReadLongMetric and
// ReadDoubleMetric give them.
absl::StatusOr<SegmentColumns> ReadSegmentColumns(segment::SegmentReader& reader) {
  const size_t rows = static_cast<size_t>(reader.num_rows());
  const size_t dims = reader.header().dimensions.size();
  const std::vector<segment::MetricSpec>& metrics = reader.header().schema.metrics;
  SegmentColumns out;
  out.times.reserve(rows);
  out.ids.resize(dims);
  for (std::vector<uint32_t>& ids : out.ids) ids.reserve(rows);
  out.longs.resize(metrics.size());
  out.doubles.resize(metrics.size());
  for (size_t m = 0; m < metrics.size(); ++m) {
    if (segment::IsLongMetric(metrics[m].type)) {
      out.longs[m].reserve(rows);
    } else {
      out.doubles[m].reserve(rows);
    }
  }
  segment::DecodedBlock block;
  for (size_t b = 0; b < reader.num_blocks(); ++b) {
    SLUICE_RETURN_IF_ERROR(reader.ReadBlock(b, &block));
    out.times.insert(out.times.end(), block.times.begin(), block.times.end());
    for (size_t d = 0; d < dims; ++d) {
      out.ids[d].insert(out.ids[d].end(), block.ids[d].begin(), block.ids[d].end());
    }
    for (size_t m = 0; m < metrics.size(); ++m) {
      if (segment::IsLongMetric(metrics[m].type)) {
        out.longs[m].insert(out.longs[m].end(), block.longs[m].begin(), block.longs[m].end());
      } else if (!block.exact[m].empty()) {
        for (const auto& e : block.exact[m]) out.doubles[m].push_back(e.Round());
      } else {
        out.doubles[m].insert(out.doubles[m].end(), block.doubles[m].begin(),
                              block.doubles[m].end());
      }
    }
  }
  return out;
}

// The rows `picked` of `values` (all of them, moved, when `picked` is null).
template <typename T>
std::vector<T> Pick(std::vector<T>& values, const std::vector<uint32_t>* picked) {
  if (picked == nullptr) return std::move(values);
  std::vector<T> out;
  out.reserve(picked->size());
  for (uint32_t r : *picked) out.push_back(values[r]);
  return out;
}

}  // namespace

absl::StatusOr<std::vector<SegmentDataFile>> SegmentToDataFiles(const std::string& local_path,
                                                                const iceberg::AppendPlan& plan) {
  segment::SegmentReader::Options options;
  options.verify_checksum = false;  // checked before (segment_copy_check.h)
  SLUICE_ASSIGN_OR_RETURN(auto reader, segment::SegmentReader::Open(local_path, options));
  const uint64_t rows = reader->num_rows();
  SLUICE_ASSIGN_OR_RETURN(SegmentColumns columns_of, ReadSegmentColumns(*reader));
  // Rows by partition, each in the segment's order; a segment within one
  // partition (the usual case: the table's own granularity) lists no rows,
  // its columns go to the writer whole.
  const std::optional<TimePartitioning> transform = TransformOf(plan.partition_spec_json);
  std::vector<int32_t> partition_of(rows);
  bool one_partition = true;
  for (uint64_t r = 0; r < rows; ++r) {
    partition_of[r] = transform ? PartitionOf(*transform, columns_of.times[r]) : 0;
    one_partition = one_partition && partition_of[r] == partition_of[0];
  }
  std::map<int32_t, std::vector<uint32_t>> by_partition;
  if (one_partition) {
    if (rows > 0) by_partition[partition_of[0]];
  } else {
    for (uint64_t r = 0; r < rows; ++r) {
      by_partition[partition_of[r]].push_back(static_cast<uint32_t>(r));
    }
  }
  // A dimension goes to the writer as the segment's dictionary and ids: id
  // 0 (null) gets an unused entry of its own, id i > 0 is dictionary entry
  // i - 1.
  std::vector<std::vector<absl::string_view>> dictionaries;
  for (size_t d = 0; d < reader->header().dimensions.size(); ++d) {
    std::vector<absl::string_view> dictionary = {absl::string_view()};
    dictionary.insert(dictionary.end(), reader->dictionary(d).begin(),
                      reader->dictionary(d).end());
    dictionaries.push_back(std::move(dictionary));
  }
  const std::vector<segment::MetricSpec>& metrics = reader->header().schema.metrics;
  std::vector<SegmentDataFile> out;
  for (auto& [partition, rows_of] : by_partition) {
    const std::vector<uint32_t>* picked = one_partition ? nullptr : &rows_of;
    const uint64_t file_rows = one_partition ? rows : rows_of.size();
    std::vector<iceberg::Column> columns;
    std::vector<int64_t> micros = Pick(columns_of.times, picked);
    for (int64_t& t : micros) t *= 1000;
    columns.push_back(iceberg::Int64Column(kIcebergTimeColumn, std::move(micros)));
    for (size_t d = 0; d < columns_of.ids.size(); ++d) {
      std::vector<uint32_t> ids = Pick(columns_of.ids[d], picked);
      bool any_null = false;
      for (uint32_t id : ids) any_null |= id == 0;
      std::vector<uint8_t> validity;
      if (any_null) {
        validity.reserve(ids.size());
        for (uint32_t id : ids) validity.push_back(id != 0 ? 1 : 0);
      }
      columns.push_back(iceberg::DictionaryStringColumn(reader->header().dimensions[d],
                                                        dictionaries[d], std::move(ids),
                                                        std::move(validity)));
    }
    for (size_t m = 0; m < metrics.size(); ++m) {
      if (segment::IsLongMetric(metrics[m].type)) {
        columns.push_back(
            iceberg::Int64Column(metrics[m].name, Pick(columns_of.longs[m], picked)));
      } else {
        columns.push_back(
            iceberg::DoubleColumn(metrics[m].name, Pick(columns_of.doubles[m], picked)));
      }
    }
    SLUICE_ASSIGN_OR_RETURN(iceberg::WrittenDataFile file,
                            iceberg::WriteParquetDataFile(plan, columns, file_rows));
    out.push_back(SegmentDataFile{partition, std::move(file)});
  }
  return out;
}

namespace {

// The local copies of the segments (the files themselves for a local deep
// storage), removed when done.
class LocalCopies {
 public:
  explicit LocalCopies(std::string scratch_dir) : scratch_dir_(std::move(scratch_dir)) {}
  ~LocalCopies() {
    for (const std::string& path : downloaded_) RemoveAll(path).IgnoreError();
  }
  absl::StatusOr<std::string> Get(DeepStorage* storage, const std::string& uri) {
    SLUICE_ASSIGN_OR_RETURN(std::string local, storage->LocalPathForRead(uri, scratch_dir_));
    if (absl::StartsWith(local, scratch_dir_ + "/") && local != uri &&
        absl::StrCat("file://", local) != uri) {
      downloaded_.push_back(local);
    }
    return local;
  }

 private:
  const std::string scratch_dir_;
  std::vector<std::string> downloaded_;
};

absl::StatusOr<StagedIcebergCommit> Stage(DeepStorage* storage, const std::string& scratch_dir,
                                          const IcebergTarget& target,
                                          const std::optional<std::string>& base,
                                          const IcebergCommitInput& input) {
  StagedIcebergCommit out;
  out.base = base;
  out.snapshot_id = IcebergSnapshotId(target.datasource, input.sequence_name);
  // The document the append is planned on.
  std::string metadata;
  if (base.has_value()) {
    SLUICE_ASSIGN_OR_RETURN(metadata, ReadUri(storage, scratch_dir, *base));
  } else {
    iceberg::NewTableOptions table;
    table.table_uuid = UuidFrom(absl::StrCat("sluice table\n", target.QualifiedName(), "\n",
                                             target.datasource, "\n", input.sequence_name));
    table.location = target.location;
    table.last_updated_ms = input.now_ms;
    table.fields = {{kIcebergTimeColumn, iceberg::FieldType::kTimestamptz, true}};
    table.time_column = kIcebergTimeColumn;
    table.partitioning = target.partitioning;
    table.properties = {{"sluice.datasource", target.datasource}};
    SLUICE_ASSIGN_OR_RETURN(metadata, iceberg::NewTableMetadata(table));
  }

  // The fields the segments bring, in order (new ones evolve the schema).
  LocalCopies copies(scratch_dir);
  std::vector<std::string> locals;
  std::vector<iceberg::FieldSpec> fields = {
      {kIcebergTimeColumn, iceberg::FieldType::kTimestamptz, true}};
  for (const v1::SegmentDescriptor& segment : input.segments) {
    SLUICE_ASSIGN_OR_RETURN(std::string local, copies.Get(storage, segment.path()));
    SLUICE_ASSIGN_OR_RETURN(std::vector<iceberg::FieldSpec> more, SegmentFields(local));
    locals.push_back(std::move(local));
    for (iceberg::FieldSpec& f : more) {
      bool known = false;
      for (const iceberg::FieldSpec& have : fields) known = known || have.name == f.name;
      if (!known) fields.push_back(std::move(f));
    }
  }
  SLUICE_ASSIGN_OR_RETURN(iceberg::AppendPlan plan, iceberg::PlanAppend(metadata, fields));

  iceberg::SnapshotCommit commit;
  std::vector<iceberg::ManifestEntry> entries;
  std::vector<std::pair<std::string, std::string>> stored_files;  // uri, SHA-256
  for (size_t i = 0; i < input.segments.size(); ++i) {
    SLUICE_ASSIGN_OR_RETURN(std::vector<SegmentDataFile> files,
                            SegmentToDataFiles(locals[i], plan));
    for (SegmentDataFile& f : files) {
      // Short (S3-compatible stores that name files after keys have limits):
      // the partition, a digest of the segment id (two segments may hold
      // equal rows) and of the bytes.
      const std::string key = IcebergDataFileKey(target, f.partition_value,
                                                 input.segments[i].id(), f.file.bytes);
      SLUICE_ASSIGN_OR_RETURN(std::string uri, PutIcebergFile(storage, scratch_dir, key, f.file.bytes));
      stored_files.emplace_back(uri, s3::Sha256Of(f.file.bytes));
      commit.AddDataFile(f.file.file);
      out.records += f.file.file.record_count;
      ++out.data_files;
      entries.push_back(iceberg::ManifestEntry{uri, std::move(f.file.file)});
    }
  }
  const std::string stem = IcebergShortDigest(input.sequence_name);
  std::vector<iceberg::ManifestFile> manifests;
  if (!entries.empty()) {
    // Named by a digest of its bytes, written once for the name and once
    // with it (the ManifestFile the list records carries the path).
    SLUICE_ASSIGN_OR_RETURN(iceberg::WrittenManifest probe,
                            iceberg::WriteManifest(plan, out.snapshot_id, "m.avro", entries));
    const std::string key = absl::StrCat(target.location_key, "/metadata/", stem, "-",
                                         IcebergShortDigest(probe.bytes), "-m0.avro");
    SLUICE_ASSIGN_OR_RETURN(
        iceberg::WrittenManifest manifest,
        iceberg::WriteManifest(plan, out.snapshot_id, storage->UriForKey(key), entries));
    SLUICE_RETURN_IF_ERROR(PutIcebergFile(storage, scratch_dir, key, manifest.bytes).status());
    manifests.push_back(manifest.file);
  }
  std::optional<std::string> parent_list;
  if (plan.parent_manifest_list.has_value()) {
    SLUICE_ASSIGN_OR_RETURN(parent_list, ReadUri(storage, scratch_dir, *plan.parent_manifest_list));
  }
  std::optional<absl::string_view> parent_view;
  if (parent_list.has_value()) parent_view = *parent_list;
  SLUICE_ASSIGN_OR_RETURN(
      std::string probe_list,
      iceberg::WriteManifestList(plan, out.snapshot_id, "l.avro", parent_view, manifests));
  const std::string list_key = absl::StrCat(target.location_key, "/metadata/snap-",
                                            out.snapshot_id, "-", IcebergShortDigest(probe_list), ".avro");
  SLUICE_ASSIGN_OR_RETURN(std::string list,
                          iceberg::WriteManifestList(plan, out.snapshot_id,
                                                     storage->UriForKey(list_key), parent_view,
                                                     manifests));
  SLUICE_ASSIGN_OR_RETURN(std::string list_uri, PutIcebergFile(storage, scratch_dir, list_key, list));

  commit.snapshot_id = out.snapshot_id;
  commit.timestamp_ms = input.now_ms;
  commit.manifest_list = list_uri;
  commit.summary = input.kafka_ranges;
  commit.summary["sluice.datasource"] = target.datasource;
  commit.summary["sluice.sequence"] = input.sequence_name;
  // Offset resets since the table's last snapshot of this datasource.
  int64_t newest = 0;
  for (const IcebergCommitInput::OffsetReset& r : input.offset_resets) newest = std::max(newest, r.id);
  const std::optional<int64_t> through = RecordedResetsThrough(metadata, target.datasource);
  if (through.has_value()) {
    int listed = 0, omitted = 0;
    for (const IcebergCommitInput::OffsetReset& r : input.offset_resets) {
      if (r.id <= *through) continue;
      if (listed < kMaxResetsPerSnapshot) {
        commit.summary[absl::StrCat("sluice.offset-reset.", r.id)] = r.description;
        ++listed;
      } else {
        ++omitted;
      }
    }
    if (omitted > 0) commit.summary["sluice.offset-resets.omitted"] = absl::StrCat(omitted);
    newest = std::max(newest, *through);
  }
  commit.summary["sluice.offset-resets.through"] = absl::StrCat(newest);
  commit.previous_metadata_location = base;
  SLUICE_ASSIGN_OR_RETURN(std::string next, iceberg::AppendSnapshot(metadata, plan, commit));
  const std::string key = IcebergMetadataKey(target, base, next);
  SLUICE_ASSIGN_OR_RETURN(out.metadata_location, PutIcebergFile(storage, scratch_dir, key, next));
  SLUICE_RETURN_IF_ERROR(VerifyStoredIcebergDataFiles(storage, scratch_dir, stored_files));
  return out;
}

}  // namespace

absl::StatusOr<StagedIcebergCommit> StageIcebergCommit(DeepStorage* storage,
                                                       const std::string& scratch_dir,
                                                       const IcebergTarget& target,
                                                       const std::optional<std::string>& base,
                                                       const IcebergCommitInput& input) {
  absl::StatusOr<StagedIcebergCommit> staged = Stage(storage, scratch_dir, target, base, input);
  if (!staged.ok()) return AsPrecondition(staged.status(), target);
  return staged;
}

absl::Status PutStagedIcebergFiles(DeepStorage* storage, const std::string& scratch_dir,
                                   const IcebergTarget& target,
                                   const std::vector<std::pair<std::string, std::string>>& files) {
  const std::string location_prefix = storage->UriForKey(target.location_key) + "/";
  for (const auto& [uri, bytes] : files) {
    if (uri.rfind(location_prefix, 0) != 0) {
      return absl::InternalError(absl::StrCat("staged file ", uri, " is outside the table"));
    }
    const std::string key =
        absl::StrCat(target.location_key, "/", uri.substr(location_prefix.size()));
    SLUICE_RETURN_IF_ERROR(PutIcebergFile(storage, scratch_dir, key, bytes).status());
  }
  return absl::OkStatus();
}

}  // namespace sluice::supervisor
