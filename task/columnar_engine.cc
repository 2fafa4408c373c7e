#include "task/columnar_engine.h"

#include <glog/logging.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/segment/incremental_index.h"
#include "common/segment/row_parser.h"
#include "common/segment/row_transform.h"
#include "common/segment/schema_proto.h"
#include "common/segment/segment_builder.h"
#include "common/segment/segment_reader.h"
#include "common/segment/segment_verify.h"
#include "common/segment/spill.h"
#include "common/status_macros.h"
#include "common/stream_partitions.h"

namespace sluice::task {
namespace {

class ColumnarRow final : public ParsedRow {
 public:
  segment::InputRow& input() { return input_; }
  const segment::InputRow& input() const { return input_; }
  void set_timestamp() {
    timestamp_ms_ = input_.timestamp_ms;
    thrown_away_ = input_.thrown_away;
  }
  // The hashes IncrementalIndex::PrefetchRow gave for the row's current
  // contents (ColumnarIndex::Prefetch), or null: none since the last parse.
  const uint64_t* hashes() const { return hashed_ ? hashes_.data() : nullptr; }
  void Hash(const segment::IncrementalIndex& index) const {
    if (hashes_.size() < input_.dims.size()) hashes_.resize(input_.dims.size());
    hashed_ = index.PrefetchRow(input_, hashes_.data());
  }
  // Before each parse: the row's contents change.
  void DropHashes() { hashed_ = false; }

 private:
  segment::InputRow input_;
  // A cache of what the row holds, filled by a const Prefetch.
  mutable std::vector<uint64_t> hashes_;
  mutable bool hashed_ = false;
};

class ColumnarParser final : public RowParser {
 public:
  explicit ColumnarParser(std::unique_ptr<segment::RowParser> parser)
      : parser_(std::move(parser)) {}

  const ParsedRow* Parse(absl::string_view value, RowParseError* error) override {
    row_.DropHashes();
    return Done(parser_->Parse(value, &row_.input()), error);
  }

  const ParsedRow* Parse(absl::string_view value, const segment::RecordEnvelope& envelope,
                         RowParseError* error) override {
    row_.DropHashes();
    return Done(parser_->Parse(value, envelope, &row_.input()), error);
  }

  bool ReadsEnvelopeColumnText(absl::string_view name) const override {
    return parser_->ReadsColumnText(name);
  }

 private:
  const ParsedRow* Done(segment::ParseError parse_error, RowParseError* error) {
    if (!parse_error.ok()) {
      error->kind = segment::ParseErrorKindName(parse_error.kind);
      error->message = std::move(parse_error.message);
      return nullptr;
    }
    row_.set_timestamp();
    return &row_;
  }

  std::unique_ptr<segment::RowParser> parser_;
  ColumnarRow row_;
};

// The file's records of each partition (its provenance rows) must be those
// the task counted (info.provenance): both come from the same records, so a
// difference is a bug, not bad data.
absl::Status CheckCountedRecords(const SegmentBuildInfo& info,
                                 const std::vector<segment::PartitionRange>& in_file) {
  for (const v1::PartitionRange& range : info.provenance.ranges()) {
    int64_t records = 0;
    for (const segment::PartitionRange& r : in_file) {
      if (r.partition == range.partition()) records += static_cast<int64_t>(r.rows);
    }
    if (records != range.rows()) {
      return absl::InternalError(absl::StrCat("segment ", info.segment_id, " holds ", records,
                                              " records of partition ", range.partition(),
                                              " but the task counted ", range.rows()));
    }
  }
  return absl::OkStatus();
}

// Builds segment `info` at `out_path` from `spills` and `live` (may be
// null), then reads it back with the reader everyone else uses before the
// file goes anywhere: a file the reader refuses is never pushed. The blocks
// and dictionaries are decoded here unless the supervisor decodes them
// before the commit (once is enough: ~1,700 instructions a record for the
// blocks, ~140 for the dictionaries); the checksum is read back either way.
absl::StatusOr<BuiltSegment> BuildColumnar(const segment::Schema& schema,
                                           const std::vector<std::string>& spills,
                                           const segment::IncrementalIndex* live,
                                           const SegmentBuildInfo& info,
                                           const std::string& out_path) {
  segment::BuildOptions options;
  options.path = out_path;
  options.schema = schema;
  segment::SegmentMetadata& metadata = options.metadata;
  metadata.datasource = info.datasource;
  metadata.interval.start_ms = info.interval.start_ms();
  metadata.interval.end_ms = info.interval.end_ms();
  metadata.version = info.version;
  metadata.partition_num = info.partition_num;
  metadata.segment_id = info.segment_id;
  // A topic-pattern task's file names the pattern ("topicPattern:..."); its
  // ranges are keyed by stream partition, named in the descriptor.
  metadata.provenance.topic = StreamNameOf(info.provenance);
  for (const v1::PartitionRange& r : info.provenance.ranges()) {
    segment::PartitionRange range;
    range.partition = r.partition();
    range.start_offset = r.start_offset();
    range.end_offset = r.end_offset();
    metadata.provenance.ranges.push_back(range);
  }
  options.spill_paths = spills;
  options.live_index = live;
  SLUICE_ASSIGN_OR_RETURN(segment::SegmentInfo built, segment::BuildSegment(options));
  segment::ExpectedSegment expected;
  expected.segment_id = info.segment_id;
  expected.num_rows = static_cast<int64_t>(built.num_rows);
  expected.size_bytes = static_cast<int64_t>(built.size_bytes);
  expected.checksum = built.checksum;
  // Without the decode: the checksum, header and directory (the bytes on
  // disk are the bytes written); the supervisor decodes the rest, the
  // dictionaries included, before it commits the segment.
  const segment::VerifyDepth depth = info.read_back_decodes_blocks
                                         ? segment::VerifyDepth::kFull
                                         : segment::VerifyDepth::kChecksum;
  if (absl::Status verified = segment::VerifySegmentFile(out_path, expected, depth);
      !verified.ok()) {
    return absl::InternalError(
        absl::StrCat("segment ", info.segment_id, " does not read back: ", verified.message()));
  }
  BuiltSegment out;
  out.rows = static_cast<int64_t>(built.num_rows);
  out.size_bytes = static_cast<int64_t>(built.size_bytes);
  out.checksum = built.checksum;
  SLUICE_RETURN_IF_ERROR(CheckCountedRecords(info, built.provenance.ranges));
  return out;
}

class ColumnarIndex;
std::unique_ptr<ColumnarIndex> NewColumnarIndex(
    const segment::Schema& schema, const segment::Interval& interval,
    std::shared_ptr<segment::SegmentDimensions> dimensions);

class ColumnarIndex final : public SegmentIndex {
 public:
  ColumnarIndex(std::unique_ptr<segment::IncrementalIndex> index,
                std::shared_ptr<segment::SegmentDimensions> dimensions)
      : index_(std::move(index)), dimensions_(std::move(dimensions)) {}

  absl::Status Add(const ParsedRow& row, int32_t partition, int64_t offset) override {
    const ColumnarRow& columnar = static_cast<const ColumnarRow&>(row);
    return index_->Add(columnar.input(), partition, offset, columnar.hashes());
  }
  void Prefetch(const ParsedRow& row) override {
    static_cast<const ColumnarRow&>(row).Hash(*index_);
  }
  std::unique_ptr<SegmentIndex> Successor() const override {
    return NewColumnarIndex(index_->schema(), index_->interval(), dimensions_);
  }
  int64_t rows() const override { return index_->rows(); }
  int64_t estimated_bytes() const override { return index_->estimated_bytes(); }

  absl::StatusOr<int64_t> Spill(const std::string& directory, const std::string& name) override {
    // The segment library names the file <name>.spill itself.
    if (!absl::EndsWith(name, segment::kSpillSuffix)) {
      return absl::InvalidArgumentError(
          absl::StrCat("spill name ", name, " does not end in ", segment::kSpillSuffix));
    }
    segment::SpillOptions options;
    options.directory = directory;
    options.name = std::string(absl::StripSuffix(name, segment::kSpillSuffix));
    SLUICE_ASSIGN_OR_RETURN(segment::SpillDescriptor spill,
                            segment::PersistIndex(index_.get(), options));
    return static_cast<int64_t>(spill.rows);
  }

  absl::StatusOr<BuiltSegment> Build(const std::vector<std::string>& spills,
                                     const SegmentBuildInfo& info,
                                     const std::string& out_path) const override {
    if (index_->empty()) return absl::FailedPreconditionError("the index is empty");
    return BuildColumnar(index_->schema(), spills, index_.get(), info, out_path);
  }

 private:
  std::unique_ptr<segment::IncrementalIndex> index_;
  // The segment's discovered dimension names, shared with its other indexes.
  std::shared_ptr<segment::SegmentDimensions> dimensions_;
};

std::unique_ptr<ColumnarIndex> NewColumnarIndex(
    const segment::Schema& schema, const segment::Interval& interval,
    std::shared_ptr<segment::SegmentDimensions> dimensions) {
  segment::IndexOptions options;
  options.schema = schema;
  options.interval = interval;
  options.segment_dimensions = dimensions;
  absl::StatusOr<std::unique_ptr<segment::IncrementalIndex>> index =
      segment::IncrementalIndex::Create(options);
  // Only an invalid schema or an empty interval fail; neither can happen.
  CHECK(index.ok()) << index.status();
  return std::make_unique<ColumnarIndex>(*std::move(index), std::move(dimensions));
}

class ColumnarEngine final : public SegmentEngine {
 public:
  ColumnarEngine(segment::Schema schema, segment::RowTransform transform)
      : schema_(std::move(schema)), transform_(std::move(transform)) {}

  std::unique_ptr<RowParser> NewParser() override {
    absl::StatusOr<std::unique_ptr<segment::RowParser>> parser =
        segment::RowParser::Create(schema_, transform_);
    // The schema was validated when the engine was made.
    CHECK(parser.ok()) << parser.status();
    return std::make_unique<ColumnarParser>(*std::move(parser));
  }

  std::unique_ptr<SegmentIndex> NewIndex(const v1::Interval& interval) override {
    segment::Interval range;
    range.start_ms = interval.start_ms();
    range.end_ms = interval.end_ms();
    return NewColumnarIndex(schema_, range, std::make_shared<segment::SegmentDimensions>());
  }

  absl::StatusOr<std::unique_ptr<SegmentIndex>> RestoreIndex(
      const v1::Interval& interval, const std::vector<std::string>& spill_paths) override {
    segment::Interval range;
    range.start_ms = interval.start_ms();
    range.end_ms = interval.end_ms();
    auto dimensions = std::make_shared<segment::SegmentDimensions>();
    if (schema_.discover_dimensions()) {
      // The names already in the segment count against its bound (taken even
      // past it: then no new name is admitted).
      for (const std::string& path : spill_paths) {
        absl::StatusOr<std::vector<std::string>> names = segment::ReadSpillDimensions(path);
        if (!names.ok()) {
          return Annotate(names.status(),
                          absl::StrCat("reading the discovered dimensions of spill ", path));
        }
        for (const std::string& name : *names) dimensions->Add(name);
      }
    }
    return std::unique_ptr<SegmentIndex>(NewColumnarIndex(schema_, range, std::move(dimensions)));
  }

  absl::StatusOr<BuiltSegment> BuildSegment(const std::vector<std::string>& spills,
                                            const SegmentBuildInfo& info,
                                            const std::string& out_path) override {
    return BuildColumnar(schema_, spills, nullptr, info, out_path);
  }

  absl::StatusOr<BuiltSegment> DescribeBuilt(const std::string& path, const SegmentBuildInfo& info,
                                             bool check) override {
    segment::SegmentReader::Options options;
    options.verify_checksum = check;
    options.load_dictionaries = check;
    absl::StatusOr<std::unique_ptr<segment::SegmentReader>> reader =
        segment::SegmentReader::Open(path, options);
    if (!reader.ok()) {
      return Annotate(reader.status(), absl::StrCat("reading segment ", info.segment_id, " back"));
    }
    const segment::FileHeader& header = (*reader)->header();
    if (header.kind != segment::FileKind::kSegment ||
        header.metadata.segment_id != info.segment_id) {
      return absl::DataLossError(absl::StrCat(path, " is not a file of segment ", info.segment_id));
    }
    if (check) {
      segment::ExpectedSegment expected;
      expected.segment_id = info.segment_id;
      SLUICE_RETURN_IF_ERROR(segment::VerifyOpenSegment(
          **reader, path, expected,
          info.read_back_decodes_blocks ? segment::VerifyDepth::kFull
                                        : segment::VerifyDepth::kStructure));
    }
    BuiltSegment out;
    out.rows = static_cast<int64_t>(header.num_rows);
    out.size_bytes = static_cast<int64_t>((*reader)->file_size());
    out.checksum = (*reader)->checksum();
    SLUICE_RETURN_IF_ERROR(CheckCountedRecords(info, header.metadata.provenance.ranges));
    return out;
  }

 private:
  const segment::Schema schema_;
  // The transformSpec (empty without one).
  const segment::RowTransform transform_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<SegmentEngine>> NewColumnarEngine(const v1::DataSchema& schema) {
  SLUICE_ASSIGN_OR_RETURN(segment::Schema converted, segment::SchemaFromProto(schema));
  SLUICE_ASSIGN_OR_RETURN(segment::RowTransform transform,
                          segment::RowTransform::Create(schema.transform_spec(),
                                                        "dataSchema.transformSpec",
                                                        converted.timestamp_column));
  // Fail here, not in NewParser, on a schema the parser refuses.
  SLUICE_RETURN_IF_ERROR(segment::RowParser::Create(converted, transform).status());
  return std::unique_ptr<SegmentEngine>(
      new ColumnarEngine(std::move(converted), std::move(transform)));
}

}  // namespace sluice::task
