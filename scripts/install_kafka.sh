#!/usr/bin/env bash
# Fetches the Apache Kafka broker jars (third_party/kafka/pom.xml) from Maven
# Central into a cache outside the repository, keyed by version:
#   ${SLUICE_KAFKA_CACHE:-~/.cache/sluice/kafka}/<version>/lib/*.jar
# Idempotent: once the directory is complete (a .complete stamp holding the
# pom's checksum) it does nothing and needs no network. No jar is committed.
# Prints the lib directory on its last line. Needs java (17+) and mvn, which
# scripts/install_deps.sh installs.
set -euo pipefail
cd "$(dirname "$0")/.."

pom=third_party/kafka/pom.xml
version=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$pom")
if [[ -z "$version" ]]; then
  echo "[kafka] no <kafka.version> in $pom" >&2
  exit 1
fi
cache=${SLUICE_KAFKA_CACHE:-$HOME/.cache/sluice/kafka}
lib="$cache/$version/lib"
stamp="$cache/$version/.complete"
sum=$(sha256sum "$pom" | cut -d' ' -f1)

if [[ -f "$stamp" && "$(cat "$stamp")" == "$sum" ]] && compgen -G "$lib/kafka_2.13-$version.jar" >/dev/null; then
  echo "[kafka] Apache Kafka $version jars present"
  echo "$lib"
  exit 0
fi

for tool in java mvn; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "[kafka] $tool is missing (scripts/install_deps.sh installs it)" >&2
    exit 1
  fi
done
java_major=$(java -XshowSettings:properties -version 2>&1 | sed -n 's/.*java.specification.version = \([0-9]*\).*/\1/p')
if [[ -z "$java_major" || "$java_major" -lt 17 ]]; then
  echo "[kafka] Kafka $version needs Java 17 or newer (found: ${java_major:-none})" >&2
  exit 1
fi

echo "[kafka] fetching Apache Kafka $version from Maven Central into $lib"
tmp="$cache/$version/lib.tmp.$$"
rm -rf "$tmp"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
mvn -q -B -f "$pom" dependency:copy-dependencies \
  -DincludeScope=runtime -DoutputDirectory="$tmp"
if ! compgen -G "$tmp/kafka_2.13-$version.jar" >/dev/null; then
  echo "[kafka] maven did not deliver kafka_2.13-$version.jar" >&2
  exit 1
fi
rm -rf "$lib"
mv "$tmp" "$lib"
echo "$sum" > "$stamp"
echo "[kafka] $(ls "$lib" | wc -l) jars in $lib"
echo "$lib"
