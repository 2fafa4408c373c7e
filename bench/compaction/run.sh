#!/usr/bin/env bash
# The compaction benchmark (not part of the test suite):
#   bash bench/compaction/run.sh [--minutes=10] [--rate=1000] [--records=800000]
#        [--repetitions=1] [--only=live|throughput|native] [--dir=DIR] [--write_doc]
# Runs the demo's cluster (tools/sluice-demo: dev broker, supervisor, 2
# workers, taskCount 2 x replicas 2, an Iceberg table) with 1,000-row
# sequences (maxRowsPerSegment 1000), MINUTE segments and no malformed
# records, twice over:
#  - live: --rate records/s stamped with their production time for
#    --minutes, compaction on (skipOffsetFromLatest PT2M, period PT5S); the
#    demo waits (at most 3 min) until every interval older than the skip
#    offset holds at most 2 used segments, runs the audit (sluicectl verify,
#    the Iceberg table's included) and the Iceberg query; then
#    bench/compaction/check_table.py counts the table's data files per
#    interval (at most 2) and checks sum(count) at every snapshot;
#  - throughput: --records pre-dated records (timestamps ending at the
#    start, one per ms) ingested as fast as they come, compaction off, then
#    on with skipOffsetFromLatest PT0S (every interval behind the newest is
#    compacted while ingestion goes on), --repetitions times: ingestion
#    rows/s = records committed in full sequences / (producer start -> they
#    are committed; the groups' last open sequences wait for the taskDuration
#    roll-over and are left out), their ratio, and compaction rows/s = rows
#    compacted / time spent compacting (the supervisor's compaction
#    records); the table's files per interval are checked as in the live run.
#  - native: the throughput pair once more without an Iceberg table
#    (segments only), where no append moves a table under a compaction.
# Writes "## Compaction" in docs/benchmarks.md (not with --only, unless
# --write_doc: then from every run found in --dir, e.g. a live run kept from
# an earlier invocation with the same --dir).
set -euo pipefail
cd "$(dirname "$0")/../.."
minutes=10
rate=1000
records=800000
repetitions=1
only=""
out=""
write_doc=""
for arg in "$@"; do
  case "$arg" in
    --minutes=*) minutes=${arg#*=} ;;
    --rate=*) rate=${arg#*=} ;;
    --records=*) records=${arg#*=} ;;
    --repetitions=*) repetitions=${arg#*=} ;;
    --only=*) only=${arg#*=} ;;
    --dir=*) out=${arg#*=} ;;
    --write_doc) write_doc=1 ;;
    *) echo "unknown argument $arg" >&2; exit 2 ;;
  esac
done
rev=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
if [[ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]]; then
  rev="$rev (with local changes)"
fi
bazel build --output_filter='^$' //tools:sluice-demo
python=$(scripts/install_iceberg_readers.sh | tail -n 1)
if [[ -z "$out" ]]; then out=$(mktemp -d /tmp/sluice-compaction-bench.XXXXXX); fi
mkdir -p "$out"
echo "runs in $out"
common=(--max_rows_per_segment=1000 --segment_granularity=MINUTE --malformed_fraction=0
        --keep_data)
load() { cut -d' ' -f1-3 /proc/loadavg; }
status=0

if [[ -z "$only" || "$only" == live ]]; then
  live_records=$((minutes * 60 * rate))
  echo "live: $live_records records at $rate records/s ($minutes min), compaction on"
  load > "$out/live.load"
  bazel-bin/tools/sluice-demo "${common[@]}" --root_dir="$out/live" --records="$live_records" \
    --rate="$rate" --live_timestamps --timeout_seconds=$((minutes * 60 + 300)) \
    --compaction='{"skipOffsetFromLatest":"PT2M","period":"PT5S","snapshotRetention":"P1D"}' \
    --summary_json="$out/live.json" --iceberg_python="$python" \
    --iceberg_query_script=tools/demo/query_table.py > "$out/live.log" 2>&1 || status=$?
  load >> "$out/live.load"
  grep -v -E '^\[|NOT CHECKED' "$out/live.log" | sed -n '/everything produced is committed/,$p'
  if [[ $status -ne 0 ]]; then
    echo "the live run failed ($status); its log: $out/live.log" >&2
    exit $status
  fi
  "$python" bench/compaction/check_table.py "$out/live/supervisor/metadata.db" "$out/live.json" \
    | tee "$out/live.check"
fi

throughput_runs() {  # $1: name prefix; then extra demo flags
  local prefix=$1
  shift
  for ((r = 1; r <= repetitions; r++)); do
    for mode in off on; do
      name="$prefix-$mode-$r"
      flags=("$@")
      if [[ $mode == on ]]; then
        flags+=(--compaction='{"skipOffsetFromLatest":"PT0S","period":"PT5S","snapshotRetention":"P1D"}')
      fi
      load > "$out/$name.load"
      bazel-bin/tools/sluice-demo "${common[@]}" --root_dir="$out/$name" --records="$records" \
        --rate=0 --timeout_seconds=1200 --summary_json="$out/$name.json" "${flags[@]}" \
        > "$out/$name.log" 2>&1 || status=$?
      load >> "$out/$name.load"
      if [[ $status -ne 0 ]]; then
        echo "$name failed ($status); its log: $out/$name.log" >&2
        tail -n 30 "$out/$name.log" >&2
        exit $status
      fi
      if [[ $prefix == throughput ]]; then
        "$python" bench/compaction/check_table.py "$out/$name/supervisor/metadata.db" \
          "$out/$name.json" --no_snapshots > "$out/$name.check" || { cat "$out/$name.check"; exit 1; }
      fi
      python3 - "$out/$name.json" "$name" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(f"{sys.argv[2]}: {d['full_sequences_rows_per_second']:.0f} rows/s ingested "
      f"({d['full_sequences_rows']} rows in {d['full_sequences_seconds']:.1f}s; all "
      f"{d['ingest_seconds']:.1f}s), {d['compactions']} compactions, {d['rows_compacted']} rows "
      f"in {d['compacting_ms']} ms")
PY
    done
  done
}
if [[ -z "$only" || "$only" == throughput ]]; then throughput_runs throughput; fi
if [[ -z "$only" || "$only" == native ]]; then throughput_runs native --iceberg_table=false; fi

report=(python3 bench/compaction/report.py --dir="$out" --revision="$rev" --minutes="$minutes"
        --rate="$rate" --records="$records" --repetitions="$repetitions")
if [[ -z "$only" || -n "$write_doc" ]]; then
  "${report[@]}" --doc=docs/benchmarks.md
else
  "${report[@]}"
fi
