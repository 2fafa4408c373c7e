#!/usr/bin/env bash
# Generates the Go stubs from proto/sluice/v1/*.proto (Debian's protoc with
# protoc-gen-go and protoc-gen-go-grpc at the versions in examples/VERSIONS),
# builds the client in a temporary copy of this module (nothing is written
# into the repository), and runs it with the arguments given:
#   examples/go/run.sh --supervisor=127.0.0.1:7070 --auth_token_file=TOKEN ...
# --build_only: generate and build only (scripts/install_clients.sh warms the
# build cache with it). Needs scripts/install_clients.sh first; uses no
# network (GOPROXY=off, the module cache filled by the installer).
set -euo pipefail
# shellcheck source=examples/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/../env.sh"
src="$EXAMPLES_DIR/go"

[[ -n "$GO_BIN" ]] || die "[go-client] needs Go 1.26 or newer (https://go.dev/dl/, /usr/local/go)"
command -v protoc >/dev/null || die "[go-client] needs protoc (Debian: protobuf-compiler)"
for plugin in protoc-gen-go protoc-gen-go-grpc; do
  [[ -x "$GO_PLUGIN_DIR/$plugin" ]] ||
    die "[go-client] no $GO_PLUGIN_DIR/$plugin: run scripts/install_clients.sh"
done

work=$(mktemp -d "${TMPDIR:-/tmp}/sluice-go-client.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp "$src/go.mod" "$src/go.sum" "$src/main.go" "$work/"

protos=()
mopts=()
for f in "$REPO"/proto/sluice/v1/*.proto; do
  rel=${f#"$REPO/proto/"}
  protos+=("$rel")
  mopts+=("--go_opt=M$rel=$GO_MODULE/sluicev1" "--go-grpc_opt=M$rel=$GO_MODULE/sluicev1")
done
protoc -I "$REPO/proto" \
  --plugin=protoc-gen-go="$GO_PLUGIN_DIR/protoc-gen-go" \
  --plugin=protoc-gen-go-grpc="$GO_PLUGIN_DIR/protoc-gen-go-grpc" \
  --go_out="$work" --go_opt=module="$GO_MODULE" \
  --go-grpc_out="$work" --go-grpc_opt=module="$GO_MODULE" \
  "${mopts[@]}" "${protos[@]}"

(cd "$work" && go_env GOPROXY=off GOFLAGS="-modcacherw -mod=readonly" "$GO_BIN" build -o "$work/sluice-go-client" .) ||
  die "[go-client] go build failed (run scripts/install_clients.sh)"
if [[ "${1:-}" == "--build_only" ]]; then
  echo "[go-client] built"
  exit 0
fi
rc=0
"$work/sluice-go-client" --readme="$REPO/README.md" "$@" || rc=$?
exit "$rc"
