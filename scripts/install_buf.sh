#!/usr/bin/env bash
# Builds buf (github.com/bufbuild/buf/cmd/buf, the version pinned in
# third_party/buf/VERSION) into
#   ${SLUICE_BUF_CACHE:-~/.cache/sluice/buf}/<version>/bin/buf
# once, with `go install` (scripts/go_tool.sh says how). Prints the binary's
# path on its last line. The contract's lint and breaking-change tests
# (//proto:buf_lint_test, //proto:buf_breaking_test) run it.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/go_tool.sh

# buf's version is a constant in its source; `buf --version` prints it
# without the leading "v" (1.75.0).
version=$(tr -d ' \n' < third_party/buf/VERSION)
go_tool_install buf github.com/bufbuild/buf/cmd/buf \
  "${SLUICE_BUF_CACHE:-$HOME/.cache/sluice/buf}" --version "${version#v}"
