# syntax=docker/dockerfile:1
# One image with both services and the admin CLI:
#   /usr/local/bin/sluice-supervisor, /usr/local/bin/sluice-task, /usr/local/bin/sluicectl
#
#   docker build -t sluice:latest .
#
# Stage 1 builds with Bazel on Debian 12's packages, installed by the same
# script CI uses (scripts/install_deps.sh). Stage 2 is debian:12-slim with only
# the shared libraries the binaries load, running as uid 65532 (the manifests
# in k8s/ expect that uid, a read-only root filesystem and these paths).
# //tests:image_test checks the runtime package list below against what the
# built binaries actually load (ldd + dpkg), so keep the two in step.

FROM debian:12 AS build
ENV DEBIAN_FRONTEND=noninteractive
WORKDIR /src
COPY scripts/install_deps.sh scripts/install_librdkafka.sh scripts/
# librdkafka is built from source (static) outside /root/.cache, which the
# Bazel step below mounts over.
ENV SLUICE_LIBRDKAFKA_CACHE=/opt/sluice/librdkafka
RUN scripts/install_deps.sh && rm -rf /var/lib/apt/lists/*
COPY . .
# The Bazel cache lives in a BuildKit cache mount, so the binaries are copied
# out in the same step.
RUN --mount=type=cache,target=/root/.cache \
    bazel build //supervisor:sluice-supervisor //task:sluice-task //tools:sluicectl \
 && install -D -m 0755 bazel-bin/supervisor/sluice-supervisor /out/sluice-supervisor \
 && install -D -m 0755 bazel-bin/task/sluice-task /out/sluice-task \
 && install -D -m 0755 bazel-bin/tools/sluicectl /out/sluicectl

FROM debian:12-slim
ENV DEBIAN_FRONTEND=noninteractive
# Runtime libraries (Debian 12 package names) of gRPC, Protobuf, Abseil,
# what the statically linked librdkafka loads (OpenSSL, Cyrus SASL, libcurl,
# the codecs), SQLite, libpq (the PostgreSQL metadata store; with it the
# Kerberos, LDAP and GnuTLS libraries it loads), glog/gflags, the segment
# codecs and libcurl (S3 deep storage) with what libcurl links;
# ca-certificates for its https:// to S3.
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      ca-certificates \
      libabsl20220623 \
      libatomic1 \
      libbrotli1 \
      libc-ares2 \
      libcom-err2 \
      libcpp-httplib0.11 \
      libcurl4 \
      libffi8 \
      libgflags2.2 \
      libgmp10 \
      libgnutls30 \
      libgoogle-glog0v6 \
      libgrpc++1.51 \
      libgrpc29 \
      libgssapi-krb5-2 \
      libhogweed6 \
      libidn2-0 \
      libk5crypto3 \
      libkeyutils1 \
      libkrb5-3 \
      libkrb5support0 \
      libldap-2.5-0 \
      liblz4-1 \
      liblzma5 \
      libnettle8 \
      libnghttp2-14 \
      libp11-kit0 \
      libpq5 \
      libprotobuf32 \
      libpsl5 \
      libre2-9 \
      libroaring0 \
      librtmp1 \
      libsasl2-2 \
      libsimdjson14 \
      libsqlite3-0 \
      libssh2-1 \
      libssl3 \
      libtasn1-6 \
      libunistring2 \
      libunwind8 \
      libxxhash0 \
      libzstd1 \
      zlib1g \
 && rm -rf /var/lib/apt/lists/*
RUN groupadd --system --gid 65532 sluice \
 && useradd --system --uid 65532 --gid 65532 --home-dir /var/lib/sluice \
      --no-create-home --shell /usr/sbin/nologin sluice \
 && install -d -o 65532 -g 65532 /var/lib/sluice
COPY --from=build /out/ /usr/local/bin/
USER 65532:65532
WORKDIR /var/lib/sluice
# glog writes to files under /tmp by default; containers log to stderr.
ENV GLOG_logtostderr=1
# gRPC and metrics ports used by k8s/.
EXPOSE 7070 9090
CMD ["/usr/local/bin/sluice-supervisor", "--help"]
