"""How soon a produced record is readable in its Iceberg table.

Polls the table through pyiceberg's SqlCatalog on the supervisor's metadata
store (SQLite) every --interval seconds while a datasource ingests a live
stream whose records carry the wall-clock time they were produced as their
timestamp (sluice-demo --live_timestamps). For each new snapshot it reads the
__time and count columns of the data files that snapshot added, and counts
each record as readable at the poll that first saw it: freshness = that
poll's time - the record's timestamp. Prints the distribution over every
record seen (rows weighted by their count metric, so rollup does not hide
records) when the store's file --done_file appears, or after --timeout.

  python bench/iceberg/freshness.py --store=/tmp/x/supervisor/metadata.db \
      --table=sluice.wiki --done_file=/tmp/x/done
(bench/iceberg/freshness.sh runs it beside the demo.)
"""

import argparse
import json
import os
import sqlite3
import sys
import time

import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.manifest import ManifestEntryStatus


def added_files(table, snapshot):
    io = table.io
    for manifest in snapshot.manifests(io):
        if manifest.added_snapshot_id != snapshot.snapshot_id:
            continue
        for entry in manifest.fetch_manifest_entry(io, discard_deleted=True):
            if entry.status == ManifestEntryStatus.ADDED:
                yield entry.data_file.file_path


def local_path(location):
    return location[len("file://"):] if location.startswith("file://") else location


def percentile(sorted_pairs, total, q):
    """sorted_pairs: (latency_ms, weight) by latency."""
    want = q * total
    seen = 0
    for latency, weight in sorted_pairs:
        seen += weight
        if seen >= want:
            return latency
    return sorted_pairs[-1][0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--store", required=True)
    ap.add_argument("--table", default="sluice.wiki")
    ap.add_argument("--interval", type=float, default=0.2)
    ap.add_argument("--done_file", default="")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--json_out", default="")
    args = ap.parse_args()

    # The supervisor creates the store and its catalog tables; a SqlCatalog
    # opened before that would create them itself.
    deadline = time.time() + args.timeout
    while True:
        try:
            with sqlite3.connect(f"file:{args.store}?mode=ro", uri=True) as db:
                db.execute("SELECT 1 FROM iceberg_tables LIMIT 1").fetchall()
            break
        except sqlite3.Error:
            if time.time() > deadline:
                print("freshness: the store never got its catalog tables", file=sys.stderr)
                return 1
            time.sleep(args.interval)
    catalog = SqlCatalog("sluice", uri=f"sqlite:///{args.store}")
    seen = set()
    latencies = {}  # latency ms -> records
    snapshots = 0
    records = 0
    polls = 0
    done_seen_at = None
    while time.time() < deadline:
        polls += 1
        try:
            table = catalog.load_table(args.table)
        except Exception:  # no table yet (or the store not created yet)
            table = None
        now_ms = time.time() * 1000.0
        if table is not None:
            for snapshot in table.metadata.snapshots:
                if snapshot.snapshot_id in seen:
                    continue
                seen.add(snapshot.snapshot_id)
                snapshots += 1
                for path in added_files(table, snapshot):
                    data = pq.read_table(local_path(path), columns=["__time", "count"])
                    times = pc.cast(data.column("__time"), "int64").to_pylist()  # micros
                    counts = data.column("count").to_pylist()
                    for t, c in zip(times, counts):
                        latency = max(0, int(round(now_ms - t / 1000.0)))
                        latencies[latency] = latencies.get(latency, 0) + c
                        records += c
        if args.done_file and os.path.exists(args.done_file):
            # One more poll after the producer side finished, then stop.
            if done_seen_at is not None:
                break
            done_seen_at = time.time()
        time.sleep(args.interval)

    if records == 0:
        print("freshness: no records seen", file=sys.stderr)
        return 1
    pairs = sorted(latencies.items())
    result = {
        "records": records,
        "snapshots": snapshots,
        "polls": polls,
        "poll_interval_ms": int(args.interval * 1000),
        "p50_ms": percentile(pairs, records, 0.50),
        "p90_ms": percentile(pairs, records, 0.90),
        "p99_ms": percentile(pairs, records, 0.99),
        "max_ms": pairs[-1][0],
        "within_10s": sum(w for l, w in pairs if l <= 10000) / records,
    }
    print(
        "freshness: {records} records in {snapshots} snapshots: p50 {p50_ms} ms, p90 {p90_ms} ms, "
        "p99 {p99_ms} ms, max {max_ms} ms; {pct:.1f}% readable within 10 s "
        "(polled every {poll_interval_ms} ms)".format(pct=100 * result["within_10s"], **result)
    )
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump(result, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
