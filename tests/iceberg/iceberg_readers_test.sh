#!/usr/bin/env bash
# The iceberg tier: a table written by //iceberg (write_test_table) read by
# pyiceberg and DuckDB (check_table.py), with a pyiceberg append between two
# of ours, byte-identical files from two runs, and a replace (compaction)
# snapshot staged again after an append won the race, also read by DuckDB's
# iceberg extension (check_duckdb_replace.py, its own venv). The readers'
# venvs come from scripts/install_iceberg_readers.sh (scripts/install_deps.sh
# --tests); without them the test fails.
set -euo pipefail
writer=$1
checker=$2
duckdb_checker=$3
user_home=$(getent passwd "$(id -u)" 2>/dev/null | cut -d: -f6 || true)
python="${SLUICE_ICEBERG_READERS_CACHE:-${user_home:-$HOME}/.cache/sluice/iceberg-readers}/venv/bin/python"
duckdb_python="$(dirname "$(dirname "$(dirname "$python")")")/duckdb-iceberg-venv/bin/python"
for p in "$python" "$duckdb_python"; do
  if [[ ! -x "$p" ]]; then
    echo "no readers venv at $p: run scripts/install_deps.sh --tests" >&2
    exit 1
  fi
done
dir="${TEST_TMPDIR:-$(mktemp -d)}/table"
rm -rf "$dir"
mkdir -p "$dir"
# Equal input, equal bytes, also across processes: every data, manifest,
# manifest list and metadata file of two runs into the same directory.
checksums() { (cd "$dir" && find wiki -type f -print0 | sort -z | xargs -0 sha256sum); }
"$writer" create "$dir"
first_run=$(checksums)
rm -rf "$dir" && mkdir -p "$dir"
"$writer" create "$dir"
if [[ "$(checksums)" != "$first_run" ]]; then
  echo "two runs of write_test_table wrote different files:" >&2
  diff <(echo "$first_run") <(checksums) >&2 || true
  exit 1
fi
echo "ok  two runs wrote byte-identical files ($(echo "$first_run" | wc -l) files)"
"$python" "$checker" "$dir" first
"$writer" append "$dir"
"$python" "$checker" "$dir" final
"$writer" replace "$dir"
"$python" "$checker" "$dir" replaced
"$duckdb_python" "$duckdb_checker" "$dir"
