#!/usr/bin/env bash
# Builds the Rust crate iceberg/ffi (Parquet and Iceberg metadata writers
# behind a C ABI; crates from crates.io pinned by iceberg/ffi/Cargo.lock)
# into a static library, once per content of the crate:
#   ${SLUICE_ICEBERG_FFI_CACHE:-~/.cache/sluice/iceberg-ffi}/
#       target/                   cargo's target directory (incremental)
#       lib-<stamp>/libsluice_iceberg.a  (one per crate content; every
#                                        checkout links its own, so none is removed)
# where <stamp> is a checksum of Cargo.toml, Cargo.lock, the sources and
# the build settings, and points the gitignored link
#   iceberg/ffi/out/libsluice_iceberg.a
# at it, which Bazel imports (//iceberg:sluice_iceberg_ffi). "~" is the
# user's home from the password database, as for the other caches.
# Idempotent: with the library of the current stamp in place it does
# nothing and needs no network. zstd comes from Debian's libzstd
# (ZSTD_SYS_USE_PKG_CONFIG=1), the one the rest of sluice links. Needs cargo
# with rustc 1.88+ (parquet 60's minimum; from rustup, Debian 12's is older)
# and pkg-config. Prints the library's path on its last line.
set -euo pipefail
cd "$(dirname "$0")/.."

crate=iceberg/ffi
user_home=$(getent passwd "$(id -u)" 2>/dev/null | cut -d: -f6 || true)
cache="${SLUICE_ICEBERG_FFI_CACHE:-${user_home:-$HOME}/.cache/sluice/iceberg-ffi}"
build_settings="release locked ZSTD_SYS_USE_PKG_CONFIG=1"
stamp=$( (cat "$crate/Cargo.toml" "$crate/Cargo.lock" "$crate"/src/*.rs; echo "$build_settings") |
  sha256sum | cut -c1-16)
lib_dir="$cache/lib-$stamp"
lib="$lib_dir/libsluice_iceberg.a"
link="$crate/out/libsluice_iceberg.a"

if [[ -f "$lib" ]]; then
  if [[ "$(readlink "$link" 2>/dev/null)" != "$lib" ]]; then
    mkdir -p "$crate/out"
    ln -sfn "$lib" "$link"
  fi
  echo "[iceberg-ffi] libsluice_iceberg.a $stamp present"
  echo "$lib"
  exit 0
fi
if ! command -v cargo >/dev/null 2>&1; then
  echo "[iceberg-ffi] cargo is missing (the machine's Rust toolchain builds iceberg/ffi)" >&2
  exit 1
fi
# rustup's and cargo's homes default to $HOME, which CI and Bazel move:
# the password database's home holds the toolchain and the crate registry.
if [[ -n "$user_home" ]]; then
  [[ -d "$user_home/.cargo" ]] && export CARGO_HOME="${CARGO_HOME:-$user_home/.cargo}"
  [[ -d "$user_home/.rustup" ]] && export RUSTUP_HOME="${RUSTUP_HOME:-$user_home/.rustup}"
fi
echo "[iceberg-ffi] building $crate ($stamp) into $cache (about 2-5 minutes the first time)"
mkdir -p "$cache"
ZSTD_SYS_USE_PKG_CONFIG=1 CARGO_TARGET_DIR="$cache/target" \
  cargo build --release --locked --quiet -j "${SLUICE_CARGO_JOBS:-2}" \
  --manifest-path "$crate/Cargo.toml"
# Another checkout may finish the same stamp at the same time: the first
# rename wins, the other copy goes.
tmp=$(mktemp -d "$cache/.lib-$stamp.XXXXXX")
chmod 755 "$tmp"
cp "$cache/target/release/libsluice_iceberg.a" "$tmp/"
mv -T "$tmp" "$lib_dir" 2>/dev/null || rm -rf "$tmp"
mkdir -p "$crate/out"
ln -sfn "$lib" "$link"
echo "$lib"
