#!/usr/bin/env python3
"""Where a test run's time went, from the summary `bazel test` prints.

Usage: test_timing.py BAZEL_TEST_OUTPUT [--top=N]
       test_timing.py --order < LABELS    (the labels, longest tiers first)
Reads the lines `//pkg:target   PASSED in 12.3s` (also FAILED, TIMEOUT,
FLAKY) and prints, per tier, how many targets ran and their summed
seconds, then the N slowest targets. Tests run two at a time, so a tier's
sum is test-seconds, not wall time. Tiers follow the suite's layout:
postgresql (the `*_postgresql_test` twins and the failover scenarios),
fault, real_kafka, s3, grpcurl, clients, iceberg (their packages under tests/),
cluster (the in-process clusters, tests/*_test), unit (tests beside the code).
"""
import re
import sys

LINE = re.compile(r"^(//\S+)\s+(?:\(cached\)\s+)?(PASSED|FAILED|TIMEOUT|FLAKY|NO STATUS|INCOMPLETE)\b")
SECONDS = re.compile(r"([\d.]+)s\s*$")


def tier(label):
    if label.endswith("_postgresql_test") or "failover" in label:
        return "postgresql"
    for pkg in ("fault", "real_kafka", "s3", "grpcurl", "clients", "iceberg"):
        if label.startswith(f"//tests/{pkg}"):
            return pkg
    if label.startswith("//tests:") or label.startswith("//tests/"):
        return "cluster"
    return "unit"


# The tiers whose targets run longest start first (--order), so the two test
# slots are not left with one long scenario each at the end of the run.
LONGEST_FIRST = ["fault", "postgresql", "real_kafka", "s3", "clients", "grpcurl", "iceberg", "cluster", "unit"]


def order(labels):
    return sorted(labels, key=lambda label: (LONGEST_FIRST.index(tier(label)), label))


def parse(path):
    rows = []
    with open(path, errors="replace") as f:
        for line in f:
            m = LINE.match(line.strip())
            if m:
                secs = SECONDS.search(line.strip())
                rows.append((m.group(1), m.group(2), float(secs.group(1)) if secs else 0.0))
    return rows


def main():
    if sys.argv[1:] == ["--order"]:
        print("\n".join(order(line.strip() for line in sys.stdin if line.strip())))
        return 0
    args = [a for a in sys.argv[1:] if not a.startswith("--top=")]
    top = int(next((a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--top=")), 10))
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    rows = parse(args[0])
    if not rows:
        print("[time] no test summary lines found")
        return 0
    tiers = {}
    for label, _, secs in rows:
        n, total = tiers.get(tier(label), (0, 0.0))
        tiers[tier(label)] = (n + 1, total + secs)
    print("[time] test-seconds by tier (two tests run at a time):")
    for name, (n, total) in sorted(tiers.items(), key=lambda kv: -kv[1][1]):
        print(f"[time]   {name:<11} {n:4d} targets {total:8.1f} s")
    print(f"[time] the {min(top, len(rows))} slowest test targets:")
    for label, status, secs in sorted(rows, key=lambda r: -r[2])[:top]:
        print(f"[time]   {secs:7.1f} s  {status:<7} {label}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
