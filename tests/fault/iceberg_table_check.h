// The end of an Iceberg fault scenario (ScenarioOptions::iceberg_table),
// after FaultScenario::Finish: the table read by pyiceberg and DuckDB
// (tests/iceberg/check_cluster_table.py, the readers' venv of
// scripts/install_iceberg_readers.sh) and compared with the native side:
// rows = the used segments' rows, sum(count) = every parsed record once, one
// snapshot per committed sequence with the commit log's Kafka ranges,
// contiguous from 0 to the committed offsets, every referenced file present.
//
//   std::vector<StagedMetadata> staged;  // while the supervisor is down
//   ASSERT_OK(CopyNewestMetadata(*s, &staged));
//   ...restart, Finish...
//   ASSERT_OK(CheckIcebergTable(*s, {.staged_at_fault = staged}));
#ifndef SLUICE_TESTS_FAULT_ICEBERG_TABLE_CHECK_H_
#define SLUICE_TESTS_FAULT_ICEBERG_TABLE_CHECK_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "tests/fault/fault_scenario.h"

namespace sluice::fault {

// A metadata document of the table, and a copy of it taken at the fault.
struct StagedMetadata {
  std::string location;  // file://...
  std::string copy;      // a local path
};

// The table's metadata documents with the highest version now, copied
// under <root>/staged-metadata/. Called while every supervisor is stopped
// at kAfterIcebergStage: the snapshot it staged and did not commit is among
// them (with, at times, the document of a replica's publish of the same
// sequence that committed that version just before). NOT_FOUND if the
// table has no document yet.
absl::Status CopyNewestMetadata(FaultScenario& s, std::vector<StagedMetadata>* out);

struct IcebergTableCheck {
  // The newest documents when a fault hit (CopyNewestMetadata): at least
  // one is in no snapshot's chain (staged, never committed), and the
  // sequence of each is in the table once.
  std::vector<StagedMetadata> staged_at_fault;
  // At least this many sequences staged more than once (distinct metadata
  // documents in deep storage naming the same sequence): a replica race or
  // a retry after a fault actually happened. Not checked once the
  // supervisor reports unreferenced files swept (status
  // orphan_files_removed): the evidence may be gone.
  int min_restaged_sequences = 0;
  // At least this many replace snapshots (compactions); each keeps its
  // parent's sum(count) whatever this says.
  int min_replace_snapshots = 0;
};

// Runs the readers against the table: pyiceberg's SqlCatalog on the
// supervisors' store (SQLite, or PostgreSQL through psycopg2), which must
// point at the metadata location the (leading) supervisor reports.
absl::Status CheckIcebergTable(FaultScenario& s, const IcebergTableCheck& check = {});

}  // namespace sluice::fault

#endif  // SLUICE_TESTS_FAULT_ICEBERG_TABLE_CHECK_H_
