#!/usr/bin/env bash
# The iceberg tier: a table written by //iceberg (write_test_table) read by
# pyiceberg and DuckDB (check_table.py), with a pyiceberg append between two
# of ours. The readers' venv comes from scripts/install_iceberg_readers.sh
# (scripts/install_deps.sh --tests); without it the test fails.
set -euo pipefail
writer=$1
checker=$2
user_home=$(getent passwd "$(id -u)" 2>/dev/null | cut -d: -f6 || true)
python="${SLUICE_ICEBERG_READERS_CACHE:-${user_home:-$HOME}/.cache/sluice/iceberg-readers}/venv/bin/python"
if [[ ! -x "$python" ]]; then
  echo "no readers venv at $python: run scripts/install_deps.sh --tests" >&2
  exit 1
fi
dir="${TEST_TMPDIR:-$(mktemp -d)}/table"
rm -rf "$dir"
mkdir -p "$dir"
"$writer" create "$dir"
"$python" "$checker" "$dir" first
"$writer" append "$dir"
"$python" "$checker" "$dir" final
