// The sluice web console: plain browser JavaScript, no library. Every number
// comes from the supervisor's JSON API (/console/api/...), which runs the
// same gRPC calls sluicectl makes, with the token given at sign-in.
// Data is only ever put on the page as text (textContent), never as HTML.
"use strict";

const TOKEN_KEY = "sluice.console.token";
const POLL_MS = 5000;
let me = null;          // whoami: {principal, roles, admin}
let pollTimer = null;

// ---------- DOM helpers ----------

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "onclick") node.addEventListener("click", value);
    else if (key === "class") node.className = value;
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function svg(tag, attrs, ...children) {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, String(value));
  for (const child of children.flat()) {
    if (child !== null && child !== undefined) {
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
  }
  return node;
}

function num(value) { return Number(value || 0); }
function fmt(value) { return num(value).toLocaleString("en-US"); }
function shortEnum(value, prefix) { return String(value || "").replace(prefix, ""); }
function ago(ms) {
  const s = Math.max(0, Math.round((Date.now() - num(ms)) / 1000));
  return num(ms) === 0 ? "never" : s < 120 ? `${s} s ago` : `${Math.round(s / 60)} min ago`;
}
function iso(ms) { return num(ms) ? new Date(num(ms)).toISOString().replace(".000Z", "Z") : ""; }
function pill(ok, okText, badText) {
  return el("span", { class: `pill ${ok ? "good" : "bad"}` }, ok ? okText : badText);
}

// ---------- API ----------

class ApiError extends Error {
  constructor(status, code, message) { super(message); this.status = status; this.code = code; }
}

async function api(path, method = "GET") {
  const token = sessionStorage.getItem(TOKEN_KEY) || "";
  const response = await fetch(`/console/api/${path}`, {
    method,
    headers: token ? { Authorization: `Bearer ${token}` } : {},
    credentials: "omit",
    cache: "no-store",
  });
  let body = {};
  try { body = await response.json(); } catch (e) { body = {}; }
  if (!response.ok) {
    if (response.status === 401) showSignIn("Sign in: the token was refused or is missing.");
    throw new ApiError(response.status, body.code || String(response.status), body.message || response.statusText);
  }
  return body;
}

// ---------- sign-in ----------

function showSignIn(message) {
  stopPolling();
  me = null;
  document.getElementById("signin").hidden = false;
  document.getElementById("view").replaceChildren();
  document.getElementById("who").textContent = "";
  document.getElementById("signout").hidden = true;
  document.getElementById("signin-error").textContent = message || "";
}

async function signIn(token) {
  if (token !== undefined) sessionStorage.setItem(TOKEN_KEY, token);
  try {
    me = await api("whoami");
  } catch (e) {
    if (e.status !== 401) showSignIn(`Sign-in failed: ${e.message}`);
    return;
  }
  document.getElementById("signin").hidden = true;
  document.getElementById("who").textContent =
    `${me.principal} (${(me.roles || []).join(", ").toLowerCase()})`;
  document.getElementById("signout").hidden = false;
  route();
}

// ---------- pages ----------

function stopPolling() { if (pollTimer) clearTimeout(pollTimer); pollTimer = null; }

function poll(render) {
  stopPolling();
  const tick = async () => {
    try {
      await render();
    } catch (e) {
      if (e.status !== 401) {
        document.getElementById("view").replaceChildren(
          el("p", { class: "error", "data-testid": "page-error" }, `${e.code}: ${e.message}`));
      }
      if (e.status === 401) return;
    }
    pollTimer = setTimeout(tick, POLL_MS);
  };
  tick();
}

function setView(...children) {
  document.getElementById("view").replaceChildren(
    ...children.filter((c) => c !== null && c !== undefined && c !== false));
}

function rate(history) {
  const points = (history && history.points) || [];
  if (points.length < 2) return null;
  const a = points[points.length - 2], b = points[points.length - 1];
  const seconds = (b.timeMs - a.timeMs) / 1000;
  return seconds > 0 ? Math.max(0, (b.read - a.read) / seconds) : null;
}

async function datasourcesPage() {
  const list = await api("datasources");
  const rows = await Promise.all((list.supervisors || []).map(async (s) => {
    const [status, history] = await Promise.all([
      api(`datasources/${encodeURIComponent(s.datasource)}`).then((r) => r.status),
      api(`datasources/${encodeURIComponent(s.datasource)}/lag-history`),
    ]);
    return { s, status, history };
  }));
  setView(
    el("h1", {}, "Datasources"),
    rows.length === 0 ? el("p", { class: "muted" }, "No datasource yet: submit a spec (sluicectl submit).") :
    el("table", { "data-testid": "datasources" },
      el("tr", {}, ["Datasource", "State", "Detailed state", "Health", "Ingest rate (records/s)",
                    "Lag (records)", "Time lag", "Segments published", "Autoscaler", "Last error"]
        .map((h) => el("th", {}, h))),
      rows.map(({ s, status, history }) => {
        const r = rate(history);
        const scaler = status.autoScaler || {};
        const decision = scaler.lastDecision || {};
        const errors = status.recentErrors || [];
        return el("tr", { "data-testid": `ds-row-${s.datasource}` },
          el("td", {}, el("a", { href: `#/ds/${encodeURIComponent(s.datasource)}` }, s.datasource)),
          el("td", { "data-testid": "state" }, shortEnum(status.state, "SUPERVISOR_STATE_")),
          el("td", {}, status.detailedState),
          el("td", {}, pill(status.healthy, "healthy", "unhealthy")),
          el("td", { class: "num" }, r === null ? "…" : fmt(Math.round(r))),
          el("td", { class: "num", "data-testid": "lag" }, fmt(status.aggregateLag)),
          el("td", { class: "num" }, `${(num(status.maxTimeLagMs) / 1000).toFixed(1)} s`),
          el("td", { class: "num" }, fmt(status.segmentsPublished)),
          el("td", {}, num(scaler.taskCount) ? `${scaler.taskCount} groups${decision.reason ? `; last: ${decision.reason}` : ""}` : "off"),
          el("td", { class: "error" }, errors.length ? `${iso(errors[errors.length - 1].timeMs)} ${errors[errors.length - 1].message}` : ""));
      })));
}

function lagChart(history) {
  const points = (history && history.points) || [];
  const width = 900, height = 220, left = 60, bottom = 20, top = 10;
  const chart = svg("svg", { class: "chart", viewBox: `0 0 ${width} ${height}`, "data-testid": "lag-chart",
                             "data-points": points.length, role: "img" });
  chart.append(svg("title", {}, "Lag over the last hour (records)"));
  if (points.length === 0) {
    chart.append(svg("text", { x: left, y: height / 2 }, "no samples yet"));
    return chart;
  }
  const t0 = points[0].timeMs, t1 = Math.max(points[points.length - 1].timeMs, t0 + 1);
  const partitions = Object.keys(points[points.length - 1].partitions || {});
  const max = Math.max(1, ...points.map((p) => p.lag));
  const x = (t) => left + (width - left - 10) * (t - t0) / (t1 - t0);
  const y = (v) => top + (height - top - bottom) * (1 - v / max);
  chart.append(svg("line", { class: "axis", x1: left, y1: y(0), x2: width - 10, y2: y(0) }));
  chart.append(svg("text", { x: 4, y: y(max) + 10 }, fmt(max)));
  chart.append(svg("text", { x: 4, y: y(0) }, "0"));
  chart.append(svg("text", { x: left, y: height - 4 }, new Date(t0).toISOString().slice(11, 19)));
  chart.append(svg("text", { x: width - 70, y: height - 4 }, new Date(t1).toISOString().slice(11, 19)));
  const line = (values, color, label, width_) => svg("polyline", {
    points: points.map((p, i) => `${x(p.timeMs).toFixed(1)},${y(values(p, i)).toFixed(1)}`).join(" "),
    fill: "none", stroke: color, "stroke-width": width_, "data-series": label });
  const colors = ["#7a8cb8", "#b8a07a", "#7ab88c", "#b87a9e", "#8c7ab8", "#7ab4b8"];
  partitions.forEach((p, i) => chart.append(
    line((pt) => num((pt.partitions || {})[p]), colors[i % colors.length], `partition ${p}`, 1)));
  chart.append(line((pt) => pt.lag, "#2f6fed", "total", 2.5));
  return chart;
}

function actionButtons(ds, status, rerender) {
  if (!me || !me.admin) return null;
  const act = (name, title, body) => el("button", {
    type: "button", "data-testid": `action-${name}`, class: name === "terminate" || name === "reset" ? "danger" : "",
    onclick: async () => {
      if (!(await confirmDialog(title, body))) return;
      await runAction(`datasources/${encodeURIComponent(ds)}/${name}`);
      rerender();
    },
  }, title);
  return el("div", { class: "actions", "data-testid": "admin-actions" },
    status.suspended
      ? act("resume", "Resume", "Start reading again from the committed offsets.")
      : act("suspend", "Suspend", "Tasks stop reading and publish what they read; nothing is lost."),
    act("handoff", "Hand off", "Every reading group closes its sequence now and publishes it while it reads on."),
    act("reset", "Reset", "Stops the tasks and starts them again from the stored offsets; rows they held but did not publish are read again."),
    el("button", { type: "button", class: "danger", "data-testid": "action-reset-offsets",
                   onclick: () => resetOffsetsDialog(ds, status, rerender) }, "Reset offsets…"),
    act("terminate", "Terminate", "Stops the datasource for good: its tasks publish and stop, the spec is kept in history."));
}

async function runAction(path, query = "") {
  try {
    await api(`${path}${query}`, "POST");
  } catch (e) {
    alertError(e);
  }
}

function alertError(e) {
  const view = document.getElementById("view");
  view.prepend(el("p", { class: "error", "data-testid": "action-error" }, `${e.code}: ${e.message}`));
}

function confirmDialog(title, body) {
  const dialog = document.getElementById("confirm");
  document.getElementById("confirm-title").textContent = title;
  document.getElementById("confirm-body").replaceChildren(body instanceof Node ? body : el("p", {}, body));
  dialog.returnValue = "";
  dialog.showModal();
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "ok"), { once: true });
  });
}

async function resetOffsetsDialog(ds, status, rerender) {
  const committed = status.committedOffsets || {};
  const inputs = {};
  const preview = el("ul", { "data-testid": "reset-preview" });
  const update = () => {
    preview.replaceChildren(...Object.keys(inputs).filter((p) => inputs[p].value !== "").map((p) => {
      const from = num(committed[p]), to = num(inputs[p].value);
      const moved = to - from;
      return el("li", {}, `partition ${p}: ${fmt(from)} → ${fmt(to)} (${moved < 0 ? `${fmt(-moved)} records read again` : `${fmt(moved)} records skipped`})`);
    }));
  };
  const table = el("table", {},
    el("tr", {}, el("th", {}, "Partition"), el("th", {}, "Committed"), el("th", {}, "New offset")),
    Object.keys(committed).map((p) => {
      inputs[p] = el("input", { type: "number", min: 0, "data-partition": p });
      inputs[p].addEventListener("input", update);
      return el("tr", {}, el("td", {}, p), el("td", { class: "num" }, fmt(committed[p])), el("td", {}, inputs[p]));
    }));
  const body = el("div", {}, el("p", {}, "What moves: the partitions you fill in start from the new offset. Records before it are skipped, or read again when it is lower."), table, preview);
  if (!(await confirmDialog(`Reset offsets of ${ds}`, body))) return;
  const query = Object.keys(inputs).filter((p) => inputs[p].value !== "")
    .map((p) => `${encodeURIComponent(p)}=${encodeURIComponent(inputs[p].value)}`).join("&");
  if (!query) return;
  await runAction(`datasources/${encodeURIComponent(ds)}/reset-offsets`, `?${query}`);
  rerender();
}

async function datasourcePage(ds) {
  const enc = encodeURIComponent(ds);
  const render = async () => {
    const [statusResponse, history, log, segments] = await Promise.all([
      api(`datasources/${enc}`), api(`datasources/${enc}/lag-history`),
      api(`datasources/${enc}/commit-log`), api(`datasources/${enc}/segments`)]);
    const status = statusResponse.status;
    const r = rate(history);
    const groups = [...(status.activeGroups || []).map((g) => [g, "reading"]),
                    ...(status.publishingGroups || []).map((g) => [g, "publishing"])];
    const partitions = Object.keys(status.latestOffsets || {}).sort((a, b) => a - b);
    const byInterval = new Map();
    for (const seg of segments.segments || []) {
      const key = `${iso(seg.interval && seg.interval.startMs)}/${iso(seg.interval && seg.interval.endMs)}`;
      const entry = byInterval.get(key) || { used: 0, unused: 0, rows: 0 };
      if (seg.used) { entry.used += 1; entry.rows += num(seg.numRows); } else entry.unused += 1;
      byInterval.set(key, entry);
    }
    const sequences = (log.sequences || []).slice(-20).reverse();
    // Committed sequences count what their ranges held: rows, unparseable
    // records and rows thrown away (the rejection windows).
    let rows = 0, unparseable = 0, thrownAway = 0;
    for (const s of log.sequences || []) {
      for (const r of s.partitionStats || []) {
        rows += num(r.rows); unparseable += num(r.unparseable); thrownAway += num(r.thrownAway);
      }
    }
    const iceberg = status.icebergTable;
    setView(
      el("h1", {}, ds, " ", pill(status.healthy, "healthy", "unhealthy"), " ",
         el("a", { href: `#/ds/${enc}/spec`, class: "muted" }, "spec and history")),
      el("div", { class: "cards" },
        el("div", { class: "card" }, el("div", { class: "muted" }, "State"),
           el("div", { class: "v", "data-testid": "state" }, shortEnum(status.state, "SUPERVISOR_STATE_")),
           el("div", { class: "muted" }, status.detailedState)),
        el("div", { class: "card" }, el("div", { class: "muted" }, "Lag (records)"),
           el("div", { class: "v", "data-testid": "lag-total" }, fmt(status.aggregateLag))),
        el("div", { class: "card" }, el("div", { class: "muted" }, "Time lag"),
           el("div", { class: "v" }, `${(num(status.maxTimeLagMs) / 1000).toFixed(1)} s`)),
        el("div", { class: "card" }, el("div", { class: "muted" }, "Ingest rate"),
           el("div", { class: "v", "data-testid": "ingest-rate" }, r === null ? "…" : `${fmt(Math.round(r))}/s`)),
        el("div", { class: "card" }, el("div", { class: "muted" }, "Segments published"),
           el("div", { class: "v" }, fmt(status.segmentsPublished))),
        el("div", { class: "card" }, el("div", { class: "muted" }, "Parse errors (committed)"),
           el("div", { class: "v", "data-testid": "parse-errors" }, fmt(unparseable)),
           el("div", { class: "muted" }, `of ${fmt(rows + unparseable + thrownAway)} records; ${fmt(thrownAway)} thrown away`)),
        el("div", { class: "card" }, el("div", { class: "muted" }, "Spec version"),
           el("div", { class: "v" }, status.specVersion))),
      actionButtons(ds, status, render),
      el("h2", {}, "Lag, last hour"),
      lagChart(history),
      el("h2", {}, "Partitions"),
      el("table", { "data-testid": "partitions" },
        el("tr", {}, ["Partition", "Latest", "Read", "Committed", "Lag", "Time lag"].map((h) => el("th", {}, h))),
        partitions.map((p) => el("tr", {},
          el("td", {}, p), el("td", { class: "num" }, fmt(status.latestOffsets[p])),
          el("td", { class: "num" }, fmt((status.currentOffsets || {})[p])),
          el("td", { class: "num" }, fmt((status.committedOffsets || {})[p])),
          el("td", { class: "num" }, fmt((status.lag || {})[p])),
          el("td", { class: "num" }, `${(num((status.timeLagMs || {})[p]) / 1000).toFixed(1)} s`)))),
      el("h2", {}, "Task groups and replicas"),
      groups.length === 0 ? el("p", { class: "muted" }, "No task group runs.") :
      el("table", { "data-testid": "groups" },
        el("tr", {}, ["Group", "Phase", "Partitions", "Checkpoints", "Replicas (worker: state)"].map((h) => el("th", {}, h))),
        groups.map(([g, phase]) => el("tr", {},
          el("td", {}, g.groupId), el("td", {}, phase), el("td", {}, (g.partitions || []).join(", ")),
          el("td", { class: "num" }, (g.checkpoints || []).length),
          el("td", {}, (g.tasks || []).map((t) => el("div", {}, `${t.workerId}: ${shortEnum(t.state, "TASK_STATE_")}`)))))),
      el("h2", {}, "Recent errors"),
      (status.recentErrors || []).length === 0 ? el("p", { class: "muted" }, "None.") :
      el("ul", { "data-testid": "recent-errors" },
        (status.recentErrors || []).slice().reverse().map((e) => el("li", { class: "error" }, `${iso(e.timeMs)} ${e.message}`))),
      el("h2", {}, iceberg ? "Segments per interval (and the Iceberg table)" : "Segments per interval"),
      iceberg ? el("p", {}, `Iceberg table ${iceberg.tableNamespace}.${iceberg.tableName}: snapshot ${iceberg.lastSnapshotId}, committed ${iso(iceberg.lastCommitMs)}`,
                   iceberg.lastCommitError ? el("span", { class: "error" }, ` last error: ${iceberg.lastCommitError}`) : "") : null,
      el("div", { class: "timeline", "data-testid": "segment-timeline" },
        [...byInterval.entries()].sort().map(([key, e]) =>
          el("div", { class: "iv", title: key }, `${key.slice(0, 16)}: ${e.used} used (${fmt(e.rows)} rows)${e.unused ? `, ${e.unused} replaced` : ""}`))),
      el("h2", {}, "Commit log (latest 20 sequences)"),
      el("table", { "data-testid": "commit-log" },
        el("tr", {}, ["Committed", "Sequence", "Task", "Offsets", "Segments"].map((h) => el("th", {}, h))),
        sequences.map((s) => el("tr", {},
          el("td", {}, iso(s.committedAtMs)), el("td", {}, s.sequenceName), el("td", {}, s.taskId),
          el("td", {}, Object.keys(s.endOffsets || {}).map((p) => `${p}: ${fmt((s.startOffsets || {})[p])}–${fmt(s.endOffsets[p])}`).join("; ")),
          el("td", { class: "num" }, (s.segmentIds || []).length)))));
  };
  poll(render);
}

function lineDiff(a, b) {
  // Longest common subsequence of lines: what stayed, what went, what came.
  const n = a.length, m = b.length;
  const dp = Array.from({ length: n + 1 }, () => new Array(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      dp[i][j] = a[i] === b[j] ? dp[i + 1][j + 1] + 1 : Math.max(dp[i + 1][j], dp[i][j + 1]);
    }
  }
  const out = [];
  let i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) { out.push([" ", a[i]]); i++; j++; }
    else if (j < m && (i === n || dp[i][j + 1] >= dp[i + 1][j])) { out.push(["+", b[j]]); j++; }
    else { out.push(["-", a[i]]); i++; }
  }
  return out;
}

async function specPage(ds) {
  stopPolling();
  const enc = encodeURIComponent(ds);
  const [current, history] = await Promise.all([api(`datasources/${enc}/spec`), api(`datasources/${enc}/history`)]);
  const versions = (history.versions || []).slice().sort((x, y) => num(x.version) - num(y.version));
  const text = (spec) => JSON.stringify(spec, null, 2).split("\n");
  const from = el("select", { "data-testid": "diff-from" }), to = el("select", { "data-testid": "diff-to" });
  versions.forEach((v, i) => {
    from.append(el("option", { value: i, selected: i === Math.max(0, versions.length - 2) }, `v${v.version} ${iso(v.createdAtMs)}`));
    to.append(el("option", { value: i, selected: i === versions.length - 1 }, `v${v.version} ${iso(v.createdAtMs)}`));
  });
  const diff = el("pre", { class: "diff", "data-testid": "spec-diff" });
  const showDiff = () => {
    if (versions.length === 0) return;
    diff.replaceChildren(...lineDiff(text(versions[from.value].spec), text(versions[to.value].spec)).map(([op, line]) =>
      el("div", { class: op === "+" ? "add" : op === "-" ? "del" : "" }, `${op} ${line}`)));
  };
  from.addEventListener("change", showDiff);
  to.addEventListener("change", showDiff);
  setView(
    el("h1", {}, el("a", { href: `#/ds/${enc}` }, ds), ": spec v", current.version),
    el("pre", { "data-testid": "spec" }, JSON.stringify(current.spec, null, 2)),
    el("h2", {}, `History (${versions.length} versions)`),
    el("div", { class: "actions" }, "Compare ", from, " with ", to),
    diff);
  showDiff();
}

async function workersPage() {
  const list = await api("workers");
  setView(
    el("h1", {}, "Workers"),
    el("table", { "data-testid": "workers" },
      el("tr", {}, ["Worker", "Address", "State", "Slots", "Running tasks", "Last heartbeat", "Version"].map((h) => el("th", {}, h))),
      (list.workers || []).map((w) => el("tr", { "data-testid": `worker-row-${w.workerId}` },
        el("td", {}, w.workerId), el("td", {}, w.address), el("td", {}, pill(w.alive, "alive", "lost")),
        el("td", { class: "num" }, w.capacity), el("td", { class: "num" }, w.runningTasks),
        el("td", {}, ago(w.lastHeartbeatMs)), el("td", {}, w.version)))));
}

// ---------- router ----------

function route() {
  if (!me) return;
  stopPolling();
  const hash = decodeURIComponent(location.hash.replace(/^#/, "")) || "/";
  const nav = hash.startsWith("/workers") ? "workers" : "datasources";
  document.querySelectorAll("[data-nav]").forEach((a) => a.classList.toggle("active", a.dataset.nav === nav));
  let match;
  if (hash === "/workers") poll(workersPage);
  else if ((match = hash.match(/^\/ds\/([^/]+)\/spec$/))) specPage(match[1]).catch(alertError);
  else if ((match = hash.match(/^\/ds\/([^/]+)$/))) datasourcePage(match[1]);
  else poll(datasourcesPage);
}

document.addEventListener("DOMContentLoaded", () => {
  document.getElementById("signin-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const input = document.getElementById("token");
    signIn(input.value.trim());
    input.value = "";
  });
  document.getElementById("signout").addEventListener("click", () => {
    sessionStorage.removeItem(TOKEN_KEY);
    showSignIn("Signed out.");
  });
  window.addEventListener("hashchange", route);
  signIn();
});
