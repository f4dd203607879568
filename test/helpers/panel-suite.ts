// A customer panel suite (docs/decisions/0031-customer-panel.md): a listening app on a fresh
// database with the worker, the DNS server and a registered web server (SSH key jobs finish once
// the key file holds the key), webhooks allowed to reach loopback, the standard tenants with a
// portal password each, and Chromium. `open()` gives a watched page, `loggedIn(who)` one past the
// login form, `apiAs(who, path)` what the API shows that tenant with its token.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import type { Browser, BrowserContext } from 'playwright-core';
import { call, type EngineName, type TestApp } from './app.js';
import { BROWSER_TEST_MS, launchChromium, listeningApp, requireBuiltPanel, watchedPage } from './panel-browser.js';
import { filledLater } from './suite.js';
import { seedTenants, type Tenant, type Tenants } from './tenants.js';
import { WebServersService } from '../../src/admin/web-servers.service.js';
import { authorizedKeysPath } from '../../src/provisioning/web/ssh-keys.js';

export const PANEL_PW = 'panel-portal-Passw0rd!';
export const WEB = 'web1';
const DESKTOP = { width: 1280, height: 900 };

export const emailOf = (who: Tenant) => `admin@${who.domain}`;

/** `env`: more settings, or a function that makes them once the suite's earlier hooks ran (a server's port). */
export function usePanelSuite(engine: EngineName, env: Record<string, string> | (() => Record<string, string>) = {}) {
  const t = filledLater<TestApp>();
  const x = filledLater<Tenants>();
  const s = { t, x, origin: '', stateDir: '' };
  let browser: Browser;
  let root = '';
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    requireBuiltPanel();
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'p3-panel-'));
    s.stateDir = path.join(root, 'state');
    const l = await listeningApp(engine, { WEB_SERVER: WEB, WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8', JOB_POLL_MS: '50', ...(typeof env === 'function' ? env() : env) }, { worker: true, dns: true, reconcileMs: 3_600_000 });
    Object.assign(t, l.t);
    s.origin = l.origin;
    // Key jobs touch only the key files: no Caddy runs behind this web server.
    await new WebServersService(t.store.db).add({
      name: WEB, caddyAdmin: 'http://127.0.0.1:9', httpListen: '127.0.0.1:9', addresses: ['192.0.2.10'], homeRoot: path.join(root, 'www'), stateDir: s.stateDir,
    });
    Object.assign(x, await seedTenants(t.admin));
    for (const who of [x.reseller, x.end1, x.end2, x.solo]) await t.admin.customers.setPortalPassword(who.contactId, PANEL_PW);
    browser = await launchChromium();
  }, BROWSER_TEST_MS);
  afterAll(async () => {
    for (const c of contexts) await c.close().catch(() => {});
    await browser?.close();
    await t.close?.();
    if (root) await fs.rm(root, { recursive: true, force: true });
  });

  async function open(o: { locale?: string; viewport?: { width: number; height: number } } = {}) {
    const context = await browser.newContext({ locale: o.locale ?? 'en-US', viewport: o.viewport ?? DESKTOP });
    contexts.push(context);
    return { context, ...(await watchedPage(context, s.origin)) };
  }

  /** Logs `who` (a tenant, or a contact's address and portal password) in through the form and waits for the package overview. */
  async function loggedIn(who: Tenant | { email: string; password: string }, o: { viewport?: { width: number; height: number } } = {}) {
    const w = await open(o);
    await w.page.goto(`${s.origin}/panel/login`);
    await logInThroughForm(w.page, 'email' in who ? who : { email: emailOf(who), password: PANEL_PW });
    return w;
  }

  /** Fills the English login form and waits for the package overview. */
  async function logInThroughForm(page: Awaited<ReturnType<typeof open>>['page'], who: { email: string; password: string }) {
    await page.getByLabel('E-mail address').fill(who.email);
    await page.getByLabel('Portal password').fill(who.password);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Your packages' }).waitFor();
  }

  /** Goes to a page through the nav, as a person does (the session and switcher stay). */
  async function viaNav(page: Awaited<ReturnType<typeof open>>['page'], link: string, heading: string | RegExp) {
    await page.getByRole('navigation').getByRole('link', { name: link, exact: true }).click();
    await page.getByRole('heading', { level: 1, name: heading }).waitFor();
  }

  const apiAs = (who: Tenant, p: string) => call(t.app, 'GET', p, { token: who.token });

  /** The key file of a package's Linux user as sshd reads it: its lines, or [] when there is none. */
  const keyFile = async (linuxUser: string) =>
    (await fs.readFile(authorizedKeysPath({ stateDir: s.stateDir }, linuxUser), 'utf8').catch(() => '')).split('\n').filter(Boolean);

  return { s, t, x, open, loggedIn, logInThroughForm, viaNav, apiAs, keyFile };
}
