// Writes small segment and spill files (rollup on and off, listed and
// discovered dimensions, each codec) into a directory: the seed corpus of
// segment_reader_fuzzer (fuzz/corpus/segment_reader_fuzzer).
//
//   bazel run //fuzz:make_segment_corpus -- $PWD/fuzz/corpus/segment_reader_fuzzer
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/segment/incremental_index.h"
#include "common/segment/segment_builder.h"
#include "common/segment/spill.h"
#include "common/segment/test_rows.h"

using namespace sluice::segment;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_segment_corpus DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  int written = 0;
  for (int variant = 0; variant < 8; ++variant) {
    const bool rollup = variant & 1;
    const bool discover = variant & 2;
    const Compression compression = variant & 4 ? Compression::kLz4 : Compression::kZstd;
    const Schema schema = testing::TestSchema(rollup, discover);
    const std::vector<testing::OwnedRow> rows =
        testing::RandomRows(variant + 1, 3 + variant * 5, schema, 2);
    auto index = IncrementalIndex::Create({schema, testing::TestInterval()});
    if (!index.ok()) return 1;
    for (const testing::OwnedRow& row : rows) {
      if (!(*index)->Add(testing::ToInputRow(row, schema), row.partition, row.offset).ok()) return 1;
    }
    BuildOptions build;
    build.path = absl::StrCat(dir, "/segment-", variant);
    build.schema = schema;
    build.compression = variant == 7 ? Compression::kNone : compression;
    build.rows_per_block = 4;  // several blocks even for a few rows
    build.metadata = {"wiki", testing::TestInterval(), "v1", 0, "wiki_v1_0",
                      Provenance{"t", {{0, 0, 1000, 0}, {1, 0, 1000, 0}}}};
    build.live_index = index->get();
    auto built = BuildSegment(build);
    if (!built.ok()) {
      std::fprintf(stderr, "%s\n", built.status().ToString().c_str());
      return 1;
    }
    ++written;
    SpillOptions spill;
    spill.directory = dir;
    spill.name = absl::StrCat("spill-", variant);
    spill.caller_metadata = "restore point";
    auto persisted = PersistIndex(index->get(), spill);
    if (!persisted.ok()) {
      std::fprintf(stderr, "%s\n", persisted.status().ToString().c_str());
      return 1;
    }
    ++written;
  }
  std::printf("%d files in %s\n", written, dir.c_str());
  return 0;
}
