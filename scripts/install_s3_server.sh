#!/usr/bin/env bash
# Builds s3s-fs (crates.io, Apache-2.0: an S3-compatible server over a
# directory that verifies SigV4 signatures, payload hashes and
# x-amz-checksum-* headers; the version pinned in third_party/s3s-fs/VERSION)
# into
#   ${SLUICE_S3S_FS_CACHE:-~/.cache/sluice/s3s-fs}/<version>/bin/s3s-fs
# once, with `cargo install --locked` (the crate's own Cargo.lock). The S3
# deep-storage tests (//tests/s3, tag "s3") start it on loopback. Idempotent:
# an existing binary of the pinned version needs no network. Prints the
# binary's path on its last line. Needs cargo (rustc 1.92+).
set -euo pipefail
cd "$(dirname "$0")/.."

version=$(tr -d ' \n' < third_party/s3s-fs/VERSION)
root="${SLUICE_S3S_FS_CACHE:-$HOME/.cache/sluice/s3s-fs}/$version"
bin="$root/bin/s3s-fs"

if [[ -x "$bin" ]] && "$bin" --version 2>/dev/null | grep -q " $version\$"; then
  echo "[s3s-fs] s3s-fs $version present"
  echo "$bin"
  exit 0
fi
if ! command -v cargo >/dev/null 2>&1; then
  echo "[s3s-fs] cargo is missing (the machine's Rust toolchain builds s3s-fs)" >&2
  exit 1
fi
echo "[s3s-fs] building s3s-fs $version from crates.io into $root (a few minutes, once)"
cargo install s3s-fs --version "$version" --features binary --locked \
  --root "$root" -j "${SLUICE_CARGO_JOBS:-2}" --quiet
if ! "$bin" --version | grep -q " $version\$"; then
  echo "[s3s-fs] $bin does not report version $version" >&2
  exit 1
fi
echo "$bin"
