#!/usr/bin/env bash
# promtool (Debian's prometheus package) checks k8s/monitoring's alerting
# rules and runs their unit tests. Without promtool the test fails: it never
# skips (scripts/install_deps.sh --tests installs it).
set -euo pipefail
runfiles="${TEST_SRCDIR:?}/${TEST_WORKSPACE:?}"
dir="$runfiles/k8s/monitoring"
promtool=$(command -v promtool || true)
if [ -z "$promtool" ]; then
  echo "promtool not found on PATH: run scripts/install_deps.sh --tests (Debian package prometheus)" >&2
  exit 1
fi
"$promtool" --version 2>&1 | head -1
# The rule file: syntax, expressions, templates.
"$promtool" check rules "$dir/sluice-alerts.rules.yml"
# The unit tests, from a copy so the relative rule_files path resolves.
work="${TEST_TMPDIR:-$(mktemp -d)}/rules"
mkdir -p "$work"
cp "$dir/sluice-alerts.rules.yml" "$dir/sluice-alerts.test.yml" "$work/"
cd "$work"
"$promtool" test rules sluice-alerts.test.yml
# Every alert of the rule file has a test case that expects it to fire.
missing=0
for alert in $(sed -n 's/^ *- alert: *//p' sluice-alerts.rules.yml); do
  if ! awk -v a="$alert" '
      $0 ~ "alertname: " a "$" { want = 1; next }
      want && /exp_alerts: \[\]/ { want = 0; next }
      want && /exp_labels:/ { found = 1 }
      /alertname:/ { want = 0 }
      END { exit found ? 0 : 1 }' sluice-alerts.test.yml; then
    echo "alert $alert has no test case that expects it to fire" >&2
    missing=1
  fi
done
exit $missing
