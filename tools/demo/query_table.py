"""The demo's last step: the Iceberg table sluice committed, read by engines
sluice did not write. pyiceberg's SqlCatalog opens the table from the
metadata store (the SQL catalog's tables live beside the Kafka offsets);
DuckDB queries the rows the current snapshot holds.

  query_table.py STORE.db TABLE EXPECTED_EDITS

Prints the snapshots, the totals, the edits per channel and the top pages,
and exits non-zero unless the table counts EXPECTED_EDITS edits (every
parseable record produced, once).
"""
import os
import sys

import duckdb
from pyiceberg.catalog.sql import SqlCatalog


def main(store, table_name, expected_edits):
    catalog = SqlCatalog("sluice", uri=f"sqlite:///{store}",
                         warehouse=f"file://{os.path.dirname(store)}")
    table = catalog.load_table(f"sluice.{table_name}")
    snapshots = table.history()
    edits = table.scan().to_arrow()
    db = duckdb.connect()
    db.register("edits", edits)
    rows, total, added = db.execute(
        "SELECT count(*), sum(count), sum(added) FROM edits").fetchall()[0]
    print(f"table {table.metadata_location}")
    replaces = sum(1 for s in table.metadata.snapshots if s.summary.operation.value == "replace")
    kinds = (f"{len(snapshots) - replaces} appends, one per committed sequence, and {replaces} "
             f"compactions' replaces" if replaces else "one per committed sequence")
    print(f"{len(snapshots)} snapshots ({kinds}), {rows} rows after rollup, "
          f"{total} edits, {added} characters added")
    print("edits per channel:")
    for channel, n in db.execute(
            "SELECT channel, sum(count) AS n FROM edits GROUP BY channel "
            "ORDER BY n DESC, channel LIMIT 5").fetchall():
        print(f"  {channel:<20} {n:>8}")
    print("top pages:")
    for page, n, a in db.execute(
            "SELECT page, sum(count) AS n, sum(added) FROM edits GROUP BY page "
            "ORDER BY n DESC, page LIMIT 5").fetchall():
        print(f"  {page:<40} {n:>6} edits {a:>8} added")
    if total != expected_edits:
        print(f"MISMATCH: the table counts {total} edits; {expected_edits} parseable records "
              "were produced")
        return 1
    print(f"the table counts every one of the {expected_edits} parseable records once")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: query_table.py STORE.db TABLE EXPECTED_EDITS")
    sys.exit(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
