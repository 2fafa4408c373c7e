"""Reads a table that went through appends, a compaction's replace and
snapshot expiry (iceberg_compaction_test.cc writes EXPECTED) with readers
sluice did not write:

  check_compacted_table.py STORE EXPECTED.json

STORE is the SQLite file holding the SQL catalog (catalog "sluice").
EXPECTED: "warehouse", "local_prefix" (location prefix -> local directory),
"snapshots": [{"id", "operation", "count", "files"}] in order, where
"count" is the sum of the count metric the committed sequences up to that
snapshot hold (every record once) and "files" the data files a scan of it
plans.

- pyiceberg's SqlCatalog loads sluice.wiki; the table's snapshots are the
  expected ones, with their operations;
- at every snapshot, a scan's sum(count) is what the committed sequences
  hold and it plans the expected number of files (fewer after the
  replace);
- at the current snapshot, DuckDB's read_parquet of the planned files sums
  to the same;
- every file the table references exists (metadata log, manifest lists,
  manifests, the current data files).

Exits non-zero with the first mismatch.
"""
import json
import os
import sys

import duckdb
from pyiceberg.catalog.sql import SqlCatalog


def check(what, got, want):
    if got != want:
        sys.exit(f"check_compacted_table: {what}: got {got!r}, want {want!r}")
    print(f"ok  {what}: {got!r}")


def main(store, expected_path):
    with open(expected_path) as f:
        expected = json.load(f)
    catalog = SqlCatalog("sluice", uri=f"sqlite:///{store}", warehouse=expected["warehouse"])
    table = catalog.load_table("sluice.wiki")
    snapshots = table.metadata.snapshots
    check("snapshots (id, operation)",
          [(s.snapshot_id, s.summary.operation.value) for s in snapshots],
          [(s["id"], s["operation"]) for s in expected["snapshots"]])
    for want in expected["snapshots"]:
        scan = table.scan(snapshot_id=want["id"])
        files = [t.file.file_path for t in scan.plan_files()]
        arrow = scan.to_arrow()
        check(f"snapshot {want['id']} ({want['operation']}): sum(count), data files",
              (sum(arrow.column("count").to_pylist()), len(files)),
              (want["count"], want["files"]))
    prefix, local = next(iter(expected["local_prefix"].items()))

    def path(location):
        if not location.startswith(prefix):
            sys.exit(f"check_compacted_table: {location} is not under {prefix}")
        return local + location[len(prefix):]

    files = [t.file.file_path for t in table.scan().plan_files()]
    total = duckdb.sql(
        f"SELECT sum(count) FROM read_parquet({[path(f) for f in files]})").fetchall()[0][0]
    check("DuckDB read_parquet sum(count) of the current files",
          total, expected["snapshots"][-1]["count"])
    referenced = [m.metadata_file for m in table.metadata.metadata_log]
    referenced.append(table.metadata_location)
    referenced += [s.manifest_list for s in snapshots]
    referenced += sorted({m.manifest_path for s in snapshots for m in s.manifests(table.io)})
    referenced += files
    check(f"every referenced file exists ({len(referenced)})",
          [f for f in referenced if not os.path.exists(path(f))], [])


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
