#!/usr/bin/env bash
# Builds buf (github.com/bufbuild/buf/cmd/buf, the version pinned in
# third_party/buf/VERSION) with `go install` from the Go module proxy into a
# cache outside the repository, keyed by version:
#   ${SLUICE_BUF_CACHE:-~/.cache/sluice/buf}/<version>/bin/buf
# GOPATH, GOMODCACHE and GOCACHE live under the same directory, so nothing
# outside it is touched. Idempotent: once the binary is there and reports the
# pinned version it does nothing and needs no network. No binary is
# committed. Prints the binary's path on its last line. Needs Go 1.25+ (on
# PATH or in /usr/local/go). Same scheme as scripts/install_grpcurl.sh.
# The contract's lint and breaking-change tests (//proto:buf_lint_test,
# //proto:buf_breaking_test) run this binary.
set -euo pipefail
cd "$(dirname "$0")/.."

version=$(tr -d ' \n' < third_party/buf/VERSION)
if [[ ! "$version" =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
  echo "[buf] bad version in third_party/buf/VERSION: '$version'" >&2
  exit 1
fi
cache=${SLUICE_BUF_CACHE:-$HOME/.cache/sluice/buf}
root="$cache/$version"
bin="$root/bin/buf"
# `buf --version` prints the version without the leading "v".
want=${version#v}

if [[ -x "$bin" ]] && [[ "$("$bin" --version 2>&1)" == "$want" ]]; then
  echo "[buf] buf $version present"
  echo "$bin"
  exit 0
fi

go=$(command -v go || true)
if [[ -z "$go" && -x /usr/local/go/bin/go ]]; then go=/usr/local/go/bin/go; fi
# buf's go.mod needs a Go newer than Debian 12's 1.19.
if [[ -z "$go" ]] || ! "$go" version | grep -qE 'go1\.(2[5-9]|[3-9][0-9])'; then
  echo "[buf] needs Go 1.25 or newer (found: ${go:-none}${go:+, $("$go" version)});" \
       "install it from https://go.dev/dl/ into /usr/local/go" >&2
  exit 1
fi

echo "[buf] go install github.com/bufbuild/buf/cmd/buf@$version into $root"
mkdir -p "$root"
# -modcacherw: a module cache the user can delete with rm -rf. buf's version
# is a constant in its source, so no -ldflags are needed.
GOPATH="$root/gopath" GOMODCACHE="$root/gopath/pkg/mod" GOCACHE="$root/gocache" \
  GOBIN="$root/bin" GOFLAGS=-modcacherw GO111MODULE=on GOTOOLCHAIN=local \
  "$go" install "github.com/bufbuild/buf/cmd/buf@$version"
if [[ "$("$bin" --version 2>&1)" != "$want" ]]; then
  echo "[buf] $bin does not report version $version" >&2
  exit 1
fi
echo "[buf] buf $("$bin" --version 2>&1)"
echo "$bin"
