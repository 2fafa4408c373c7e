"""The report of bench/compaction/run.sh: reads the runs' summaries
(sluice-demo --summary_json), load averages and table checks from DIR,
prints the "## Compaction" section and, with --doc, puts it into that file
(replacing the section if there is one, else before "## Segment kernels").

  report.py --dir=DIR --revision=REV --minutes=M --rate=R --records=N
            --repetitions=K [--doc=docs/benchmarks.md]
"""
import argparse
import datetime
import json
import os
import platform
import re
import statistics


def read(path, default=None):
    if not os.path.exists(path):
        return default
    with open(path) as f:
        return f.read()


def machine():
    model = "unknown CPU"
    for line in (read("/proc/cpuinfo") or "").splitlines():
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    mem_kb = 0
    for line in (read("/proc/meminfo") or "").splitlines():
        if line.startswith("MemTotal:"):
            mem_kb = int(line.split()[1])
    return (f"{model}, {os.cpu_count()} cores, {mem_kb / 1024 / 1024:.0f} GiB RAM, "
            f"Linux {platform.release()}")


def loads(path):
    lines = (read(path) or "").split("\n")
    before = lines[0].replace(" ", " / ") if lines and lines[0] else "?"
    after = lines[1].replace(" ", " / ") if len(lines) > 1 and lines[1] else "?"
    return before, after


def load_1min(path):
    lines = (read(path) or "").split("\n")
    first = lines[0].split()[0] if lines and lines[0] else "?"
    last = lines[1].split()[0] if len(lines) > 1 and lines[1] else "?"
    return f"{first} -> {last}"


def supervisor_log_counts(run_dir):
    """(compaction jobs that failed, compaction restages, publish restages)
    from the supervisor's log: a job fails when the table moved at each of
    its commit attempts; each lost attempt stages again, as does a publish
    that lost to another writer."""
    text = read(os.path.join(run_dir, "logs", "supervisor.log"), "")
    failed = len(re.findall(r"compactor\.cc:\d+\] \S+: compacting ", text))
    restaged = len(re.findall(r"compaction of \S+: .*staging again \(attempt", text))
    publish_restaged = len(re.findall(r"publish of \S+: Iceberg table .*staging again", text))
    return failed, restaged, publish_restaged


def compactions_during_ingestion(run_dir, open_sequences=2):
    """(compactions committed before the last full sequences were published,
    all compactions) from the supervisor's log: the last `open_sequences`
    publishes are the groups' open sequences, published at the roll-over
    after everything was read."""
    lines = (read(os.path.join(run_dir, "logs", "supervisor.log"), "") or "").splitlines()
    publishes = [line.split()[1] for line in lines if "] published sequence " in line]
    compacted = [line.split()[1] for line in lines
                 if re.search(r"\] compacted \d+ segments of ", line)]
    if len(publishes) <= open_sequences:
        return 0, len(compacted)
    end = publishes[-open_sequences - 1]
    return sum(1 for t in compacted if t <= end), len(compacted)


def rate(rows, ms):
    return rows * 1000.0 / ms if ms > 0 else 0.0


def fmt_rate(x):
    return f"{x / 1000:.1f}k" if x >= 1000 else f"{x:.0f}"


def iso(ms):
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc).strftime("%H:%M")


def live_section(args, out):
    summary = json.loads(read(os.path.join(args.dir, "live.json"), "null") or "null")
    if summary is None:
        return
    log = read(os.path.join(args.dir, "live.log"), "")
    check = read(os.path.join(args.dir, "live.check"), "")
    before, after = loads(os.path.join(args.dir, "live.load"))
    committed = re.search(r"everything produced is committed after ([0-9.]+)s: (\d+) checkpoints, "
                          r"(\d+) segments published", log)
    files = {}
    for line in check.splitlines():
        m = re.match(r"\s+(\S+)Z/\S+\s+(\d+) segments.*?(\d+) data files", line)
        if m:
            start = datetime.datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S").replace(
                tzinfo=datetime.timezone.utc)
            files[int(start.timestamp() * 1000)] = int(m.group(3))
    snapshots = re.search(r"at every one of (\d+) snapshots \((\d+) replace\)", check)
    audit_pass = "PASS" in log and "the exactly-once audit found discrepancies" not in log
    table_pass = "Iceberg table: PASS" in log
    out.append(f"### Live: {args.minutes} minutes at {args.rate} records/s, compaction on\n")
    out.append(f"- load average (1/5/15 min) before: {before}; after: {after}")
    out.append(
        f"- {summary['records']} records produced with live timestamps; "
        + (f"everything committed {committed.group(1)} s after the start, {committed.group(2)} "
           f"checkpoints, {committed.group(3)} segments published (1,000-row sequences)"
           if committed else "")
        + f"; every interval older than the skip offset was compacted "
        f"{summary['compaction_wait_seconds']:.1f} s after the last commit "
        f"(skipOffsetFromLatest PT2M, period PT5S)")
    out.append(
        f"- {summary['compactions']} compactions replaced {summary['input_segments']} segments "
        f"and rewrote {summary['rows_compacted']} rows in {summary['compacting_ms'] / 1000:.1f} s "
        f"of compacting: **{fmt_rate(rate(summary['rows_compacted'], summary['compacting_ms']))} "
        f"rows/s** (the committed jobs' own time; failed jobs are not counted); "
        f"{summary['conflicts']} conflicts (an input replaced meanwhile)"
        + (f"; last error: `{summary['last_error']}`" if summary["last_error"] else ""))
    failed, restaged, publish_restaged = supervisor_log_counts(os.path.join(args.dir, "live"))
    during, total = compactions_during_ingestion(os.path.join(args.dir, "live"))
    out.append(
        f"- compactions committed while records were still produced and committed: {during} of "
        f"{total} (the others right after the last publishes)")
    out.append(
        f"- the supervisor's log: {failed} compaction jobs failed (the Iceberg table moved at "
        f"each of their 5 commit attempts), {restaged} compaction stagings lost to an append "
        f"and were redone, {publish_restaged} publishes staged again after another writer "
        f"committed first")
    out.append(
        f"- audit (`sluicectl verify`): {'PASS' if audit_pass else 'FAIL'}, the Iceberg table's "
        f"audit {'PASS' if table_pass else 'FAIL'}; pyiceberg: sum(count) at every one of "
        + (f"{snapshots.group(1)} snapshots ({snapshots.group(2)} replace) is the records of the "
           f"sequences committed up to it" if snapshots else "the snapshots: not checked"))
    out.append("")
    out.append("Used segments (ListSegments, when the demo's wait ended) and the current "
               "snapshot's data files (pyiceberg, by their `__time` bounds) per MINUTE interval; "
               "intervals ending by the cutoff (the earlier of now and the newest interval's end, "
               "minus PT2M) must hold at most 2 of each:\n")
    out.append("| interval (UTC) | older than the skip offset | used segments | Iceberg data files |")
    out.append("| --- | --- | --- | --- |")
    for i in summary["intervals"]:
        aged = i["end_ms"] <= summary["cutoff_ms"]
        out.append(f"| {iso(i['start_ms'])}-{iso(i['end_ms'])} | {'yes' if aged else 'no'} | "
                   f"{i['segments']} | {files.get(i['start_ms'], '?')} |")
    out.append("")


def throughput_section(args, out, prefix="throughput"):
    runs = {"off": [], "on": []}
    for r in range(1, args.repetitions + 1):
        for mode in ("off", "on"):
            text = read(os.path.join(args.dir, f"{prefix}-{mode}-{r}.json"))
            if text:
                runs[mode].append((r, json.loads(text)))
    if not runs["off"] or not runs["on"]:
        return
    if prefix == "native":
        out.append("### The same without an Iceberg table\n")
        out.append("The same runs with a spec without `icebergTable` (segments only): no append "
                   "moves a table under a compaction.\n")
    else:
        out.append("### Ingestion with and without compaction\n")
    if prefix == "throughput":
        out.append(
        f"{args.records} records produced as fast as the producer goes (timestamps one per ms "
        f"over the {args.records / 1000:.0f} s before the start, so "
        f"{args.records // 60000 + 1}-{args.records // 60000 + 2} MINUTE intervals), ingested with "
        f"1,000-row sequences; ingestion rate = records committed in full sequences / (producer "
        f"start -> they are committed): the groups' last open sequences (under taskCount x 1000 "
        f"records) wait for the taskDuration (PT20S) roll-over and are left out. "
        f"Compaction on: skipOffsetFromLatest PT0S, period PT5S, so every interval behind the "
        f"newest is compacted while ingestion goes on. Runs alternate off, on.\n")
    out.append("| run | compaction | ingestion rows/s | time | compactions (during ingestion) "
               "| rows compacted | compacting | compaction rows/s | failed jobs / lost stagings | "
               "load (1 min) before -> after |")
    out.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in range(1, args.repetitions + 1):
        for mode in ("off", "on"):
            match = [s for (k, s) in runs[mode] if k == r]
            if not match:
                continue
            s = match[0]
            load = load_1min(os.path.join(args.dir, f"{prefix}-{mode}-{r}.load"))
            during, _ = compactions_during_ingestion(os.path.join(args.dir, f"{prefix}-{mode}-{r}"))
            on = mode == "on"
            compacting = f"{s['compacting_ms'] / 1000:.1f} s" if on else ""
            failed, restaged, _ = supervisor_log_counts(
                os.path.join(args.dir, f"{prefix}-{mode}-{r}"))
            lost = f"{failed} / {restaged}" if on else ""
            out.append(
                f"| {r} | {mode} | {fmt_rate(s['full_sequences_rows_per_second'])} | "
                f"{s['full_sequences_seconds']:.1f} s | "
                f"{str(s['compactions']) + ' (' + str(during) + ')' if on else ''} | "
                f"{s['rows_compacted'] if on else ''} | "
                f"{compacting} | "
                f"{fmt_rate(rate(s['rows_compacted'], s['compacting_ms'])) if on else ''} | "
                f"{lost} | {load} |")
    off = statistics.median(s["full_sequences_rows_per_second"] for _, s in runs["off"])
    on = statistics.median(s["full_sequences_rows_per_second"] for _, s in runs["on"])
    rows = sum(s["rows_compacted"] for _, s in runs["on"])
    ms = sum(s["compacting_ms"] for _, s in runs["on"])
    out.append("")
    if prefix == "throughput":
        during = sum(compactions_during_ingestion(os.path.join(args.dir, f"throughput-on-{r}"))[0]
                     for r, _ in runs["on"])
        if during == 0:
            out.append(
                "No compaction committed while ingestion ran: a compaction's Iceberg replace is "
                "staged on the table's current metadata and commits only if no append committed "
                "in between, and with a sequence published every fraction of a second the "
                "staging (seconds, growing with the table) always lost; each job failed after "
                "its 5 attempts and the next pass started over. The compactions counted here all "
                "committed in the seconds after the last publish. The ratio below is therefore "
                "the cost of those lost attempts, not of compactions that completed during "
                "ingestion; the runs without an Iceberg table below show the latter.\n")
    out.append(f"Ingestion with compaction on: **{on / off:.2f}x** the rate without it "
               f"(medians {fmt_rate(on)} and {fmt_rate(off)} rows/s; the bar is 0.8x). "
               f"Compaction: **{fmt_rate(rate(rows, ms))} rows/s** of compacting time "
               f"({rows} rows in {ms / 1000:.1f} s of the committed jobs over the 'on' runs; "
               f"failed jobs not counted).\n")
    return on / off


def main():
    parser = argparse.ArgumentParser()
    for flag in ("dir", "revision", "minutes", "rate", "records", "repetitions", "doc",
                 "command_note"):
        parser.add_argument(f"--{flag}", default=None)
    args = parser.parse_args()
    args.repetitions = int(args.repetitions or 1)
    args.records = int(args.records or 0)
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    out = ["## Compaction", "",
           "Written by `bench/compaction/run.sh`; do not edit by hand.", "",
           f"- command: `bash bench/compaction/run.sh --minutes={args.minutes} --rate={args.rate} "
           f"--records={args.records} --repetitions={args.repetitions}`{args.command_note or ''}",
           f"- machine: {machine()}",
           f"- date: {now}; git {args.revision}",
           "- processes: the demo's cluster (`tools/sluice-demo`: dev broker, supervisor, 2 "
           "workers; taskCount 2 x replicas 2, 4 partitions, an Iceberg table), "
           "maxRowsPerSegment 1000, MINUTE segments, no malformed records; compaction runs in "
           "the supervisor (one thread, nice 10), targetRowsPerSegment 5000000, "
           "maxInputSegments 100, snapshotRetention P1D (no snapshot expired during a run)",
           ""]
    live_section(args, out)
    ratio = throughput_section(args, out)
    throughput_section(args, out, "native")
    text = "\n".join(out).rstrip() + "\n"
    print(text)
    if args.doc:
        doc = read(args.doc)
        start = doc.find("\n## Compaction\n")
        if start >= 0:
            end = doc.find("\n## ", start + 1)
            doc = doc[:start + 1] + text + ("\n" + doc[end + 1:] if end >= 0 else "")
        else:
            anchor = doc.find("\n## Segment kernels\n")
            doc = (doc[:anchor + 1] + text + "\n" + doc[anchor + 1:]) if anchor >= 0 \
                else doc.rstrip() + "\n\n" + text
        with open(args.doc, "w") as f:
            f.write(doc)
    return ratio


if __name__ == "__main__":
    main()
