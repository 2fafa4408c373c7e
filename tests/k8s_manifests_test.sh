#!/usr/bin/env bash
# Validates every Kubernetes manifest in k8s/ against the Kubernetes API schema
# with the shared k8s-validate tool, renders the kustomizations (when kubectl
# is installed) and validates what they produce, checks that
# base/kustomization.yaml lists exactly the manifests beside it, and runs the
# cross-object checks of k8s_manifests_check.mjs.
#
# The validator is found at $K8S_VALIDATE or at shared/tools/k8s-validate/
# k8s-validate beside the repository or one of its parents (pass
# --test_env=K8S_VALIDATE=... to Bazel to point elsewhere). Without it, the checks that need it are reported
# as skipped with the reason. Each check is one test case in the JUnit XML
# that Bazel collects.
set -uo pipefail

runfiles="${TEST_SRCDIR:?}/${TEST_WORKSPACE:?}"
# The source tree itself (kustomize refuses files reached through symlinks
# that point outside the kustomization root, which runfiles are).
root=$(cd "$(dirname "$(readlink -f "$runfiles/k8s/kustomization.yaml")")/.." && pwd)
k8s="$root/k8s"
# ../shared beside the clone (CI, the lead's checkout); from a worktree under
# /work/wt/NAME it is one level further up.
validator="${K8S_VALIDATE:-}"
if [ -z "$validator" ]; then
  validator="$root/../shared/tools/k8s-validate/k8s-validate"
  for up in "$root/.." "$root/../.." "$root/../../.."; do
    if [ -x "$up/shared/tools/k8s-validate/k8s-validate" ]; then
      validator="$up/shared/tools/k8s-validate/k8s-validate"
      break
    fi
  done
fi
work="${K8S_VALIDATE_HOME:-/tmp/k8s-validate}"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
xml="${XML_OUTPUT_FILE:-$tmp/test.xml}"
cases="$tmp/cases.xml"
: >"$cases"
passed=0 failed=0 skipped=0

xml_escape() { sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g' -e 's/"/\&quot;/g'; }

# run_case NAME COMMAND...: one test case, its output kept on failure.
run_case() {
  local name=$1; shift
  local out="$tmp/case.out"
  if "$@" >"$out" 2>&1; then
    passed=$((passed + 1))
    echo "PASS $name"
    echo "<testcase classname=\"k8s_manifests\" name=\"$name\"/>" >>"$cases"
  else
    failed=$((failed + 1))
    echo "FAIL $name"; sed 's/^/    /' "$out"
    { echo "<testcase classname=\"k8s_manifests\" name=\"$name\"><failure message=\"$name failed\">"
      xml_escape <"$out"
      echo "</failure></testcase>"; } >>"$cases"
  fi
}

skip_case() {
  skipped=$((skipped + 1))
  echo "SKIP $1: $2"
  echo "<testcase classname=\"k8s_manifests\" name=\"$1\"><skipped message=\"$(echo "$2" | xml_escape)\"/></testcase>" >>"$cases"
}

# ---- checks that need nothing but the shell ----

# The resources: list of a kustomization.yaml, one entry per line.
resources_of() { sed -n '/^resources:/,/^[^ -]/p' "$1" | sed -n 's/^ *- *//p'; }

kustomization_lists_every_manifest() {
  local listed present
  listed=$(resources_of "$k8s/base/kustomization.yaml" | sort)
  present=$(cd "$k8s/base" && ls *.yaml | grep -vx kustomization.yaml | sort)
  if [ "$listed" != "$present" ]; then
    echo "base/kustomization.yaml resources and the files in k8s/base differ:"
    diff <(echo "$listed") <(echo "$present")
    return 1
  fi
  [ -n "$listed" ] || { echo "no resources listed"; return 1; }
}

kustomization_references_exist() {
  local ok=0 dir entry
  for dir in "$k8s" "$k8s/base" "$k8s"/overlays/*/ "$k8s/monitoring"; do
    dir=${dir%/}
    for entry in $(resources_of "$dir/kustomization.yaml") \
                 $(sed -n 's/^ *- *path: *//p' "$dir/kustomization.yaml"); do
      [ -e "$dir/$entry" ] || { echo "$dir/kustomization.yaml: $entry does not exist"; ok=1; }
    done
  done
  return $ok
}

run_case kustomization_lists_every_manifest kustomization_lists_every_manifest
run_case kustomization_references_exist kustomization_references_exist

# ---- checks that need the validator (and the yaml package it installs) ----

if [ ! -x "$validator" ]; then
  reason="k8s-validate not found at $validator (set K8S_VALIDATE, or run where ../shared exists)"
  for name in validator_rejects_broken_manifest validate_base cross_object_checks_base \
              kustomize_default kustomize_mtls kustomize_postgresql_s3_ha kustomize_monitoring; do
    skip_case "$name" "$reason"
  done
else
  export K8S_VALIDATE_HOME="$work"
  validate() { "$validator" "$@"; }

  # The validator must really fail on a bad manifest, or every pass below
  # means nothing.
  validator_rejects_broken_manifest() {
    printf 'apiVersion: v1\nkind: Service\nmetadata:\n  name: x\nspec:\n  portz: []\n' \
      >"$tmp/broken.yaml"
    if validate "$tmp/broken.yaml"; then
      echo "k8s-validate accepted an unknown field"; return 1
    fi
    return 0
  }
  run_case validator_rejects_broken_manifest validator_rejects_broken_manifest

  manifests=()
  for f in "$k8s"/base/*.yaml; do
    [ "$(basename "$f")" = kustomization.yaml ] || manifests+=("$f")
  done
  run_case validate_base validate "${manifests[@]}"

  check() { NODE_PATH="$work/node_modules" node "$runfiles/tests/k8s_manifests_check.mjs" "$@"; }
  run_case cross_object_checks_base check "${manifests[@]}"

  # kubectl's built-in kustomize renders each entry point; what it makes must
  # validate and pass the same checks.
  # render_and_check DIR TEXT...: DIR (under k8s/) renders, validates, passes
  # the checks, and its output contains every TEXT (and none of the TEXTs
  # given as !TEXT).
  render_and_check() {
    local dir=$1 out="$tmp/kustomize-$(basename "$(cd "$k8s/$1" && pwd)").yaml"
    kubectl kustomize "$k8s/$dir" >"$out" || return 1
    validate "$out" && check "$out" || return 1
    shift
    local want
    for want in "$@"; do
      if [ "${want#!}" != "$want" ]; then
        ! grep -qF -- "${want#!}" "$out" || { echo "rendered $dir contains: ${want#!}"; return 1; }
      else
        grep -qF -- "$want" "$out" || { echo "rendered $dir lacks: $want"; return 1; }
      fi
    done
  }
  if command -v kubectl >/dev/null 2>&1; then
    run_case kustomize_default render_and_check . "--advertise_address=" "claimName: sluice-deep-storage"
    run_case kustomize_mtls render_and_check overlays/mtls \
      "--tls_cert=/etc/sluice/tls/tls.crt" "--tls_ca=/etc/sluice/tls/ca.crt" \
      "secretName: sluice-supervisor-tls" "secretName: sluice-task-tls" "path: /healthz"
    run_case kustomize_postgresql_s3_ha render_and_check overlays/postgresql-s3-ha \
      "--leader_election=true" "--metadata_store=\$(SLUICE_METADATA_STORE)" \
      "--advertise_address=\$(POD_IP):7070" "--supervisor_id=\$(POD_NAME)" \
      "service: sluice.v1.SupervisorService" "kind: PodDisruptionBudget" \
      "secretName: sluice-postgresql" "name: sluice-s3" "SLUICE_DEEP_STORAGE: s3://" \
      "!sluice-deep-storage" "!sluice-supervisor-data" "!persistentVolumeClaim:" "!type: Recreate"
    run_case kustomize_monitoring render_and_check monitoring \
      "name: sluice-grafana-dashboard" "grafana_dashboard: \"1\"" "name: sluice-prometheus-rules" \
      "alert: SluiceWorkerLost"
  else
    skip_case kustomize_monitoring "kubectl is not installed"
    skip_case kustomize_default "kubectl is not installed"
    skip_case kustomize_mtls "kubectl is not installed"
    skip_case kustomize_postgresql_s3_ha "kubectl is not installed"
  fi
fi

{
  echo '<?xml version="1.0" encoding="UTF-8"?>'
  echo "<testsuites><testsuite name=\"k8s_manifests_test\" tests=\"$((passed + failed + skipped))\" failures=\"$failed\" skipped=\"$skipped\">"
  cat "$cases"
  echo "</testsuite></testsuites>"
} >"$xml"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
