#include "tools/segment/segment_fixture.h"

#include <cstdlib>

#include "common/segment/incremental_index.h"
#include "common/segment/row_parser.h"
#include "common/segment/segment_builder.h"
#include "common/segment/spill.h"

namespace sluice {
namespace tools {
namespace {

using segment::BuildOptions;
using segment::IncrementalIndex;
using segment::InputRow;
using segment::Interval;
using segment::MetricType;
using segment::RowParser;
using segment::Schema;
using segment::SpillOptions;

Schema FixtureSchema(bool rollup) {
  Schema s;
  s.dimensions = {"channel", "page"};
  s.metrics = {{MetricType::kCount, "count", ""},
               {MetricType::kLongSum, "added", "added"},
               {MetricType::kDoubleSum, "delta", "delta"}};
  s.query_granularity = Granularity(Granularity::Unit::kMinute);
  s.rollup = rollup;
  return s;
}

void Check(const absl::Status& s) {
  if (!s.ok()) {
    fprintf(stderr, "fixture: %s\n", s.ToString().c_str());
    std::abort();
  }
}

}  // namespace

Fixture MakeFixture(const std::string& dir) {
  Fixture f;
  f.records = {
      R"({"timestamp":"2026-11-30T02:15:44.123Z","channel":"#en","page":"Café \"Zürich\"","added":12,"delta":1.5})",
      R"({"timestamp":"2026-11-30T02:15:59.000Z","channel":"#en","page":"Café \"Zürich\"","added":3,"delta":0.25})",
      R"({"timestamp":"2026-11-30T02:16:00.000Z","channel":"#de","page":"Berlin","added":-4,"delta":-4})",
      R"({"timestamp":"2026-11-30T02:17:30.000Z","channel":"#de","added":1,"delta":1e-320})",
      R"({"timestamp":"2026-11-30T02:17:31.000Z","page":"line\nbreak","added":0,"delta":0.1})",
  };
  const Interval interval{1796004000000, 1796007600000};
  for (bool rollup : {true, false}) {
    const Schema schema = FixtureSchema(rollup);
    auto parser = RowParser::Create(schema);
    Check(parser.status());
    auto index = IncrementalIndex::Create({schema, interval});
    Check(index.status());
    InputRow row;
    for (size_t i = 0; i < f.records.size(); ++i) {
      Check((*parser)->Parse(f.records[i], &row).ToStatus());
      Check((*index)->Add(row, 0, static_cast<int64_t>(i)));
    }
    if (!rollup) {
      SpillOptions options;
      options.directory = dir;
      options.name = "spill-0001";
      options.caller_metadata = R"({"next":{"0":5}})";
      auto spill = segment::PersistIndex(index->get(), options);
      Check(spill.status());
      f.spill = spill->path;
      continue;
    }
    BuildOptions build;
    build.path = dir + "/wiki.segment";
    build.schema = schema;
    build.metadata.datasource = "wiki";
    build.metadata.interval = interval;
    build.metadata.version = "2026-11-30T02:00:05.000Z";
    build.metadata.partition_num = 0;
    build.metadata.segment_id =
        "wiki_2026-11-30T02:00:00.000Z_2026-11-30T03:00:00.000Z_2026-11-30T02:00:05.000Z";
    build.metadata.provenance.topic = "edits";
    build.metadata.provenance.ranges = {{0, 0, 5, 0}, {1, 40, 40, 0}};
    build.live_index = index->get();
    auto info = segment::BuildSegment(build);
    Check(info.status());
    f.segment = info->path;
  }
  return f;
}

}  // namespace tools
}  // namespace sluice
