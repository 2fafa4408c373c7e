#!/usr/bin/env bash
# What the web console costs the supervisor while it ingests: starts the demo
# (dev broker, a supervisor, 2 workers, records produced at --rate for the
# whole measurement) with --keep_running, then loads the console with
# console_load.py at 1, 4 and 16 concurrent clients (each a browser tab
# refreshing the datasource page as fast as it answers), printing page views
# and requests per second, latency and the supervisor's CPU per page view.
#   bash bench/console/run.sh [--records=600000] [--rate=5000] [--seconds=20]
set -euo pipefail
cd "$(dirname "$0")/../.."
records=600000 rate=5000 seconds=20
for arg in "$@"; do
  case "$arg" in
    --records=*) records=${arg#*=} ;;
    --rate=*) rate=${arg#*=} ;;
    --seconds=*) seconds=${arg#*=} ;;
    *) echo "usage: $0 [--records=N] [--rate=R] [--seconds=S]" >&2; exit 2 ;;
  esac
done
bazel build -c opt //tools:sluice-demo >/dev/null
root=$(mktemp -d /tmp/sluice-console-bench.XXXXXX)
log="$root/demo.out"
bazel-bin/tools/sluice-demo --records="$records" --rate="$rate" --keep_running \
  --timeout_seconds=3600 --root_dir="$root/cluster" >"$log" 2>&1 &
demo=$!
trap 'kill -INT $demo 2>/dev/null; wait $demo 2>/dev/null; rm -rf "$root"' EXIT
for _ in $(seq 120); do
  grep -qs "web console" "$log" && break
  sleep 0.5
done
url=$(sed -n 's/.*web console *\(http:[^ ]*\)\/console\/.*/\1/p' "$log" | head -1)
token=$(sed -n 's/.*web console .*(sign in with the token in \([^)]*\)).*/\1/p' "$log" | head -1)
[ -n "$url" ] && [ -n "$token" ] || { echo "the demo printed no console address"; cat "$log"; exit 1; }
# Records are still being produced and ingested while the console is loaded.
sleep 5
pid=$(pgrep -f "sluice-supervisor.*--console_listen" | head -1)
echo "console $url, supervisor pid $pid, $rate records/s produced"
echo "idle: $(python3 bench/console/console_load.py --url="$url" --token_file="$token" --clients=0 --seconds=5 --supervisor_pid="$pid")"
for clients in 1 4 16; do
  echo "clients=$clients: $(python3 bench/console/console_load.py --url="$url" --token_file="$token" \
    --clients="$clients" --seconds="$seconds" --supervisor_pid="$pid")"
done
