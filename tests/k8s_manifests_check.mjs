// Cross-object checks of sluice's Kubernetes manifests that a schema cannot
// make: selectors that select, ports and volumes that exist, $(VAR)s that are
// defined, the security and probe settings every container must carry.
// Usage: node k8s_manifests_check.mjs FILE.yaml...   (multi-document YAML;
// all files together are one install). Prints one line per problem; exit 1
// if there is any. Needs the `yaml` package in $NODE_PATH, which the
// k8s-validate tool installs.
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

// ES modules ignore NODE_PATH; resolve `yaml` from there explicitly.
const require = createRequire(path.join(process.env.NODE_PATH || ".", "index.js"));
const { parseAllDocuments } = require("yaml");

const objects = [];
for (const file of process.argv.slice(2)) {
  for (const doc of parseAllDocuments(fs.readFileSync(file, "utf8"))) {
    const obj = doc.toJS();
    if (obj && obj.kind !== "Kustomization") objects.push({ file, obj });
  }
}
const problems = [];
const fail = (o, msg) => problems.push(`${o.file}: ${o.obj.kind}/${o.obj.metadata?.name}: ${msg}`);
const ofKind = (kind) => objects.filter((o) => o.obj.kind === kind);
const workloads = objects.filter((o) => ["Deployment", "StatefulSet"].includes(o.obj.kind));
const subset = (small, big) => Object.entries(small || {}).every(([k, v]) => (big || {})[k] === v);
const selects = (selector, w) => subset(selector, w.obj.spec.template.metadata.labels);

if (objects.length === 0) problems.push("no objects found");
for (const o of objects) {
  if (o.obj.kind !== "Namespace" && o.obj.metadata?.namespace !== "sluice") {
    fail(o, `namespace is ${o.obj.metadata?.namespace}, want sluice`);
  }
}

const configMaps = new Map(ofKind("ConfigMap").map((o) => [o.obj.metadata.name, o.obj.data || {}]));
const pvcs = new Map(ofKind("PersistentVolumeClaim").map((o) => [o.obj.metadata.name, o.obj]));

for (const w of workloads) {
  const spec = w.obj.spec;
  const pod = spec.template.spec;
  if (!subset(spec.selector.matchLabels, spec.template.metadata.labels)) {
    fail(w, "selector does not match the pod template labels");
  }
  const psc = pod.securityContext || {};
  if (psc.runAsNonRoot !== true || !(psc.runAsUser > 0)) fail(w, "pods must run as a non-root uid");
  if (psc.seccompProfile?.type !== "RuntimeDefault") fail(w, "seccompProfile must be RuntimeDefault");
  if (!(pod.terminationGracePeriodSeconds >= 30)) {
    fail(w, "terminationGracePeriodSeconds must be set, at least 30 (publishes must finish)");
  }
  // Volumes: pod volumes plus StatefulSet claim templates.
  const volumes = new Map((pod.volumes || []).map((v) => [v.name, v]));
  for (const t of spec.volumeClaimTemplates || []) volumes.set(t.metadata.name, { template: t });
  for (const v of pod.volumes || []) {
    const claim = v.persistentVolumeClaim?.claimName;
    if (claim === undefined) continue;
    const pvc = pvcs.get(claim);
    if (!pvc) { fail(w, `volume ${v.name}: no PersistentVolumeClaim ${claim}`); continue; }
    // One writer per ReadWriteOnce volume: a single replica, old pod gone first.
    if (w.obj.kind === "Deployment" && pvc.spec.accessModes.includes("ReadWriteOnce") &&
        (spec.replicas !== 1 || spec.strategy?.type !== "Recreate")) {
      fail(w, `mounts ReadWriteOnce ${claim}: needs replicas 1 and strategy Recreate`);
    }
  }
  const annotations = spec.template.metadata.annotations || {};
  for (const c of pod.containers) {
    const where = `container ${c.name}`;
    const sc = c.securityContext || {};
    if (sc.readOnlyRootFilesystem !== true) fail(w, `${where}: readOnlyRootFilesystem must be true`);
    if (sc.allowPrivilegeEscalation !== false) fail(w, `${where}: allowPrivilegeEscalation must be false`);
    if (!(sc.capabilities?.drop || []).includes("ALL")) fail(w, `${where}: must drop ALL capabilities`);
    for (const kind of ["requests", "limits"]) {
      for (const r of ["cpu", "memory"]) {
        if (c.resources?.[kind]?.[r] === undefined) fail(w, `${where}: no resources.${kind}.${r}`);
      }
    }
    const ports = new Map((c.ports || []).map((p) => [p.name, p.containerPort]));
    const portNumbers = new Set(ports.values());
    const portOk = (p) => (typeof p === "string" ? ports.has(p) : portNumbers.has(p));
    for (const probe of ["readinessProbe", "livenessProbe"]) {
      if (!c[probe]) fail(w, `${where}: no ${probe}`);
    }
    for (const probe of ["readinessProbe", "livenessProbe", "startupProbe"]) {
      const p = c[probe];
      if (!p) continue;
      const port = p.grpc?.port ?? p.httpGet?.port ?? p.tcpSocket?.port;
      if (!portOk(port)) fail(w, `${where}: ${probe} port ${port} is not a container port`);
    }
    for (const m of c.volumeMounts || []) {
      if (!volumes.has(m.name)) fail(w, `${where}: mounts unknown volume ${m.name}`);
    }
    // $(VAR) references must resolve: env entries and envFrom ConfigMap keys.
    const defined = new Set((c.env || []).map((e) => e.name));
    for (const from of c.envFrom || []) {
      const name = from.configMapRef?.name;
      if (name === undefined) continue;
      if (!configMaps.has(name)) { fail(w, `${where}: envFrom unknown ConfigMap ${name}`); continue; }
      for (const key of Object.keys(configMaps.get(name))) defined.add(key);
    }
    for (const arg of [...(c.command || []), ...(c.args || [])]) {
      for (const [, name] of arg.matchAll(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g)) {
        if (!defined.has(name)) fail(w, `${where}: ${arg} refers to undefined $(${name})`);
      }
    }
    if (annotations["prometheus.io/scrape"] === "true" &&
        Number(annotations["prometheus.io/port"]) !== ports.get("metrics")) {
      fail(w, `${where}: prometheus.io/port is not the container port named metrics`);
    }
    const metricsFlag = (c.args || []).find((a) => a.startsWith("--metrics_listen="));
    if (ports.has("metrics") && !(metricsFlag || "").endsWith(`:${ports.get("metrics")}`)) {
      fail(w, `${where}: --metrics_listen does not serve the metrics port`);
    }
    const listenFlag = (c.args || []).find((a) => a.startsWith("--listen="));
    if (ports.has("grpc") && !(listenFlag || "").endsWith(`:${ports.get("grpc")}`)) {
      fail(w, `${where}: --listen does not serve the grpc port`);
    }
  }
  // Several supervisors: only with leader election over a shared PostgreSQL
  // store, readiness on the leader-only health service (so the Service routes
  // to the leader), liveness and startup on the overall status (a standby must
  // not be restarted for being a standby), a rollout that can replace a leader
  // whose successor is never ready before it goes, and a disruption budget.
  const supervisor = pod.containers.find((c) => (c.command || []).includes("/usr/local/bin/sluice-supervisor"));
  if (w.obj.kind === "Deployment" && supervisor && spec.replicas > 1) {
    const c = supervisor;
    const where = `container ${c.name}`;
    const args = c.args || [];
    const envFromData = Object.assign({}, ...(c.envFrom || []).map((f) => configMaps.get(f.configMapRef?.name) || {}));
    const resolve = (a) => a.replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (m, n) => envFromData[n] ?? m);
    const flag = (name) => args.find((a) => a === `--${name}` || a.startsWith(`--${name}=`));
    const fieldPath = (name) => (c.env || []).find((e) => e.name === name)?.valueFrom?.fieldRef?.fieldPath;
    if (!["--leader_election", "--leader_election=true"].includes(flag("leader_election"))) {
      fail(w, `${where}: ${spec.replicas} replicas need --leader_election`);
    }
    const store = resolve(flag("metadata_store") || "--metadata_store=").slice("--metadata_store=".length);
    if (!/^postgres(ql)?:\/\//.test(store)) {
      fail(w, `${where}: ${spec.replicas} replicas need a postgresql:// --metadata_store (got "${store}")`);
    }
    if (flag("advertise_address") !== "--advertise_address=$(POD_IP):7070" || fieldPath("POD_IP") !== "status.podIP") {
      fail(w, `${where}: --advertise_address must be $(POD_IP):7070, POD_IP from status.podIP`);
    }
    if (flag("supervisor_id") !== "--supervisor_id=$(POD_NAME)" || fieldPath("POD_NAME") !== "metadata.name") {
      fail(w, `${where}: --supervisor_id must be $(POD_NAME), POD_NAME from metadata.name`);
    }
    if (c.readinessProbe?.grpc?.service !== "sluice.v1.SupervisorService") {
      fail(w, `${where}: readinessProbe must ask for service sluice.v1.SupervisorService (leader only)`);
    }
    for (const probe of ["livenessProbe", "startupProbe"]) {
      if (c[probe]?.grpc?.service) fail(w, `${where}: ${probe} must use the overall status (service ""), not ${c[probe].grpc.service}`);
    }
    const ru = spec.strategy?.rollingUpdate || {};
    const maxUnavailable = ru.maxUnavailable === undefined ? "25%" : String(ru.maxUnavailable);
    const unavailable = maxUnavailable.endsWith("%")
      ? Math.floor((spec.replicas * Number(maxUnavailable.slice(0, -1))) / 100) : Number(maxUnavailable);
    if (spec.strategy?.type !== "Recreate" && unavailable < spec.replicas) {
      fail(w, `rolling update maxUnavailable ${maxUnavailable} < ${spec.replicas} replicas: ` +
              "standbys are never ready, so the old leader would never be replaced");
    }
    if (!ofKind("PodDisruptionBudget").some((b) => selects(b.obj.spec.selector.matchLabels, w))) {
      fail(w, "several supervisors need a PodDisruptionBudget");
    }
  }
  if (w.obj.kind === "StatefulSet") {
    const governing = ofKind("Service").find((s) => s.obj.metadata.name === spec.serviceName);
    if (!governing) fail(w, `serviceName ${spec.serviceName}: no such Service`);
    else if (governing.obj.spec.clusterIP !== "None") fail(w, `serviceName ${spec.serviceName} is not headless`);
    // A worker's identity: its pod name, and its DNS name under that Service.
    const c = pod.containers[0];
    const podName = (c.env || []).find((e) => e.name === "POD_NAME");
    if (podName?.valueFrom?.fieldRef?.fieldPath !== "metadata.name") {
      fail(w, "POD_NAME must come from metadata.name (downward API)");
    }
    if (!(c.args || []).includes("--worker_id=$(POD_NAME)")) fail(w, "--worker_id must be $(POD_NAME)");
    const advertise = (c.args || []).find((a) => a.startsWith("--advertise_address="));
    if (!advertise || !advertise.startsWith(`--advertise_address=$(POD_NAME).${spec.serviceName}.`)) {
      fail(w, "--advertise_address must be the pod's DNS name under the headless Service");
    }
    if (!(spec.volumeClaimTemplates || []).length) fail(w, "workers need a volume per pod for task state");
  }
}

for (const s of ofKind("Service")) {
  const selected = workloads.filter((w) => selects(s.obj.spec.selector, w));
  if (selected.length === 0) { fail(s, "selects no workload"); continue; }
  for (const p of s.obj.spec.ports) {
    for (const w of selected) {
      const names = w.obj.spec.template.spec.containers.flatMap((c) => (c.ports || []).map((q) => q.name));
      if (typeof p.targetPort === "string" && !names.includes(p.targetPort)) {
        fail(s, `targetPort ${p.targetPort} is not a port of ${w.obj.metadata.name}`);
      }
    }
  }
}
for (const b of ofKind("PodDisruptionBudget")) {
  if (!workloads.some((w) => selects(b.obj.spec.selector.matchLabels, w))) fail(b, "selects no workload");
}

for (const p of problems) console.log(p);
console.log(`${objects.length} objects checked, ${problems.length} problems`);
process.exit(problems.length ? 1 : 0);
