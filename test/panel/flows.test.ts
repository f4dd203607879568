// The customer panel in Chromium against a listening server (docs/decisions/0031-customer-panel.md;
// API guide "The customer panel"): log in with and without TOTP, the package overview, the domains,
// the DNS record editor (adding, editing, deleting, each job turning done in place, each change
// then visible through the API), the reseller acting for an end customer, another customer's
// domain answering not found, logout, German texts, keyboard-only adding of a record, and axe-core
// on every page with no serious or critical violation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { ENGINES, call, type TestApp } from '../helpers/app.js';
import { codeAt, logIn } from '../helpers/panel.js';
import { axeViolations, BROWSER_TEST_MS, chromiumMissing, launchChromium, listeningApp, requireBuiltPanel, watchedPage } from '../helpers/panel-browser.js';
import { requirable } from '../helpers/required.js';
import { seedTenants, type Tenant, type Tenants } from '../helpers/tenants.js';

const PW = 'panel-portal-Passw0rd!';

requirable(chromiumMissing)('the customer panel in Chromium', () => {
  describe.each(ENGINES)('%s', { timeout: BROWSER_TEST_MS }, (engine) => {
    let t: TestApp;
    let origin = '';
    let x: Tenants;
    let browser: Browser;
    const contexts: BrowserContext[] = [];

    beforeAll(async () => {
      requireBuiltPanel();
      // The worker and a DNS server: a DNS record's job is done once the DNS server answers it.
      ({ t, origin } = await listeningApp(engine, {}, { worker: true, dns: true }));
      x = await seedTenants(t.admin);
      for (const who of [x.reseller, x.end1, x.end2, x.solo]) await t.admin.customers.setPortalPassword(who.contactId, PW);
      browser = await launchChromium();
    }, BROWSER_TEST_MS);
    afterAll(async () => {
      for (const c of contexts) await c.close().catch(() => {});
      await browser?.close();
      await t?.close();
    });

    const emailOf = (who: Tenant) => `admin@${who.domain}`;

    async function open(locale = 'en-US', viewport = { width: 1280, height: 900 }) {
      const context = await browser.newContext({ locale, viewport });
      contexts.push(context);
      return { context, ...(await watchedPage(context, origin)) };
    }

    /** Logs in through the form and waits for the package overview. */
    async function loggedIn(who: Tenant, o: { locale?: string; viewport?: { width: number; height: number } } = {}) {
      const s = await open(o.locale, o.viewport);
      await s.page.goto(`${origin}/panel/`);
      await s.page.waitForURL(`${origin}/panel/login`);
      await s.page.getByLabel('E-mail address').fill(emailOf(who));
      await s.page.getByLabel('Portal password').fill(PW);
      await s.page.getByRole('button', { name: 'Log in' }).click();
      await s.page.getByRole('heading', { level: 1, name: 'Your packages' }).waitFor();
      return s;
    }

    const api = (path: string, who: Tenant) => call(t.app, 'GET', path, { token: who.token });
    const recordsOf = async (domain: string, who: Tenant) =>
      ((await api(`/dns-records?filter[domain]=${domain}`, who)).json.data as { id: string; attributes: { record_type: string; name: string; data: string; ttl: number; tags: string[] } }[]);
    const jobsSettled = (page: Page) => page.waitForFunction(() => !document.querySelector('[data-job][data-status="pending"]'), undefined, { timeout: 20_000 });

    it('logs in with e-mail and portal password: the overview shows the package, its plan and its usage against the plan', async () => {
      const { page, problems } = await loggedIn(x.end1);
      expect(await axeViolations(page)).toEqual([]);
      const plan = (await api(`/plans/${x.end1.planId}`, x.end1)).json.data.attributes;
      const card = page.locator(`[data-package="${x.end1.packageId}"]`);
      await card.waitFor();
      await expect(card.getByRole('heading', { level: 2 }).textContent()).resolves.toBe('end1 package');
      const facts = await card.locator('dl').first().innerText();
      expect(facts).toContain(plan.name);
      expect(facts).toContain('u_end1');
      const usage = await card.locator('dl.usage').innerText();
      expect(usage).toMatch(new RegExp(`Subdomains\\s+0 of ${plan.max_subdomains}`));
      expect(usage).toMatch(new RegExp(`Databases\\s+0 of ${plan.max_databases}`));
      expect(usage).toMatch(/Domains\s+1/);
      // Only end1's package: another customer's never appears.
      expect(await page.locator('[data-package]').count()).toBe(1);
      expect(await page.getByText('end2 package').count()).toBe(0);
      expect(problems).toEqual([]);
    });

    it("a wrong password shows the API's error on the form and logs nobody in", async () => {
      const { page, problems } = await open();
      await page.goto(`${origin}/panel/login`);
      expect(await axeViolations(page)).toEqual([]);
      await page.getByLabel('E-mail address').fill(emailOf(x.end1));
      await page.getByLabel('Portal password').fill('not the password');
      await page.getByRole('button', { name: 'Log in' }).click();
      await expect(page.getByRole('alert').innerText()).resolves.toContain('The e-mail address or the password is wrong.');
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Log in');
      expect((await page.request.get(`${origin}/session`)).status()).toBe(401);
      expect(await axeViolations(page)).toEqual([]);
      expect(problems).toEqual([]);
    });

    it('logs in with TOTP: the code is asked for after the password, then the overview', async () => {
      // solo turns two-factor login on through the API, as its settings page will.
      const b = await logIn(t.app, emailOf(x.solo), PW);
      const enrol = await call(t.app, 'POST', '/session/totp', { headers: b.headers });
      const secret = enrol.json.data.attributes.secret as string;
      const confirm = await call(t.app, 'POST', '/session/totp/confirm', { headers: b.headers, body: { data: { type: 'totp-enrolment', attributes: { code: codeAt(secret, -1) } } } });
      expect(confirm.status).toBe(200);

      const { page, problems } = await open();
      await page.goto(`${origin}/panel/login`);
      await page.getByLabel('E-mail address').fill(emailOf(x.solo));
      await page.getByLabel('Portal password').fill(PW);
      await page.getByRole('button', { name: 'Log in' }).click();
      const code = page.getByLabel('Code from your authenticator app');
      await code.waitFor();
      await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('totp_code');
      expect(await axeViolations(page)).toEqual([]);
      await code.fill(codeAt(secret));
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.getByRole('heading', { level: 1, name: 'Your packages' }).waitFor();
      await page.locator(`[data-package="${x.solo.packageId}"]`).waitFor();
      expect(problems).toEqual([]);
    });

    it('domains with their presence flags; the DNS editor adds, edits and deletes a record, each job turning done in place and the change visible through the API', async () => {
      const { page, problems } = await loggedIn(x.end1);
      await page.getByRole('navigation').getByRole('link', { name: 'Domains' }).click();
      await page.getByRole('heading', { level: 1, name: 'Domains' }).waitFor();
      expect(await axeViolations(page)).toEqual([]);
      const row = page.locator(`tr[data-domain="${x.end1.domain}"]`);
      expect(await row.innerText()).toMatch(/DNS update lock|off/);
      expect(await page.locator('tr[data-domain]').count()).toBe(1);
      await row.getByRole('link', { name: `DNS records of ${x.end1.domain}` }).click();
      await page.getByRole('heading', { level: 1, name: `DNS records of ${x.end1.domain}` }).waitFor();
      expect(page.url()).toBe(`${origin}/panel/domains/${x.end1.domain}/dns`);
      expect(await axeViolations(page)).toEqual([]);

      // Base and managed records are marked; the managed DKIM key has neither edit nor delete.
      const before = await recordsOf(x.end1.domain, x.end1);
      const dkim = before.find((r) => r.attributes.tags.includes('managed'))!;
      const base = before.find((r) => r.attributes.tags.includes('base'))!;
      expect(await page.locator(`tr[data-record="${dkim.id}"]`).innerText()).toContain('managed');
      expect(await page.locator(`tr[data-record="${dkim.id}"] button`).count()).toBe(0);
      expect(await page.locator(`tr[data-record="${base.id}"]`).innerText()).toContain('base');
      expect(await page.locator(`tr[data-record="${base.id}"] button`).count()).toBe(2);

      // Add: a refused value first (the API's error at its field), then a good one.
      const form = page.locator('form.record-form').last();
      await form.getByLabel('Type').selectOption('TXT');
      await form.getByLabel('Name').fill('panel-test');
      await form.getByLabel('Value').fill('hello from the panel');
      await form.getByLabel('TTL').fill('5');
      await form.getByRole('button', { name: 'Add record' }).click();
      await page.locator('#new-ttl-error').waitFor();
      expect(await page.locator('#new-ttl').getAttribute('aria-invalid')).toBe('true');
      await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('new-ttl');
      expect(await axeViolations(page)).toEqual([]);
      expect((await recordsOf(x.end1.domain, x.end1)).length).toBe(before.length);
      await form.getByLabel('TTL').fill('600');
      await form.getByRole('button', { name: 'Add record' }).click();
      await page.getByText('Adding TXT record panel-test: done').waitFor({ timeout: 20_000 });
      const added = (await recordsOf(x.end1.domain, x.end1)).find((r) => r.attributes.name === 'panel-test')!;
      expect(added.attributes).toMatchObject({ record_type: 'TXT', data: 'hello from the panel', ttl: 600, tags: ['custom'] });
      await page.locator(`tr[data-record="${added.id}"]`).waitFor();

      // Edit: the changed record is added, the old one deleted; both jobs done.
      await page.getByRole('button', { name: 'Edit: TXT record panel-test' }).click();
      const edit = page.locator(`#edit-${added.id}-data`);
      await edit.fill('changed by the panel');
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByText('Deleting TXT record panel-test: done').waitFor({ timeout: 20_000 });
      await jobsSettled(page);
      const afterEdit = (await recordsOf(x.end1.domain, x.end1)).filter((r) => r.attributes.name === 'panel-test');
      expect(afterEdit.map((r) => r.attributes.data)).toEqual(['changed by the panel']);
      expect(afterEdit[0].id).not.toBe(added.id);

      // Delete, confirmed.
      await page.getByRole('button', { name: 'Delete: TXT record panel-test' }).click();
      await page.getByRole('button', { name: 'Yes, delete' }).click();
      await page.getByText('Deleting TXT record panel-test: done').nth(1).waitFor({ timeout: 20_000 });
      expect((await recordsOf(x.end1.domain, x.end1)).filter((r) => r.attributes.name === 'panel-test')).toEqual([]);
      await page.locator(`tr[data-record="${afterEdit[0].id}"]`).waitFor({ state: 'detached' });
      expect(await axeViolations(page)).toEqual([]);
      expect(problems).toEqual([]);
    });

    it('adds a DNS record with the keyboard alone', async () => {
      const { page, problems } = await loggedIn(x.end1);
      await page.goto(`${origin}/panel/domains/${x.end1.domain}/dns`);
      await page.getByRole('heading', { level: 1 }).waitFor();
      // Tab from the top of the page to the form's first field.
      for (let i = 0; i < 200 && (await page.evaluate(() => document.activeElement?.id)) !== 'new-record_type'; i++) await page.keyboard.press('Tab');
      await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('new-record_type');
      // A, AAAA, CNAME, MX, TXT: four steps down.
      for (let i = 0; i < 4; i++) await page.keyboard.press('ArrowDown');
      expect(await page.locator('#new-record_type').inputValue()).toBe('TXT');
      await page.keyboard.press('Tab');
      await page.keyboard.type('_keyboard');
      await page.keyboard.press('Tab');
      await page.keyboard.type('typed, not clicked');
      await page.keyboard.press('Tab');
      await page.keyboard.type('300');
      await page.keyboard.press('Enter');
      await page.getByText('Adding TXT record _keyboard: done').waitFor({ timeout: 20_000 });
      const rec = (await recordsOf(x.end1.domain, x.end1)).find((r) => r.attributes.name === '_keyboard');
      expect(rec?.attributes).toMatchObject({ record_type: 'TXT', data: 'typed, not clicked', ttl: 300 });
      expect(problems).toEqual([]);
    });

    it('a reseller switches to an end customer and adds a record for it, visible through the API as that customer', async () => {
      const { page, problems } = await loggedIn(x.reseller);
      const switcher = page.getByLabel('Customer');
      expect(await switcher.inputValue()).toBe(x.reseller.customerId);
      await switcher.selectOption(x.end2.customerId);
      await page.locator(`[data-package="${x.end2.packageId}"]`).waitFor();
      expect(await page.locator('[data-package]').count()).toBe(1);
      expect(await axeViolations(page)).toEqual([]);
      await page.getByRole('navigation').getByRole('link', { name: 'Domains' }).click();
      await page.locator(`tr[data-domain="${x.end2.domain}"]`).waitFor();
      expect(await page.locator('tr[data-domain]').count()).toBe(1);
      await page.getByRole('link', { name: `DNS records of ${x.end2.domain}` }).click();
      const form = page.locator('form.record-form').last();
      await form.getByLabel('Type').selectOption('A');
      await form.getByLabel('Name').fill('from-reseller');
      await form.getByLabel('Value').fill('192.0.2.77');
      await form.getByRole('button', { name: 'Add record' }).click();
      await page.getByText('Adding A record from-reseller: done').waitFor({ timeout: 20_000 });
      const rec = (await recordsOf(x.end2.domain, x.end2)).find((r) => r.attributes.name === 'from-reseller');
      expect(rec?.attributes).toMatchObject({ record_type: 'A', data: '192.0.2.77' });
      // The choice lasts in the tab: a reload shows the same customer.
      await page.reload();
      await page.getByRole('heading', { level: 1 }).waitFor();
      expect(await page.getByLabel('Customer').inputValue()).toBe(x.end2.customerId);
      expect(problems).toEqual([]);
    });

    it("another customer's domain is never listed and its URL says not found", async () => {
      const { page, problems } = await loggedIn(x.end1);
      for (const domain of [x.end2.domain, x.solo.domain, 'unknown-domain.example', '_acme-challenge.end1.example']) {
        await page.goto(`${origin}/panel/domains/${domain}/dns`);
        await page.getByRole('heading', { level: 1, name: 'Not found' }).waitFor();
        expect(await page.getByText(domain).count()).toBe(0);
      }
      expect(await axeViolations(page)).toEqual([]);
      await page.goto(`${origin}/panel/no/such/page`);
      await page.getByRole('heading', { level: 1, name: 'Not found' }).waitFor();
      await page.goto(`${origin}/panel/domains`);
      await page.locator('tr[data-domain]').first().waitFor();
      expect(await page.locator('tr[data-domain]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-domain')))).toEqual([x.end1.domain]);
      expect(problems).toEqual([]);
    });

    it('logout ends the session: the login page, and the cookie no longer works', async () => {
      const { page, context, problems } = await loggedIn(x.end1);
      expect((await page.request.get(`${origin}/session`)).status()).toBe(200);
      const cookie = (await context.cookies()).find((c) => c.name === 'hostplane_session')!;
      expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
      await page.getByRole('button', { name: 'Log out' }).click();
      await page.getByRole('heading', { level: 1, name: 'Log in' }).waitFor();
      expect(await page.getByRole('status').innerText()).toBe('You are logged out.');
      const stale = await call(t.app, 'GET', '/session', { headers: { cookie: `hostplane_session=${cookie.value}` } });
      expect(stale.status).toBe(401);
      await page.goto(`${origin}/panel/domains`);
      await page.waitForURL(`${origin}/panel/login`);
      expect(problems).toEqual([]);
    });

    it('speaks German to a German browser, switches to English and remembers it', async () => {
      const { page, problems } = await open('de-DE');
      await page.goto(`${origin}/panel/`);
      await page.getByRole('heading', { level: 1, name: 'Anmelden' }).waitFor();
      expect(await page.evaluate(() => document.documentElement.lang)).toBe('de');
      await page.getByLabel('E-Mail-Adresse').fill(emailOf(x.end1));
      await page.getByLabel('Kundenportal-Passwort').fill('falsch');
      await page.getByRole('button', { name: 'Anmelden' }).click();
      await expect(page.getByRole('alert').innerText()).resolves.toContain('E-Mail-Adresse oder Passwort ist falsch.');
      expect(await axeViolations(page)).toEqual([]);
      await page.getByLabel('Kundenportal-Passwort').fill(PW);
      await page.getByRole('button', { name: 'Anmelden' }).click();
      await page.getByRole('heading', { level: 1, name: 'Ihre Pakete' }).waitFor();
      expect(await page.locator('dl.usage').innerText()).toMatch(/Datenbanken\s+0 von/);
      await page.getByRole('navigation', { name: 'Hauptmenü' }).getByRole('link', { name: 'Domains' }).click();
      await page.getByRole('link', { name: `DNS-Einträge von ${x.end1.domain}` }).click();
      await page.getByRole('heading', { level: 1, name: `DNS-Einträge von ${x.end1.domain}` }).waitFor();
      // The heading comes before the records have loaded; the form with them.
      await page.getByRole('button', { name: 'Eintrag hinzufügen' }).waitFor();
      expect(await page.getByRole('button', { name: 'Eintrag hinzufügen' }).count()).toBe(1);
      expect(await axeViolations(page)).toEqual([]);
      await page.getByLabel('Sprache').selectOption('en');
      await page.getByRole('heading', { level: 1, name: `DNS records of ${x.end1.domain}` }).waitFor();
      await page.reload();
      await page.getByRole('heading', { level: 1, name: `DNS records of ${x.end1.domain}` }).waitFor();
      expect(await page.evaluate(() => document.documentElement.lang)).toBe('en');
      expect(problems).toEqual([]);
    });

    it('works at phone width: no page scrolls sideways, and axe finds nothing serious', async () => {
      const { page, problems } = await loggedIn(x.end1, { viewport: { width: 360, height: 740 } });
      const sideways = () => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      expect(await sideways()).toBe(0);
      expect(await axeViolations(page)).toEqual([]);
      await page.goto(`${origin}/panel/domains/${x.end1.domain}/dns`);
      await page.locator('tr[data-record]').first().waitFor();
      expect(await sideways()).toBe(0);
      expect(await axeViolations(page)).toEqual([]);
      expect(problems).toEqual([]);
    });
  });
});
