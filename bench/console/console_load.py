#!/usr/bin/env python3
"""Loads the supervisor's web console the way open browser tabs do, and says
what it cost: page views and API requests per second sustained, latency, and
the supervisor's CPU per page view (from /proc/<pid>/stat).

A page view is what the datasource page asks every 5 s: the status, the lag
history, the commit log and the segments (4 API calls).

  console_load.py --url=http://127.0.0.1:P --token_file=F --datasource=wiki \
      --clients=4 --seconds=20 [--supervisor_pid=PID]
"""
import argparse
import http.client
import json
import os
import threading
import time
import urllib.parse

PAGE = ["", "/lag-history", "/commit-log", "/segments"]


def cpu_seconds(pid):
    if not pid:
        return None
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks  # utime + stime


def client(base, token, datasource, stop, out):
    parsed = urllib.parse.urlparse(base)
    conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=10)
    headers = {"Authorization": f"Bearer {token}"}
    latencies, pages, errors = [], 0, 0
    while not stop.is_set():
        for sub in PAGE:
            start = time.perf_counter()
            try:
                conn.request("GET", f"/console/api/datasources/{datasource}{sub}", headers=headers)
                response = conn.getresponse()
                response.read()
                if response.status != 200:
                    errors += 1
            except (OSError, http.client.HTTPException):
                errors += 1
                conn.close()
                conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=10)
            latencies.append(time.perf_counter() - start)
        pages += 1
    out.append((pages, latencies, errors))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True, help="http://HOST:PORT of the console")
    parser.add_argument("--token_file", required=True)
    parser.add_argument("--datasource", default="wiki")
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--supervisor_pid", type=int, default=0)
    args = parser.parse_args()
    token = open(args.token_file).read().strip()
    stop, out = threading.Event(), []
    threads = [threading.Thread(target=client, args=(args.url, token, args.datasource, stop, out))
               for _ in range(args.clients)]
    cpu0, t0 = cpu_seconds(args.supervisor_pid), time.perf_counter()
    for t in threads:
        t.start()
    time.sleep(args.seconds)
    stop.set()
    for t in threads:
        t.join()
    elapsed, cpu1 = time.perf_counter() - t0, cpu_seconds(args.supervisor_pid)
    pages = sum(p for p, _, _ in out)
    latencies = sorted(l for _, ls, _ in out for l in ls)
    errors = sum(e for _, _, e in out)
    result = {
        "clients": args.clients,
        "seconds": round(elapsed, 1),
        "page_views_per_s": round(pages / elapsed, 1),
        "requests_per_s": round(len(latencies) / elapsed, 1),
        "p50_ms": round(1000 * latencies[len(latencies) // 2], 2) if latencies else None,
        "p99_ms": round(1000 * latencies[int(len(latencies) * 0.99)], 2) if latencies else None,
        "errors": errors,
    }
    if cpu0 is not None:
        cpu = cpu1 - cpu0
        result["supervisor_cpu_s"] = round(cpu, 2)
        result["supervisor_cpu_ms_per_page_view"] = round(1000 * cpu / pages, 3) if pages else None
    print(json.dumps(result))


if __name__ == "__main__":
    main()
