#!/usr/bin/env bash
# Installs the Debian 12 packages sluice builds, tests and runs with.
# Idempotent: does nothing when everything is present. Needs root or sudo.
# Then fetches the Apache Kafka broker jars for the real_kafka test tier
# (scripts/install_kafka.sh: Maven Central into ~/.cache/sluice/kafka, once)
# and builds grpcurl for the grpcurl test tier (scripts/install_grpcurl.sh:
# `go install` from the Go module proxy into ~/.cache/sluice/grpcurl, once;
# needs Go 1.25+, which Debian 12 does not package: https://go.dev/dl/),
# buf for the contract's lint and breaking-change tests
# (scripts/install_buf.sh: the same way into ~/.cache/sluice/buf, once),
# the S3-compatible server of the S3 deep-storage tests
# (scripts/install_s3_server.sh: s3s-fs, `cargo install` from crates.io into
# ~/.cache/sluice/s3s-fs, once),
# and the example clients' toolchains for the clients test tier
# (scripts/install_clients.sh: a pinned grpcio venv and the Go protoc plugins
# and modules, into ~/.cache/sluice/{python-venv,go-client}, once; Go 1.26+).
set -euo pipefail

PACKAGES=(
  bazel-bootstrap
  build-essential pkg-config
  libgrpc++-dev protobuf-compiler-grpc grpc-proto
  libprotobuf-dev protobuf-compiler
  libabsl-dev
  libre2-dev  # ioConfig.topicPattern: linear-time regular expressions
  librdkafka-dev kcat
  libsqlite3-dev sqlite3
  # the PostgreSQL metadata store: libpq to link, the server for the tests
  # tagged `postgresql` (tests/testing/postgres_server.h runs a private one)
  libpq-dev postgresql-15
  libgoogle-glog-dev libgflags-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libzstd-dev liblz4-dev libroaring-dev libsimdjson-dev libxxhash-dev
  clang-14 libclang-rt-14-dev  # libFuzzer targets (scripts/fuzz.sh)
  libcurl4-openssl-dev  # the S3 deep-storage client (common/s3)
  openssl python3 python3-venv nodejs procps curl ca-certificates
  # the real Kafka broker (tools/kafka, tests/real_kafka): Java 17 runs it,
  # Maven fetches its jars
  openjdk-17-jre-headless maven
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  [[ "$pkg" == \#* ]] && continue
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

# Debian's nodejs comes without npm (a separate package); NodeSource's
# nodejs, where installed, ships npm itself and conflicts with Debian's.
if ! command -v npm >/dev/null 2>&1; then
  missing+=(npm)
fi

# What only the tests need, outside Debian: Apache Kafka's jars, grpcurl, buf,
# s3s-fs and the example clients' toolchains (examples/VERSIONS).
# The container image's build stage needs none of them (and copies only this
# script): SLUICE_DEPS_PACKAGES_ONLY=1 skips them.
test_tools() {
  [[ -n "${SLUICE_DEPS_PACKAGES_ONLY:-}" ]] && return 0
  postgres_test_user
  "$(dirname "$0")/install_kafka.sh" | grep -v '^/'
  "$(dirname "$0")/install_grpcurl.sh" | grep -v '^/'
  "$(dirname "$0")/install_buf.sh" | grep -v '^/'
  "$(dirname "$0")/install_s3_server.sh" | grep -v '^/'
  "$(dirname "$0")/install_clients.sh"
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

if ((${#missing[@]} == 0)); then
  echo "[deps] all ${#PACKAGES[@]} packages present"
  test_tools
  exit 0
fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null; then SUDO="sudo"; else
    echo "[deps] need root (or sudo) to install: ${missing[*]}" >&2
    exit 1
  fi
fi
echo "[deps] installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
echo "[deps] done"
test_tools
