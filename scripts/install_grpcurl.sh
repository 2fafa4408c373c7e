#!/usr/bin/env bash
# Builds grpcurl (github.com/fullstorydev/grpcurl/cmd/grpcurl, the version
# pinned in third_party/grpcurl/VERSION) with `go install` from the Go module
# proxy into a cache outside the repository, keyed by version:
#   ${SLUICE_GRPCURL_CACHE:-~/.cache/sluice/grpcurl}/<version>/bin/grpcurl
# GOPATH, GOMODCACHE and GOCACHE live under the same directory, so nothing
# outside it is touched. Idempotent: once the binary is there and reports the
# pinned version it does nothing and needs no network. No binary is
# committed. Prints the binary's path on its last line. Needs Go 1.25+ (on
# PATH or in /usr/local/go).
# The grpcurl test tier (tests/grpcurl) runs this binary.
set -euo pipefail
cd "$(dirname "$0")/.."

version=$(tr -d ' \n' < third_party/grpcurl/VERSION)
if [[ ! "$version" =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
  echo "[grpcurl] bad version in third_party/grpcurl/VERSION: '$version'" >&2
  exit 1
fi
cache=${SLUICE_GRPCURL_CACHE:-$HOME/.cache/sluice/grpcurl}
root="$cache/$version"
bin="$root/bin/grpcurl"

if [[ -x "$bin" ]] && "$bin" -version 2>&1 | grep -qF "grpcurl $version"; then
  echo "[grpcurl] grpcurl $version present"
  echo "$bin"
  exit 0
fi

go=$(command -v go || true)
if [[ -z "$go" && -x /usr/local/go/bin/go ]]; then go=/usr/local/go/bin/go; fi
# grpcurl v1.9.4's go.mod says go 1.25.0; Debian 12 packages only Go 1.19.
if [[ -z "$go" ]] || ! "$go" version | grep -qE 'go1\.(2[5-9]|[3-9][0-9])'; then
  echo "[grpcurl] needs Go 1.25 or newer (found: ${go:-none}${go:+, $("$go" version)});" \
       "install it from https://go.dev/dl/ into /usr/local/go" >&2
  exit 1
fi

echo "[grpcurl] go install github.com/fullstorydev/grpcurl/cmd/grpcurl@$version into $root"
mkdir -p "$root"
# -modcacherw: a module cache the user can delete with rm -rf. -X
# main.version: `go install` leaves grpcurl's version unset ("dev build"),
# which its release builds set this way; the check above and the tests read it.
GOPATH="$root/gopath" GOMODCACHE="$root/gopath/pkg/mod" GOCACHE="$root/gocache" \
  GOBIN="$root/bin" GOFLAGS=-modcacherw GO111MODULE=on GOTOOLCHAIN=local \
  "$go" install -ldflags "-X main.version=$version" \
  "github.com/fullstorydev/grpcurl/cmd/grpcurl@$version"
if ! "$bin" -version 2>&1 | grep -qF "grpcurl $version"; then
  echo "[grpcurl] $bin does not report version $version" >&2
  exit 1
fi
echo "[grpcurl] $("$bin" -version 2>&1)"
echo "$bin"
