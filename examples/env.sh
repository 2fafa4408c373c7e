# Sourced by scripts/install_clients.sh and examples/{python,go}/run.sh: the
# pinned versions (examples/VERSIONS) and where their caches live, all
# outside the repository:
#   ${SLUICE_CLIENTS_CACHE:-~/.cache/sluice}/python-venv/grpcio-<version>/
#   ${SLUICE_CLIENTS_CACHE:-~/.cache/sluice}/go-client/{gopath,gocache,bin/<version>}/
# "~" is the user's home from the password database (Bazel moves $HOME in
# tests), as for grpcurl. Sets REPO, PY_VENV, GO_CACHE, GO_PLUGIN_DIR, GO_BIN
# (empty when no Go 1.26+ is found: grpc v1.85 needs it) and the die/go_env helpers.
EXAMPLES_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$EXAMPLES_DIR/.." && pwd)
# shellcheck source=examples/VERSIONS
source "$EXAMPLES_DIR/VERSIONS"

_user_home=$(getent passwd "$(id -u)" 2>/dev/null | cut -d: -f6)
CLIENTS_CACHE=${SLUICE_CLIENTS_CACHE:-${_user_home:-$HOME}/.cache/sluice}
PY_VENV="$CLIENTS_CACHE/python-venv/grpcio-$PYTHON_GRPCIO_VERSION"
GO_CACHE="$CLIENTS_CACHE/go-client"
GO_PLUGIN_DIR="$GO_CACHE/bin/protoc-gen-go-$PROTOC_GEN_GO_VERSION-grpc-$PROTOC_GEN_GO_GRPC_VERSION"
# The Go module path of examples/go (its go.mod) and of its generated stubs.
GO_MODULE=example.com/sluice/client

GO_BIN=$(command -v go || true)
if [[ -z "$GO_BIN" && -x /usr/local/go/bin/go ]]; then GO_BIN=/usr/local/go/bin/go; fi
if [[ -n "$GO_BIN" ]] && ! "$GO_BIN" version | grep -qE 'go1\.(2[6-9]|[3-9][0-9])'; then
  GO_BIN=""
fi

die() {
  echo "$*" >&2
  exit 1
}

# Runs go with every cache under $GO_CACHE; extra VAR=value pairs first.
go_env() {
  env GOPATH="$GO_CACHE/gopath" GOMODCACHE="$GO_CACHE/gopath/pkg/mod" \
    GOCACHE="$GO_CACHE/gocache" GOFLAGS=-modcacherw GO111MODULE=on GOTOOLCHAIN=local "$@"
}
