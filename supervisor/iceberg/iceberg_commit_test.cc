#include "supervisor/iceberg/iceberg_commit.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/open_deep_storage.h"
#include "common/segment/incremental_index.h"
#include "common/segment/segment_builder.h"
#include "common/segment/segment_reader.h"
#include "common/segment/test_rows.h"
#include "common/status_macros.h"
#include "iceberg/table_metadata.h"
#include "iceberg/table_reader.h"
#include "supervisor/allocator.h"
#include "supervisor/clock.h"
#include "supervisor/iceberg/iceberg_table_activity.h"
#include "supervisor/publisher.h"
#include "supervisor/store/metadata_store.h"
#include "supervisor/testing/segment_files.h"
#include "supervisor/testing/test_util.h"

namespace sluice::supervisor {
namespace {

std::string LocalPath(const std::string& uri) {
  return absl::StartsWith(uri, "file://") ? uri.substr(7) : uri;
}

int64_t LittleEndian(const std::string& bytes) {
  int64_t v = 0;
  std::memcpy(&v, bytes.data(), sizeof(v));
  return v;
}

// The append plan of a new table of `fields` partitioned by `partitioning`.
absl::StatusOr<iceberg::AppendPlan> PlanForNewTable(const std::vector<iceberg::FieldSpec>& fields,
                                                    iceberg::TimePartitioning partitioning) {
  iceberg::NewTableOptions table;
  table.table_uuid = "5d0e6a2c-3f41-4b7a-9c8e-1a2b3c4d5e6f";
  table.location = "file:///t";
  table.fields = fields;
  table.time_column = "__time";
  table.partitioning = partitioning;
  SLUICE_ASSIGN_OR_RETURN(std::string metadata, iceberg::NewTableMetadata(table));
  return iceberg::PlanAppend(metadata, fields);
}

// Deep storage whose copies of Parquet files lose their last byte after the
// push reported success (a store that damages what it was given).
class DamagingParquetStorage : public DeepStorage {
 public:
  explicit DamagingParquetStorage(DeepStorage* inner) : inner_(inner) {}
  absl::StatusOr<std::string> Push(const std::string& local_path,
                                   const std::string& key) override {
    SLUICE_ASSIGN_OR_RETURN(std::string uri, inner_->Push(local_path, key));
    if (absl::EndsWith(key, ".parquet")) {
      SLUICE_ASSIGN_OR_RETURN(std::string bytes, ReadFile(LocalPath(uri)));
      bytes.pop_back();
      SLUICE_RETURN_IF_ERROR(WriteFileAtomically(LocalPath(uri), bytes));
    }
    return uri;
  }
  absl::StatusOr<DeepStorageFileInfo> Stat(const std::string& uri) override {
    return inner_->Stat(uri);
  }
  absl::StatusOr<std::string> LocalPathForRead(const std::string& uri,
                                               const std::string& scratch_dir) override {
    return inner_->LocalPathForRead(uri, scratch_dir);
  }
  absl::Status Delete(const std::string& uri) override { return inner_->Delete(uri); }
  absl::StatusOr<std::vector<DeepStorageFileInfo>> List(const std::string& prefix) override {
    return inner_->List(prefix);
  }
  std::string UriForKey(const std::string& key) const override { return inner_->UriForKey(key); }

 private:
  DeepStorage* inner_;
};

class IcebergCommitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = testing::OpenTestStore(dir_.path());
    auto deep = OpenDeepStorage("file://" + dir_.path() + "/deep");
    ASSERT_TRUE(deep.ok()) << deep.status();
    deep_ = std::move(*deep);
    ASSERT_TRUE(MakeDirs(dir_.path() + "/work").ok());
    spec_ = testing::TestSpec("wiki");
    spec_.mutable_iceberg_table()->set_table_namespace("sluice");
    spec_.mutable_iceberg_table()->set_table_name("wiki");
    ASSERT_TRUE(store_
                    ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                      SLUICE_RETURN_IF_ERROR(txn.InsertSpec("wiki", spec_, false, 1).status());
                      return txn.RecordInitialOffsets("wiki", "events", {{0, 0}}, 1).status();
                    })
                    .ok());
  }

  Publisher MakePublisher(std::function<void()> after_stage = nullptr) {
    PublisherOptions options;
    options.store = store_.get();
    options.deep_storage = deep_.get();
    options.clock = &clock_;
    options.scratch_dir = dir_.path() + "/scratch";
    options.after_iceberg_stage = std::move(after_stage);
    options.iceberg_activity = &activity_;
    options.metrics = &metrics_;
    return Publisher(options);
  }

  // A real segment of `sequence` (hour 0 of the test rows) covering
  // partition 0's [start, end), pushed to deep storage.
  v1::SegmentDescriptor PushedSegment(const std::string& sequence, int64_t start, int64_t end) {
    Allocator allocator({store_.get(), &clock_});
    v1::AllocateSegmentRequest request;
    request.set_datasource("wiki");
    request.set_task_id("task-a");
    request.set_sequence_name(sequence);
    request.mutable_interval()->set_start_ms(testing::SegmentHourStartMs());
    request.mutable_interval()->set_end_ms(testing::SegmentHourStartMs() + 3600000);
    auto allocated = allocator.Allocate(request, Granularity(Granularity::Unit::kHour));
    EXPECT_TRUE(allocated.ok()) << allocated.status();
    auto pushed = testing::PushSegment(deep_.get(), dir_.path() + "/work",
                                       absl::StrCat("wiki/", sequence, "/seg.sluice"), "wiki",
                                       *allocated, static_cast<int>(end - start),
                                       {{0, {start, end}}});
    EXPECT_TRUE(pushed.ok()) << pushed.status();
    v1::SegmentDescriptor s = *pushed;
    s.set_sequence_name(sequence);
    return s;
  }

  static v1::PublishSegmentsRequest Request(const std::string& sequence, int64_t start,
                                            int64_t end,
                                            std::vector<v1::SegmentDescriptor> segments) {
    v1::PublishSegmentsRequest r;
    r.set_datasource("wiki");
    r.set_task_id("task-a");
    r.set_sequence_name(sequence);
    ToProto(OffsetMap{{0, start}}, r.mutable_start_offsets());
    ToProto(OffsetMap{{0, end}}, r.mutable_end_offsets());
    for (auto& s : segments) *r.add_segments() = s;
    return r;
  }

  std::optional<std::string> CatalogLocation() {
    std::optional<std::string> location;
    EXPECT_TRUE(store_
                    ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                      SLUICE_ASSIGN_OR_RETURN(location,
                                              txn.IcebergMetadataLocation("sluice", "wiki"));
                      return absl::OkStatus();
                    })
                    .ok());
    return location;
  }

  OffsetMap Offsets() {
    OffsetMap offsets;
    EXPECT_TRUE(store_
                    ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                      SLUICE_ASSIGN_OR_RETURN(offsets, txn.CommittedOffsets("wiki"));
                      return absl::OkStatus();
                    })
                    .ok());
    return offsets;
  }

  // Another writer's append (pyiceberg, an engine): a snapshot of its own on
  // top of whatever the catalog points at, swapped in with the catalog's
  // compare-and-swap.
  absl::Status AnotherWriterAppends(const std::string& name, int64_t start, int64_t end) {
    const std::optional<std::string> current = CatalogLocation();
    IcebergTarget target = *IcebergTargetOf(spec_, *deep_);
    target.datasource = "someone-else";
    IcebergCommitInput input;
    input.sequence_name = name;
    input.segments = {PushedSegment(name, start, end)};
    input.now_ms = clock_.NowMs();
    SLUICE_ASSIGN_OR_RETURN(StagedIcebergCommit staged,
                            StageIcebergCommit(deep_.get(), dir_.path() + "/scratch", target,
                                               current, input));
    other_snapshots_.push_back(staged.snapshot_id);
    return store_->InTransaction([&](StoreTxn& txn) -> absl::Status {
      SLUICE_ASSIGN_OR_RETURN(bool swapped, txn.SwapIcebergMetadataLocation(
                                                "sluice", "wiki", current,
                                                staged.metadata_location));
      return swapped ? absl::OkStatus() : absl::AbortedError("lost");
    });
  }

  testing::TempDir dir_;
  FakeClock clock_;
  std::unique_ptr<MetadataStore> store_;
  std::unique_ptr<DeepStorage> deep_;
  v1::SupervisorSpec spec_;
  std::vector<int64_t> other_snapshots_;
  IcebergTableActivity activity_;
  metrics::Registry metrics_;
};

TEST(IcebergPartitioning, FollowsTheSegmentGranularity) {
  using G = Granularity::Unit;
  using P = iceberg::TimePartitioning;
  EXPECT_EQ(PartitioningFor(Granularity(G::kFifteenMinute)), P::kHour);
  EXPECT_EQ(PartitioningFor(Granularity(G::kHour)), P::kHour);
  EXPECT_EQ(PartitioningFor(Granularity(G::kSixHour)), P::kDay);
  EXPECT_EQ(PartitioningFor(Granularity(G::kDay)), P::kDay);
  EXPECT_EQ(PartitioningFor(Granularity(G::kMonth)), P::kMonth);
  EXPECT_EQ(PartitioningFor(Granularity(G::kYear)), P::kYear);
}

TEST_F(IcebergCommitTest, ASegmentBecomesADataFileWithItsRowsAndBounds) {
  const v1::SegmentDescriptor segment = PushedSegment("wiki_s_0", 0, 40);
  const std::string local = LocalPath(segment.path());
  auto fields = SegmentFields(local);
  ASSERT_TRUE(fields.ok()) << fields.status();
  auto plan = PlanForNewTable(*fields, iceberg::TimePartitioning::kDay);
  ASSERT_TRUE(plan.ok()) << plan.status();
  auto files = SegmentToDataFiles(local, *plan);
  ASSERT_TRUE(files.ok()) << files.status();
  ASSERT_EQ(files->size(), 1u);  // an hour segment lies in one day
  const iceberg::DataFile& file = (*files)[0].file.file;

  auto reader = segment::SegmentReader::Open(local);
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ(file.record_count, static_cast<int64_t>((*reader)->num_rows()));
  EXPECT_GT(file.record_count, 0);
  EXPECT_EQ(*file.partition_value, (*reader)->header().min_time / 86400000);
  const iceberg::Field* time = plan->schema.FindByName("__time");
  ASSERT_NE(time, nullptr);
  const iceberg::ColumnMetrics& t = file.columns.at(time->id);
  EXPECT_EQ(t.value_count, file.record_count);
  EXPECT_EQ(LittleEndian(*t.lower_bound), (*reader)->header().min_time * 1000);
  EXPECT_EQ(LittleEndian(*t.upper_bound), (*reader)->header().max_time * 1000);
  // Every dimension and metric of the segment is a column of the file.
  for (const std::string& d : (*reader)->header().dimensions) {
    const iceberg::Field* f = plan->schema.FindByName(d);
    ASSERT_NE(f, nullptr) << d;
    EXPECT_EQ(f->type, iceberg::FieldType::kString);
    EXPECT_EQ(file.columns.at(f->id).value_count, file.record_count);
  }
  for (const segment::MetricSpec& m : (*reader)->header().schema.metrics) {
    const iceberg::Field* f = plan->schema.FindByName(m.name);
    ASSERT_NE(f, nullptr) << m.name;
    EXPECT_EQ(f->type, segment::IsLongMetric(m.type) ? iceberg::FieldType::kLong
                                                     : iceberg::FieldType::kDouble);
    if (f->type == iceberg::FieldType::kLong) {
      auto values = (*reader)->ReadLongMetric(m.name);
      ASSERT_TRUE(values.ok());
      EXPECT_EQ(LittleEndian(*file.columns.at(f->id).lower_bound),
                *std::min_element(values->begin(), values->end()));
      EXPECT_EQ(LittleEndian(*file.columns.at(f->id).upper_bound),
                *std::max_element(values->begin(), values->end()));
    }
  }

  // Hour partitions of the same table: still one file (one hour segment).
  auto hourly = PlanForNewTable(*fields, iceberg::TimePartitioning::kHour);
  ASSERT_TRUE(hourly.ok());
  auto hour_files = SegmentToDataFiles(local, *hourly);
  ASSERT_TRUE(hour_files.ok()) << hour_files.status();
  EXPECT_EQ(hour_files->size(), 1u);
}

// A segment whose rows span two of the table's partitions (a table made
// with a finer granularity than the segment's) becomes one file per
// partition, each with exactly that partition's rows.
TEST_F(IcebergCommitTest, ASegmentSpanningPartitionsBecomesAFilePerPartition) {
  const segment::Schema schema = segment::testing::TestSchema(/*rollup=*/true, false);
  const segment::Interval hour = segment::testing::TestInterval();
  const segment::Interval two_hours{hour.start_ms, hour.end_ms + 3600000};
  std::vector<segment::testing::OwnedRow> rows =
      segment::testing::RandomRows(/*seed=*/7, 300, schema, /*partitions=*/1);
  for (size_t i = 0; i < rows.size(); i += 2) rows[i].time += 3600000;  // every other: hour 2
  auto index = segment::IncrementalIndex::Create({schema, two_hours});
  ASSERT_TRUE(index.ok()) << index.status();
  for (const segment::testing::OwnedRow& row : rows) {
    ASSERT_TRUE((*index)->Add(segment::testing::ToInputRow(row, schema), row.partition, row.offset)
                    .ok());
  }
  segment::BuildOptions build;
  build.path = dir_.path() + "/work/two-hours.seg";
  build.schema = schema;
  build.metadata.datasource = "wiki";
  build.metadata.interval = two_hours;
  build.metadata.segment_id = "wiki_two_hours";
  build.metadata.version = "v1";
  build.metadata.provenance.topic = "events";
  build.metadata.provenance.ranges.push_back({0, 100, 100 + static_cast<int64_t>(rows.size()), 0});
  build.live_index = index->get();
  build.rows_per_block = 64;  // columns come from several blocks
  auto built = segment::BuildSegment(build);
  ASSERT_TRUE(built.ok()) << built.status();

  auto fields = SegmentFields(build.path);
  ASSERT_TRUE(fields.ok()) << fields.status();
  auto plan = PlanForNewTable(*fields, iceberg::TimePartitioning::kHour);
  ASSERT_TRUE(plan.ok()) << plan.status();
  auto files = SegmentToDataFiles(build.path, *plan);
  ASSERT_TRUE(files.ok()) << files.status();
  ASSERT_EQ(files->size(), 2u);

  // The segment's rows per hour: count, sum of "added", time range, nulls
  // of "channel".
  auto reader = segment::SegmentReader::Open(build.path);
  ASSERT_TRUE(reader.ok());
  auto times = (*reader)->ReadTimes();
  auto added = (*reader)->ReadLongMetric("added");
  auto channel = (*reader)->ReadDimensionIds("channel");
  ASSERT_TRUE(times.ok() && added.ok() && channel.ok());
  struct Hour {
    int64_t rows = 0, nulls = 0, min = INT64_MAX, max = INT64_MIN;
    uint64_t added = 0;  // wrapping, as the reader sums (the rows hold extreme values)
  };
  std::map<int32_t, Hour> want;
  for (size_t r = 0; r < times->size(); ++r) {
    Hour& h = want[static_cast<int32_t>((*times)[r] / 3600000)];
    ++h.rows;
    h.added += static_cast<uint64_t>((*added)[r]);
    h.nulls += (*channel)[r] == 0;
    h.min = std::min(h.min, (*times)[r]);
    h.max = std::max(h.max, (*times)[r]);
  }
  ASSERT_EQ(want.size(), 2u);
  const iceberg::Field* time = plan->schema.FindByName("__time");
  const iceberg::Field* channel_field = plan->schema.FindByName("channel");
  ASSERT_TRUE(time != nullptr && channel_field != nullptr);
  for (const SegmentDataFile& f : *files) {
    ASSERT_EQ(want.count(f.partition_value), 1u) << f.partition_value;
    const Hour& h = want[f.partition_value];
    EXPECT_EQ(*f.file.file.partition_value, f.partition_value);
    EXPECT_EQ(f.file.file.record_count, h.rows);
    EXPECT_EQ(LittleEndian(*f.file.file.columns.at(time->id).lower_bound), h.min * 1000);
    EXPECT_EQ(LittleEndian(*f.file.file.columns.at(time->id).upper_bound), h.max * 1000);
    EXPECT_EQ(f.file.file.columns.at(channel_field->id).null_value_count, h.nulls);
    auto read = iceberg::ReadParquetFile(f.file.bytes, std::string("added"));
    ASSERT_TRUE(read.ok()) << read.status();
    EXPECT_EQ(read->rows, h.rows);
    EXPECT_EQ(static_cast<uint64_t>(*read->sum), h.added);
  }
}

TEST_F(IcebergCommitTest, EachPublishIsASnapshotSwappedInWithTheOffsets) {
  Publisher publisher = MakePublisher();
  EXPECT_FALSE(CatalogLocation().has_value());
  const v1::SegmentDescriptor first = PushedSegment("wiki_a_0", 0, 50);
  auto published = publisher.Publish(Request("wiki_a_0", 0, 50, {first}));
  ASSERT_TRUE(published.ok()) << published.status();
  const std::optional<std::string> v0 = CatalogLocation();
  ASSERT_TRUE(v0.has_value());
  EXPECT_TRUE(absl::StartsWith(
      *v0, absl::StrCat("file://", dir_.path(), "/deep/iceberg/sluice/wiki/metadata/00000-")))
      << *v0;
  EXPECT_EQ(Offsets(), (OffsetMap{{0, 50}}));
  v1::IcebergTableStatus status;
  activity_.Fill("wiki", &status);
  EXPECT_EQ(status.last_snapshot_id(), IcebergSnapshotId("wiki", "wiki_a_0"));
  EXPECT_EQ(status.last_commit_ms(), clock_.NowMs());
  EXPECT_EQ(status.last_commit_error(), "");

  // An empty sequence is a snapshot too: the Kafka ranges stay contiguous.
  clock_.Advance(absl::Seconds(1));
  ASSERT_TRUE(publisher.Publish(Request("wiki_a_1", 50, 60, {})).ok());
  clock_.Advance(absl::Seconds(1));
  const v1::SegmentDescriptor third = PushedSegment("wiki_a_2", 60, 100);
  ASSERT_TRUE(publisher.Publish(Request("wiki_a_2", 60, 100, {third})).ok());
  const std::optional<std::string> v2 = CatalogLocation();
  ASSERT_TRUE(v2.has_value());
  EXPECT_TRUE(absl::StrContains(*v2, "/metadata/00002-")) << *v2;

  auto json = ReadFile(LocalPath(*v2));
  ASSERT_TRUE(json.ok());
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(*json).get(doc), simdjson::SUCCESS);
  simdjson::dom::array snapshots = doc["snapshots"];
  ASSERT_EQ(snapshots.size(), 3u);
  std::vector<std::string> ranges;
  int64_t total = 0;
  for (simdjson::dom::element s : snapshots) {
    ranges.push_back(std::string(std::string_view(s["summary"]["sluice.kafka.events.0"])));
    EXPECT_EQ(std::string_view(s["summary"]["sluice.datasource"]), "wiki");
    total = std::stoll(std::string(std::string_view(s["summary"]["total-records"])));
  }
  EXPECT_EQ(ranges, (std::vector<std::string>{"0-50", "50-60", "60-100"}));
  EXPECT_EQ(total, first.num_rows() + third.num_rows());
  EXPECT_EQ(int64_t(doc["current-snapshot-id"]), IcebergSnapshotId("wiki", "wiki_a_2"));

  // A repeat commits nothing and writes no new snapshot.
  auto again = publisher.Publish(Request("wiki_a_2", 60, 100, {third}));
  EXPECT_EQ(again.status().code(), absl::StatusCode::kAborted);
  EXPECT_EQ(CatalogLocation(), v2);

  // Each snapshot staged once; each attempt's transaction timed (two per
  // snapshot: the one asking for the stage and the one swapping it in,
  // and the refused repeat).
  const std::string text = metrics_.Render();
  EXPECT_TRUE(absl::StrContains(
      text, "sluice_supervisor_iceberg_stage_seconds_count{datasource=\"wiki\"} 3"))
      << text;
  EXPECT_TRUE(absl::StrContains(
      text, "sluice_supervisor_publish_transaction_seconds_count{datasource=\"wiki\"} 7"))
      << text;
}

// An operator's reset of the offsets is recorded in the next snapshot, so
// the jump between two snapshots' ranges reads as a reset, not as loss.
TEST_F(IcebergCommitTest, OffsetResetsAreListedInTheNextSnapshot) {
  Publisher publisher = MakePublisher();
  ASSERT_TRUE(publisher.Publish(Request("wiki_r_0", 0, 50, {PushedSegment("wiki_r_0", 0, 50)}))
                  .ok());
  ASSERT_TRUE(store_
                  ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                    SLUICE_RETURN_IF_ERROR(
                        txn.RecordOffsetReset("wiki", 0, 50, 80, "operator reset", 1000));
                    return txn.SetCommittedOffsets("wiki", "events", {{0, 80}}, 1000);
                  })
                  .ok());
  ASSERT_TRUE(publisher.Publish(Request("wiki_r_1", 80, 100, {PushedSegment("wiki_r_1", 80, 100)}))
                  .ok());
  ASSERT_TRUE(publisher.Publish(Request("wiki_r_2", 100, 110, {})).ok());

  auto json = ReadFile(LocalPath(*CatalogLocation()));
  ASSERT_TRUE(json.ok());
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(*json).get(doc), simdjson::SUCCESS);
  simdjson::dom::array snapshots = doc["snapshots"];
  ASSERT_EQ(snapshots.size(), 3u);
  std::vector<std::string> through, listed;
  for (simdjson::dom::element s : snapshots) {
    through.push_back(std::string(std::string_view(s["summary"]["sluice.offset-resets.through"])));
    std::string_view reset;
    listed.push_back(s["summary"]["sluice.offset-reset.1"].get(reset) == simdjson::SUCCESS
                         ? std::string(reset)
                         : "");
  }
  EXPECT_EQ(through, (std::vector<std::string>{"0", "1", "1"}));
  EXPECT_EQ(listed[0], "");
  EXPECT_EQ(listed[1], "sluice.kafka.events.0 50 -> 80 at 1970-01-01T00:00:01.000Z: operator reset");
  EXPECT_EQ(listed[2], "");
}

TEST_F(IcebergCommitTest, AStaleStartCommitsNoSnapshot) {
  Publisher publisher = MakePublisher();
  ASSERT_TRUE(publisher.Publish(Request("wiki_b_0", 0, 50, {PushedSegment("wiki_b_0", 0, 50)}))
                  .ok());
  const std::optional<std::string> v0 = CatalogLocation();
  auto table_files = [&]() {
    int n = 0;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(
             dir_.path() + "/deep/iceberg/sluice/wiki")) {
      n += entry.is_regular_file() ? 1 : 0;
    }
    return n;
  };
  const int files = table_files();
  // Ahead of the stored offsets: refused, the table does not move, and
  // nothing was staged (the checks come first).
  auto ahead = publisher.Publish(Request("wiki_b_2", 70, 80, {PushedSegment("wiki_b_2", 70, 80)}));
  EXPECT_EQ(ahead.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(CatalogLocation(), v0);
  EXPECT_EQ(Offsets(), (OffsetMap{{0, 50}}));
  EXPECT_EQ(table_files(), files);
}

TEST_F(IcebergCommitTest, ASwapThatMissesIsStagedAgainOnTopOfTheOtherWriter) {
  Publisher first = MakePublisher();
  ASSERT_TRUE(
      first.Publish(Request("wiki_c_0", 0, 50, {PushedSegment("wiki_c_0", 0, 50)})).ok());
  int stages = 0;
  Publisher publisher = MakePublisher([&]() {
    if (++stages == 1) {
      absl::Status other = AnotherWriterAppends("other_0", 1000, 1010);
      EXPECT_TRUE(other.ok()) << other;
    }
  });
  const v1::SegmentDescriptor ours = PushedSegment("wiki_c_1", 50, 90);
  auto published = publisher.Publish(Request("wiki_c_1", 50, 90, {ours}));
  ASSERT_TRUE(published.ok()) << published.status();
  EXPECT_EQ(stages, 2);
  EXPECT_EQ(Offsets(), (OffsetMap{{0, 90}}));

  auto json = ReadFile(LocalPath(*CatalogLocation()));
  ASSERT_TRUE(json.ok());
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(*json).get(doc), simdjson::SUCCESS);
  simdjson::dom::array snapshots = doc["snapshots"];
  ASSERT_EQ(snapshots.size(), 3u);
  std::vector<int64_t> ids;
  for (simdjson::dom::element s : snapshots) ids.push_back(int64_t(s["snapshot-id"]));
  ASSERT_EQ(other_snapshots_.size(), 1u);
  EXPECT_EQ(ids, (std::vector<int64_t>{IcebergSnapshotId("wiki", "wiki_c_0"), other_snapshots_[0],
                                       IcebergSnapshotId("wiki", "wiki_c_1")}));
  // Ours builds on the other writer's snapshot: both stay.
  EXPECT_EQ(int64_t(snapshots.at(2)["parent-snapshot-id"]), other_snapshots_[0]);
}

// A data file whose stored copy differs from what was written is never
// committed: the publish fails naming it, no offsets move, no snapshot.
TEST_F(IcebergCommitTest, ADataFileDamagedInDeepStorageIsNotCommitted) {
  const v1::SegmentDescriptor segment = PushedSegment("wiki_x_0", 0, 50);
  DamagingParquetStorage damaging(deep_.get());
  PublisherOptions options;
  options.store = store_.get();
  options.deep_storage = &damaging;
  options.clock = &clock_;
  options.scratch_dir = dir_.path() + "/scratch";
  Publisher publisher(options);
  auto published = publisher.Publish(Request("wiki_x_0", 0, 50, {segment}));
  EXPECT_EQ(published.status().code(), absl::StatusCode::kUnavailable) << published.status();
  EXPECT_TRUE(absl::StrContains(published.status().message(), "does not hold the bytes written"))
      << published.status();
  EXPECT_TRUE(absl::StrContains(published.status().message(), ".parquet")) << published.status();
  EXPECT_FALSE(CatalogLocation().has_value());
  EXPECT_EQ(Offsets(), (OffsetMap{{0, 0}}));
}

TEST_F(IcebergCommitTest, ATableThatKeepsMovingIsABoundedRetryThenUnavailable) {
  Publisher first = MakePublisher();
  ASSERT_TRUE(
      first.Publish(Request("wiki_d_0", 0, 50, {PushedSegment("wiki_d_0", 0, 50)})).ok());
  int stages = 0;
  Publisher publisher = MakePublisher([&]() {
    ++stages;
    EXPECT_TRUE(AnotherWriterAppends(absl::StrCat("other_", stages), 1000 + 10 * stages,
                                     1010 + 10 * stages)
                    .ok());
  });
  auto published =
      publisher.Publish(Request("wiki_d_1", 50, 90, {PushedSegment("wiki_d_1", 50, 90)}));
  EXPECT_EQ(published.status().code(), absl::StatusCode::kUnavailable) << published.status();
  EXPECT_TRUE(absl::StrContains(published.status().message(), "sluice.wiki"))
      << published.status();
  EXPECT_EQ(stages, kIcebergCommitAttempts);
  // The status shows why the datasource's last publish did not commit.
  v1::IcebergTableStatus status;
  activity_.Fill("wiki", &status);
  EXPECT_EQ(status.last_snapshot_id(), IcebergSnapshotId("wiki", "wiki_d_0"));
  EXPECT_TRUE(absl::StrContains(status.last_commit_error(), "moved by another writer"))
      << status.last_commit_error();
  // Nothing of ours committed; every other writer's snapshot stays.
  EXPECT_EQ(Offsets(), (OffsetMap{{0, 50}}));
  auto json = ReadFile(LocalPath(*CatalogLocation()));
  ASSERT_TRUE(json.ok());
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(*json).get(doc), simdjson::SUCCESS);
  EXPECT_EQ(simdjson::dom::array(doc["snapshots"]).size(), 1u + kIcebergCommitAttempts);
}

}  // namespace
}  // namespace sluice::supervisor
