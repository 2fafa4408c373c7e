#!/usr/bin/env bash
# buf over the sluice.v1 contract (issue 16): `buf_test.sh lint` runs
# `buf lint` with the checked-in buf.yaml; `buf_test.sh breaking IMAGE` runs
# `buf breaking` against IMAGE, the last released contract
# (proto/released/sluice_v1.json; proto/released/README.md says how to cut a
# new one).
#
# buf is the version in third_party/buf/VERSION, installed by
# scripts/install_deps.sh into ~/.cache/sluice/buf/<version>/bin/buf
# ($SLUICE_BUF points elsewhere: --test_env=SLUICE_BUF=...). No buf, or the
# wrong version: the test fails, it never skips.
set -euo pipefail

mode=${1:?usage: buf_test.sh lint | breaking IMAGE}
image=""
if [[ "$mode" == breaking ]]; then
  # Resolved before the cd below (Bazel passes it relative to the runfiles).
  image=$(readlink -f "${2:?usage: buf_test.sh breaking IMAGE}")
  if [[ ! -f "$image" ]]; then
    echo "FAIL: no image at $2" >&2
    exit 1
  fi
fi
runfiles="${TEST_SRCDIR:?}/${TEST_WORKSPACE:?}"
version=$(tr -d ' \n' < "$runfiles/third_party/buf/VERSION")
# The user's home from the password database: Bazel points $HOME elsewhere.
home=$(getent passwd "$(id -u)" | cut -d: -f6)
buf=${SLUICE_BUF:-$home/.cache/sluice/buf/$version/bin/buf}
if [[ ! -x "$buf" ]]; then
  echo "FAIL: no buf at $buf (scripts/install_deps.sh --tests installs it; \$SLUICE_BUF points elsewhere)" >&2
  exit 1
fi
got=$("$buf" --version 2>&1)
if [[ "$got" != "${version#v}" ]]; then
  echo "FAIL: $buf is buf $got, third_party/buf/VERSION pins $version" >&2
  exit 1
fi

# The module as plain files (runfiles are symlinks into the source tree and
# the output base), so buf sees exactly the declared files.
module="${TEST_TMPDIR:?}/module"
rm -rf "$module"
mkdir -p "$module/proto/sluice/v1"
cp -L "$runfiles/buf.yaml" "$module/"
cp -L "$runfiles"/proto/sluice/v1/*.proto "$module/proto/sluice/v1/"
# buf's own cache (modules, never needed here: the contract has no deps).
export BUF_CACHE_DIR="$TEST_TMPDIR/buf-cache"
cd "$module"

case "$mode" in
  lint)
    echo "[buf] $buf lint (buf $got, rules of buf.yaml)"
    if ! "$buf" lint; then
      echo "FAIL: buf lint found the problems above (buf.yaml; fix the .proto files)" >&2
      exit 1
    fi
    ;;
  breaking)
    echo "[buf] $buf breaking --against ${2} (buf $got)"
    if ! "$buf" breaking --against "$image"; then
      echo "FAIL: the contract breaks the released one (${2}) as listed above." \
           "Fix the change, or cut a new release image (proto/released/README.md)." >&2
      exit 1
    fi
    ;;
  *)
    echo "usage: buf_test.sh lint | breaking IMAGE" >&2
    exit 2
    ;;
esac
echo "PASS"
