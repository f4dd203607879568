// The customer panel's figures (docs/decisions/0031-customer-panel.md; docs/performance.md
// "Customer panel"): what a first visit downloads (gzipped, as the server sends it), and in
// Debian's headless Chromium against a listening server, the median of 10 of
//   - first visit → login form interactive (a fresh browser context: nothing cached),
//   - login → package overview rendered (submit to the package card on screen),
// each next to a baseline measured in the same run: a fresh context loading /healthz (the
// browser's and the connection's own cost).
// `npm run bench:panel`; `npm run bench:panel -- --screenshots` also writes docs/screenshots/.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import type { Browser, Page } from 'playwright-core';
import { benchHeader, fmt, loadAverage, markdownTable, pct, runBench, PG_URL } from './report.js';
import { freshBenchStore } from './store.js';
import { PANEL_DIR, assetsOf, launchChromium, listeningApp, requireBuiltPanel } from '../test/helpers/panel-browser.js';
import { seedTenants, type Tenant } from '../test/helpers/tenants.js';
import { placeholderMailServer, postEmail } from '../test/helpers/email.js';
import type { TestApp } from '../test/helpers/app.js';

const RUNS = 10;
const PW = 'bench-portal-Passw0rd!';
const SCREENSHOTS = path.resolve(import.meta.dirname, '../docs/screenshots');
let interrupted = false;
process.once('SIGINT', () => (interrupted = true));

/** The bytes of the first visit: index.html and what it loads, gzipped at the level the server uses. */
function bundleSize() {
  const index = requireBuiltPanel();
  const files = [{ name: 'index.html', body: Buffer.from(index) }, ...assetsOf(index).map((a) => ({ name: a.replace('/panel/', ''), body: fs.readFileSync(path.join(PANEL_DIR, a.replace('/panel/', ''))) }))];
  return files.map((f) => ({ name: f.name, raw: f.body.length, gzip: zlib.gzipSync(f.body, { level: 9 }).length }));
}

async function timed(browser: Browser, run: (page: Page) => Promise<void>, before?: (page: Page) => Promise<void>): Promise<number> {
  const context = await browser.newContext({ locale: 'en-US' });
  try {
    const page = await context.newPage();
    if (before) await before(page);
    const start = performance.now();
    await run(page);
    return performance.now() - start;
  } finally {
    await context.close();
  }
}

async function measure(engine: 'sqlite' | 'postgres', browser: Browser) {
  const bench = await freshBenchStore(engine, PG_URL);
  const { t, origin } = await listeningApp(engine, {}, { store: { store: bench.store, url: bench.databaseUrl, drop: bench.drop } });
  try {
    const x = await seedTenants(t.admin);
    await t.admin.customers.setPortalPassword(x.end1.contactId, PW);
    const email = `admin@${x.end1.domain}`;
    const loginForm = async (page: Page) => {
      await page.goto(`${origin}/panel/`);
      await page.getByRole('button', { name: 'Log in' }).waitFor();
      await page.getByLabel('E-mail address').waitFor({ state: 'visible' });
    };
    const logIn = async (page: Page) => {
      await page.getByLabel('E-mail address').fill(email);
      await page.getByLabel('Portal password').fill(PW);
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.locator(`[data-package="${x.end1.packageId}"]`).waitFor();
    };
    const samples = { baseline: [] as number[], login: [] as number[], overview: [] as number[] };
    for (let i = 0; i < RUNS && !interrupted; i++) {
      samples.baseline.push(await timed(browser, async (page) => void (await page.goto(`${origin}/healthz`))));
      samples.login.push(await timed(browser, loginForm));
      samples.overview.push(await timed(browser, logIn, loginForm));
    }
    if (process.argv.includes('--screenshots') && engine === 'sqlite') await screenshots(browser, origin, email, x.end1, t);
    return samples;
  } finally {
    await t.close();
    await bench.drop();
  }
}

/** The README's pictures: login, overview, DNS editor, e-mail addresses and two-factor enrolment at a laptop's width. */
async function screenshots(browser: Browser, origin: string, email: string, who: Tenant, t: TestApp) {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  const context = await browser.newContext({ locale: 'en-US', viewport: { width: 1100, height: 760 } });
  const page = await context.newPage();
  await page.goto(`${origin}/panel/login`);
  await page.getByLabel('E-mail address').fill(email);
  await page.screenshot({ path: path.join(SCREENSHOTS, 'panel-login.png') });
  await page.getByLabel('Portal password').fill(PW);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.locator('[data-package]').first().waitFor();
  await page.screenshot({ path: path.join(SCREENSHOTS, 'panel-overview.png') });
  await page.goto(`${origin}/panel/domains/${who.domain}/dns`);
  await page.locator('tr[data-record]').first().waitFor();
  await page.screenshot({ path: path.join(SCREENSHOTS, 'panel-dns-records.png'), fullPage: true });
  // Addresses on a mail server nobody talks to (no worker runs here): listed, their jobs pending.
  await placeholderMailServer(t.store);
  await postEmail(t, who.token, { address: `info@${who.domain}`, address_type: 'mailbox', description: 'shop enquiries' });
  await postEmail(t, who.token, { address: `orders@${who.domain}`, address_type: 'forward', forward_to: ['sam+orders@example.net'] });
  await page.goto(`${origin}/panel/email`);
  await page.locator('tr[data-address]').first().waitFor();
  await page.getByLabel('Name before the @').fill('sales');
  await page.getByLabel('Set my own password').check();
  await page.locator('#new-password').fill('Sales-2026-orbit');
  await page.screenshot({ path: path.join(SCREENSHOTS, 'panel-email.png'), fullPage: true });
  await page.goto(`${origin}/panel/security`);
  await page.getByRole('button', { name: 'Set up two-factor login' }).click();
  await page.locator('#totp-qr').waitFor();
  await page.screenshot({ path: path.join(SCREENSHOTS, 'panel-security.png'), fullPage: true });
  await context.close();
}

runBench(async () => {
  console.log(benchHeader('customer panel'));
  console.log(`load average at start: ${loadAverage()}\n`);
  const files = bundleSize();
  const total = files.reduce((a, f) => ({ raw: a.raw + f.raw, gzip: a.gzip + f.gzip }), { raw: 0, gzip: 0 });
  console.log('First visit: the files /panel/ loads');
  console.log(markdownTable(['file', 'bytes', 'gzipped'], [...files, { name: 'total', ...total }].map((f) => [f.name, String(f.raw), String(f.gzip)]), 1));
  console.log(`\nbudget 150 KB gzipped: ${fmt((total.gzip / 1024), 1)} KB used\n`);

  const browser = await launchChromium();
  try {
    const rows: string[][] = [];
    for (const engine of PG_URL ? (['sqlite', 'postgres'] as const) : (['sqlite'] as const)) {
      if (interrupted) throw new Error('interrupted');
      const s = await measure(engine, browser);
      const base = pct(s.baseline, 50);
      rows.push([engine, 'fresh context → /healthz loaded (baseline)', fmt(base, 1), fmt(pct(s.baseline, 90), 1), '1.0']);
      rows.push([engine, 'first visit → login form interactive', fmt(pct(s.login, 50), 1), fmt(pct(s.login, 90), 1), fmt(pct(s.login, 50) / base, 1)]);
      rows.push([engine, 'login → package overview rendered', fmt(pct(s.overview, 50), 1), fmt(pct(s.overview, 90), 1), fmt(pct(s.overview, 50) / base, 1)]);
    }
    console.log(`Headless Chromium, ${RUNS} runs each (ms)`);
    console.log(markdownTable(['store', 'step', 'median', 'p90', '× baseline'], rows, 2));
  } finally {
    await browser.close();
  }
}, () => interrupted);
