// Panel sessions as a browser lives them, in Chromium on both engines (API guide "Panel sessions
// (extension)", decision 0031): a new portal password and a deleted contact end the session at
// once (the page's next request lands on the login form with its notice, the old cookie answers
// 401); a write without the anti-CSRF header is refused and changes nothing, with it it goes
// through; neither the cookie nor the csrf token is anywhere a script could read it back.
import { describe, expect, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { ENGINES, call } from '../helpers/app.js';
import { panelContact } from '../helpers/panel.js';
import { BROWSER_TEST_MS, chromiumMissing } from '../helpers/panel-browser.js';
import { usePanelSuite } from '../helpers/panel-suite.js';
import { requirable } from '../helpers/required.js';

const PW = 'first-portal-Passw0rd!';
const NEW_PW = 'second-portal-Passw0rd!';
const ENDED = 'Your session has ended. Please log in again.';

const sessionCookie = async (context: BrowserContext) => (await context.cookies()).find((c) => c.name === 'hostplane_session')!;

/** A request the page itself sends: its status and body, with or without the session's csrf token. */
function pageFetch(page: Page, method: string, path: string, o: { body?: unknown; csrf?: string } = {}) {
  return page.evaluate(
    async ({ method, path, body, csrf }) => {
      const headers: Record<string, string> = { Accept: 'application/vnd.api+json', 'Content-Type': 'application/vnd.api+json' };
      if (csrf) headers['X-CSRF-Token'] = csrf;
      const r = await fetch(path, { method, headers, credentials: 'same-origin', body: body === undefined ? undefined : JSON.stringify(body) });
      return { status: r.status, json: await r.json().catch(() => null) };
    },
    { method, path, body: o.body, csrf: o.csrf },
  );
}

requirable(chromiumMissing)('the customer panel: sessions in the browser', () => {
  describe.each(ENGINES)('%s', { timeout: BROWSER_TEST_MS }, (engine) => {
    const { s, t, x, open, loggedIn, logInThroughForm, viaNav, apiAs } = usePanelSuite(engine);

    /**
     * Ends the session once the page has loaded (a request still on its way would meet the end
     * first); then the page's next request lands on the login form with the notice, and the old
     * cookie is refused by the API.
     */
    async function endedInPlace(page: Page, cookie: string, end: () => Promise<unknown>) {
      await page.getByText('Loading…').waitFor({ state: 'detached' });
      // The address as the login form is drawn (a MutationObserver runs before the next paint): never the old page's.
      await page.evaluate(() => {
        const w = window as unknown as { loginDrawnAt?: string };
        new MutationObserver(() => {
          if (!w.loginDrawnAt && [...document.querySelectorAll('h1')].some((h) => h.textContent === 'Log in')) w.loginDrawnAt = location.pathname;
        }).observe(document.body, { childList: true, subtree: true, characterData: true });
      });
      await end();
      await page.getByRole('navigation').getByRole('link', { name: 'Domains', exact: true }).click();
      await page.getByRole('heading', { level: 1, name: 'Log in' }).waitFor();
      expect(await page.evaluate(() => (window as unknown as { loginDrawnAt?: string }).loginDrawnAt)).toBe('/panel/login');
      expect(page.url()).toBe(`${s.origin}/panel/login`);
      expect(await page.getByRole('status').filter({ hasText: ENDED }).count()).toBe(1);
      const r = await call(t.app, 'GET', '/domains', { headers: { cookie: `hostplane_session=${cookie}` } });
      expect(r.status).toBe(401);
      expect(r.json.errors[0].id).toBe('unauthorized');
    }

    it('a new portal password set by the operator ends the session at once: the next page lands on the login form with its notice, the old cookie answers 401, the new password logs in', async () => {
      const { contactId } = await panelContact(t.admin, 'Pia Password', `pia-${engine}@pw.example`, PW);
      const { page, context, problems } = await loggedIn({ email: `pia-${engine}@pw.example`, password: PW });
      const cookie = (await sessionCookie(context)).value;
      await endedInPlace(page, cookie, () => t.admin.customers.setPortalPassword(contactId, NEW_PW));
      await logInThroughForm(page, { email: `pia-${engine}@pw.example`, password: NEW_PW });
      expect((await sessionCookie(context)).value).not.toBe(cookie);
      expect(problems).toEqual([]);
    });

    it('a deleted contact ends its session at once', async () => {
      const { contactId } = await t.admin.customers.createContact(Number(x.solo.customerId), { name: 'Dora Deleted', email: `dora-${engine}@solo.example` });
      await t.admin.customers.setPortalPassword(contactId, PW);
      const { page, context, problems } = await loggedIn({ email: `dora-${engine}@solo.example`, password: PW });
      const cookie = (await sessionCookie(context)).value;
      await endedInPlace(page, cookie, () => t.admin.customers.deleteContact(contactId));
      expect(problems).toEqual([]);
    });

    it("a write from the page without X-CSRF-Token is refused with csrf_token_invalid and makes nothing; the same write with the session's token goes through", async () => {
      const { page, problems } = await loggedIn(x.solo);
      const body = { data: { type: 'dns-record', attributes: { record_type: 'TXT', name: 'csrf-check', domain: x.solo.domain, data: 'made from the page' } } };
      const made = async () => ((await apiAs(x.solo, `/dns-records?filter[domain]=${x.solo.domain}`)).json.data as { attributes: { name: string } }[]).filter((r) => r.attributes.name === 'csrf-check');

      const refused = await pageFetch(page, 'POST', '/dns-records', { body });
      expect(refused.status).toBe(403);
      expect(refused.json.errors).toEqual([expect.objectContaining({ id: 'csrf_token_invalid', status: '403', source: { header: 'X-CSRF-Token' } })]);
      const forged = await pageFetch(page, 'POST', '/dns-records', { body, csrf: 'not-the-token' });
      expect(forged.status).toBe(403);
      expect(await made()).toEqual([]);

      const csrf = (await pageFetch(page, 'GET', '/session')).json.data.attributes.csrf_token as string;
      const accepted = await pageFetch(page, 'POST', '/dns-records', { body, csrf });
      expect(accepted.status).toBe(202);
      expect(await made()).toHaveLength(1);
      expect(problems).toEqual([]);
    });

    it("after logging in and a few pages, neither the session cookie nor the csrf token is in document.cookie, localStorage or sessionStorage", async () => {
      const { page, context, problems } = await loggedIn(x.reseller);
      await page.getByLabel('Customer').selectOption(x.end1.customerId);
      await page.locator(`[data-package="${x.end1.packageId}"]`).waitFor();
      await viaNav(page, 'Domains', 'Domains');
      await viaNav(page, 'E-mail', 'E-mail addresses');
      await viaNav(page, 'Webhooks', 'Webhooks');
      await viaNav(page, 'Activity', 'Activity');

      const cookie = await sessionCookie(context);
      expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/' });
      const csrf = (await pageFetch(page, 'GET', '/session')).json.data.attributes.csrf_token as string;
      const seen = await page.evaluate(() => {
        const dump = (st: Storage) => Array.from({ length: st.length }, (_, i) => `${st.key(i)}=${st.getItem(st.key(i)!)}`);
        return { cookie: document.cookie, local: dump(localStorage), session: dump(sessionStorage) };
      });
      expect(seen.cookie).not.toContain('hostplane_session');
      // What the panel does keep: the language and the reseller's chosen customer.
      expect(seen.session).toEqual([`hostplane.customer=${x.end1.customerId}`]);
      for (const entry of [seen.cookie, ...seen.local, ...seen.session]) {
        expect(entry).not.toContain(cookie.value);
        expect(entry).not.toContain(csrf);
      }
      expect(problems).toEqual([]);
    });
  });
});
