#!/usr/bin/env bash
# Freshness of an Iceberg datasource (not part of the test suite):
#   bash bench/iceberg/freshness.sh [--records=150000] [--rate=5000] [--handoff=PT5S]
# Runs the demo's cluster (dev broker, 2 workers, replicas 2) on a live
# stream: records stamped with the wall-clock time they are produced,
# intermediateHandoffPeriod --handoff, while bench/iceberg/freshness.py polls
# the table through pyiceberg and prints how long after being produced each
# record became readable (p50/p90/p99/max). The demo's own audit must PASS.
set -euo pipefail
cd "$(dirname "$0")/../.."
records=150000
rate=5000
handoff=PT5S
for arg in "$@"; do
  case "$arg" in
    --records=*) records=${arg#*=} ;;
    --rate=*) rate=${arg#*=} ;;
    --handoff=*) handoff=${arg#*=} ;;
    *) echo "unknown argument $arg" >&2; exit 2 ;;
  esac
done
bazel build --output_filter='^$' //tools:sluice-demo
python=$(scripts/install_iceberg_readers.sh | tail -n 1)
root=$(mktemp -d /tmp/sluice-freshness.XXXXXX)
trap 'rm -rf "$root"' EXIT
"$python" bench/iceberg/freshness.py --store="$root/supervisor/metadata.db" \
  --done_file="$root/done" --json_out="$root/freshness.json" &
poller=$!
status=0
bazel-bin/tools/sluice-demo --root_dir="$root" --keep_data --records="$records" --rate="$rate" \
  --live_timestamps --intermediate_handoff_period="$handoff" > "$root/demo.log" 2>&1 || status=$?
touch "$root/done"
wait "$poller" || status=$?
grep -E "PASS|FAIL" "$root/demo.log" | tail -n 2
if [[ $status -ne 0 ]]; then
  echo "freshness run failed ($status); the demo's log:" >&2
  tail -n 40 "$root/demo.log" >&2
fi
exit $status
