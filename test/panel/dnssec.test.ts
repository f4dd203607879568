// The DNSSEC section of a domain's DNS page in Chromium (API guide "DNSSEC (extension)", "The
// customer panel"): a zone is not signed at first; once the operator turns signing on and the DNS
// server has signed the zone, the page lists exactly the DS records the API shows — in English and
// German, with no serious axe violation. Another customer's domain keeps its own state. A customer
// (here its reseller) switches signing on and off itself; off goes by "disabling".
import { describe, expect, it } from 'vitest';
import { ENGINES } from '../helpers/app.js';
import { axeViolations, BROWSER_TEST_MS, chromiumMissing } from '../helpers/panel-browser.js';
import { usePanelSuite } from '../helpers/panel-suite.js';
import { requirable } from '../helpers/required.js';
import { waitFor } from '../helpers/wait.js';

requirable(chromiumMissing)('the DNSSEC section of the customer panel in Chromium', () => {
  describe.each(ENGINES)('%s', { timeout: BROWSER_TEST_MS }, (engine) => {
    const { s, t, x, loggedIn, apiAs } = usePanelSuite(engine);

    it('shows the zone unsigned, then — signed by the operator — the DS records the API shows', async () => {
      const domain = x.end1.domain;
      const { page, problems } = await loggedIn(x.end1);
      await page.goto(`${s.origin}/panel/domains/${domain}/dns`);
      const section = page.locator('[data-dnssec]');
      await section.waitFor();
      expect(await section.getAttribute('data-dnssec')).toBe('off');
      expect(await section.innerText()).toContain('This zone is not signed.');
      expect(await axeViolations(page)).toEqual([]);

      await t.admin.dnssec.set(domain, true);
      // The DNS server signs the zone (and makes its key) as it follows the change: then the API has the DS.
      const ds = await waitFor('the DS record of the signed zone', async () => {
        const dnssec = (await apiAs(x.end1, `/domains/${domain}`)).json.data.attributes.presence.dnssec;
        return dnssec.enabled && dnssec.ds_records.length > 0 ? (dnssec.ds_records as string[]) : null;
      }, 20_000);
      expect(ds[0]).toMatch(/^\d{1,5} 13 2 [0-9A-Fa-f]{64}$/);
      await page.reload();
      await page.locator('[data-dnssec="on"]').waitFor();
      expect(await page.locator('[data-dnssec] .ds-records li').allInnerTexts()).toEqual(ds);
      expect(await axeViolations(page)).toEqual([]);
      expect(problems).toEqual([]);

      // Another customer's domain is not signed by this.
      const other = await apiAs(x.end2, `/domains/${x.end2.domain}`);
      expect(other.json.data.attributes.presence.dnssec).toEqual({ enabled: false, state: 'unsigned', ds_records: [], dnskeys: [] });
    });

    it('says it in German', async () => {
      const w = await loggedIn(x.end2);
      await w.page.goto(`${s.origin}/panel/domains/${x.end2.domain}/dns`);
      await w.page.getByLabel('Language').selectOption('de');
      await w.page.locator('[data-dnssec="off"]').getByText('Diese Zone ist nicht signiert.').waitFor();
    });

    it('a reseller signs its end customer\'s zone with the switch (the job done in place, the DS as the API has it), then turns it off: still signed, disabling until the registry drops the DS, as the page says', async () => {
      const domain = x.end2.domain;
      const dnssec = async () => (await apiAs(x.end2, `/domains/${domain}`)).json.data.attributes.presence.dnssec;
      const { page, problems } = await loggedIn(x.reseller);
      await page.getByLabel('Customer').selectOption(x.end2.customerId);
      await page.locator(`[data-package="${x.end2.packageId}"]`).waitFor();
      await page.getByRole('navigation').getByRole('link', { name: 'Domains' }).click();
      await page.getByRole('link', { name: `DNS records of ${domain}` }).click();
      await page.locator('[data-dnssec="off"]').waitFor();
      await page.getByRole('button', { name: `Sign this zone: ${domain}`, exact: true }).click();
      // Done once the DNS server serves the zone signed: then the page shows the DS records the API has.
      await page.getByText(`Changing ${domain}: DNSSEC: done`).waitFor({ timeout: 20_000 });
      await page.locator('[data-dnssec="on"]').waitFor();
      const on = await dnssec();
      expect(on).toMatchObject({ enabled: true, state: 'signed' });
      expect(on.ds_records[0]).toMatch(/^\d{1,5} 13 2 [0-9A-Fa-f]{64}$/);
      expect(await page.locator('[data-dnssec] .ds-records li').allInnerTexts()).toEqual(on.ds_records);
      expect(await axeViolations(page)).toEqual([]);

      // Off: the zone stays signed with the delete form of CDS until the registry has dropped the DS.
      await page.getByRole('button', { name: `Turn DNSSEC off: ${domain}`, exact: true }).click();
      await page.locator('[data-dnssec="disabling"]').waitFor();
      expect(await page.locator('[data-dnssec]').innerText()).toContain('The zone stays signed until your registry has removed its DS record');
      expect(await dnssec()).toMatchObject({ enabled: false, state: 'disabling', ds_records: [] });
      expect(await axeViolations(page)).toEqual([]);
      expect(problems).toEqual([]);
    });
  });
});
