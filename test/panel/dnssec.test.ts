// The DNSSEC section of a domain's DNS page in Chromium (API guide "DNSSEC (extension)", "The
// customer panel"): a zone is not signed at first; once the operator turns signing on and the DNS
// server has signed the zone, the page lists exactly the DS records the API shows — in English and
// German, with no serious axe violation. Another customer's domain keeps its own state.
import { describe, expect, it } from 'vitest';
import { ENGINES } from '../helpers/app.js';
import { axeViolations, chromiumMissing } from '../helpers/panel-browser.js';
import { usePanelSuite } from '../helpers/panel-suite.js';
import { requirable } from '../helpers/required.js';
import { waitFor } from '../helpers/wait.js';

requirable(chromiumMissing)('the DNSSEC section of the customer panel in Chromium', () => {
  describe.each(ENGINES)('%s', (engine) => {
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
  });
});
