// Drives the web console in headless Chromium (Debian's /usr/bin/chromium,
// through playwright-core) as two people would: a reader who looks, and an
// admin who suspends and resumes. Run by console_process_test against a live
// cluster; prints "ok <check>" per check and exits 1 at the first failure.
//
//   node console_browser_test.mjs --url=http://127.0.0.1:P/console/ \
//     --reader_token_file=F --admin_token_file=F --datasource=wiki --screenshots=DIR
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "playwright-core";

const args = Object.fromEntries(process.argv.slice(2).map((a) => {
  const [k, ...v] = a.replace(/^--/, "").split("=");
  return [k, v.join("=")];
}));
const url = args.url;
const ds = args.datasource || "wiki";
const shots = args.screenshots || ".";
const readerToken = readFileSync(args.reader_token_file, "utf8").trim();
const adminToken = readFileSync(args.admin_token_file, "utf8").trim();
const timeout = 30000;

function ok(what) { console.log(`ok ${what}`); }
function fail(what) { console.error(`FAIL ${what}`); process.exit(1); }

async function signIn(page, token) {
  await page.goto(url);
  await page.locator("#signin").waitFor({ state: "visible", timeout });
  await page.fill("#token", token);
  await page.click("#signin-form button[type=submit]");
  await page.locator(`[data-testid="ds-row-${ds}"]`).waitFor({ timeout });
}

async function stateText(page) {
  return (await page.locator('[data-testid="state"]').first().textContent()).trim();
}

const browser = await chromium.launch({
  executablePath: args.chromium || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
});
const errors = [];
try {
  // ---- a reader ----
  const reader = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
  const page = await reader.newPage();
  page.on("pageerror", (e) => errors.push(String(e)));
  // Refused requests (401 before sign-in, the forged 403) are logged by the
  // browser as failed loads: expected. Anything else is a script error.
  page.on("console", (m) => {
    if (m.type() === "error" && !m.text().startsWith("Failed to load resource")) errors.push(m.text());
  });
  await page.goto(url);
  await page.locator("#signin").waitFor({ state: "visible", timeout });
  ok("the page asks for a token first");
  await page.screenshot({ path: join(shots, "console-signin.png") });

  await signIn(page, readerToken);
  const who = await page.locator("#who").textContent();
  if (!/reader/.test(who)) fail(`signed-in reader shown as "${who}"`);
  if ((await stateText(page)) !== "RUNNING") fail(`datasource state ${await stateText(page)}`);
  ok("the datasources page lists the datasource, RUNNING, for a reader");
  await page.screenshot({ path: join(shots, "console-datasources.png"), fullPage: true });

  await page.click(`[data-testid="ds-row-${ds}"] a`);
  await page.locator('[data-testid="lag-chart"]').waitFor({ timeout });
  await page.locator('[data-testid="partitions"]').waitFor({ timeout });
  await page.locator('[data-testid="groups"]').waitFor({ timeout });
  if (await page.locator('[data-testid="admin-actions"]').count() !== 0) {
    fail("a reader sees the admin buttons");
  }
  ok("a reader sees the datasource page without admin buttons");

  // The lag chart moves while records are produced (a sample every 10 s).
  const pointsOf = async () =>
    Number(await page.locator('[data-testid="lag-chart"]').getAttribute("data-points"));
  const first = await pointsOf();
  const deadline = Date.now() + 60000;
  let now = first;
  while ((now <= first || now < 2) && Date.now() < deadline) {
    await page.waitForTimeout(1000);
    now = await pointsOf();
  }
  if (now <= first || now < 2) fail(`the lag chart did not move (${first} points, then ${now})`);
  const series = await page.locator('[data-testid="lag-chart"] polyline[data-series="total"]').count();
  if (series !== 1) fail("the lag chart has no total line");
  ok(`the lag chart moved while records were produced (${first} -> ${now} points)`);
  await page.screenshot({ path: join(shots, "console-datasource-reader.png"), fullPage: true });

  // A forged admin call with the reader's token is refused by the server.
  const forged = await page.evaluate(async ([path, token]) => {
    const r = await fetch(path, { method: "POST", headers: { Authorization: `Bearer ${token}` } });
    return r.status;
  }, [`/console/api/datasources/${ds}/suspend`, readerToken]);
  if (forged !== 403) fail(`a reader's POST of suspend answered ${forged}, not 403`);
  ok("a reader's forged suspend is refused (403)");

  await page.click('[data-nav="workers"]');
  await page.locator('[data-testid="workers"] tr >> nth=1').waitFor({ timeout });
  ok("the workers page lists the workers");
  await page.screenshot({ path: join(shots, "console-workers.png"), fullPage: true });

  await page.goto(`${url}#/ds/${ds}/spec`);
  await page.locator('[data-testid="spec"]').waitFor({ timeout });
  const spec = await page.locator('[data-testid="spec"]').textContent();
  if (!spec.includes('"dataSource"') && !spec.includes('"datasource"')) fail("the spec page shows no spec");
  const added = await page.locator('[data-testid="spec-diff"] .add').allTextContents();
  const removed = await page.locator('[data-testid="spec-diff"] .del').allTextContents();
  if (!added.some((l) => l.includes('"PT31S"')) || !removed.some((l) => l.includes('"PT30S"'))) {
    fail(`the diff of the last two versions does not show taskDuration PT30S -> PT31S: +${added} -${removed}`);
  }
  ok("the spec page shows the spec, its history and the diff between versions");
  await page.screenshot({ path: join(shots, "console-spec.png"), fullPage: true });
  await reader.close();

  // ---- an admin ----
  const admin = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
  const adminPage = await admin.newPage();
  adminPage.on("pageerror", (e) => errors.push(String(e)));
  await signIn(adminPage, adminToken);
  await adminPage.click(`[data-testid="ds-row-${ds}"] a`);
  await adminPage.locator('[data-testid="admin-actions"]').waitFor({ timeout });
  ok("an admin sees the admin buttons");

  const act = async (name, want) => {
    await adminPage.click(`[data-testid="action-${name}"]`);
    await adminPage.locator("#confirm").waitFor({ state: "visible", timeout });
    await adminPage.click("#confirm-ok");
    const end = Date.now() + timeout;
    let state = "";
    while (Date.now() < end) {
      await adminPage.waitForTimeout(500);
      state = await stateText(adminPage);
      if (state === want) return;
    }
    fail(`after ${name} the state is ${state}, not ${want}`);
  };
  await act("suspend", "SUSPENDED");
  ok("suspend from the page: SUSPENDED");
  await adminPage.screenshot({ path: join(shots, "console-datasource-admin-suspended.png"), fullPage: true });
  await act("resume", "RUNNING");
  ok("resume from the page: RUNNING");
  await admin.close();
} finally {
  await browser.close();
}
if (errors.length > 0) fail(`script errors on the page: ${errors.join(" | ")}`);
ok("no script error on any page");
