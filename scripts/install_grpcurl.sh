#!/usr/bin/env bash
# Builds grpcurl (github.com/fullstorydev/grpcurl/cmd/grpcurl, the version
# pinned in third_party/grpcurl/VERSION) into
#   ${SLUICE_GRPCURL_CACHE:-~/.cache/sluice/grpcurl}/<version>/bin/grpcurl
# once, with `go install` (scripts/go_tool.sh says how). Prints the binary's
# path on its last line. The grpcurl test tier (tests/grpcurl) runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/go_tool.sh

# -X main.version: `go install` leaves grpcurl's version unset ("dev build"),
# which its release builds set this way; the check and the tests read it.
go_tool_install grpcurl github.com/fullstorydev/grpcurl/cmd/grpcurl \
  "${SLUICE_GRPCURL_CACHE:-$HOME/.cache/sluice/grpcurl}" -version "grpcurl VERSION" \
  -ldflags "-X main.version=VERSION"
