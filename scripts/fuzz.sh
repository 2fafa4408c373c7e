#!/usr/bin/env bash
# Builds and runs the libFuzzer targets of //fuzz (clang, ASan + UBSan and libFuzzer instrumentation;
# --config=checks in .bazelrc), each seeded from its checked-in corpus
# fuzz/corpus/<target>/. New inputs go to a scratch copy, so the checked-in
# corpus changes only with --merge.
#
#   scripts/fuzz.sh                          every target, 300 s each
#   scripts/fuzz.sh --seconds=5              briefly (what scripts/test.sh runs)
#   scripts/fuzz.sh --seconds=3600 row_parser_fuzzer
#   scripts/fuzz.sh --merge                  also merge new coverage into the corpus
#
# Prints "[fuzz] TARGET: pass" or "[fuzz] TARGET: FAIL (crash input: PATH)"
# per target and ends with "N passed, N failed". A crash input replays with
#   $(bazel info --config=checks bazel-bin)/fuzz/TARGET PATH
set -uo pipefail
cd "$(dirname "$0")/.."

seconds=300
merge=0
targets=()
for arg in "$@"; do
  case "$arg" in
    --seconds=*) seconds=${arg#--seconds=} ;;
    --merge) merge=1 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) targets+=("$arg") ;;
  esac
done
if ((${#targets[@]} == 0)); then
  targets=(row_parser_fuzzer segment_reader_fuzzer spec_json_fuzzer devbroker_command_fuzzer)
fi

if ! command -v clang-14 >/dev/null 2>&1; then
  echo "[fuzz] clang-14 is missing (scripts/install_deps.sh installs it)" >&2
  echo "0 passed, ${#targets[@]} failed"
  exit 1
fi

# scripts/test.sh builds the checks config in an output base of its own
# (SLUICE_CHECKS_OUTPUT_BASE) and runs these from it.
bazel_checks=(bazel)
if [[ -n "${SLUICE_CHECKS_OUTPUT_BASE:-}" ]]; then
  bazel_checks=(bazel --output_base="$SLUICE_CHECKS_OUTPUT_BASE")
fi
labels=()
for t in "${targets[@]}"; do labels+=("//fuzz:$t"); done
if ! "${bazel_checks[@]}" build --config=checks --experimental_convenience_symlinks=ignore "${labels[@]}"; then
  echo "[fuzz] build failed" >&2
  echo "0 passed, ${#targets[@]} failed"
  exit 1
fi
bin=$("${bazel_checks[@]}" info --config=checks bazel-bin 2>/dev/null)/fuzz

work=$(mktemp -d /tmp/sluice_fuzz_XXXXXX)
trap 'rm -rf "$work"' EXIT
passed=0
failed=0
for t in "${targets[@]}"; do
  corpus=fuzz/corpus/$t
  scratch=$work/$t/corpus
  artifacts=$work/$t/artifacts
  mkdir -p "$scratch" "$artifacts" "$corpus"
  log=$work/$t/log
  # The first directory receives new inputs; the checked-in one only seeds.
  # Seeded and deterministic for a given binary and corpus (-seed).
  "$bin/$t" "$scratch" "$corpus" -max_total_time="$seconds" -seed=1 -timeout=10 \
    -rss_limit_mb=4096 -max_len=65536 -print_final_stats=1 \
    -artifact_prefix="$artifacts/" >"$log" 2>&1
  rc=$?
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || true)
  if ((rc == 0)); then
    echo "[fuzz] $t: pass (${runs:-?} runs in ${seconds}s)"
    passed=$((passed + 1))
    if ((merge)); then
      "$bin/$t" -merge=1 "$corpus" "$scratch" >>"$log" 2>&1 || true
    fi
  else
    crash=$(ls "$artifacts"/* 2>/dev/null | head -1)
    keep=/tmp/sluice_fuzz_failures/$t
    mkdir -p "$keep"
    [[ -n "$crash" ]] && cp "$crash" "$keep/"
    cp "$log" "$keep/log"
    echo "[fuzz] $t: FAIL (exit $rc; crash input: ${crash:+$keep/$(basename "$crash")}; log: $keep/log)"
    grep -m 20 -E 'ERROR|SUMMARY|#[0-9]+ 0x' "$log" | sed 's/^/[fuzz]   /'
    failed=$((failed + 1))
  fi
done
echo "$passed passed, $failed failed"
((failed == 0))
