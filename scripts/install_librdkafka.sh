#!/usr/bin/env bash
# Builds librdkafka 2.12.1 (the C library; sluice uses its C API and its mock
# cluster) from source into a static library that Bazel links into every
# binary and test instead of Debian 12's librdkafka 2.0.2 (third_party/
# librdkafka/BUILD, which @system//:rdkafka points at).
#
# The source comes from a registry package: the crate rdkafka-sys
# 4.10.0+2.12.1 on crates.io carries librdkafka 2.12.1's full source tree
# under librdkafka/. Its download is pinned with the SHA-256 that crates.io's
# index lists for it (the `cksum` cargo checks). The build is librdkafka's
# own ./configure and make, against Debian's OpenSSL (TLS, SASL SCRAM and
# OAUTHBEARER), Cyrus SASL (GSSAPI), zlib, zstd, lz4 and libcurl (OAUTHBEARER
# OIDC token endpoint), each required: a missing -dev package fails the
# build instead of silently leaving the feature out.
#
# Everything is kept once under
#   ${SLUICE_LIBRDKAFKA_CACHE:-~/.cache/sluice/librdkafka}/
#       rdkafka-sys-<version>.crate      the checked download
#       <librdkafka version>-<stamp>/    the install prefix: include/librdkafka/
#                                        {rdkafka.h,rdkafka_mock.h},
#                                        lib/librdkafka.a, lib/pkgconfig/
# where <stamp> is a checksum of this script (version, checksum, configure
# flags), and the gitignored link third_party/librdkafka/out points at the
# prefix. Idempotent: with the prefix of the current stamp in place it does
# nothing and needs no network. "~" is the user's home from the password
# database, as for the other caches. Cold: a download of 4.9 MB and about
# 35 s of compiling on 2 cores (SLUICE_MAKE_JOBS, default 2).
# Prints the prefix on its last line.
set -euo pipefail
script="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
cd "$(dirname "$0")/.."

crate_version="4.10.0+2.12.1"
crate_sha256="e234cf318915c1059d4921ef7f75616b5219b10b46e9f3a511a15eb4b56a3f77"
librdkafka_version="2.12.1"
crate_url="https://static.crates.io/crates/rdkafka-sys/rdkafka-sys-${crate_version}.crate"
# Every feature sluice's users need is required (configure fails without
# it); no downloads of configure modules or dependencies.
configure_flags=(--no-download --enable-ssl --enable-gssapi --enable-zlib --enable-zstd
  --enable-lz4-ext --enable-curl)
# What config.h must say once configure has run.
required_features=(WITH_SSL WITH_SASL_CYRUS WITH_SASL_SCRAM WITH_SASL_OAUTHBEARER
  WITH_OAUTHBEARER_OIDC WITH_ZLIB WITH_ZSTD WITH_LZ4_EXT WITH_CURL)

user_home=$(getent passwd "$(id -u)" 2>/dev/null | cut -d: -f6 || true)
cache="${SLUICE_LIBRDKAFKA_CACHE:-${user_home:-$HOME}/.cache/sluice/librdkafka}"
stamp=$(sha256sum "$script" | cut -c1-16)
prefix="$cache/$librdkafka_version-$stamp"
link=third_party/librdkafka/out

if [[ -f "$prefix/lib/librdkafka.a" && -f "$prefix/include/librdkafka/rdkafka.h" ]]; then
  if [[ "$(readlink "$link" 2>/dev/null)" != "$prefix" ]]; then
    mkdir -p "$(dirname "$link")"
    ln -sfn "$prefix" "$link"
  fi
  echo "[librdkafka] $librdkafka_version ($stamp) present"
  echo "$prefix"
  exit 0
fi

for tool in curl make cc python3 pkg-config; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "[librdkafka] $tool is missing (scripts/install_deps.sh installs it)" >&2
    exit 1
  fi
done
mkdir -p "$cache"
crate="$cache/rdkafka-sys-$crate_version.crate"
if [[ ! -f "$crate" ]] || ! echo "$crate_sha256  $crate" | sha256sum -c --quiet - 2>/dev/null; then
  echo "[librdkafka] downloading rdkafka-sys $crate_version from crates.io"
  curl -fsSL --retry 3 -o "$crate.part" "$crate_url"
  if ! echo "$crate_sha256  $crate.part" | sha256sum -c --quiet -; then
    echo "[librdkafka] rdkafka-sys-$crate_version.crate does not match its pinned SHA-256" >&2
    rm -f "$crate.part"
    exit 1
  fi
  mv -f "$crate.part" "$crate"
fi

echo "[librdkafka] building librdkafka $librdkafka_version ($stamp) into $prefix" \
  "(about a minute the first time)"
work=$(mktemp -d "$cache/.build-$stamp.XXXXXX")
trap 'rm -rf "$work"' EXIT
tar -xzf "$crate" -C "$work" "rdkafka-sys-$crate_version/librdkafka"
src="$work/rdkafka-sys-$crate_version/librdkafka"
# Installed with DESTDIR, so rdkafka.pc names the final prefix.
staging="$work/destdir$prefix"
(
  cd "$src"
  ./configure --prefix="$prefix" "${configure_flags[@]}" >"$work/configure.log" 2>&1 || {
    tail -40 "$work/configure.log" >&2
    exit 1
  }
  for feature in "${required_features[@]}"; do
    if ! grep -qE "^#define $feature 1\$" config.h; then
      echo "[librdkafka] configure left out $feature (see the -dev packages in" \
        "scripts/install_deps.sh)" >&2
      exit 1
    fi
  done
  make -C src -j "${SLUICE_MAKE_JOBS:-2}" >"$work/make.log" 2>&1 || {
    tail -40 "$work/make.log" >&2
    exit 1
  }
  make -C src install DESTDIR="$work/destdir" >>"$work/make.log" 2>&1
  # The dev broker lifts the mock cluster's retention cap by writing two
  # fields of its private partition struct (tools/devbroker/retention.h
  # mirrors the layout): check the mirrored offsets against the real header.
  probe="$work/mock_layout_probe.c"
  {
    echo '#include "rdkafka_int.h"'
    echo '#include "rdkafka_mock_int.h"'
    echo '#include <stddef.h>'
    while read -r type field offset; do
      echo "_Static_assert(offsetof($type, $field) == $offset, \"$type.$field\");"
    done <<'LAYOUT'
rd_kafka_mock_partition_t id 16
rd_kafka_mock_partition_t max_size 96
rd_kafka_mock_partition_t max_cnt 104
rd_kafka_mock_partition_t cnt 88
rd_kafka_mock_partition_t topic 200
rd_kafka_mock_topic_t name 16
rd_kafka_mock_topic_t partitions 64
rd_kafka_mock_topic_t partition_cnt 72
rd_kafka_mock_topic_t cluster 80
rd_kafka_mock_cluster_t rk 32
rd_kafka_mock_cluster_t broker_cnt 64
rd_kafka_mock_cluster_t topics 72
rd_kafka_mock_cluster_t topic_cnt 88
LAYOUT
    echo '_Static_assert(sizeof(rd_kafka_mock_partition_t) == 224, "partition size");'
  } >"$probe"
  cc -fsyntax-only -I src "$probe" || {
    echo "[librdkafka] the mock cluster's layout differs from" \
      "tools/devbroker/retention.h" >&2
    exit 1
  }
)
# Only the static library: nothing can load a shared librdkafka from here
# by accident.
rm -f "$staging"/lib/librdkafka.so* "$staging"/lib/librdkafka-static.a \
  "$staging"/lib/pkgconfig/rdkafka-static.pc
grep -q "RD_KAFKA_VERSION  *0x020c01ff" "$staging/include/librdkafka/rdkafka.h"
# Another checkout may finish the same stamp at the same time: the first
# rename wins, the other copy goes.
chmod 755 "$staging"
mv -T "$staging" "$prefix" 2>/dev/null || true
mkdir -p "$(dirname "$link")"
ln -sfn "$prefix" "$link"
echo "$prefix"
