"""The Iceberg side of the compaction benchmark (bench/compaction/run.sh),
read with pyiceberg from the metadata store the demo kept:

  check_table.py STORE SUMMARY.json [--no_snapshots]

SUMMARY is what `sluice-demo --summary_json` wrote: the segment granularity,
the cutoff (intervals ending by then are the ones compaction merges), the
used segments per interval, the records produced (no malformed ones).

- the current snapshot's data files grouped by segment interval (from their
  __time bounds, which lie in one interval): at most MAX_FILES (2) for every
  interval ending by the cutoff, and the same intervals as the segments';
- (unless --no_snapshots) at every snapshot, a scan's sum(count) (each planned file read once) is
  the records of the sequences committed up to it: the Kafka ranges of the
  append snapshots up to it (contiguous from 0 in every partition), a
  replace keeping its parent's; the last one is every record produced.

Prints one line per interval, then the figures; exits non-zero at the first
mismatch.
"""
import json
import os
import struct
import sys
import time

import pyarrow.parquet as pq
from pyiceberg.catalog.sql import SqlCatalog

GRANULARITY_MS = {"SECOND": 1000, "MINUTE": 60_000, "FIVE_MINUTE": 300_000,
                  "TEN_MINUTE": 600_000, "FIFTEEN_MINUTE": 900_000,
                  "THIRTY_MINUTE": 1_800_000, "HOUR": 3_600_000}
MAX_FILES = 2


def fail(what):
    sys.exit(f"check_table: FAIL: {what}")


def iso(ms):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ms / 1000))


def main(store, summary_path, snapshots_too=True):
    with open(summary_path) as f:
        summary = json.load(f)
    granularity = GRANULARITY_MS.get(summary["segment_granularity"].upper())
    if granularity is None:
        fail(f"granularity {summary['segment_granularity']} is not one this check knows")
    cutoff = summary["cutoff_ms"]
    catalog = SqlCatalog("sluice", uri=f"sqlite:///{store}",
                         warehouse=f"file://{os.path.dirname(store)}")
    table = catalog.load_table("sluice.wiki")
    time_id = table.schema().find_field("__time").field_id

    def time_bound(raw):  # timestamptz: microseconds, 8 bytes little-endian
        return struct.unpack("<q", raw)[0] // 1000

    # Files per interval at the current snapshot.
    per_interval = {}
    for task in table.scan().plan_files():
        lo = time_bound(task.file.lower_bounds[time_id])
        hi = time_bound(task.file.upper_bounds[time_id])
        start = lo - lo % granularity
        if hi >= start + granularity:
            fail(f"data file {task.file.file_path} spans intervals ({iso(lo)} to {iso(hi)})")
        per_interval[start] = per_interval.get(start, 0) + 1
    old = []
    if not summary["compaction"]:
        print(f"ok  compaction off: data files per interval "
              f"{[per_interval[k] for k in sorted(per_interval)]}")
        segments = None
    else:
        segments = {i["start_ms"]: i["segments"] for i in summary["intervals"]}
    if segments is not None and sorted(per_interval) != sorted(segments):
        fail(f"the table's intervals {sorted(per_interval)} are not the segments' "
             f"{sorted(segments)}")
    for start in (sorted(per_interval) if segments is not None else []):
        end = start + granularity
        aged = end <= cutoff
        print(f"  {iso(start)}/{iso(end)}  {segments[start]:4d} segments (at the demo's check)  "
              f"{per_interval[start]:4d} data files{'  (older than the skip offset)' if aged else ''}")
        if aged:
            old.append(per_interval[start])
    too_many = [n for n in old if n > MAX_FILES]
    if too_many:
        fail(f"intervals older than the skip offset with more than {MAX_FILES} data files: "
             f"{too_many}")
    print(f"ok  {len(old)} intervals older than the skip offset: at most "
          f"{max(old) if old else 0} data files each (of {len(per_interval)} intervals)")

    if not snapshots_too:
        return
    # sum(count) at every snapshot.
    counts = {}

    def file_count(location):
        if location not in counts:
            path = location[len("file://"):] if location.startswith("file://") else location
            counts[location] = sum(pq.read_table(path, columns=["count"])
                                   .column("count").to_pylist())
        return counts[location]

    started = time.monotonic()
    ends = {}  # partition -> end offset committed so far
    snapshots = table.metadata.snapshots
    replaces = 0
    for s in snapshots:
        operation = s.summary.operation.value
        if operation == "replace":
            replaces += 1
        for key, value in s.summary.additional_properties.items():
            if not key.startswith("sluice.kafka."):
                continue
            if operation == "replace":
                continue  # the rewritten ranges: no new records
            partition = key.rsplit(".", 1)[1]
            begin, end = (int(x) for x in value.split("-"))
            if begin != ends.get(partition, 0):
                fail(f"snapshot {s.snapshot_id}: partition {partition} range {value} does not "
                     f"start where the previous one ended ({ends.get(partition, 0)})")
            ends[partition] = end
        want = sum(ends.values())
        got = sum(file_count(t.file.file_path)
                  for t in table.scan(snapshot_id=s.snapshot_id).plan_files())
        if got != want:
            fail(f"snapshot {s.snapshot_id} ({operation}): sum(count) {got}, the committed "
                 f"sequences hold {want}")
    if sum(ends.values()) != summary["records"]:
        fail(f"the last snapshot holds {sum(ends.values())} records, {summary['records']} "
             f"were produced")
    print(f"ok  sum(count) at every one of {len(snapshots)} snapshots ({replaces} replace) is "
          f"the records committed up to it; {summary['records']} at the last "
          f"({time.monotonic() - started:.0f}s, {len(counts)} data files read)")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], "--no_snapshots" not in sys.argv[3:])
