#!/usr/bin/env bash
# Runs the sluice demo (docs/demo.md): installs the Debian packages sluice
# builds with (scripts/install_deps.sh; with --kafka=real also Java and the
# Apache Kafka jars; nothing only the tests use), builds the binaries with
# Bazel, then starts
# a dev Kafka broker, the supervisor and two task workers on this machine,
# ingests a stream of 300,000 wiki edits with replicas and incremental
# handoffs, prints the published segments and the exactly-once audit, and
# stops everything. Exit code 0 only if the audit passes and every process
# stopped cleanly.
#
#   scripts/demo.sh                                  # about a minute and a half after the build
#   scripts/demo.sh --keep_running                   # then explore with sluicectl
#   scripts/demo.sh --kafka=real                     # the same job on Apache Kafka 4.4 (not the dev broker)
#   scripts/demo.sh --records=1000000 --rate=0 --partitions=8 --workers=3 --task_count=4
#   scripts/demo.sh --helpon=demo_main               # every flag
set -euo pipefail
cd "$(dirname "$0")/.."

deps_flags=()
for arg in "$@"; do
  [[ "$arg" =~ ^--?kafka=real$ ]] && deps_flags=(--kafka)
done
scripts/install_deps.sh "${deps_flags[@]}"

echo "[demo] building with bazel (the first build takes several minutes)..."
# Only errors are shown (no compiler warnings or action output).
bazel build --output_filter='^$' //tools:sluice-demo

# The readers the demo ends with (pyiceberg and DuckDB, pinned wheels in a
# venv under ~/.cache/sluice; its python is the script's last line).
echo "[demo] installing the Iceberg readers (pyiceberg, DuckDB)..."
iceberg_python=$(scripts/install_iceberg_readers.sh | tail -n 1)

exec bazel-bin/tools/sluice-demo --iceberg_python="$iceberg_python" \
  --iceberg_query_script="$PWD/tools/demo/query_table.py" "$@"
