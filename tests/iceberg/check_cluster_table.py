"""Reads the Iceberg table a running sluice cluster commits, with readers
sluice did not write, and compares it with what the cluster says natively
(iceberg_cluster_test.cc writes EXPECTED):

  check_cluster_table.py STORE EXPECTED.json

STORE is the supervisor's SQLite file, or a SQLAlchemy URL of its PostgreSQL
store (postgresql+psycopg2://...).

EXPECTED also says how to reach the files: the warehouse, the catalog
properties (S3 endpoint and keys for a table on S3) and, for DuckDB, the
local path of each location prefix.

- pyiceberg's SqlCatalog on the supervisor's metadata store (SQLite or
  PostgreSQL) loads
  sluice.<table>; a full scan has the native segments' row count, the sum
  of the count metric is every record produced (once), the sum of "added" is
  what was produced;
- one snapshot per committed sequence, in commit order, each naming its
  sequence and its Kafka range per partition (sluice.kafka.<topic>.<p>):
  the ranges are the commit log's and contiguous from 0 to the end;
- pruning: a scan for one hour's rows plans only that hour's files;
- DuckDB's read_parquet of the current snapshot's data files agrees.

Exits non-zero with the first mismatch.
"""
import datetime
import json
import sys

import duckdb
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.expressions import And, GreaterThanOrEqual, LessThan


def check(what, got, want):
    if got != want:
        sys.exit(f"check_cluster_table: {what}: got {got!r}, want {want!r}")
    print(f"ok  {what}: {got!r}")


def local_path(location, prefixes):
    for prefix, local in prefixes.items():
        if location.startswith(prefix):
            return local + location[len(prefix):]
    sys.exit(f"check_cluster_table: no local path for {location}")


def main(store, expected_path):
    with open(expected_path) as f:
        expected = json.load(f)
    uri = store if "://" in store else f"sqlite:///{store}"
    catalog = SqlCatalog("sluice", uri=uri, warehouse=expected["warehouse"],
                         **expected["catalog_properties"])
    check("namespaces", [tuple(n) for n in catalog.list_namespaces()], [("sluice",)])
    name = expected["table"]
    check("tables", [tuple(t) for t in catalog.list_tables("sluice")], [("sluice", name)])
    table = catalog.load_table(f"sluice.{name}")

    check("schema", [(f.name, str(f.field_type)) for f in table.schema().fields],
          [("__time", "timestamptz"), ("page", "string"), ("channel", "string"),
           ("count", "long"), ("added", "long")])
    check("partition spec", [str(f.transform) for f in table.spec().fields], ["hour"])

    arrow = table.scan().to_arrow()
    check("rows (native segments' rows, rollup applied)", arrow.num_rows, expected["rows"])
    check("rollup merged records", arrow.num_rows < expected["records"], True)
    check("sum(count) (every record once)", sum(arrow.column("count").to_pylist()),
          expected["records"])
    check("sum(added)", sum(arrow.column("added").to_pylist()), expected["added"])

    # One snapshot per committed sequence, in commit order, with its ranges.
    snapshots = table.metadata.snapshots
    got = [{"sequence": s.summary["sluice.sequence"],
            "ranges": {k: v for k, v in s.summary.additional_properties.items()
                       if k.startswith("sluice.kafka.")}} for s in snapshots]
    check("snapshots = commit log (sequence and Kafka ranges)", got, expected["sequences"])
    check("every snapshot names the datasource",
          {s.summary["sluice.datasource"] for s in snapshots}, {expected["datasource"]})
    for p in range(expected["partitions"]):
        key = f"sluice.kafka.wiki.{p}"
        ranges = [tuple(int(x) for x in s.summary[key].split("-")) for s in snapshots
                  if key in s.summary.additional_properties]
        contiguous = all(a[1] == b[0] for a, b in zip(ranges, ranges[1:]))
        check(f"partition {p}: ranges contiguous from 0 to {expected['end_offset']}",
              (ranges[0][0], contiguous, ranges[-1][1]), (0, True, expected["end_offset"]))
    check("current snapshot is the last", table.metadata.current_snapshot_id,
          snapshots[-1].snapshot_id)
    parents = [s.parent_snapshot_id for s in snapshots]
    check("each snapshot's parent is the one before", parents,
          [None] + [s.snapshot_id for s in snapshots[:-1]])

    # Pruning by the hour partition (and bounds): one hour's files only.
    times = sorted(arrow.column("__time").to_pylist())
    first = times[0].replace(minute=0, second=0, microsecond=0)
    after = first + datetime.timedelta(hours=1)
    hour = And(GreaterThanOrEqual("__time", first.isoformat()),
               LessThan("__time", after.isoformat()))
    all_files = list(table.scan().plan_files())
    hour_files = list(table.scan(row_filter=hour).plan_files())
    in_hour = sum(1 for t in times if t < after)
    check("rows of the first hour through a filtered scan",
          table.scan(row_filter=hour).to_arrow().num_rows, in_hour)
    print(f"ok  files planned for the first hour: {len(hour_files)} of {len(all_files)}")
    if times[-1] >= after:
        check("a filtered scan skips the other hours' files", len(hour_files) < len(all_files),
              True)

    check("data files are under the warehouse",
          all(t.file.file_path.startswith(expected["warehouse"] + f"/iceberg/sluice/{name}/data/")
              for t in all_files), True)
    paths = ", ".join(
        "'" + local_path(t.file.file_path, expected["local_prefixes"]).replace("'", "''") + "'"
        for t in all_files)
    check("DuckDB count(*), sum(count), sum(added)",
          duckdb.sql(f"""SELECT count(*), sum("count"), sum(added) FROM read_parquet([{paths}])""")
          .fetchall()[0],
          (expected["rows"], expected["records"], expected["added"]))


if __name__ == "__main__":
    main(*sys.argv[1:3])
