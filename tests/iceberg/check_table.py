"""Reads the table write_test_table wrote with readers sluice did not write:
pyiceberg (its SQL catalog on the same SQLite file, its scan planning and
pyarrow reads) and DuckDB (read_parquet of the data files).

  check_table.py DIR first    after `write_test_table create DIR`: checks the
      two snapshots, then pyiceberg itself appends a snapshot (add_files) (another
      writer, for `write_test_table append` to build on)
  check_table.py DIR final    after `write_test_table append DIR`: checks
      every snapshot, pyiceberg's included
  check_table.py DIR replaced after `write_test_table replace DIR`: the
      append that won the race (1005) and the replace snapshot (1006) hold
      the same rows and sums; the replace plans only the compacted file for
      its day, is reported as operation replace

Exits non-zero with the first mismatch.
"""
import datetime
import sys

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.expressions import And, EqualTo, GreaterThanOrEqual, LessThan

UTC = datetime.timezone.utc


def check(what, got, want):
    if got != want:
        sys.exit(f"check_table: {what}: got {got!r}, want {want!r}")
    print(f"ok  {what}: {got!r}")


def load(directory):
    catalog = SqlCatalog("sluice", uri=f"sqlite:///{directory}/catalog.db", warehouse=f"file://{directory}")
    return catalog.load_table("default.wiki")


def rows(table, snapshot_id=None, row_filter=None):
    scan = table.scan(snapshot_id=snapshot_id) if row_filter is None else table.scan(
        snapshot_id=snapshot_id, row_filter=row_filter)
    return scan.to_arrow().sort_by("__time").to_pylist()


def duckdb_totals(paths):
    listed = ", ".join("'" + p.removeprefix("file://").replace("'", "''") + "'" for p in paths)
    return duckdb.sql(
        f"SELECT count(*), sum(added), count(DISTINCT page) FROM read_parquet([{listed}], union_by_name = true)"
    ).fetchall()[0]


def first(directory):
    table = load(directory)
    snapshots = table.metadata.snapshots
    check("snapshot ids", [s.snapshot_id for s in snapshots], [1001, 1002])
    check("summary of snapshot 2", snapshots[1].summary["sluice.kafka.ranges"], "wiki/0:5-7")
    check("schema fields", [(f.field_id, f.name) for f in table.schema().fields],
          [(1, "__time"), (2, "page"), (3, "tags"), (5, "added"), (6, "ratio"), (7, "country")])
    check("partition spec", str(table.spec().fields[0].transform), "day")

    all_rows = rows(table)
    check("row count", len(all_rows), 7)
    check("pages", [r["page"] for r in all_rows], ["Apple", "Banana", None, "Mango", "Zucchini", "Kiwi", "Lime"])
    check("tags", [r["tags"] for r in all_rows],
          [["fruit", "red"], None, [], ["fruit"], ["vegetable", "green"], None, None])
    check("added", [r["added"] for r in all_rows], [10, 20, 30, 40, 50, 60, 70])
    check("country (absent before the evolution)", [r["country"] for r in all_rows],
          [None, None, None, None, None, "NZ", "MX"])
    check("first time", all_rows[0]["__time"], datetime.datetime(2024, 2, 29, 1, tzinfo=UTC))
    check("rows of snapshot 1", len(rows(table, snapshot_id=1001)), 5)

    # Pruning by the partition and the column bounds.
    march = GreaterThanOrEqual("__time", "2024-03-01T00:00:00+00:00")
    check("files for __time >= 2024-03-01", len(list(table.scan(row_filter=march).plan_files())), 2)
    check("rows for __time >= 2024-03-01", len(rows(table, row_filter=march)), 4)
    check("files for page = 'Kiwi' (bounds Kiwi..Lime only)",
          [t.file.file_path.rsplit("/", 1)[1] for t in table.scan(row_filter=EqualTo("page", "Kiwi")).plan_files()],
          ["1002-0.parquet"])
    check("files for added = 35 (no file's bounds hold it)",
          len(list(table.scan(row_filter=EqualTo("added", 35)).plan_files())), 0)

    paths = [t.file.file_path for t in table.scan().plan_files()]
    check("DuckDB count, sum(added), distinct pages", duckdb_totals(paths), (7, 280, 6))

    # Another writer: pyiceberg adds a data file pyarrow wrote (one row,
    # 2024-03-02) with its own manifest, manifest list and metadata.
    # (table.append would need the pyiceberg-core wheel for the day transform.)
    arrow_schema = pa.schema([
        pa.field("__time", pa.timestamp("us", tz="UTC"), nullable=False),
        pa.field("page", pa.string()),
        pa.field("added", pa.int64()),
    ])
    theirs = f"{directory}/wiki/data/pyiceberg-fig.parquet"
    pq.write_table(pa.Table.from_pylist(
        [{"__time": datetime.datetime(2024, 3, 2, 12, tzinfo=UTC), "page": "Fig", "added": 80}],
        schema=arrow_schema), theirs)
    table.add_files([f"file://{theirs}"])
    check("rows after pyiceberg's append", len(rows(load(directory))), 8)

def final(directory):
    table = load(directory)
    snapshots = table.metadata.snapshots
    check("snapshot count", len(snapshots), 4)
    check("our last snapshot", table.metadata.current_snapshot_id, 1004)
    check("its parent is pyiceberg's", snapshots[3].parent_snapshot_id, snapshots[2].snapshot_id)
    check("rows per snapshot", [len(rows(table, snapshot_id=s.snapshot_id)) for s in snapshots], [5, 7, 8, 10])
    all_rows = rows(table)
    check("pages", [r["page"] for r in all_rows],
          ["Apple", "Banana", None, "Mango", "Zucchini", "Kiwi", "Lime", "Fig", "Olive", "Pear"])
    check("country", [r["country"] for r in all_rows][-3:], [None, "GR", None])
    check("summary", table.current_snapshot().summary["total-records"], "10")
    paths = [t.file.file_path for t in table.scan().plan_files()]
    check("DuckDB count, sum(added), distinct pages", duckdb_totals(paths), (10, 360, 9))


def replaced(directory):
    table = load(directory)
    snapshots = table.metadata.snapshots
    check("snapshot count", len(snapshots), 6)
    check("current snapshot: the replace", table.metadata.current_snapshot_id, 1006)
    check("its parent: the append that won the race", snapshots[-1].parent_snapshot_id, 1005)
    replace = table.current_snapshot()
    check("operation", replace.summary.operation.value, "replace")
    check("summary counts", [replace.summary[k] for k in
                             ("added-data-files", "deleted-data-files", "added-records", "deleted-records",
                              "total-records", "total-data-files")],
          ["1", "2", "4", "4", "11", "5"])
    check("rewritten ranges", replace.summary["sluice.rewritten.kafka.wiki.0"], "3-7")
    check("no new Kafka ranges", "sluice.kafka.ranges" in replace.summary.additional_properties, False)
    inspected = table.inspect.snapshots().to_pylist()
    check("inspect.snapshots operations", [s["operation"] for s in inspected],
          ["append", "append", "append", "append", "append", "replace"])

    # The same rows at the append and at the replace: pyiceberg and DuckDB.
    before, after = rows(table, snapshot_id=1005), rows(table, snapshot_id=1006)
    key = lambda r: (r["__time"], r["page"] or "")
    check("rows at 1005 == rows at 1006 (every column)", sorted(after, key=key) == sorted(before, key=key), True)
    check("row count", len(after), 11)
    check("the append's row is kept", [r["page"] for r in after if r["added"] == 90], ["Quince"])
    for snapshot_id in (1005, 1006):
        paths = [t.file.file_path for t in table.scan(snapshot_id=snapshot_id).plan_files()]
        check(f"DuckDB count, sum(added), distinct pages at {snapshot_id}", duckdb_totals(paths), (11, 450, 10))

    # Planning: the compacted file alone for its day, the other days' files.
    def planned(snapshot_id, row_filter=None):
        scan = table.scan(snapshot_id=snapshot_id) if row_filter is None else table.scan(
            snapshot_id=snapshot_id, row_filter=row_filter)
        return sorted(t.file.file_path.split("/wiki/data/", 1)[1] for t in scan.plan_files())
    march1 = And(GreaterThanOrEqual("__time", "2024-03-01T00:00:00+00:00"),
                 LessThan("__time", "2024-03-02T00:00:00+00:00"))
    check("files for 2024-03-01 at the append", planned(1005, march1),
          ["day=19783/1001-1.parquet", "day=19783/1002-0.parquet"])
    check("files for 2024-03-01 at the replace", planned(1006, march1), ["day=19783/1006-compacted.parquet"])
    check("rows for 2024-03-01 at the replace", len(rows(table, snapshot_id=1006, row_filter=march1)), 4)
    files = planned(1006)
    check("files at the replace", [f for f in files if not f.startswith("pyiceberg")],
          ["day=19782/1001-0.parquet", "day=19783/1006-compacted.parquet", "day=19786/1004-0.parquet",
           "day=19787/1005-0.parquet"])
    check("pyiceberg's file kept", len([f for f in files if f.startswith("pyiceberg")]), 1)


if __name__ == "__main__":
    {"first": first, "final": final, "replaced": replaced}[sys.argv[2]](sys.argv[1])
