// The customer panel's subdomains pages in Chromium (API guide "Subdomains", "The customer panel"),
// on both engines against the local stack's Caddy and PHP-FPM: a customer adds a redirect (a target
// and a dynamic redirect the API refuses first, their errors at the fields) and a webspace with a
// PHP version, each job turning done in place, each visible through the API and answering from
// Caddy (the webspace serves a file put into its path); changes the redirect (target, HTTPS
// switch), turns it into a webspace, and deletes a subdomain after a confirmation; a reseller adds
// an e-mail-only subdomain for its end customer; another customer's subdomain and package answer
// "not found"; axe-core on each page; the pages at phone width.
import fs from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { ENGINES, call } from '../helpers/app.js';
import { jobDone } from '../helpers/jobs.js';
import { BROWSER_TEST_MS, chromiumMissing, requireBuiltPanel } from '../helpers/panel-browser.js';
import { actFor, axeViolations, panelTenants, sideways, usePanelBrowser, type PanelTenant } from '../helpers/panel-hosting.js';
import { requirable } from '../helpers/required.js';
import { stackMissing } from '../helpers/stack.js';
import { PHP_VERSION, browse, postSubdomain, useSubdomainsSuite } from '../helpers/subdomains.js';

requirable(chromiumMissing ?? stackMissing())('the panel: subdomains in Chromium', () => {
  describe.each(ENGINES)('%s', { timeout: BROWSER_TEST_MS }, (engine) => {
    const s = useSubdomainsSuite(engine);
    let x: Awaited<ReturnType<typeof panelTenants>>;
    const b = usePanelBrowser(() => s.base);
    const linuxUser = (key: string) => `pw_${key}`;

    beforeAll(async () => {
      requireBuiltPanel();
      x = await panelTenants(s.t.admin, 'sub', linuxUser, { maxSubdomains: 20, phpVersions: [PHP_VERSION] });
    });

    type Sub = { id: string; attributes: { subdomain_type: string; subdomain: string; fqdn: string; webspace: unknown; redirect: unknown } };
    const api = (p: string, who: PanelTenant) => call(s.t.app, 'GET', p, { token: who.token });
    const subdomainsOf = async (who: PanelTenant) => (await api(`/subdomains?filter[package_id]=${who.packageId}`, who)).json.data as Sub[];
    const named = async (who: PanelTenant, sub: string) => (await subdomainsOf(who)).find((d) => d.attributes.subdomain === sub)!;
    const done = (page: Page, text: string) => page.getByText(`${text}: done`).waitFor({ timeout: 60_000 });
    const form = (page: Page) => page.locator('form.subdomain-form');

    it('a customer adds a redirect (refused values first) and a webspace, changes the redirect, makes it a webspace and deletes a subdomain; each job done in place, visible through the API and live on Caddy', async () => {
      const who = x.other;
      const { page, problems } = await b.loggedIn(who);
      await page.getByRole('link', { name: `Subdomains of ${who.packageName}: 0 of 20` }).click();
      await page.getByRole('heading', { level: 1, name: `Subdomains of ${who.packageName}` }).waitFor();
      expect(page.url()).toBe(`${s.base}/panel/packages/${who.packageId}/subdomains`);
      await page.getByText('There are no subdomains yet.').waitFor();
      expect(await axeViolations(page)).toEqual([]);

      // A redirect: a target that is no http(s) URL, then a dynamic one without the trailing /.
      const f = form(page);
      await f.getByLabel('Subdomain', { exact: true }).fill('go');
      await f.getByLabel('Kind').selectOption('redirect');
      await f.getByLabel('Redirect target').fill('ftp://files.example/');
      await f.getByRole('button', { name: 'Add subdomain' }).click();
      await page.locator('#new-redirect-target-error').waitFor();
      expect(await page.locator('#new-redirect-target-error').innerText()).toBe('This value is not accepted. Details: redirect.target must start with http:// or https://.');
      await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('new-redirect-target');
      expect(await axeViolations(page)).toEqual([]);
      await f.getByLabel('Redirect target').fill('https://target.example/base');
      await f.getByLabel('Keep the request path (dynamic redirect)').check();
      await f.getByRole('button', { name: 'Add subdomain' }).click();
      await page.locator('#new-redirect-dynamic-error').waitFor();
      expect(await page.locator('#new-redirect-target-error').count()).toBe(0);
      expect(await page.locator('#new-redirect-dynamic-error').innerText()).toContain('the target must end with "/"');
      expect(await subdomainsOf(who)).toEqual([]);

      await f.getByLabel('Redirect target').fill('https://target.example/base/');
      await f.getByRole('button', { name: 'Add subdomain' }).click();
      const go = `go.${who.domain}`;
      await done(page, `Adding subdomain ${go}`);
      const redirect = await named(who, 'go');
      expect(redirect.attributes).toMatchObject({ subdomain_type: 'redirect', fqdn: go, webspace: null, redirect: { target: 'https://target.example/base/', dynamic: true, redirect_to_https: false } });
      expect(await browse(s.web, go, '/a?b=1')).toMatchObject({ status: 301, location: 'https://target.example/base/a?b=1' });
      const row = page.locator(`tr[data-subdomain="${redirect.id}"]`);
      await row.waitFor();
      expect(await row.innerText()).toContain('→ https://target.example/base/ · dynamic');

      // A webspace with the plan's PHP version; a file put into its path is served.
      await f.getByLabel('Subdomain', { exact: true }).fill('www');
      await f.getByLabel('Kind').selectOption('webspace');
      await f.getByLabel('Document path').fill('/htdocs/www/');
      await f.getByLabel('PHP version').selectOption(PHP_VERSION);
      await f.getByLabel('Description').fill('the shop');
      await f.getByRole('button', { name: 'Add subdomain' }).click();
      const www = `www.${who.domain}`;
      await done(page, `Adding subdomain ${www}`);
      const webspace = await named(who, 'www');
      expect(webspace.attributes).toMatchObject({ subdomain_type: 'webspace', description: 'the shop', redirect: null, webspace: { path: '/htdocs/www/', php_version: PHP_VERSION, redirect_to_https: false } });
      await fs.writeFile(path.join(s.web.homeRoot, linuxUser('other'), 'htdocs/www/index.html'), 'made in the panel\n');
      expect(await browse(s.web, www, '/')).toMatchObject({ status: 200, body: 'made in the panel\n' });
      expect(await axeViolations(page)).toEqual([]);

      // Change the redirect: a new target and the HTTPS switch.
      await page.getByRole('link', { name: `Change: subdomain ${go}` }).click();
      await page.getByRole('heading', { level: 1, name: `Subdomain ${go}` }).waitFor();
      expect(page.url()).toBe(`${s.base}/panel/subdomains/${redirect.id}`);
      expect(await axeViolations(page)).toEqual([]);
      const c = form(page);
      await expect(c.getByLabel('Redirect target').inputValue()).resolves.toBe('https://target.example/base/');
      await c.getByLabel('Redirect target').fill('https://target.example/new/');
      await c.getByLabel('Send plain-HTTP visitors to HTTPS').check();
      await c.getByRole('button', { name: 'Save changes' }).click();
      await done(page, `Changing subdomain ${go}`);
      expect((await api(`/subdomains/${redirect.id}`, who)).json.data.attributes.redirect).toEqual({ target: 'https://target.example/new/', dynamic: true, redirect_to_https: true });
      expect((await browse(s.web, go, '/')).location).toMatch(new RegExp(`^https://${go.replace(/\./g, '\\.')}(:\\d+)?/$`));
      // The form starts from the subdomain as it now is.
      await expect(form(page).getByLabel('Send plain-HTTP visitors to HTTPS').isChecked()).resolves.toBe(true);

      // … then a webspace: the redirect's settings go.
      await form(page).getByLabel('Kind').selectOption('webspace');
      await form(page).getByLabel('Document path').fill('/htdocs/go/');
      await form(page).getByRole('button', { name: 'Save changes' }).click();
      await page.getByText(`Changing subdomain ${go}: done`).nth(1).waitFor({ timeout: 60_000 });
      expect((await api(`/subdomains/${redirect.id}`, who)).json.data.attributes).toMatchObject({ subdomain_type: 'webspace', redirect: null, webspace: { path: '/htdocs/go/', php_version: null, redirect_to_https: false } });
      expect(await axeViolations(page)).toEqual([]);

      // Delete, confirmed, from the list.
      await page.getByRole('link', { name: `Subdomains of ${who.packageName}` }).click();
      await page.getByRole('button', { name: `Delete: subdomain ${www}` }).click();
      await page.getByText(`Delete subdomain ${www}? Its site and DNS records go; your files stay.`).waitFor();
      await page.getByRole('button', { name: 'Yes, delete' }).click();
      await done(page, `Deleting subdomain ${www}`);
      expect((await api(`/subdomains/${webspace.id}`, who)).status).toBe(404);
      expect(await browse(s.web, www, '/')).toMatchObject({ status: 404 });
      await page.locator(`tr[data-subdomain="${webspace.id}"]`).waitFor({ state: 'detached' });
      expect(problems).toEqual([]);
    });

    it('a reseller switches to its end customer and adds an e-mail-only subdomain for it, visible through the API as that customer', async () => {
      const { page, problems } = await b.loggedIn(x.reseller);
      await actFor(page, x.end.customerId, x.end.packageId);
      await page.getByRole('link', { name: `Subdomains of ${x.end.packageName}: 0 of 20` }).click();
      await page.getByRole('heading', { level: 1, name: `Subdomains of ${x.end.packageName}` }).waitFor();
      expect(await page.locator('#new-domain option').evaluateAll((o) => o.map((e) => e.textContent))).toEqual([x.end.domain]);
      const f = form(page);
      await f.getByLabel('Subdomain', { exact: true }).fill('lists');
      await f.getByLabel('Kind').selectOption('email');
      expect(await f.locator('fieldset').count()).toBe(0);
      await f.getByRole('button', { name: 'Add subdomain' }).click();
      await done(page, `Adding subdomain lists.${x.end.domain}`);
      expect((await named(x.end, 'lists')).attributes).toMatchObject({ subdomain_type: 'email', fqdn: `lists.${x.end.domain}`, webspace: null, redirect: null });
      expect(await axeViolations(page)).toEqual([]);
      expect(problems).toEqual([]);
    });

    it("another customer's subdomain and package are not listed, and their URLs say not found", async () => {
      const r = await postSubdomain(s.t, x.other.token, { subdomain_type: 'email', domain: x.other.domain, subdomain: 'secret-stuff' });
      expect(r.status, r.body).toBe(202);
      await jobDone(s.t, x.other.token, r);
      const { page, problems } = await b.loggedIn(x.end);
      for (const url of [`/panel/subdomains/${r.json.data.id}`, `/panel/packages/${x.other.packageId}/subdomains`, '/panel/subdomains/999999', '/panel/packages/abc/subdomains']) {
        await page.goto(`${s.base}${url}`);
        await page.getByRole('heading', { level: 1, name: 'Not found' }).waitFor();
        expect(await page.getByText('secret-stuff').count()).toBe(0);
      }
      expect(await axeViolations(page)).toEqual([]);
      await page.goto(`${s.base}/panel/packages/${x.end.packageId}/subdomains`);
      await page.getByRole('heading', { level: 1, name: `Subdomains of ${x.end.packageName}` }).waitFor();
      expect(await page.getByText('secret-stuff').count()).toBe(0);
      expect(problems).toEqual([]);
    });

    it('works at phone width: the list and a subdomain page without sideways scrolling, axe finds nothing serious', async () => {
      const { page, problems } = await b.loggedIn(x.other, { viewport: { width: 375, height: 740 } });
      await page.goto(`${s.base}/panel/packages/${x.other.packageId}/subdomains`);
      await page.locator('tr[data-subdomain]').first().waitFor();
      expect(await sideways(page)).toBe(0);
      expect(await axeViolations(page)).toEqual([]);
      const id = await page.locator('tr[data-subdomain]').first().getAttribute('data-subdomain');
      await page.goto(`${s.base}/panel/subdomains/${id}`);
      await page.getByRole('button', { name: 'Save changes' }).waitFor();
      expect(await sideways(page)).toBe(0);
      expect(await axeViolations(page)).toEqual([]);
      expect(problems).toEqual([]);
    });
  });
});
