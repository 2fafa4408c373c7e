#!/usr/bin/env bash
# Installs the iceberg test tier's independent readers (tests/iceberg):
# pyiceberg (SQL catalog on SQLite and PostgreSQL, REST catalog, pyarrow) and
# DuckDB, pinned with hashes in tests/iceberg/requirements.txt, into a venv
# outside the repository:
#   ${SLUICE_ICEBERG_READERS_CACHE:-~/.cache/sluice/iceberg-readers}/venv
# and, beside it, DuckDB 1.4.4 with its iceberg extension loadable offline
# (tests/iceberg/requirements-duckdb-iceberg.txt) in
#   ${SLUICE_ICEBERG_READERS_CACHE:-~/.cache/sluice/iceberg-readers}/duckdb-iceberg-venv
# (pip's download cache: ~/.cache/sluice/pip). "~" is the user's home from
# the password database (Bazel moves $HOME in tests). Idempotent: with the
# venv of the current requirements in place (a stamp of their checksum and
# the Python version) it does nothing and needs no network. Needs python3
# 3.11 with venv (the pinned wheels are CPython 3.11, x86_64). Prints the
# venv's python on its last line.
set -euo pipefail
cd "$(dirname "$0")/.."

user_home=$(getent passwd "$(id -u)" 2>/dev/null | cut -d: -f6 || true)
cache_root="${user_home:-$HOME}/.cache/sluice"
readers="${SLUICE_ICEBERG_READERS_CACHE:-$cache_root/iceberg-readers}"
python=${SLUICE_PYTHON:-$(command -v python3 || true)}
if [[ -z "$python" ]]; then
  echo "[iceberg-readers] needs python3 (Debian: python3, python3-venv)" >&2
  exit 1
fi

# make_venv VENV REQUIREMENTS IMPORTS: the venv of exactly those pins, unless
# it is there already (its stamp: the requirements' checksum and Python's
# version).
make_venv() {
  local venv=$1 req=$2 imports=$3
  local stamp
  stamp=$( (sha256sum "$req" | cut -d' ' -f1; "$python" --version 2>&1) | sha256sum | cut -d' ' -f1)
  if [[ -x "$venv/bin/python" && "$(cat "$venv/.sluice-stamp" 2>/dev/null)" == "$stamp" ]]; then
    echo "[iceberg-readers] venv present: $venv"
    return
  fi
  echo "[iceberg-readers] creating $venv with $("$python" --version 2>&1) ($req)"
  rm -rf "$venv"
  mkdir -p "$(dirname "$venv")"
  "$python" -m venv "$venv"
  PIP_CACHE_DIR="$cache_root/pip" PIP_DISABLE_PIP_VERSION_CHECK=1 \
    "$venv/bin/pip" install -q --require-hashes --only-binary=:all: --no-deps -r "$req"
  "$venv/bin/python" -c "$imports"
  echo "$stamp" > "$venv/.sluice-stamp"
}

make_venv "$readers/venv" tests/iceberg/requirements.txt \
  'import pyiceberg.catalog.sql, pyiceberg.catalog.rest, pyarrow, duckdb, sqlalchemy, psycopg2'
make_venv "$readers/duckdb-iceberg-venv" tests/iceberg/requirements-duckdb-iceberg.txt \
  'import duckdb; assert duckdb.__version__ == "1.4.4"'
echo "$readers/venv/bin/python"
