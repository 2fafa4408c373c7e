#!/usr/bin/env bash
# Runs the whole test suite and ends with `N passed, N failed`:
#   1. installs what the tests need (scripts/install_deps.sh --tests; each
#      tool once into ~/.cache/sluice, keyed by its pinned version): the
#      Debian packages and the writer library first, the registry tools in
#      the background while step 2 builds (the tests wait for them);
#   2. the regular build (gcc, opt) of every test target, then every test:
#      unit, in-process clusters, process-level fault tests, and the
#      real_kafka, postgresql, s3, grpcurl, clients and iceberg tiers;
#   3. the checks build: every target once more with clang carrying all the
#      compiler checks at once (--config=checks in .bazelrc:
#      -Werror=thread-safety, so each ABSL_GUARDED_BY is checked, with
#      AddressSanitizer + UBSan and libFuzzer's coverage instrumentation);
#      it counts as one test. It runs while the regular tests of step 2 do,
#      at the lowest CPU priority (nice 19), in an output base of its own
#      (<this clone's output base>-checks): most of those tests wait on
#      brokers, databases and timers, and the compiler takes the idle CPU;
#   4. from that build, the unit tests (//common, //iceberg, //task,
#      //supervisor, //tools; not the PostgreSQL twins) under the sanitizers, then each libFuzzer target of //fuzz for a few seconds
#      from its checked-in corpus (scripts/fuzz.sh; one test per target).
# Every phase's wall time is printed as it ends and again in a table at the
# end, with the test-seconds of each tier and the slowest test targets.
#
#   scripts/test.sh            everything
#   scripts/test.sh //common/... //task/...   only these patterns (regular build only)
set -uo pipefail
cd "$(dirname "$0")/.."

phase_names=()
phase_seconds=()
phase_start=$SECONDS
begin_phase() { phase_start=$SECONDS; echo "[test] === $1"; }
end_phase() {  # end_phase NAME: records and prints the phase's wall time
  phase_names+=("$1")
  phase_seconds+=($((SECONDS - phase_start)))
  echo "[time] $1: $((SECONDS - phase_start)) s"
}
print_phases() {
  echo "[time] wall time by phase:"
  local i total=0
  for i in "${!phase_names[@]}"; do
    printf '[time]   %-40s %6d s\n' "${phase_names[$i]}" "${phase_seconds[$i]}"
    total=$((total + phase_seconds[i]))
  done
  printf '[time]   %-40s %6d s\n' "total" "$total"
}
total_pass=0
total_fail=0
add_summary() {  # add_summary "N passed, N failed"
  if [[ "$1" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
    total_pass=$((total_pass + BASH_REMATCH[1]))
    total_fail=$((total_fail + BASH_REMATCH[2]))
  else
    total_fail=$((total_fail + 1))
  fi
}
logs=$(mktemp -d /tmp/sluice_test_logs_XXXXXX)
trap 'rm -rf "$logs"' EXIT

begin_phase "installs: packages + writer library"
scripts/install_deps.sh --tests --packages-only || { echo "0 passed, 1 failed"; exit 1; }
end_phase "installs: packages + writer library"
# The registry tools only the tests use (mostly downloads) install while
# Bazel builds; the tests wait for them.
scripts/install_deps.sh --tests --tools-only > "$logs/tools.log" 2>&1 &
tools_pid=$!
tools_start=$SECONDS
wait_for_tools() {
  [[ -z "$tools_pid" ]] && return 0
  begin_phase "installs: registry tools (with build)"
  local rc=0
  wait "$tools_pid" || rc=$?
  tools_pid=""
  cat "$logs/tools.log"
  echo "[deps] registry tools: $((SECONDS - tools_start)) s since they began"
  end_phase "installs: registry tools (with build)"
  if ((rc != 0)); then
    echo "[test] installing the registry tools failed ($rc); see above" >&2
    echo "0 passed, 1 failed"
    exit 1
  fi
}

patterns=("$@")
full=1
if ((${#patterns[@]} == 0)); then
  patterns=(//...)
else
  full=0
fi

# The longest tiers first (fault, postgresql, real_kafka; test_timing.py --order).
mapfile -t targets < <(bazel query "tests(set(${patterns[*]}))" 2>/dev/null |
  python3 scripts/test_timing.py --order)
if ((${#targets[@]} == 0)); then
  echo "no test targets match ${patterns[*]}" >&2
  echo "0 passed, 1 failed"
  exit 1
fi

begin_phase "regular build (gcc opt)"
echo "[test] ${#targets[@]} test targets"
bazel build --keep_going "${targets[@]}"
rc=$?
end_phase "regular build (gcc opt)"
wait_for_tools

if ((full)); then
  fuzz_targets=(row_parser_fuzzer segment_reader_fuzzer spec_json_fuzzer devbroker_command_fuzzer)
  fuzz_labels=("${fuzz_targets[@]/#///fuzz:}")
  # The checks build has a Bazel server and output base of its own, so it
  # can run beside the regular tests (one server runs one command at a
  # time); the shared disk cache serves both. It leaves the workspace's
  # bazel-* links to the regular build.
  checks_base="$(bazel info output_base 2>/dev/null)-checks"
  bazel_checks=(bazel --output_base="$checks_base")
  checks_start=$SECONDS
  # What `bazel build //...` builds (every target not tagged manual), listed
  # by the regular server: the other server would not know the workspace's
  # bazel-* links as its own and would walk into them.
  { bazel query '//... except attr(tags, "manual", //...)' 2>/dev/null
    printf '%s\n' "${fuzz_labels[@]}"; } > "$logs/checks_targets"
  # One clang build carries the locking check, the sanitizers and the fuzz
  # instrumentation (.bazelrc, --config=checks). Only errors are shown: the
  # sanitizer runtimes make gold warn at every link.
  ( nice -n 19 "${bazel_checks[@]}" build --config=checks --keep_going \
      --experimental_convenience_symlinks=ignore --output_filter="^$" \
      --target_pattern_file="$logs/checks_targets" > "$logs/checks" 2>&1
    echo $? > "$logs/checks_rc" ) &
  checks_pid=$!
  echo "[test] checks build started beside the regular tests (nice 19, output base $checks_base)"
fi

begin_phase "regular tests"
bazel test --nocache_test_results --keep_going "${targets[@]}" 2>&1 | tee "$logs/regular"
((rc |= PIPESTATUS[0]))
summary=$(python3 scripts/count_test_results.py "$(bazel info bazel-testlogs 2>/dev/null)" "${targets[@]}")
echo "[test] regular build: $summary"
add_summary "$summary"
end_phase "regular tests"
python3 scripts/test_timing.py "$logs/regular" --top=12 > "$logs/regular_timing"

if ((full)); then
  # The checks build counts as one test; this phase is the wait for it after
  # the regular tests.
  begin_phase "checks build (clang: thread-safety, ASan+UBSan, fuzz)"
  wait "$checks_pid"
  cat "$logs/checks"
  echo "[test] checks build: $((SECONDS - checks_start)) s since it began beside the regular tests"
  if [[ "$(cat "$logs/checks_rc" 2>/dev/null)" == 0 ]]; then
    echo "[test] checks build: passed (every ABSL_GUARDED_BY checked)"
    total_pass=$((total_pass + 1))
  else
    echo "[test] checks build: FAILED (see the clang errors above)"
    total_fail=$((total_fail + 1))
    rc=1
  fi
  end_phase "checks build (clang: thread-safety, ASan+UBSan, fuzz)"

  # Every unit tier (beside the code); the in-process and process-level tiers
  # stay on the regular build.
  mapfile -t sanitized < <(bazel query "tests(set(//common/... //iceberg/... //task/... //supervisor/... //tools/...)) except attr(tags, 'postgresql', //...)" 2>/dev/null | sort)
  begin_phase "sanitizer tests (ASan+UBSan)"
  echo "[test] AddressSanitizer + UBSan: ${#sanitized[@]} targets"
  "${bazel_checks[@]}" test --config=checks --experimental_convenience_symlinks=ignore \
    --nocache_test_results --keep_going "${sanitized[@]}" 2>&1 | tee "$logs/sanitized"
  ((rc |= PIPESTATUS[0]))
  sanitized_summary=$(python3 scripts/count_test_results.py \
    "$("${bazel_checks[@]}" info --config=checks bazel-testlogs 2>/dev/null)" "${sanitized[@]}")
  echo "[test] sanitizer tests: $sanitized_summary"
  add_summary "$sanitized_summary"
  end_phase "sanitizer tests (ASan+UBSan)"

  # Seconds per fuzz target: SLUICE_FUZZ_SECONDS (default 5).
  begin_phase "fuzz"
  echo "[test] fuzz targets, ${SLUICE_FUZZ_SECONDS:-5}s each"
  fuzz_out=$(SLUICE_CHECKS_OUTPUT_BASE="$checks_base" \
    scripts/fuzz.sh --seconds="${SLUICE_FUZZ_SECONDS:-5}" "${fuzz_targets[@]}" 2>&1)
  ((rc |= $?))
  echo "$fuzz_out" | grep '^\[fuzz\]'
  fuzz_summary=$(echo "$fuzz_out" | tail -1)
  echo "[test] fuzz: $fuzz_summary"
  add_summary "$fuzz_summary"
  end_phase "fuzz"
  # Its server would otherwise idle for hours beside the regular one.
  "${bazel_checks[@]}" shutdown 2>/dev/null
fi

cat "$logs/regular_timing"
print_phases
echo "${total_pass} passed, ${total_fail} failed"
((total_fail == 0 && rc == 0))
