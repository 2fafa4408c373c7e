#!/usr/bin/env bash
# Ties the Dockerfile and the Kubernetes manifests to the binaries they run:
# - every shared library the binaries load comes from a package the image's
#   runtime stage installs (ldd + dpkg -S on this Debian 12 machine, the same
#   release as the image), and every package listed there exists;
# - the build stage builds and installs each binary where the manifests'
#   `command:` expects it;
# - every --flag the manifests (and the mTLS overlay's patches) pass to a
#   binary is a flag that binary defines (its --helpxml).
# Usage (from Bazel): k8s_image_test.sh BINARY...   (data: Dockerfile, k8s/)
set -uo pipefail

runfiles="${TEST_SRCDIR:?}/${TEST_WORKSPACE:?}"
dockerfile="$runfiles/Dockerfile"
k8s="$runfiles/k8s"
binaries=("$@")
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# The runtime stage: from the last FROM to the end.
runtime=$(awk '/^FROM /{stage=""} {stage = stage $0 "\n"} END {printf "%s", stage}' "$dockerfile")
grep -q '^FROM debian:12-slim' <<<"$runtime" || fail "the last stage is not FROM debian:12-slim"
# Package names on the continuation lines of its apt-get install.
mapfile -t listed < <(sed -n '/apt-get install/,/&&/p' <<<"$runtime" |
  grep -E '^ +[a-z0-9][a-z0-9.+-]+ *\\?$' | sed 's/[ \\]//g' | sort -u)
((${#listed[@]} > 5)) || fail "could not read the runtime package list (${#listed[@]} found)"
# Always in debian:12-slim.
base_packages=(libc6 libgcc-s1 libstdc++6)

# ---- every listed package is a real Debian 12 package ----
# (Process starts are slow on a busy machine: one dpkg call for the lot.)
declare -A installs
for pkg in "${listed[@]}" "${base_packages[@]}"; do installs[$pkg]=1; done
declare -A known
while read -r pkg; do known[$pkg]=1; done < <(dpkg-query -W -f='${Package}\n' "${listed[@]}" 2>/dev/null)
for pkg in "${listed[@]}"; do
  [ -n "${known[$pkg]:-}" ] || apt-cache show "$pkg" >/dev/null 2>&1 ||
    fail "Dockerfile installs unknown package $pkg"
done

# ---- what the binaries load is installed ----
# Owning package of every shared library the binaries load, from one dpkg -S
# call, keyed by the library's real file name. dpkg lists some merged-/usr
# files under /lib, so each is asked for with and without its /usr prefix.
declare -A package_of
mapfile -t reals < <(for bin in "${binaries[@]}"; do ldd "$bin" | awk '/=> \// {print $3}'; done |
  sort -u | xargs -r readlink -f | sort -u)
while IFS= read -r line; do
  pkg=${line%%: *}
  file=${line#*: }
  package_of[${file##*/}]=${pkg%%:*}  # without :amd64
done < <(for real in "${reals[@]}"; do echo "$real"; echo "${real#/usr}"; done |
  xargs -r dpkg -S 2>/dev/null)

for bin in "${binaries[@]}"; do
  name=$(basename "$bin")
  [ -x "$bin" ] || { fail "$name: not an executable"; continue; }
  out=$(ldd "$bin") || { fail "$name: ldd failed"; continue; }
  if grep -q "not found" <<<"$out"; then fail "$name: $(grep 'not found' <<<"$out")"; fi
  mapfile -t paths < <(awk '/=> \// {print $3}' <<<"$out")
  mapfile -t real_paths < <(readlink -f "${paths[@]}")
  needed=${#paths[@]}
  for i in "${!paths[@]}"; do
    real=${real_paths[$i]}
    pkg=${package_of[${real##*/}]:-}
    if [ -z "$pkg" ]; then
      fail "$name: no package owns ${paths[$i]}"
    elif [ -z "${installs[$pkg]:-}" ]; then
      fail "$name loads ${paths[$i]} from package $pkg, which the runtime stage does not install"
    fi
  done
  ((needed > 3)) || fail "$name: ldd listed only $needed libraries"
  echo "$name: loads $needed shared libraries"

  # ---- built, installed where the manifests run it ----
  grep -qE "bazel build .*:$name( |\$)" "$dockerfile" || fail "Dockerfile does not build $name"
  grep -qE "/out/$name( |\$)" "$dockerfile" || fail "Dockerfile does not install $name into /out"
  grep -q '^COPY --from=build /out/ /usr/local/bin/' "$dockerfile" ||
    fail "Dockerfile does not copy /out/ to /usr/local/bin/"

  # ---- the flags the manifests pass exist ----
  defined=$("$bin" --helpxml 2>/dev/null | sed -n 's:.*<name>\([a-z_0-9]*\)</name>.*:\1:p' | sort -u)
  grep -qx listen <<<"$defined" || fail "$name --helpxml lists no flags"
  files=$(grep -Rl -- "/usr/local/bin/$name\$" "$k8s" || true)
  [ -n "$files" ] || fail "no manifest runs /usr/local/bin/$name"
  component=${name#sluice-}  # supervisor, task
  files="$files $(ls "$k8s"/overlays/*/"$component"-*.yaml 2>/dev/null)"
  for file in $files; do
    for flag in $(grep -oE -- '--[a-z_0-9]+=' "$file" | sed 's/^--//; s/=$//' | sort -u); do
      grep -qx "$flag" <<<"$defined" ||
        fail "${file#$runfiles/} passes --$flag, which $name does not define"
    done
  done
  echo "$name: checked the flags of $(echo $files | wc -w) manifest files"
done

echo "runtime packages: ${listed[*]}"
if ((failures)); then
  echo "$failures problems"
  exit 1
fi
echo "all checks passed"
