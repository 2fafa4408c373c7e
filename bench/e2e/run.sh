#!/bin/sh
# The end-to-end benchmark in one command (not part of the test suite):
#   bash bench/e2e/run.sh [--records=4000000] [--repetitions=3] [other e2e_bench flags]
#   bash bench/e2e/run.sh --compare_librdkafka=debian [...]
# Builds //bench/e2e:e2e_bench and the binaries it starts (optimized), runs
# it, prints the table and writes it into docs/benchmarks.md (its broker's
# "## End to end: ..." section; not with --only, which is for experiments).
# Starts the broker (real Apache Kafka 4.4.0 by default, --broker=dev for the
# dev broker), pre-loads it, measures kcat and a raw librdkafka consumer as
# baselines and sluice end to end on the same data, in one invocation.
# --compare_librdkafka=debian first relinks the supervisor, the task worker
# and the raw consumer baseline with Debian 12's librdkafka 2.0.2 (package
# librdkafka-dev; the same object files, from the cache: only the link
# differs, see third_party/librdkafka/BUILD), copies them into a directory,
# rebuilds the default, and has e2e_bench run both sets in the same rounds
# (--compare_bin_dir; real Kafka only).
# Needs kcat (apt-get install kcat), ~1.5 GB of free memory for 4M records,
# and for --broker=real java and the Kafka jars (scripts/install_deps.sh).
set -eu
cd "$(dirname "$0")/../.."
root=$(pwd)
rev=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ -n "$(git status --porcelain 2>/dev/null)" ]; then rev="$rev (with local changes)"; fi
compare=""
for arg in "$@"; do
  case "$arg" in
    --compare_librdkafka=*) compare=${arg#--compare_librdkafka=} ;;
  esac
done
compare_flags=""
if [ -n "$compare" ]; then
  if [ "$compare" != debian ]; then
    echo "run.sh: --compare_librdkafka knows only \"debian\", not \"$compare\"" >&2
    exit 2
  fi
  if [ ! -f /usr/lib/x86_64-linux-gnu/librdkafka.a ]; then
    echo "run.sh: Debian's librdkafka.a is missing: apt-get install librdkafka-dev" >&2
    exit 2
  fi
  version=$(dpkg-query -W -f='${Version}' librdkafka-dev 2>/dev/null || echo unknown)
  # One directory per checkout, overwritten by the next comparison.
  bins="$root/bazel-out/librdkafka-debian-bins"
  rm -rf "$bins" && mkdir -p "$bins"
  bazel build -c opt --define=librdkafka=debian //supervisor:sluice-supervisor //task:sluice-task \
    //bench/e2e:raw_consume
  cp bazel-bin/supervisor/sluice-supervisor bazel-bin/task/sluice-task \
    bazel-bin/bench/e2e/raw_consume "$bins/"
  compare_flags="--compare_bin_dir=$bins"
  compare_label="librdkafka $version (Debian 12, relinked)"
fi
# Also relinks what the comparison's build replaced in bazel-bin.
bazel build -c opt //bench/e2e:e2e_bench
cd bazel-bin/bench/e2e/e2e_bench.runfiles/sluice
if [ -n "$compare_flags" ]; then
  exec "$root/bazel-bin/bench/e2e/e2e_bench" --out_doc="$root/docs/benchmarks.md" \
    --git_revision="$rev" "$compare_flags" --compare_label="$compare_label" "$@"
fi
exec "$root/bazel-bin/bench/e2e/e2e_bench" --out_doc="$root/docs/benchmarks.md" \
  --git_revision="$rev" "$@"
