// Where scripts/install_iceberg_readers.sh put the Iceberg readers' venvs
// (pyiceberg and DuckDB; DuckDB's iceberg extension in a venv of its own):
// $SLUICE_ICEBERG_READERS_CACHE, else ~/.cache/sluice/iceberg-readers.
#ifndef SLUICE_TESTS_TESTING_ICEBERG_READERS_H_
#define SLUICE_TESTS_TESTING_ICEBERG_READERS_H_

#include <string>

namespace sluice::testing {

std::string IcebergReadersCache();
// <cache>/venv/bin/python: pyiceberg, pyarrow, DuckDB.
std::string IcebergReadersPython();

}  // namespace sluice::testing

#endif  // SLUICE_TESTS_TESTING_ICEBERG_READERS_H_
