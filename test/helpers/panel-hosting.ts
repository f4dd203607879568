// What the panel's subdomains and databases tests share (API guide "The customer panel"): a
// reseller with an end customer and an independent customer, each with a portal password, a plan,
// a package and a presence domain; and Chromium logged in as one of them through the login form.
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import type { Admin } from '../../src/admin/index.js';
import { axeViolations, BROWSER_TEST_MS, launchChromium, watchedPage } from './panel-browser.js';

export const PANEL_PW = 'panel-portal-Passw0rd!';

export interface PanelTenant {
  customerId: string;
  token: string;
  email: string;
  planId: number;
  packageId: string;
  packageName: string;
  domain: string;
}

export interface PlanOptions {
  maxSubdomains?: number;
  phpVersions?: string[];
  maxDatabases?: number;
  databaseVersions?: string[];
}

/**
 * A customer whose main contact logs in to the panel with PANEL_PW, with a plan, a package (Linux
 * user `linuxUser`) and a presence domain `<key>.example`: `await panelTenant(admin, 'shop', 'u_shop', {})`.
 */
export async function panelTenant(admin: Admin, key: string, linuxUser: string, plan: PlanOptions, o: { reseller?: boolean; resellerId?: string } = {}): Promise<PanelTenant> {
  const email = `admin@${key}.example`;
  const { customerId, contactId } = await admin.customers.createCustomer({
    organization: `${key} GmbH`,
    reseller: o.reseller,
    resellerId: o.resellerId ? Number(o.resellerId) : null,
    contact: { name: `${key} Admin`, email, phone: '+49 30 1234567' },
  });
  await admin.customers.setPortalPassword(contactId, PANEL_PW);
  const { planId } = await admin.packages.createPlan({ name: `${key} plan`, ...plan });
  const packageName = `${key} package`;
  const { packageId } = await admin.packages.createPackage({ customerId, planId, name: packageName, linuxUser });
  const { domain } = await admin.domains.createDomain({ name: `${key}.example`, customerId, packageId, registered: true });
  const { token } = await admin.customers.issueToken(contactId, 'test');
  return { customerId: String(customerId), token, email, planId, packageId: String(packageId), packageName, domain };
}

/** A reseller, its end customer and an independent customer (`<prefix>reseller`, `<prefix>end`, `<prefix>other`), each on a plan of `plan`. */
export async function panelTenants(admin: Admin, prefix: string, linuxUser: (key: string) => string, plan: PlanOptions) {
  const reseller = await panelTenant(admin, `${prefix}reseller`, linuxUser('reseller'), plan, { reseller: true });
  const end = await panelTenant(admin, `${prefix}end`, linuxUser('end'), plan, { resellerId: reseller.customerId });
  const other = await panelTenant(admin, `${prefix}other`, linuxUser('other'), plan);
  return { reseller, end, other };
}

/**
 * Chromium for one suite against the panel at `origin()`: `open()` a watched page (third-party
 * requests, CSP violations and page errors collected in `problems`), `loggedIn(who)` through the
 * login form up to the package overview. Closed after the suite.
 */
export function usePanelBrowser(origin: () => string) {
  let browser: Browser | undefined;
  const contexts: BrowserContext[] = [];
  beforeAll(async () => {
    browser = await launchChromium();
  }, BROWSER_TEST_MS);
  afterAll(async () => {
    for (const c of contexts) await c.close().catch(() => {});
    await browser?.close();
  });
  const open = async (o: { locale?: string; viewport?: { width: number; height: number } } = {}) => {
    const context = await browser!.newContext({ locale: o.locale ?? 'en-US', viewport: o.viewport ?? { width: 1280, height: 900 } });
    contexts.push(context);
    return { context, ...(await watchedPage(context, origin())) };
  };
  const loggedIn = async (who: { email: string }, o: { viewport?: { width: number; height: number } } = {}) => {
    const s = await open(o);
    await s.page.goto(`${origin()}/panel/login`);
    await s.page.getByLabel('E-mail address').fill(who.email);
    await s.page.getByLabel('Portal password').fill(PANEL_PW);
    await s.page.getByRole('button', { name: 'Log in' }).click();
    await s.page.getByRole('heading', { level: 1, name: 'Your packages' }).waitFor();
    return s;
  };
  return { open, loggedIn };
}

/** A reseller's panel showing `customerId` (the switcher in the page's header). */
export async function actFor(page: Page, customerId: string, packageId: string) {
  await page.getByLabel('Customer').selectOption(customerId);
  await page.locator(`[data-package="${packageId}"]`).waitFor();
}

/** Waits until no job on the page is pending any more. */
export const jobsSettled = (page: Page) => page.waitForFunction(() => !document.querySelector('[data-job][data-status="pending"]'), undefined, { timeout: 30_000 });

/** How far the page scrolls sideways (0 at phone width is the goal). */
export const sideways = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

export { axeViolations };
