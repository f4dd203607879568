// The customer panel's Activity page in Chromium on both engines (API guide "Audit events", "The
// customer panel"): a change made in the panel shows up as its event with the status GET
// /audit-events gives; the filters narrow the list exactly as the API does, a refused value shows
// at its field and no list; another customer's events never appear; a reseller switched to an end
// customer sees that customer's events, page by page through the API's links; axe-core at desktop
// and phone width, and the German texts.
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { ENGINES, call } from '../helpers/app.js';
import { axeViolations, BROWSER_TEST_MS, chromiumMissing } from '../helpers/panel-browser.js';
import { usePanelSuite } from '../helpers/panel-suite.js';
import { requirable } from '../helpers/required.js';
import type { Tenant } from '../helpers/tenants.js';

const PHONE = { width: 375, height: 740 };
type Event = { id: string; attributes: { method: string; path: string; status: number; contact_id: string | null; token_id: string | null; queue_job_id: string | null } };

requirable(chromiumMissing)('the customer panel: activity', () => {
  describe.each(ENGINES)('%s', { timeout: BROWSER_TEST_MS }, (engine) => {
    const { s, t, x, loggedIn, viaNav, apiAs } = usePanelSuite(engine);

    /** What the API lists for `who`'s customer with the page's query (page 1, 25 a page, `more` filters). */
    const eventsOf = async (who: Tenant, more = '', page = 1) => {
      await t.app.auditTrail.settled();
      const r = await apiAs(who, `/audit-events?filter[customer_id]=${who.customerId}&page[size]=25&page[number]=${page}${more}`);
      expect(r.status).toBe(200);
      return r.json.data as Event[];
    };
    const shownIds = (page: Page) => page.locator('tr[data-event]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-event')));
    const showsExactly = (page: Page, events: Event[]) => expect.poll(() => shownIds(page)).toEqual(events.map((e) => e.id));
    /** A write the API refuses (404), recorded as an event of `who`. */
    const refusedWrite = (who: Tenant) => call(t.app, 'DELETE', '/dns-records/999999', { token: who.token });

    it('a DNS record added in the panel shows as its event with the status the API gives; status and path filters narrow as the API does; a refused filter value shows at its field and no list', async () => {
      const { page, problems } = await loggedIn(x.end1);
      await page.goto(`${s.origin}/panel/domains/${x.end1.domain}/dns`);
      const form = page.locator('form.record-form').last();
      await form.getByLabel('Type').selectOption('TXT');
      await form.getByLabel('Name').fill('activity');
      await form.getByLabel('Value').fill('seen in the trail');
      await form.getByLabel('TTL').fill('5');
      await form.getByRole('button', { name: 'Add record' }).click();
      await page.locator('#new-ttl-error').waitFor();
      await form.getByLabel('TTL').fill('600');
      await form.getByRole('button', { name: 'Add record' }).click();
      await page.getByText('Adding TXT record activity: done').waitFor({ timeout: 20_000 });
      // Another customer's write at the same time: never on end1's page.
      expect((await refusedWrite(x.solo)).status).toBe(404);

      await viaNav(page, 'Activity', 'Activity');
      const all = await eventsOf(x.end1);
      const [made, refused] = all.filter((e) => e.attributes.method === 'POST' && e.attributes.path === '/dns-records');
      expect(made.attributes).toMatchObject({ status: 202, contact_id: String(x.end1.contactId), token_id: null });
      expect(refused.attributes.status).toBe(422);
      await showsExactly(page, all);
      const row = await page.locator(`tr[data-event="${made.id}"]`).innerText();
      for (const text of ['POST', '/dns-records', '202', `contact ${x.end1.contactId}`, '127.0.0.1', made.attributes.queue_job_id!]) expect(row).toContain(text);
      const soloIds = (await eventsOf(x.solo)).map((e) => e.id);
      expect(soloIds.length).toBeGreaterThan(0);
      expect((await shownIds(page)).filter((id) => soloIds.includes(id!))).toEqual([]);
      expect(await axeViolations(page)).toEqual([]);

      await page.getByLabel('Status').fill('4xx');
      await page.getByRole('button', { name: 'Show' }).click();
      const refusedOnly = await eventsOf(x.end1, '&filter[status]=4xx');
      expect(refusedOnly.map((e) => e.id)).toContain(refused.id);
      expect(refusedOnly.map((e) => e.id)).not.toContain(made.id);
      await showsExactly(page, refusedOnly);

      await page.getByLabel('Status').fill('');
      await page.getByLabel('Path').fill('/dns-records');
      await page.getByRole('button', { name: 'Show' }).click();
      await showsExactly(page, await eventsOf(x.end1, '&filter[path]=/dns-records'));
      // A time range that ended long ago: nothing.
      await page.getByLabel('Until (not included)').fill('2020-01-01T00:00');
      await page.getByRole('button', { name: 'Show' }).click();
      await page.getByText('No events match.').waitFor();
      expect(await page.locator('tr[data-event]').count()).toBe(0);

      // Refused values: at their field, focused, and no list that looks filtered.
      await page.getByRole('button', { name: 'Clear filters' }).click();
      await showsExactly(page, all);
      await page.getByLabel('Status').fill('abc');
      await page.getByRole('button', { name: 'Show' }).click();
      await page.locator('#activity-status-error').waitFor();
      expect(await page.locator('#activity-status-error').innerText()).toContain('This value is not accepted.');
      expect(await page.locator('#activity-status').getAttribute('aria-invalid')).toBe('true');
      await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('activity-status');
      expect(await page.locator('tr[data-event]').count()).toBe(0);
      expect(await page.getByRole('alert').count()).toBe(0);
      expect(await axeViolations(page)).toEqual([]);
      await page.getByLabel('Status').fill('');
      await page.getByLabel('Path').fill('dns-records');
      await page.getByRole('button', { name: 'Show' }).click();
      await page.locator('#activity-path-error').waitFor();
      expect(await page.locator('#activity-status-error').count()).toBe(0);
      expect(await page.locator('tr[data-event]').count()).toBe(0);
      expect(problems).toEqual([]);
    });

    it("a reseller switched to an end customer sees that customer's events, page by page through the API's links, and another customer's after switching", async () => {
      for (let i = 0; i < 27; i++) expect((await refusedWrite(x.end2)).status).toBe(404);
      const r = await loggedIn(x.reseller);
      await r.page.getByLabel('Customer').selectOption(x.end2.customerId);
      await r.page.locator(`[data-package="${x.end2.packageId}"]`).waitFor();
      await viaNav(r.page, 'Activity', 'Activity');
      const first = await eventsOf(x.end2);
      expect(first).toHaveLength(25);
      await showsExactly(r.page, first);
      expect(await r.page.getByRole('button', { name: 'Newer events' }).count()).toBe(0);
      await r.page.getByText('Page 1 of 2, 27 events in all.').waitFor();

      await r.page.getByRole('button', { name: 'Older events' }).click();
      await showsExactly(r.page, await eventsOf(x.end2, '', 2));
      await r.page.getByText('Page 2 of 2, 27 events in all.').waitFor();
      await expect.poll(() => r.page.evaluate(() => document.activeElement?.id)).toBe('activity-page');
      expect(await r.page.getByRole('button', { name: 'Older events' }).count()).toBe(0);
      await r.page.getByRole('button', { name: 'Newer events' }).click();
      await showsExactly(r.page, first);

      await r.page.getByLabel('Customer').selectOption(x.end1.customerId);
      await r.page.getByRole('heading', { level: 1, name: 'Activity' }).waitFor();
      await showsExactly(r.page, await eventsOf(x.end1));
      expect((await shownIds(r.page)).filter((id) => first.some((e) => e.id === id))).toEqual([]);
      expect(r.problems).toEqual([]);
    });

    it('axe finds nothing serious at desktop and phone width, the phone page does not scroll sideways, and the page speaks German', async () => {
      for (const viewport of [undefined, PHONE]) {
        const { page, problems } = await loggedIn(x.end1, { viewport });
        await page.goto(`${s.origin}/panel/activity`);
        await page.getByRole('heading', { level: 1, name: 'Activity' }).waitFor();
        await page.locator('tr[data-event]').first().waitFor();
        expect(await axeViolations(page)).toEqual([]);
        expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
        expect(problems).toEqual([]);
      }
      const { page, problems } = await loggedIn(x.end1);
      await page.goto(`${s.origin}/panel/activity`);
      await page.getByLabel('Language').selectOption('de');
      await page.getByRole('heading', { level: 1, name: 'Aktivität' }).waitFor();
      await page.getByRole('button', { name: 'Anzeigen' }).waitFor();
      expect(await page.locator('thead').innerText()).toMatch(/Zeit\s+Methode\s+Pfad\s+Status\s+Von/);
      const [newest] = await eventsOf(x.end1);
      const time = await page.locator(`tr[data-event="${newest.id}"] time`).innerText();
      expect(time).toMatch(/^\d{2}\.\d{2}\.\d{4}, \d{2}:\d{2}:\d{2}$/);
      await page.getByLabel('Status').fill('abc');
      await page.getByRole('button', { name: 'Anzeigen' }).click();
      expect(await page.locator('#activity-status-error').innerText()).toContain('Dieser Wert wird nicht akzeptiert.');
      expect(await axeViolations(page)).toEqual([]);
      expect(problems).toEqual([]);
    });
  });
});
