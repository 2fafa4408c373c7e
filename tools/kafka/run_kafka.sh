#!/usr/bin/env bash
# Runs one Apache Kafka 4.x node (broker + KRaft controller, combined mode,
# static quorum of one) on 127.0.0.1 until SIGTERM/SIGINT, for tests, the demo
# and the benchmark. The jars come from scripts/install_kafka.sh.
#
#   tools/kafka/run_kafka.sh --dir=/tmp/kafka --bootstrap_file=/tmp/kafka/bootstrap &
#   kcat -b "$(cat /tmp/kafka/bootstrap)" -L
#
# Flags (all optional):
#   --dir=DIR              state: server.properties, kafka-logs/, server.log (default: a new
#                          mktemp dir). A DIR already formatted is reused as it is: starting
#                          again on it is a broker restart with its data.
#   --port=P               the client listener (default: a free port)
#   --controller_port=P    the controller listener (default: a free port)
#   --bootstrap_file=PATH  written atomically ("127.0.0.1:P\n") once the broker answers
#                          metadata requests; removed on a clean stop
#   --jars=DIR             default $SLUICE_KAFKA_JARS, else ~/.cache/sluice/kafka/<version>/lib
#   --heap=SIZE            -Xmx (default 512m)
#   --property=NAME=VALUE  a server property (after the defaults, so it wins); repeatable
#   --ready_timeout=S      seconds to wait for readiness (default 90)
# Security (optional; the PLAINTEXT listener above always runs, for admin and tests):
#   --sasl_port=P|auto     a SASL_PLAINTEXT listener (mechanisms PLAIN, SCRAM-SHA-256 and
#                          SCRAM-SHA-512; not OAUTHBEARER)
#   --ssl_port=P|auto      an SSL listener that requires a client certificate signed by
#                          the test CA (ssl.client.auth=required)
#   --sasl_ssl_port=P|auto a SASL_SSL listener (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and
#                          OAUTHBEARER over TLS; OAUTHBEARER with Kafka's unsecured JWS
#                          validator: any unsigned token whose "sub" names the principal)
#   --user=NAME:PASSWORD   a SASL user (PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512, 8192
#                          iterations); repeatable; NAME and PASSWORD of [A-Za-z0-9._-]
#                          only. SCRAM users are written at format time: on a restart of
#                          a formatted DIR only the PLAIN users follow the flags.
# TLS material is throwaway, made with openssl on the first start into DIR/tls and kept
# for restarts: a CA (ca.pem; clients trust it), a certificate for 127.0.0.1 and
# localhost signed by it in a PKCS12 key store with a random password, and for clients
# of the SSL listener a certificate for CN=sluice-client (client.pem) with its key
# encrypted by a random password (client.key, client-key.password), plus the same key
# certified for one day in 2020 (client-expired.pem: an expired client certificate).
# DIR/listeners lists "PROTOCOL 127.0.0.1:PORT" for every client listener.
# librdkafka < 2.6.1 (Debian 12 ships 2.0.2) cannot log in with SCRAM to Kafka 4.x
# (librdkafka#4895, see docs/kafka.md); sluice links 2.12.1.
# Environment: KAFKA_JVM_OPTS replaces the default JVM flags (GC and JIT, not the heap).
#
# Exit: 0 after a clean stop; 1 the broker did not start (or died: its server.log tail
# is on stderr); 2 bad flags. The JVM runs in this script's process group, so a kill -9
# of the group (what the C++ fixture does) takes both; SIGSTOP to the group pauses it.
set -uo pipefail

KAFKA_VERSION=4.4.0
dir="" port="" cport="" bootstrap_file="" jars="${SLUICE_KAFKA_JARS:-}" heap=512m
ready_timeout=90
props=()
sasl_port="" ssl_port="" sasl_ssl_port=""
users=()
for arg in "$@"; do
  case "$arg" in
    --dir=*) dir=${arg#*=} ;;
    --port=*) port=${arg#*=} ;;
    --controller_port=*) cport=${arg#*=} ;;
    --bootstrap_file=*) bootstrap_file=${arg#*=} ;;
    --jars=*) jars=${arg#*=} ;;
    --heap=*) heap=${arg#*=} ;;
    --property=*) props+=("${arg#*=}") ;;
    --ready_timeout=*) ready_timeout=${arg#*=} ;;
    --sasl_port=*) sasl_port=${arg#*=} ;;
    --ssl_port=*) ssl_port=${arg#*=} ;;
    --sasl_ssl_port=*) sasl_ssl_port=${arg#*=} ;;
    --user=*) users+=("${arg#*=}") ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "run_kafka: unknown flag $arg" >&2; exit 2 ;;
  esac
done

if [[ -z "$jars" ]]; then
  home=$(getent passwd "$(id -u)" | cut -d: -f6)
  jars="${home:-$HOME}/.cache/sluice/kafka/$KAFKA_VERSION/lib"
fi
if ! compgen -G "$jars/kafka_2.13-*.jar" >/dev/null; then
  echo "run_kafka: no Kafka jars in $jars (run scripts/install_deps.sh)" >&2
  exit 1
fi
java=${JAVA:-java}
if ! command -v "$java" >/dev/null; then
  echo "run_kafka: java not found (run scripts/install_deps.sh)" >&2
  exit 1
fi

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
[[ -n "$port" ]] || port=$(free_port)
[[ -n "$cport" ]] || cport=$(free_port)
if [[ "$port" == "$cport" ]]; then cport=$(free_port); fi
# Extra listeners: "auto" picks a free port not yet taken.
taken=" $port $cport "
pick() {
  local p
  while :; do
    p=$(free_port)
    [[ "$taken" == *" $p "* ]] || break
  done
  taken+="$p "
  echo "$p"
}
for v in sasl_port ssl_port sasl_ssl_port; do
  if [[ "${!v}" == auto ]]; then printf -v "$v" '%s' "$(pick)"; fi
  if [[ -n "${!v}" && ! "${!v}" =~ ^[0-9]+$ ]]; then
    echo "run_kafka: --$v must be a port or auto, not ${!v}" >&2; exit 2
  fi
done
for u in "${users[@]}"; do
  if [[ ! "$u" =~ ^[A-Za-z0-9._-]+:[A-Za-z0-9._-]+$ ]]; then
    echo "run_kafka: --user wants NAME:PASSWORD of [A-Za-z0-9._-], not $u" >&2; exit 2
  fi
done
if [[ -n "$sasl_port$sasl_ssl_port" ]] && ((${#users[@]} == 0)); then
  echo "run_kafka: a SASL listener needs at least one --user=NAME:PASSWORD" >&2; exit 2
fi
if [[ -z "$dir" ]]; then dir=$(mktemp -d "${TMPDIR:-/tmp}/kafka.XXXXXX"); fi
mkdir -p "$dir" || exit 1
dir=$(cd "$dir" && pwd)

# Throwaway TLS material for the SSL and SASL_SSL listeners, made once per DIR.
tls_props=""
if [[ -n "$ssl_port$sasl_ssl_port" ]]; then
  if ! command -v openssl >/dev/null; then
    echo "run_kafka: openssl not found (an SSL listener needs it)" >&2; exit 1
  fi
  tls="$dir/tls"
  if [[ ! -f "$tls/broker.p12" ]]; then
    mkdir -p "$tls" && chmod 700 "$tls" || exit 1
    if ! (
      set -e
      cd "$tls"
      openssl rand -hex 16 > store.password
      openssl req -x509 -newkey rsa:2048 -nodes -days 30 -keyout ca.key -out ca.pem \
        -subj "/CN=sluice test CA $(date +%s)" -addext basicConstraints=critical,CA:TRUE \
        -addext keyUsage=critical,keyCertSign,cRLSign
      openssl req -newkey rsa:2048 -nodes -keyout broker.key -out broker.csr -subj "/CN=localhost"
      printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' > broker.ext
      openssl x509 -req -in broker.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 30 \
        -extfile broker.ext -out broker.pem
      openssl pkcs12 -export -in broker.pem -inkey broker.key -certfile ca.pem -name broker \
        -passout "file:store.password" -out broker.p12.tmp
      # The SSL listener's client: a certificate signed by the CA, its key encrypted
      # with a random password, and the same key certified for one day in 2020.
      openssl rand -hex 16 > client-key.password
      openssl req -newkey rsa:2048 -nodes -keyout client.plain.key -out client.csr \
        -subj "/CN=sluice-client"
      printf 'extendedKeyUsage=clientAuth\n' > client.ext
      openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 30 \
        -extfile client.ext -out client.pem
      openssl pkey -in client.plain.key -aes256 -passout "file:client-key.password" \
        -out client.key
      printf '[ca]\ndefault_ca = t\n[t]\ndatabase = index.txt\nnew_certs_dir = issued\nserial = ca.srl\ndefault_md = sha256\npolicy = p\n[p]\ncommonName = supplied\n' > ca.cnf
      : > index.txt && mkdir issued
      openssl ca -batch -config ca.cnf -cert ca.pem -keyfile ca.key -in client.csr \
        -startdate 20200101000000Z -enddate 20200102000000Z -notext -out client-expired.pem
      chmod 644 ca.pem client.pem client-expired.pem client.key client-key.password
      mv broker.p12.tmp broker.p12
      rm -rf ca.key broker.csr ca.srl* client.csr client.plain.key client.ext ca.cnf index.txt* issued
    ) > "$dir/tls.log" 2>&1; then
      echo "run_kafka: making the TLS material failed:" >&2
      cat "$dir/tls.log" >&2
      exit 1
    fi
  fi
  tls_props="ssl.keystore.type=PKCS12
ssl.keystore.location=$tls/broker.p12
ssl.keystore.password=$(cat "$tls/store.password")
ssl.key.password=$(cat "$tls/store.password")
ssl.client.auth=none
ssl.truststore.type=PEM
ssl.truststore.location=$tls/ca.pem
listener.name.ssl.ssl.client.auth=required"
fi

listeners="PLAINTEXT://127.0.0.1:$port"
protocol_map="CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT"
echo "PLAINTEXT 127.0.0.1:$port" > "$dir/listeners.tmp"
for l in SASL_PLAINTEXT:$sasl_port SSL:$ssl_port SASL_SSL:$sasl_ssl_port; do
  [[ -n "${l#*:}" ]] || continue
  listeners+=",${l%%:*}://127.0.0.1:${l#*:}"
  protocol_map+=",${l%%:*}:${l%%:*}"
  echo "${l%%:*} 127.0.0.1:${l#*:}" >> "$dir/listeners.tmp"
done
mv -f "$dir/listeners.tmp" "$dir/listeners"
# SASL: PLAIN users are listed in the listener's JAAS config; SCRAM users are
# credentials in the cluster metadata (written at format time below).
sasl_props=""
if [[ -n "$sasl_port$sasl_ssl_port" ]]; then
  plain_users=""
  for u in "${users[@]}"; do plain_users+=" user_${u%%:*}=\"${u#*:}\""; done
  # OAUTHBEARER on SASL_SSL only: SASL_PLAINTEXT offers a client that asks for it
  # "unsupported mechanism". Without a server callback handler Kafka validates
  # OAUTHBEARER tokens with its unsecured JWS validator (unsigned tokens, "sub" claim).
  sasl_props="sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER
listener.name.sasl_plaintext.sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512"
  for l in ${sasl_port:+sasl_plaintext} ${sasl_ssl_port:+sasl_ssl}; do
    sasl_props+="
listener.name.$l.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required$plain_users;
listener.name.$l.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.$l.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;"
  done
  if [[ -n "$sasl_ssl_port" ]]; then
    sasl_props+="
listener.name.sasl_ssl.oauthbearer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub=\"broker\";"
  fi
fi

cat > "$dir/server.properties" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$cport
listeners=$listeners,CONTROLLER://127.0.0.1:$cport
advertised.listeners=$listeners
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=$protocol_map
$sasl_props
$tls_props
log.dirs=$dir/kafka-logs
num.partitions=1
# Topics are created on purpose (RealKafka::CreateTopic), never by a typo.
auto.create.topics.enable=false
offsets.topic.replication.factor=1
offsets.topic.num.partitions=4
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=4
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
# Retention and compaction act within seconds when a topic asks for it
# (retention.ms, segment.ms, cleanup.policy=compact), for the tests.
log.retention.check.interval.ms=1000
log.cleaner.backoff.ms=500
log.initial.task.delay.ms=0
# A test broker shares 2 cores with the whole suite: a controller that waits
# 9 s for its own broker's heartbeat fences it when the JVM is starved, which
# empties every ISR and makes the next restart an unclean election. 30 s, and
# high watermarks checkpointed every 500 ms, keep a kill -9 restart clean.
broker.session.timeout.ms=30000
broker.heartbeat.interval.ms=2000
replica.high.watermark.checkpoint.interval.ms=500
PROPS
for p in "${props[@]}"; do echo "$p" >> "$dir/server.properties"; done

# Quiet: warnings and errors on stderr, everything at INFO in server.log.
cat > "$dir/log4j2.properties" <<LOG
status = warn
appender.console.type = Console
appender.console.name = STDERR
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = [kafka %d{HH:mm:ss.SSS}] %p %m (%c{1})%n
appender.console.filter.threshold.type = ThresholdFilter
appender.console.filter.threshold.level = warn
appender.file.type = File
appender.file.name = FILE
appender.file.fileName = $dir/server.log
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = info
rootLogger.appenderRef.console.ref = STDERR
rootLogger.appenderRef.file.ref = FILE
logger.state.name = state.change.logger
logger.state.level = warn
LOG

jvm_opts=${KAFKA_JVM_OPTS:--XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:-UsePerfData}
cp="$jars/*"
common=(-Xms128m "-Xmx$heap" $jvm_opts "-Dlog4j2.configurationFile=$dir/log4j2.properties"
        -Djava.awt.headless=true -cp "$cp")

if [[ ! -f "$dir/kafka-logs/meta.properties" ]]; then
  # A cluster id is 16 random bytes, URL-safe base64 without padding (what
  # `StorageTool random-uuid` prints), made here to save a JVM start.
  # Like Kafka's Uuid.randomUuid, never one starting with "-" (an option to
  # the argument parser: one run in 64 failed that way).
  cluster_id=$(python3 -c '
import base64, uuid
while True:
    s = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
    if not s.startswith("-"):
        print(s)
        break')
  scram=()
  if [[ -n "$sasl_port$sasl_ssl_port" ]]; then
    for u in "${users[@]}"; do
      scram+=(--add-scram "SCRAM-SHA-256=[name=${u%%:*},password=${u#*:},iterations=8192]"
              --add-scram "SCRAM-SHA-512=[name=${u%%:*},password=${u#*:},iterations=8192]")
    done
  fi
  if ! "$java" "${common[@]}" kafka.tools.StorageTool format "--cluster-id=$cluster_id" \
       -c "$dir/server.properties" "${scram[@]}" > "$dir/format.log" 2>&1; then
    echo "run_kafka: formatting $dir/kafka-logs failed:" >&2
    cat "$dir/format.log" >&2
    exit 1
  fi
fi

[[ -n "$bootstrap_file" ]] && rm -f "$bootstrap_file"
"$java" "${common[@]}" kafka.Kafka "$dir/server.properties" &
pid=$!
echo "$pid" > "$dir/java.pid"

stopping=0
stop() {
  stopping=1
  kill -TERM "$pid" 2>/dev/null
}
trap stop TERM INT

address="127.0.0.1:$port"
deadline=$((SECONDS + ready_timeout))
ready=0
while ((!stopping)); do
  if ! kill -0 "$pid" 2>/dev/null; then break; fi
  if kcat -b "$address" -L -m 3 2>/dev/null | grep -q "broker 1 at $address"; then
    ready=1
    break
  fi
  if ((SECONDS >= deadline)); then
    echo "run_kafka: no metadata answer from $address after ${ready_timeout}s" >&2
    kill -KILL "$pid" 2>/dev/null
    break
  fi
  sleep 0.2
done

if ((ready)); then
  if [[ -n "$bootstrap_file" ]]; then
    echo "$address" > "$bootstrap_file.tmp.$$" && mv -f "$bootstrap_file.tmp.$$" "$bootstrap_file"
  fi
  echo "run_kafka: Apache Kafka $KAFKA_VERSION serving on $address (controller 127.0.0.1:$cport, dir $dir)" >&2
fi

# `wait` returns early when a trapped signal arrives: wait until java is gone.
rc=0
while kill -0 "$pid" 2>/dev/null; do
  wait "$pid"
  rc=$?
done
[[ -n "$bootstrap_file" ]] && rm -f "$bootstrap_file"
if ((stopping)) && ((ready)); then
  # Kafka exits 143 on SIGTERM after its orderly shutdown.
  ((rc == 0 || rc == 143)) && exit 0
fi
if ((!stopping)); then
  echo "run_kafka: the broker ended (exit $rc); tail of $dir/server.log:" >&2
  tail -n 30 "$dir/server.log" >&2 2>/dev/null
fi
exit 1
