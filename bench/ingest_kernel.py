#!/usr/bin/env python3
"""Instructions per record of the ingest kernel, by stage.

Runs //bench:ingest_kernel (the worker's own engine: parse, index add,
persist, segment build with its read-back check, at the depth a task under
a supervisor with deep storage uses; no Kafka, no threads) under
valgrind's callgrind, which counts instructions: the same binary and input
give the same counts whatever else the machine runs, so a regression shows
without a quiet machine. Rollup off and on, 100k records each (~1 min each
under valgrind). Also runs the binary natively once for CPU time (that one
depends on the machine's load, which is printed).

  python3 bench/ingest_kernel.py                  print the table
  python3 bench/ingest_kernel.py --update-docs    and write it into
                                                  docs/benchmarks.md ("## Ingest kernel")
  python3 bench/ingest_kernel.py --binary=PATH    measure another build (before/after)
  python3 bench/ingest_kernel.py --baseline=PATH --baseline_label=REV
                                                  and the instructions of an earlier
                                                  build beside them (a step's before/after)
  python3 bench/ingest_kernel.py --max_rows_in_memory=30000
                                                  the spill path: the records spill every
                                                  30,000 rows (persist) and each build
                                                  merges its spills with the rows in memory
"""
import argparse
import datetime
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Flags every run of the binary gets (--max_rows_in_memory).
EXTRA_FLAGS = []
STAGES = [
    ("parse", "parse (one-pass scan of plain records, simdjson for the rest; the row, the timestamp)"),
    ("index", "index add (dictionary lookups, the row, rollup)"),
    ("persist", "persist (sort, encode, LZ4, write + fsync a spill; only at maxRowsInMemory since the direct build: none at the default 100k records)"),
    ("build", "build (the direct build: the in-memory index merged with any spills, encode, LZ4, bitmaps, fsync, read back: the checksum)"),
]
SECTION = "## Ingest kernel"


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, text=True, capture_output=True, **kw)


def instructions(binary, records, rollup):
    """Instructions of each pass, from the callgrind dumps the kernel triggers."""
    with tempfile.TemporaryDirectory(prefix="sluice-callgrind-") as tmp:
        out = os.path.join(tmp, "cg.out")
        cmd = ["valgrind", "--tool=callgrind", "--collect-atstart=no",
               f"--callgrind-out-file={out}", binary, f"--records={records}",
               f"--dir={tmp}/scratch"] + EXTRA_FLAGS
        if rollup:
            cmd.append("--rollup")
        run(cmd)
        counts = {}
        for name in os.listdir(tmp):
            if not name.startswith("cg.out."):
                continue
            stage, total = None, None
            with open(os.path.join(tmp, name), errors="replace") as f:
                for line in f:
                    m = re.match(r"desc: Trigger: Client Request: (\w+)", line)
                    if m:
                        stage = m.group(1)
                    if line.startswith("summary:"):
                        total = int(line.split()[1])
                        break
            if stage is not None and total is not None:
                counts[stage] = total
    missing = [s for s, _ in STAGES if s not in counts]
    if missing:
        sys.exit(f"ingest_kernel: no callgrind dump for {missing}")
    # The index pass parses too: its own share is the difference.
    counts["index"] -= counts["parse"]
    return {s: counts[s] / records for s, _ in STAGES}


def cpu_ns(binary, records, rollup):
    cmd = [binary, f"--records={records}"] + EXTRA_FLAGS + (["--rollup"] if rollup else [])
    out = run(cmd).stdout
    ns = {}
    for line in out.splitlines():
        m = re.match(r"(\w+)\s+[\d.]+ ms CPU,\s+(\d+) ns/record", line)
        if m:
            ns[m.group(1)] = int(m.group(2))
        m = re.match(r"segments: .*\(([\d.]+) B/row\)", line)
        if m:
            ns["bytes_per_row"] = float(m.group(1))
    ns["index"] -= ns["parse"]
    return ns


def table(binary, records, cpu_records, baseline="", baseline_label=""):
    load_before = os.getloadavg()
    results = {}
    before = {}
    for rollup in (False, True):
        results[rollup] = (instructions(binary, records, rollup),
                           cpu_ns(binary, cpu_records, rollup))
        if baseline:
            before[rollup] = instructions(baseline, records, rollup)
            before[rollup]["bytes_per_row"] = cpu_ns(baseline, cpu_records, rollup)["bytes_per_row"]
    load_after = os.getloadavg()
    header = "| stage | rollup off: instructions/record | rollup on | rollup off: CPU ns/record | rollup on |"
    rule = "| --- | --- | --- | --- | --- |"
    if baseline:
        header += f" before ({baseline_label}): rollup off | rollup on |"
        rule += " --- | --- |"
    lines = [header, rule]
    totals = {False: [0, 0, 0], True: [0, 0, 0]}
    for stage, label in STAGES:
        cells = []
        for rollup in (False, True):
            ir, ns = results[rollup]
            totals[rollup][0] += ir[stage]
            totals[rollup][1] += ns[stage]
            if baseline:
                totals[rollup][2] += before[rollup][stage]
        for rollup in (False, True):
            cells.append(f"{results[rollup][0][stage]:,.0f}")
        for rollup in (False, True):
            cells.append(f"{results[rollup][1][stage]:,}")
        if baseline:
            for rollup in (False, True):
                cells.append(f"{before[rollup][stage]:,.0f}")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    total = (f"| **total** | **{totals[False][0]:,.0f}** | **{totals[True][0]:,.0f}** | "
             f"**{totals[False][1]:,}** | **{totals[True][1]:,}** |")
    if baseline:
        total += f" **{totals[False][2]:,.0f}** | **{totals[True][2]:,.0f}** |"
    lines.append(total)
    # What the build's codec choices cost in deep storage, beside their instructions.
    size = (f"| segment file (bytes/row) | {results[False][1]['bytes_per_row']:.1f} | "
            f"{results[True][1]['bytes_per_row']:.1f} | | |")
    if baseline:
        size += (f" {before[False]['bytes_per_row']:.1f} | {before[True]['bytes_per_row']:.1f} |")
    lines.append(size)
    meta = (f"- instructions: callgrind, {records:,} records per run (exact for this binary and "
            f"input; compare runs of different builds with `--binary`)\n"
            f"- CPU: one native run of {cpu_records:,} records; load average "
            f"{load_before[0]:.2f} before, {load_after[0]:.2f} after (machine-dependent, "
            f"noisy; the instruction counts are the figure to compare)")
    return meta, "\n".join(lines), totals


def update_docs(text):
    path = os.path.join(ROOT, "docs", "benchmarks.md")
    with open(path) as f:
        doc = f.read()
    start = doc.find(SECTION + "\n")
    if start < 0:
        doc = doc.rstrip("\n") + "\n\n" + text
    else:
        end = doc.find("\n## ", start + len(SECTION))
        # A section after this one keeps its blank line before it.
        doc = doc[:start] + text + ("\n" + doc[end + 1:] if end >= 0 else "")
    with open(path, "w") as f:
        f.write(doc)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100000)
    parser.add_argument("--cpu_records", type=int, default=400000)
    parser.add_argument("--binary", default="")
    parser.add_argument("--baseline", default="",
                        help="an earlier build of //bench:ingest_kernel: its instructions beside")
    parser.add_argument("--baseline_label", default="before",
                        help="what the baseline is (e.g. its git revision)")
    parser.add_argument("--max_rows_in_memory", type=int, default=0,
                        help="spill every N rows (default: the binary's 150000, which 100k "
                             "records never reach); not with --update-docs")
    parser.add_argument("--update-docs", action="store_true")
    args = parser.parse_args()
    if args.max_rows_in_memory:
        if args.update_docs:
            sys.exit("--update-docs writes the default run's figures: no --max_rows_in_memory")
        EXTRA_FLAGS.append(f"--max_rows_in_memory={args.max_rows_in_memory}")
    binary = args.binary
    if not binary:
        run(["bazel", "build", "-c", "opt", "//bench:ingest_kernel"], cwd=ROOT)
        binary = os.path.join(ROOT, "bazel-bin", "bench", "ingest_kernel")
    meta, body, _ = table(binary, args.records, args.cpu_records, args.baseline,
                          args.baseline_label)
    if args.baseline:
        meta += (f"\n- before: the same instructions of the build at {args.baseline_label} "
                 f"(`--baseline`), same records")
    rev = run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT).stdout.strip()
    flags = (f" --baseline=<the build at {args.baseline_label}> "
             f"--baseline_label={args.baseline_label}" if args.baseline else "")
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    text = (f"{SECTION}\n\nWritten by `python3 bench/ingest_kernel.py --update-docs` "
            f"(`//bench:ingest_kernel`); do not edit by hand.\n\n"
            f"- command: `python3 bench/ingest_kernel.py --update-docs{flags}`; git {rev}; {now}\n"
            f"{meta}\n- data: the benchmark's wiki-edit-like records (~214 B), HOUR segments, "
            f"maxRowsInMemory 150000; rollup on = queryGranularity MINUTE and the 4 "
            f"low-cardinality dimensions, as in the end-to-end runs\n\n{body}\n")
    print(text)
    if args.update_docs:
        update_docs(text)


if __name__ == "__main__":
    main()
