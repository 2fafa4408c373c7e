#!/usr/bin/env bash
# Installs the iceberg test tier's independent readers (tests/iceberg):
# pyiceberg (SQL catalog on SQLite, pyarrow) and DuckDB, pinned with hashes in
# tests/iceberg/requirements.txt, into a venv outside the repository:
#   ${SLUICE_ICEBERG_READERS_CACHE:-~/.cache/sluice/iceberg-readers}/venv
# (pip's download cache: ~/.cache/sluice/pip). "~" is the user's home from
# the password database (Bazel moves $HOME in tests). Idempotent: with the
# venv of the current requirements in place (a stamp of their checksum and
# the Python version) it does nothing and needs no network. Needs python3
# 3.11 with venv (the pinned wheels are CPython 3.11, x86_64). Prints the
# venv's python on its last line.
set -euo pipefail
cd "$(dirname "$0")/.."

req=tests/iceberg/requirements.txt
user_home=$(getent passwd "$(id -u)" 2>/dev/null | cut -d: -f6 || true)
cache_root="${user_home:-$HOME}/.cache/sluice"
venv="${SLUICE_ICEBERG_READERS_CACHE:-$cache_root/iceberg-readers}/venv"
python=${SLUICE_PYTHON:-$(command -v python3 || true)}
if [[ -z "$python" ]]; then
  echo "[iceberg-readers] needs python3 (Debian: python3, python3-venv)" >&2
  exit 1
fi
stamp=$( (sha256sum "$req" | cut -d' ' -f1; "$python" --version 2>&1) | sha256sum | cut -d' ' -f1)
if [[ -x "$venv/bin/python" && "$(cat "$venv/.sluice-stamp" 2>/dev/null)" == "$stamp" ]]; then
  echo "[iceberg-readers] venv present: $venv"
  echo "$venv/bin/python"
  exit 0
fi
echo "[iceberg-readers] creating $venv with $("$python" --version 2>&1) ($req)"
rm -rf "$venv"
mkdir -p "$(dirname "$venv")"
"$python" -m venv "$venv"
PIP_CACHE_DIR="$cache_root/pip" PIP_DISABLE_PIP_VERSION_CHECK=1 \
  "$venv/bin/pip" install -q --require-hashes --only-binary=:all: --no-deps -r "$req"
"$venv/bin/python" -c 'import pyiceberg.catalog.sql, pyiceberg.catalog.rest, pyarrow, duckdb, sqlalchemy, psycopg2'
echo "$stamp" > "$venv/.sluice-stamp"
echo "$venv/bin/python"
