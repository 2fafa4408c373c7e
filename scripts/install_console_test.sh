#!/usr/bin/env bash
# Installs what the web console's browser test (tests/console) drives Debian's
# chromium with: playwright-core, pinned with its sha512 in
# third_party/console_test/package-lock.json. `npm ci` (the machine's Node.js
# and npm) puts it into
#   ${SLUICE_CONSOLE_TEST_CACHE:-~/.cache/sluice/console-test}/<lock hash>/node_modules
# once, with npm's download cache in ~/.cache/sluice/npm (no browser is
# downloaded: the test launches /usr/bin/chromium from Debian's package).
# Idempotent; prints the node_modules path on its last line.
set -euo pipefail
cd "$(dirname "$0")/.."

lock=third_party/console_test/package-lock.json
hash=$(cat third_party/console_test/package.json "$lock" | sha256sum | cut -c1-16)
root="${SLUICE_CONSOLE_TEST_CACHE:-$HOME/.cache/sluice/console-test}/$hash"
modules="$root/node_modules"
if [[ -f "$modules/playwright-core/package.json" ]]; then
  echo "[console-test] playwright-core present"
  echo "$modules"
  exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "[console-test] npm is missing (scripts/install_deps.sh --tests installs it)" >&2
  exit 1
fi
echo "[console-test] npm ci into $root"
rm -rf "$root"
mkdir -p "$root"
cp third_party/console_test/package.json "$lock" "$root/"
PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --prefix "$root" --cache "$HOME/.cache/sluice/npm" \
  --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null
version=$(node -p "require('$modules/playwright-core/package.json').version")
echo "[console-test] playwright-core $version"
echo "$modules"
