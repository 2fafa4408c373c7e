#!/usr/bin/env bash
# Runs the whole test suite: installs what it needs, builds, runs every test
# (unit, in-process cluster, process-level fault tests), then the segment
# library's tests under AddressSanitizer + UBSan, then the thread-safety
# build (clang -Werror=thread-safety over every target, --config=tsa; it
# counts as one test), then each libFuzzer target
# of //fuzz for a few seconds from its checked-in corpus (scripts/fuzz.sh;
# each target counts as one test). Ends with `N passed, N failed`.
#
#   scripts/test.sh            everything
#   scripts/test.sh //common/... //task/...   only these patterns (no ASan or fuzz pass)
set -uo pipefail
cd "$(dirname "$0")/.."

scripts/install_deps.sh || exit 1

patterns=("$@")
asan=1
if ((${#patterns[@]} == 0)); then
  patterns=(//...)
else
  asan=0
fi

mapfile -t targets < <(bazel query "tests(set(${patterns[*]}))" 2>/dev/null | sort)
if ((${#targets[@]} == 0)); then
  echo "no test targets match ${patterns[*]}" >&2
  echo "0 passed, 1 failed"
  exit 1
fi

echo "[test] ${#targets[@]} test targets"
bazel test --nocache_test_results --keep_going "${targets[@]}"
rc=$?
summary=$(python3 scripts/count_test_results.py "$(bazel info bazel-testlogs 2>/dev/null)" "${targets[@]}")
echo "[test] regular build: $summary"
total_pass=${summary%% passed*}
rest=${summary#*, }
total_fail=${rest%% failed*}

if ((asan)); then
  mapfile -t asan_targets < <(bazel query "tests(//common/...)" 2>/dev/null | sort)
  if ((${#asan_targets[@]})); then
    echo "[test] AddressSanitizer + UBSan: ${#asan_targets[@]} targets"
    bazel test --config=asan --nocache_test_results --keep_going "${asan_targets[@]}"
    ((rc |= $?))
    asan_summary=$(python3 scripts/count_test_results.py \
      "$(bazel info --config=asan bazel-testlogs 2>/dev/null)" "${asan_targets[@]}")
    echo "[test] asan build: $asan_summary"
    total_pass=$((total_pass + ${asan_summary%% passed*}))
    rest=${asan_summary#*, }
    total_fail=$((total_fail + ${rest%% failed*}))
  fi
fi

if ((asan)); then
  # Compiler-checked locking: every ABSL_GUARDED_BY / _REQUIRED annotation.
  echo "[test] thread-safety build (clang -Werror=thread-safety, --config=tsa)"
  tsa_start=$SECONDS
  if bazel build --config=tsa --keep_going //...; then
    echo "[test] tsa build: passed in $((SECONDS - tsa_start))s"
    total_pass=$((total_pass + 1))
  else
    echo "[test] tsa build: FAILED (see the clang errors above)"
    total_fail=$((total_fail + 1))
    rc=1
  fi
fi

if ((asan)); then
  # Seconds per fuzz target: SLUICE_FUZZ_SECONDS (default 5).
  echo "[test] fuzz targets, ${SLUICE_FUZZ_SECONDS:-5}s each"
  fuzz_out=$(scripts/fuzz.sh --seconds="${SLUICE_FUZZ_SECONDS:-5}" 2>&1)
  ((rc |= $?))
  echo "$fuzz_out" | grep '^\[fuzz\]'
  fuzz_summary=$(echo "$fuzz_out" | tail -1)
  echo "[test] fuzz: $fuzz_summary"
  if [[ "$fuzz_summary" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
    total_pass=$((total_pass + BASH_REMATCH[1]))
    total_fail=$((total_fail + BASH_REMATCH[2]))
  else
    total_fail=$((total_fail + 1))
  fi
fi

echo "${total_pass} passed, ${total_fail} failed"
((total_fail == 0 && rc == 0))
