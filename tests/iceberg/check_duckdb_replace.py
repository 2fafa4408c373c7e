"""Reads the table write_test_table left after `replace` with DuckDB's own
iceberg extension (a reader independent of pyiceberg), loaded offline from
the pinned duckdb-ext-* wheels (requirements-duckdb-iceberg.txt):

  check_duckdb_replace.py DIR

iceberg_scan() of the catalog's current metadata document (the replace
snapshot 1006) and of the append before it (1005) read the same rows and
sum(added), and iceberg_snapshots() lists both. Exits non-zero with the
first mismatch.
"""
import pathlib
import sqlite3
import sys
import sysconfig

import duckdb


def check(what, got, want):
    if got != want:
        sys.exit(f"check_duckdb_replace: {what}: got {got!r}, want {want!r}")
    print(f"ok  {what}: {got!r}")


def main(directory):
    with sqlite3.connect(f"{directory}/catalog.db") as db:
        (location,) = db.execute(
            "SELECT metadata_location FROM iceberg_tables WHERE catalog_name = 'sluice' "
            "AND table_namespace = 'default' AND table_name = 'wiki'").fetchone()
    metadata = location.removeprefix("file://").replace("'", "''")
    extensions = (pathlib.Path(sysconfig.get_paths()["purelib"]) / "duckdb_ext" / "extensions" /
                  f"v{duckdb.__version__}" / "linux_amd64")
    con = duckdb.connect(config={"autoinstall_known_extensions": False,
                                 "autoload_known_extensions": False})
    for extension in ("avro", "iceberg"):
        path = str(extensions / (extension + ".duckdb_extension")).replace("'", "''")
        con.sql(f"LOAD '{path}'")
    check("iceberg_snapshots: the last two",
          con.sql(f"SELECT snapshot_id FROM iceberg_snapshots('{metadata}') ORDER BY sequence_number DESC "
                  "LIMIT 2").fetchall(), [(1006,), (1005,)])
    totals = "SELECT count(*), sum(added), count(DISTINCT page) FROM iceberg_scan"
    check("iceberg_scan at the replace (1006): count, sum(added), distinct pages",
          con.sql(f"{totals}('{metadata}')").fetchall(), [(11, 450, 10)])
    check("iceberg_scan at the append before it (1005)",
          con.sql(f"{totals}('{metadata}', snapshot_from_id=1005)").fetchall(), [(11, 450, 10)])
    check("iceberg_scan of day 2024-03-01 at the replace",
          con.sql(f"SELECT count(*), sum(added) FROM iceberg_scan('{metadata}') "
                  "WHERE __time >= TIMESTAMPTZ '2024-03-01 00:00:00+00' "
                  "AND __time < TIMESTAMPTZ '2024-03-02 00:00:00+00'").fetchall(), [(4, 220)])


if __name__ == "__main__":
    main(sys.argv[1])
