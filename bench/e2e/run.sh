#!/bin/sh
# The end-to-end benchmark in one command (not part of the test suite):
#   bash bench/e2e/run.sh [--records=4000000] [--repetitions=3] [other e2e_bench flags]
# Builds //bench/e2e:e2e_bench and the binaries it starts (optimized), runs
# it, prints the table and writes it into docs/benchmarks.md (its broker's
# "## End to end: ..." section; not with --only, which is for experiments).
# Starts the broker (real Apache Kafka 4.4.0 by default, --broker=dev for the
# dev broker), pre-loads it, measures kcat and a raw librdkafka consumer as
# baselines and sluice end to end on the same data, in one invocation.
# Needs kcat (apt-get install kcat), ~1.5 GB of free memory for 4M records,
# and for --broker=real java and the Kafka jars (scripts/install_deps.sh).
set -eu
cd "$(dirname "$0")/../.."
root=$(pwd)
rev=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ -n "$(git status --porcelain 2>/dev/null)" ]; then rev="$rev (with local changes)"; fi
bazel build -c opt //bench/e2e:e2e_bench
cd bazel-bin/bench/e2e/e2e_bench.runfiles/sluice
exec "$root/bazel-bin/bench/e2e/e2e_bench" --out_doc="$root/docs/benchmarks.md" \
  --git_revision="$rev" "$@"
