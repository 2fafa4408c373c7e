#!/usr/bin/env bash
# Generates the Python stubs from proto/sluice/v1/*.proto with
# `python -m grpc_tools.protoc` (the venv's pinned grpcio-tools) into a
# temporary directory (nothing is written into the repository) and runs the
# client with the arguments given:
#   examples/python/run.sh --supervisor=127.0.0.1:7070 --auth_token_file=TOKEN ...
# Needs scripts/install_clients.sh first (the venv); uses no network.
set -euo pipefail
# shellcheck source=examples/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/../env.sh"

python="$PY_VENV/bin/python"
[[ -x "$python" ]] || die "[python-client] no venv at $PY_VENV: run scripts/install_clients.sh"

gen=$(mktemp -d "${TMPDIR:-/tmp}/sluice-python-client.XXXXXX")
trap 'rm -rf "$gen"' EXIT
protos=()
for f in "$REPO"/proto/sluice/v1/*.proto; do protos+=("${f#"$REPO/proto/"}"); done
"$python" -m grpc_tools.protoc -I "$REPO/proto" --python_out="$gen" --grpc_python_out="$gen" \
  "${protos[@]}" || die "[python-client] grpc_tools.protoc failed"
rc=0
PYTHONPATH="$gen" PYTHONDONTWRITEBYTECODE=1 "$python" "$EXAMPLES_DIR/python/sluice_client.py" \
  --readme="$REPO/README.md" "$@" || rc=$?
exit "$rc"
