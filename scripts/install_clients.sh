#!/usr/bin/env bash
# Installs the example clients' toolchains (examples/python, examples/go) at
# the versions pinned in examples/VERSIONS, examples/python/requirements.txt
# and examples/go/go.mod/go.sum, into caches outside the repository
# (examples/env.sh):
#   ~/.cache/sluice/python-venv/grpcio-<version>/  a venv with the pinned
#       grpcio, grpcio-tools, protobuf (pip's download cache: ~/.cache/sluice/pip)
#   ~/.cache/sluice/go-client/  GOPATH, GOMODCACHE, GOCACHE and the protoc
#       plugins (protoc-gen-go, protoc-gen-go-grpc) built with `go install`
# then generates and builds the Go client once (examples/go/run.sh
# --build_only) so its build cache is warm. Idempotent: with everything in
# place (stamps keyed by the pins' checksums) it does nothing and needs no
# network. Nothing is committed or written into the repository. The clients
# test tier (tests/clients) runs both clients. Needs python3 with venv and
# Go 1.26+ (on PATH or in /usr/local/go). Prints one line per language.
set -euo pipefail
# shellcheck source=examples/env.sh
source "$(dirname "$0")/../examples/env.sh"
cd "$REPO"

# --- Python ---------------------------------------------------------------
req=examples/python/requirements.txt
grep -qxF "grpcio==$PYTHON_GRPCIO_VERSION" "$req" ||
  die "[clients] $req does not pin grpcio==$PYTHON_GRPCIO_VERSION (examples/VERSIONS)"
py_stamp="$(sha256sum "$req" | cut -d' ' -f1)"
if [[ -x "$PY_VENV/bin/python" && "$(cat "$PY_VENV/.sluice-stamp" 2>/dev/null)" == "$py_stamp" ]]; then
  echo "[clients] python venv present: $PY_VENV"
else
  python=${SLUICE_PYTHON:-$(command -v python3 || true)}
  [[ -n "$python" ]] || die "[clients] needs python3 (Debian: python3, python3-venv)"
  echo "[clients] creating $PY_VENV with $("$python" --version 2>&1) ($req)"
  rm -rf "$PY_VENV"
  mkdir -p "$(dirname "$PY_VENV")"
  "$python" -m venv "$PY_VENV" || die "[clients] python3 -m venv failed (Debian: python3-venv)"
  PIP_CACHE_DIR="$CLIENTS_CACHE/pip" PIP_DISABLE_PIP_VERSION_CHECK=1 \
    "$PY_VENV/bin/pip" install -q --no-deps --only-binary=:all: -r "$req"
  "$PY_VENV/bin/python" -c 'import grpc, grpc_tools.protoc, google.protobuf' ||
    die "[clients] the venv cannot import grpc/grpc_tools"
  echo "$py_stamp" > "$PY_VENV/.sluice-stamp"
  echo "[clients] python: grpcio $("$PY_VENV/bin/python" -c 'import grpc; print(grpc.__version__)')"
fi

# --- Go -------------------------------------------------------------------
[[ -n "$GO_BIN" ]] ||
  die "[clients] needs Go 1.26 or newer; install it from https://go.dev/dl/ into /usr/local/go"
go_stamp="$(cat examples/go/go.mod examples/go/go.sum examples/VERSIONS proto/sluice/v1/*.proto \
  examples/go/main.go | sha256sum | cut -d' ' -f1)"
if [[ -x "$GO_PLUGIN_DIR/protoc-gen-go" && -x "$GO_PLUGIN_DIR/protoc-gen-go-grpc" &&
  "$(cat "$GO_CACHE/.sluice-stamp" 2>/dev/null)" == "$go_stamp" ]]; then
  echo "[clients] go plugins and modules present: $GO_CACHE"
  exit 0
fi
mkdir -p "$GO_PLUGIN_DIR"
for pkg in "google.golang.org/protobuf/cmd/protoc-gen-go@$PROTOC_GEN_GO_VERSION" \
  "google.golang.org/grpc/cmd/protoc-gen-go-grpc@$PROTOC_GEN_GO_GRPC_VERSION"; do
  name=${pkg%@*}
  name=${name##*/}
  if [[ ! -x "$GO_PLUGIN_DIR/$name" ]]; then
    echo "[clients] go install $pkg"
    go_env GOBIN="$GO_PLUGIN_DIR" "$GO_BIN" install "$pkg"
  fi
done
"$GO_PLUGIN_DIR/protoc-gen-go" --version | grep -qF "$PROTOC_GEN_GO_VERSION" ||
  die "[clients] protoc-gen-go is not $PROTOC_GEN_GO_VERSION"
"$GO_PLUGIN_DIR/protoc-gen-go-grpc" --version | grep -qF "${PROTOC_GEN_GO_GRPC_VERSION#v}" ||
  die "[clients] protoc-gen-go-grpc is not $PROTOC_GEN_GO_GRPC_VERSION"
echo "[clients] go mod download (examples/go/go.mod)"
(cd examples/go && go_env "$GO_BIN" mod download)
examples/go/run.sh --build_only
echo "$go_stamp" > "$GO_CACHE/.sluice-stamp"
echo "[clients] go: $("$GO_BIN" version), protoc plugins in $GO_PLUGIN_DIR"
