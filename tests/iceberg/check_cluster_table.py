"""Reads the Iceberg table a running sluice cluster commits, with readers
sluice did not write, and compares it with what the cluster says natively
(iceberg_cluster_test.cc writes EXPECTED):

  check_cluster_table.py STORE EXPECTED.json

STORE is the supervisor's SQLite file, or a SQLAlchemy URL of its PostgreSQL
store (postgresql+psycopg2://...).

EXPECTED also says how to reach the files: the warehouse, the catalog
properties (S3 endpoint and keys for a table on S3) and, for DuckDB, the
local path of each location prefix. The process-level fault scenarios
(tests/fault/iceberg_faults_test.cc) use it too, with optional keys:
"metadata_location" (as the supervisor reports it: the catalog's must be
the same), "schema", "topic", "end_offsets" (per
partition, instead of "end_offset" for all), "added" (absent: not checked),
"orphan_metadata" (documents staged by a publish the fault interrupted,
with a copy of each taken at the fault: none is in the table's metadata
chain, and its snapshot is in the table once, committed afterwards),
"min_restaged_sequences" (sequences with several staged documents in deep
storage, unless "orphan_files_removed", the supervisor's count of swept
unreferenced files, is above 0).

- pyiceberg's SqlCatalog on the supervisor's metadata store (SQLite or
  PostgreSQL) loads
  sluice.<table>; a full scan has the native segments' row count, the sum
  of the count metric is every record produced (once), the sum of "added" is
  what was produced;
- one snapshot per committed sequence, in commit order, each naming its
  sequence and its Kafka range per partition (sluice.kafka.<topic>.<p>):
  the ranges are the commit log's and contiguous from 0 to the end;
- pruning: a scan for one hour's rows plans only that hour's files;
- every file the table references exists (metadata log, manifest lists,
  manifests, data files);
- DuckDB's read_parquet of the current snapshot's data files agrees.

Exits non-zero with the first mismatch.
"""
import datetime
import json
import os
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


# The in-process cluster's table (iceberg_cluster_test.cc).
DEFAULT_SCHEMA = [["__time", "timestamptz"], ["page", "string"], ["channel", "string"],
                  ["count", "long"], ["added", "long"]]


def load(store, expected):
    name = expected["table"]
    uri = store if "://" in store else f"sqlite:///{store}"
    catalog = SqlCatalog("sluice", uri=uri, warehouse=expected["warehouse"],
                         **expected["catalog_properties"])
    check("namespaces", [tuple(n) for n in catalog.list_namespaces()], [("sluice",)])
    check("tables", [tuple(t) for t in catalog.list_tables("sluice")], [("sluice", name)])
    table = catalog.load_table(f"sluice.{name}")
    if "metadata_location" in expected:
        check("the catalog's metadata location is the one the supervisor reports",
              table.metadata_location, expected["metadata_location"])
    return table


def main(store, expected_path):
    with open(expected_path) as f:
        expected = json.load(f)
    name = expected["table"]
    table = load(store, expected)

    check("schema", [[f.name, str(f.field_type)] for f in table.schema().fields],
          expected.get("schema", DEFAULT_SCHEMA))
    check("partition spec", [str(f.transform) for f in table.spec().fields], ["hour"])

    arrow = table.scan().to_arrow()
    check("rows (native segments' rows, rollup applied)", arrow.num_rows, expected["rows"])
    check("sum(count) (every record once)", sum(arrow.column("count").to_pylist()),
          expected["records"])
    if "added" in expected:
        check("rollup merged records", arrow.num_rows < expected["records"], True)
        check("sum(added)", sum(arrow.column("added").to_pylist()), expected["added"])

    # One append snapshot per committed sequence, in commit order, with its
    # ranges; a compaction's replace snapshots in between claim no records.
    snapshots = table.metadata.snapshots
    appends = [s for s in snapshots if s.summary.operation.value != "replace"]
    replaces = [s for s in snapshots if s.summary.operation.value == "replace"]
    got = [{"sequence": s.summary["sluice.sequence"],
            "ranges": {k: v for k, v in s.summary.additional_properties.items()
                       if k.startswith("sluice.kafka.")}} for s in appends]
    check("snapshots = commit log (sequence and Kafka ranges)", got, expected["sequences"])
    check("every snapshot names the datasource",
          {s.summary["sluice.datasource"] for s in snapshots}, {expected["datasource"]})
    topic = expected.get("topic", "wiki")
    ends = expected.get("end_offsets") or {
        str(p): expected["end_offset"] for p in range(expected["partitions"])}
    for p, end in sorted(ends.items()):
        key = f"sluice.kafka.{topic}.{p}"
        ranges = [tuple(int(x) for x in s.summary[key].split("-")) for s in snapshots
                  if key in s.summary.additional_properties]
        gaps = [(a, b) for a, b in zip(ranges, ranges[1:]) if a[1] != b[0]]
        check(f"partition {p}: ranges contiguous (no gap, no overlap) from 0 to {end}",
              (ranges[0][0], gaps, ranges[-1][1]), (0, [], end))
    # A replace snapshot holds what its parent held: sum(count) is the same
    # at both (no record lost or counted twice by a compaction).
    for r in replaces:
        before = sum(table.scan(snapshot_id=r.parent_snapshot_id).to_arrow()
                     .column("count").to_pylist())
        after = sum(table.scan(snapshot_id=r.snapshot_id).to_arrow().column("count").to_pylist())
        check(f"replace snapshot {r.snapshot_id} keeps its parent's sum(count)", after, before)
    if "min_replace_snapshots" in expected:
        check(f"at least {expected['min_replace_snapshots']} replace snapshot(s) (compactions)",
              len(replaces) >= expected["min_replace_snapshots"], True)
    check("current snapshot is the last", table.metadata.current_snapshot_id,
          snapshots[-1].snapshot_id)
    parents = [s.parent_snapshot_id for s in snapshots]
    check("each snapshot's parent is the one before", parents,
          [None] + [s.snapshot_id for s in snapshots[:-1]])

    # Every file the table references exists.
    prefixes = expected["local_prefixes"]
    chain = [m.metadata_file for m in table.metadata.metadata_log] + [table.metadata_location]
    referenced = list(chain) + [s.manifest_list for s in snapshots]
    manifests = {m.manifest_path for s in snapshots for m in s.manifests(table.io)}
    referenced += sorted(manifests)
    data_files = {t.file.file_path for t in table.scan().plan_files()}
    referenced += sorted(data_files)
    missing = [f for f in referenced if not os.path.exists(local_path(f, prefixes))]
    check(f"every referenced file exists ({len(chain)} metadata documents, "
          f"{len(snapshots)} manifest lists, {len(manifests)} manifests, "
          f"{len(data_files)} current data files)", missing, [])

    # Documents staged by a publish a fault interrupted (the newest when it
    # hit; one of them may have been committed just before, by a replica
    # that staged the same version): those outside the table's metadata
    # chain are the interrupted ones, at least one; the sequence of each is
    # in the table once (same snapshot id: derived from the datasource and
    # the sequence), committed afterwards.
    outside = []
    for orphan in expected.get("orphan_metadata", []):
        with open(orphan["copy"]) as f:
            doc = json.load(f)
        staged = next(s for s in doc["snapshots"] if s["snapshot-id"] == doc["current-snapshot-id"])
        sequence = staged["summary"]["sluice.sequence"]
        committed = orphan["location"] in chain
        if not committed:
            outside.append(orphan["location"])
        print(f"ok  staged at the fault: {orphan['location']} "
              f"({'committed before it' if committed else 'in no snapshot chain'})")
        check(f"its sequence {sequence} is in the table once, as snapshot {staged['snapshot-id']}",
              [s.snapshot_id for s in snapshots
               if s.summary.additional_properties.get("sluice.sequence") == sequence],
              [staged["snapshot-id"]])
    if expected.get("orphan_metadata"):
        check("documents staged at the fault and never committed", len(outside) >= 1, True)
    metadata_dir = local_path(table.metadata_location, prefixes).rsplit("/", 1)[0]
    if os.path.isdir(metadata_dir):
        on_disk = {f for f in os.listdir(metadata_dir) if f.endswith(".metadata.json")}
        unreferenced = on_disk - {c.rsplit("/", 1)[1] for c in chain}
        print(f"ok  metadata documents no snapshot references (staged, not committed): "
              f"{len(unreferenced)}")
        # Sequences staged more than once (a replica race, a retry after a
        # fault): distinct documents whose own snapshot names the sequence.
        staged = {}
        for f in on_disk:
            with open(os.path.join(metadata_dir, f)) as doc_file:
                doc = json.load(doc_file)
            own = [s for s in doc.get("snapshots", [])
                   if s["snapshot-id"] == doc.get("current-snapshot-id")]
            if own and "sluice.sequence" in own[0]["summary"]:  # an append's document
                staged.setdefault(own[0]["summary"]["sluice.sequence"], []).append(f)
        restaged = sorted(q for q, docs in staged.items() if len(docs) > 1)
        # A sweeper may have removed unreferenced documents already (the
        # supervisor counts them): then fewer are left to see.
        swept = expected.get("orphan_files_removed", 0)
        check(f"at least {expected.get('min_restaged_sequences', 0)} sequences staged more "
              f"than once (they are {restaged}; {swept} unreferenced files swept)",
              len(restaged) >= expected.get("min_restaged_sequences", 0) or swept > 0, True)

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
    if "added" in expected:
        check("DuckDB count(*), sum(count), sum(added)",
              duckdb.sql(f"""SELECT count(*), sum("count"), sum(added) FROM read_parquet([{paths}])""")
              .fetchall()[0],
              (expected["rows"], expected["records"], expected["added"]))
    else:
        check("DuckDB count(*), sum(count)",
              duckdb.sql(f"""SELECT count(*), sum("count") FROM read_parquet([{paths}])""")
              .fetchall()[0],
              (expected["rows"], expected["records"]))


if __name__ == "__main__":
    main(*sys.argv[1:3])
