#!/usr/bin/env bash
# Installs what sluice needs, in two sets:
#
#   scripts/install_deps.sh            build and run: the Debian 12 packages
#                                      Bazel builds the binaries with (what
#                                      scripts/demo.sh and the image need)
#                                      and the Iceberg/Parquet writer library
#                                      (scripts/install_iceberg_ffi.sh: the
#                                      Rust crate iceberg/ffi, `cargo build
#                                      --locked`; needs cargo, rustc 1.88+)
#                                      and librdkafka 2.12.1 built from source
#                                      (scripts/install_librdkafka.sh; its
#                                      configure and make against the -dev
#                                      packages below)
#   scripts/install_deps.sh --kafka    and the real Apache Kafka broker
#                                      (scripts/demo.sh --kafka=real)
#   scripts/install_deps.sh --tests    and everything the test suite uses
#                                      (scripts/test.sh calls this)
#
# Idempotent: does nothing when everything is present. Debian packages need
# root or sudo. The test set adds Debian's test-only packages (GoogleTest,
# clang-14 for the fuzz and thread-safety builds, a PostgreSQL 15 server, Java
# and Maven, kcat, Node, Prometheus, Chromium) and the tools built from registries, each once into
# ~/.cache/sluice keyed by its pinned version or lock file (a second run needs
# no network):
#   - Apache Kafka's jars (scripts/install_kafka.sh, Maven Central),
#   - grpcurl (scripts/install_grpcurl.sh, `go install` from the Go module
#     proxy; Go 1.25+, https://go.dev/dl/),
#   - buf (scripts/install_buf.sh, `npm ci` of its npm package, pinned with
#     its sha512 in third_party/buf/package-lock.json),
#   - the S3-compatible server s3s-fs (scripts/install_s3_server.sh,
#     `cargo install --locked` from crates.io),
#   - pyiceberg and DuckDB, the iceberg tier's independent readers (a
#     venv from tests/iceberg/requirements.txt, hashes pinned;
#     scripts/install_iceberg_readers.sh),
#   - the example clients' toolchains (scripts/install_clients.sh: a pinned
#     grpcio venv and the Go protoc plugins and modules; Go 1.26+),
#   - playwright-core, which drives Chromium in the web console's browser
#     test (scripts/install_console_test.sh, `npm ci` of
#     third_party/console_test/package-lock.json).
# Each step's wall time is printed as `[deps] <step>: N s`.
#
# The test set in two halves, so the registry tools (mostly downloads) can
# install while Bazel builds (scripts/test.sh does):
#   scripts/install_deps.sh --tests --packages-only   Debian packages and the
#                                                     writer library: what the
#                                                     build needs
#   scripts/install_deps.sh --tests --tools-only      the registry tools above
set -euo pipefail

want_tests=0
want_kafka=0
want_packages=1
want_tools=1
for arg in "$@"; do
  case "$arg" in
    --tests) want_tests=1; want_kafka=1 ;;
    --kafka) want_kafka=1 ;;
    --packages-only) want_tools=0 ;;
    --tools-only) want_packages=0 ;;
    *) echo "usage: $0 [--kafka] [--tests] [--packages-only | --tools-only]" >&2; exit 2 ;;
  esac
done

# Build and run: the binaries' libraries and headers, and Bazel.
BUILD_PACKAGES=(
  bazel-bootstrap
  build-essential pkg-config
  libgrpc++-dev protobuf-compiler-grpc grpc-proto
  libprotobuf-dev protobuf-compiler
  libabsl-dev
  libre2-dev  # ioConfig.topicPattern: linear-time regular expressions
  # librdkafka itself is built from source (scripts/install_librdkafka.sh)
  # against these: TLS and SCRAM/OAUTHBEARER, GSSAPI, the codecs, OIDC
  libssl-dev libsasl2-dev zlib1g-dev
  libsqlite3-dev sqlite3
  libpq-dev  # the PostgreSQL metadata store
  libgoogle-glog-dev libgflags-dev
  libzstd-dev liblz4-dev libroaring-dev libsimdjson-dev libxxhash-dev
  libcurl4-openssl-dev  # the S3 deep-storage client (common/s3)
  libcpp-httplib-dev  # the web console's HTTP/HTTPS server (supervisor/console)
  python3 procps ca-certificates
  curl  # downloads librdkafka's source (scripts/install_librdkafka.sh)
  python3-venv  # the Iceberg readers the demo queries its table with
)
# The real Kafka broker (tools/kafka): Java 17 runs it, Maven fetches its jars.
KAFKA_PACKAGES=(openjdk-17-jre-headless maven)
# Only the tests use these.
TEST_PACKAGES=(
  libgtest-dev libgmock-dev libbenchmark-dev
  kcat  # the benchmarks' and tests' reference consumer
  # Debian's librdkafka 2.0.2, which the end-to-end benchmark's library
  # comparison relinks sluice with (bench/e2e/run.sh --compare_librdkafka)
  librdkafka-dev
  # the tests tagged `postgresql` run a private server
  # (tests/testing/postgres_server.h)
  postgresql-15
  clang-14 libclang-rt-14-dev  # libFuzzer targets and the thread-safety build
  openssl nodejs
  # promtool checks and unit-tests the alerting rules; the server scrapes a
  # live cluster with the dashboard's queries (tests/monitoring)
  prometheus
  chromium  # the web console's browser test (tests/console)
)

PACKAGES=("${BUILD_PACKAGES[@]}")
((want_kafka)) && PACKAGES+=("${KAFKA_PACKAGES[@]}")
((want_tests)) && PACKAGES+=("${TEST_PACKAGES[@]}")

step() {  # step NAME COMMAND...: runs it and prints its wall time
  local name=$1 start=$SECONDS
  shift
  "$@"
  echo "[deps] $name: $((SECONDS - start)) s"
}

missing=()
for pkg in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

# Debian's nodejs comes without npm (a separate package); NodeSource's
# nodejs, where installed, ships npm itself and conflicts with Debian's.
if ((want_tests)) && ! command -v npm >/dev/null 2>&1; then
  missing+=(npm)
fi

apt_install() {
  local sudo=""
  if [[ $(id -u) -ne 0 ]]; then
    if command -v sudo >/dev/null; then sudo="sudo"; else
      echo "[deps] need root (or sudo) to install: ${missing[*]}" >&2
      return 1
    fi
  fi
  echo "[deps] installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -q
  $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
}

# initdb and postgres refuse to run as root; as root (Bazel's tests here)
# the test server runs as this dedicated system user.
postgres_test_user() {
  [[ $(id -u) -ne 0 ]] && return 0
  if ! getent passwd sluice-pg >/dev/null; then
    useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin sluice-pg
    echo "[deps] created system user sluice-pg (runs the tests' private PostgreSQL)"
  fi
}

here=$(dirname "$0")
if ((want_packages)); then
  if ((${#missing[@]} == 0)); then
    echo "[deps] all ${#PACKAGES[@]} Debian packages present"
  else
    step "Debian packages" apt_install
  fi
  ((want_tests)) && postgres_test_user
  # The image's build stage (Dockerfile) runs this script alone, before the
  # sources are copied in: the library is built where its crate is present.
  if [[ -f "$here/../iceberg/ffi/Cargo.toml" ]]; then
    step iceberg-ffi bash -o pipefail -c "'$here/install_iceberg_ffi.sh' | grep -v '^/'"
  fi
  step librdkafka bash -o pipefail -c "'$here/install_librdkafka.sh' | grep -v '^/'"

fi
((want_tools)) || exit 0
if ((${#missing[@]} > 0)) && ! ((want_packages)); then
  echo "[deps] Debian packages missing: ${missing[*]} (run without --tools-only first)" >&2
  exit 1
fi
if ((want_kafka)); then
  step "Apache Kafka jars" bash -o pipefail -c "'$here/install_kafka.sh' | grep -v '^/'"
fi
if ((want_tests)); then
  step grpcurl bash -o pipefail -c "'$here/install_grpcurl.sh' | grep -v '^/'"
  step buf bash -o pipefail -c "'$here/install_buf.sh' | grep -v '^/'"
  step s3s-fs bash -o pipefail -c "'$here/install_s3_server.sh' | grep -v '^/'"
  step "iceberg readers" bash -o pipefail -c "'$here/install_iceberg_readers.sh' | grep -v '^/'"
  step "example clients' toolchains" "$here/install_clients.sh"
  step "console browser test" bash -o pipefail -c "'$here/install_console_test.sh' | grep -v '^/'"
fi
