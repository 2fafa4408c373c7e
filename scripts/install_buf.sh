#!/usr/bin/env bash
# Installs buf (the version pinned in third_party/buf/VERSION) from its npm
# distribution, @bufbuild/buf, whose platform package carries buf's own
# release binary; third_party/buf/package-lock.json pins it with its sha512.
# `npm ci` (the machine's Node.js and npm) puts it into
#   ${SLUICE_BUF_CACHE:-~/.cache/sluice/buf}/<version>/bin/buf
# once, with npm's download cache in ~/.cache/sluice/npm. Idempotent: once the
# binary there reports the pinned version it needs no network. Prints the
# binary's path on its last line. The contract's lint and breaking-change
# tests (//proto:buf_lint_test, //proto:buf_breaking_test) run it.
set -euo pipefail
cd "$(dirname "$0")/.."

version=$(tr -d ' \n' < third_party/buf/VERSION)
if [[ ! "$version" =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
  echo "[buf] bad version in third_party/buf/VERSION: '$version'" >&2
  exit 1
fi
if ! grep -qF "\"@bufbuild/buf\": \"${version#v}\"" third_party/buf/package.json; then
  echo "[buf] third_party/buf/package.json does not pin @bufbuild/buf ${version#v}" >&2
  exit 1
fi
root="${SLUICE_BUF_CACHE:-$HOME/.cache/sluice/buf}/$version"
bin="$root/bin/buf"
if [[ -x "$bin" ]] && [[ "$("$bin" --version 2>&1)" == "${version#v}" ]]; then
  echo "[buf] buf $version present"
  echo "$bin"
  exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "[buf] npm is missing (scripts/install_deps.sh --tests installs it)" >&2
  exit 1
fi
case "$(uname -m)" in
  x86_64) platform=linux-x64 ;;
  aarch64) platform=linux-aarch64 ;;
  *) echo "[buf] no @bufbuild/buf package for $(uname -m)" >&2; exit 1 ;;
esac

echo "[buf] npm ci @bufbuild/buf@${version#v} into $root"
rm -rf "$root"
mkdir -p "$root/npm" "$root/bin"
cp third_party/buf/package.json third_party/buf/package-lock.json "$root/npm/"
npm ci --prefix "$root/npm" --cache "$HOME/.cache/sluice/npm" --ignore-scripts \
  --no-audit --no-fund --loglevel=error >/dev/null
ln -s "../npm/node_modules/@bufbuild/buf-$platform/bin/buf" "$bin"
if [[ "$("$bin" --version 2>&1)" != "${version#v}" ]]; then
  echo "[buf] $bin does not report version ${version#v}" >&2
  exit 1
fi
echo "[buf] buf $("$bin" --version)"
echo "$bin"
