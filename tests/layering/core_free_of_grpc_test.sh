#!/usr/bin/env bash
# Fails if a core target reaches gRPC in the dependency graph (each argument
# is a genquery result: a path from the core to gRPC, empty when there is
# none) or if a core source file includes a gRPC header (system headers are
# visible to every target, so the graph alone would not catch it).
set -uo pipefail
failed=0
for query_result in "$@"; do
  if [[ -s "$query_result" ]]; then
    echo "FAIL: a core target depends on gRPC ($(basename "$query_result")):"
    sed 's/^/  /' "$query_result"
    failed=1
  fi
done
cd "${TEST_SRCDIR}/${TEST_WORKSPACE}" || exit 1
mapfile -t sources < <(find -L task supervisor supervisor/iceberg supervisor/store -maxdepth 1 -type f \( -name '*.h' -o -name '*.cc' \) 2>/dev/null | sort)
if ((${#sources[@]} == 0)); then
  echo "FAIL: no core sources in the runfiles"
  exit 1
fi
if grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"](grpcpp/|grpc/|grpc\+\+/|[^">]*\.grpc\.pb\.h)' "${sources[@]}"; then
  echo "FAIL: the lines above include gRPC in core sources; move that code to an adapter (grpc_*, *_service, *_server, main)"
  failed=1
fi
if ((failed == 0)); then
  echo "PASS: ${#sources[@]} core source files and their dependency graph are free of gRPC"
fi
exit "$failed"
