// The customer panel's databases pages in Chromium (API guide "Databases", "The customer panel"),
// on both engines against the test MariaDB: a customer creates a database (a description the API
// refuses first, its error at the field), sees the password once and logs in with it, changes the
// description, sets a new password (after a confirmation; the old one stops working) and deletes
// the database (after a confirmation), each job turning done in place and each change visible
// through the API; a database created with the keyboard alone; a reseller creating one for its end
// customer; another customer's database and package answering "not found"; axe-core on each page
// and the list at phone width.
import { beforeAll, describe, expect, it } from 'vitest';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { ENGINES, call } from '../helpers/app.js';
import { postDatabase, useDatabasesSuite } from '../helpers/databases.js';
import { jobDone } from '../helpers/jobs.js';
import { loginResult, requireMariadb, testServer } from '../helpers/mariadb.js';
import { BROWSER_TEST_MS, chromiumMissing, requireBuiltPanel } from '../helpers/panel-browser.js';
import { actFor, axeViolations, panelTenants, sideways, usePanelBrowser, type PanelTenant } from '../helpers/panel-hosting.js';
import { requirable } from '../helpers/required.js';

const suite = chromiumMissing ? requirable(chromiumMissing) : requireMariadb();

suite('the panel: databases in Chromium', () => {
  describe.each(ENGINES)('%s', { timeout: BROWSER_TEST_MS }, (engine) => {
    const s = useDatabasesSuite(engine);
    let origin = '';
    let x: Awaited<ReturnType<typeof panelTenants>>;
    const b = usePanelBrowser(() => origin);

    beforeAll(async () => {
      requireBuiltPanel();
      await s.t.app.listen({ host: '127.0.0.1', port: 0 });
      origin = `http://127.0.0.1:${(s.t.app.server.address() as AddressInfo).port}`;
      // Linux users from the suite's unique names: the databases are named after them and dropped after the file.
      x = await panelTenants(s.t.admin, 'db', () => s.names.next(), { maxDatabases: 5, databaseVersions: [`mariadb-${s.version}`] });
    });

    const api = (path: string, who: PanelTenant) => call(s.t.app, 'GET', path, { token: who.token });
    const databasesOf = async (who: PanelTenant) =>
      (await api(`/databases?filter[package_id]=${who.packageId}`, who)).json.data as { id: string; attributes: { name: string; description: string } }[];
    const done = (page: Page, text: string) => page.getByText(`${text}: done`).waitFor({ timeout: 30_000 });

    /** From the overview, the package card's link to its databases. */
    async function toDatabases(page: Page, who: PanelTenant) {
      await page.getByRole('link', { name: `Databases of ${who.packageName}: 0 of 5` }).click();
      await page.getByRole('heading', { level: 1, name: `Databases of ${who.packageName}` }).waitFor();
      expect(page.url()).toBe(`${origin}/panel/packages/${who.packageId}/databases`);
    }

    it('a customer creates a database (a refused description first), sees its password once and logs in with it, changes it, sets a new password and deletes it', async () => {
      const { page, problems } = await b.loggedIn(x.other);
      await toDatabases(page, x.other);
      await page.getByText('There are no databases yet.').waitFor();
      expect(await axeViolations(page)).toEqual([]);

      // A description over 255 characters: the API's error at the field, the field focused, nothing created.
      await page.getByLabel('Description').fill('x'.repeat(256));
      await page.getByRole('button', { name: 'Create database' }).click();
      await page.locator('#new-description-error').waitFor();
      expect(await page.locator('#new-description-error').innerText()).toMatch(/^This value is not accepted\. Details: .*255/);
      expect(await page.locator('#new-description').getAttribute('aria-invalid')).toBe('true');
      await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('new-description');
      expect(await axeViolations(page)).toEqual([]);
      expect(await databasesOf(x.other)).toEqual([]);

      await page.getByLabel('Description').fill('shop');
      await page.getByRole('button', { name: 'Create database' }).click();
      const secret = page.locator('#new-password');
      await secret.waitFor();
      const [db] = await databasesOf(x.other);
      expect(db.attributes).toMatchObject({ description: 'shop' });
      const name = db.attributes.name;
      await expect(page.getByRole('heading', { name: `The password of ${name}` }).count()).resolves.toBe(1);
      await page.getByText('you won’t see it again').waitFor();
      const password = await secret.inputValue();
      expect(password).toMatch(/^[A-Za-z0-9]{20}$/);
      // The field has the focus with its text selected: ready to copy.
      await expect.poll(() => page.evaluate(() => {
        const el = document.activeElement as HTMLInputElement;
        return [el.id, el.selectionStart, el.selectionEnd];
      })).toEqual(['new-password', 0, 20]);
      await done(page, `Adding database ${name}`);
      expect(await loginResult(testServer(), name, password)).toBe('ok');
      await page.locator(`tr[data-database="${db.id}"]`).waitFor();
      expect(await page.locator(`tr[data-database="${db.id}"]`).innerText()).toContain('shop');
      expect(await axeViolations(page)).toEqual([]);
      await page.getByRole('button', { name: 'I have saved it' }).click();
      expect(await secret.count()).toBe(0);
      expect(await page.getByText(password).count()).toBe(0);

      // The database's own page: the description, refused then changed.
      await page.getByRole('link', { name: `Change: database ${name}` }).click();
      await page.getByRole('heading', { level: 1, name: `Database ${name}` }).waitFor();
      expect(page.url()).toBe(`${origin}/panel/databases/${db.id}`);
      expect(await axeViolations(page)).toEqual([]);
      const description = page.getByLabel('Description');
      await expect(description.inputValue()).resolves.toBe('shop');
      await description.fill('y'.repeat(300));
      await page.getByRole('button', { name: 'Save description' }).click();
      await page.locator('#change-description-error').waitFor();
      expect((await api(`/databases/${db.id}`, x.other)).json.data.attributes.description).toBe('shop');
      await description.fill('shop (live)');
      await page.getByRole('button', { name: 'Save description' }).click();
      await page.getByText('Saved.').waitFor();
      expect(await page.locator('#change-description-error').count()).toBe(0);
      expect((await api(`/databases/${db.id}`, x.other)).json.data.attributes.description).toBe('shop (live)');

      // A new password, after a confirmation: shown once; the old one stops working.
      await page.getByRole('button', { name: 'Set a new password' }).click();
      await page.getByText(`The current password of ${name} stops working at once`).waitFor();
      await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe('Yes, new password');
      await page.getByRole('button', { name: 'Yes, new password' }).click();
      await secret.waitFor();
      const second = await secret.inputValue();
      expect(second).not.toBe(password);
      await done(page, `Changing the password of database ${name}`);
      expect(await loginResult(testServer(), name, second)).toBe('ok');
      expect(await loginResult(testServer(), name, password)).toBe('denied');
      expect(await axeViolations(page)).toEqual([]);

      // Delete, confirmed, from the list.
      await page.getByRole('link', { name: `Databases of ${x.other.packageName}` }).click();
      await page.getByRole('button', { name: `Delete: database ${name}` }).click();
      await page.getByText(`Delete database ${name} with all its data?`).waitFor();
      // "Cancel" first: nothing happens and the focus returns to the button.
      await page.getByRole('button', { name: 'Cancel' }).click();
      await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe(`delete-${db.id}`);
      await page.getByRole('button', { name: `Delete: database ${name}` }).click();
      await page.getByRole('button', { name: 'Yes, delete' }).click();
      await done(page, `Deleting database ${name}`);
      expect((await api(`/databases/${db.id}`, x.other)).status).toBe(404);
      await page.getByText('There are no databases yet.').waitFor();
      expect(problems).toEqual([]);
    });

    it('creates a database with the keyboard alone and copies its password', async () => {
      const { page, context, problems } = await b.loggedIn(x.end);
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
      await page.goto(`${origin}/panel/packages/${x.end.packageId}/databases`);
      await page.getByRole('button', { name: 'Create database' }).waitFor();
      for (let i = 0; i < 100 && (await page.evaluate(() => document.activeElement?.id)) !== 'new-version'; i++) await page.keyboard.press('Tab');
      await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('new-version');
      await page.keyboard.press('Tab');
      await page.keyboard.type('typed, not clicked');
      await page.keyboard.press('Enter');
      await page.locator('#new-password').waitFor();
      const [db] = await databasesOf(x.end);
      expect(db.attributes.description).toBe('typed, not clicked');
      await done(page, `Adding database ${db.attributes.name}`);
      // The password field took the focus; Tab reaches the copy button.
      await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('new-password');
      await page.keyboard.press('Tab');
      await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe('Copy password');
      await page.keyboard.press('Enter');
      await page.getByText('Copied.').waitFor();
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(await page.locator('#new-password').inputValue());
      expect(problems).toEqual([]);
    });

    it('a reseller switches to its end customer and creates a database for it, visible through the API as that customer', async () => {
      const { page, problems } = await b.loggedIn(x.reseller);
      await actFor(page, x.end.customerId, x.end.packageId);
      const before = (await databasesOf(x.end)).length;
      await page.getByRole('link', { name: new RegExp(`^Databases of ${x.end.packageName}: ${before} of 5$`) }).click();
      await page.getByRole('heading', { level: 1, name: `Databases of ${x.end.packageName}` }).waitFor();
      await page.getByLabel('Description').fill('for my customer');
      await page.getByRole('button', { name: 'Create database' }).click();
      await page.locator('#new-password').waitFor();
      const db = (await databasesOf(x.end)).find((d) => d.attributes.description === 'for my customer')!;
      expect(db).toBeDefined();
      await done(page, `Adding database ${db.attributes.name}`);
      expect(await loginResult(testServer(), db.attributes.name, await page.locator('#new-password').inputValue())).toBe('ok');
      // Another customer chosen: the package's page leaves for that customer's overview.
      await actFor(page, x.reseller.customerId, x.reseller.packageId);
      expect(page.url()).toBe(`${origin}/panel/`);
      expect(problems).toEqual([]);
    });

    it("another customer's database and package are not listed, and their URLs say not found", async () => {
      const r = await postDatabase(s.t, x.other.token, { package_id: x.other.packageId, db_type: 'mariadb', version: s.version, description: 'a shop of someone else' });
      expect(r.status, r.body).toBe(202);
      await jobDone(s.t, x.other.token, r);
      const { page, problems } = await b.loggedIn(x.end);
      for (const url of [`/panel/databases/${r.json.data.id}`, `/panel/packages/${x.other.packageId}/databases`, '/panel/databases/999999', '/panel/databases/abc']) {
        await page.goto(`${origin}${url}`);
        await page.getByRole('heading', { level: 1, name: 'Not found' }).waitFor();
        expect(await page.getByText(r.json.data.attributes.name).count()).toBe(0);
        expect(await page.getByText('a shop of someone else').count()).toBe(0);
      }
      expect(await axeViolations(page)).toEqual([]);
      await page.goto(`${origin}/panel/packages/${x.end.packageId}/databases`);
      await page.getByRole('heading', { level: 1, name: `Databases of ${x.end.packageName}` }).waitFor();
      expect(await page.getByText('a shop of someone else').count()).toBe(0);
      expect(problems).toEqual([]);
    });

    it('works at phone width and in German: the list and a database page without sideways scrolling, axe finds nothing serious', async () => {
      const { page, problems } = await b.loggedIn(x.end, { viewport: { width: 375, height: 740 } });
      await page.goto(`${origin}/panel/packages/${x.end.packageId}/databases`);
      await page.locator('tr[data-database]').first().waitFor();
      expect(await sideways(page)).toBe(0);
      expect(await axeViolations(page)).toEqual([]);
      const id = await page.locator('tr[data-database]').first().getAttribute('data-database');
      await page.goto(`${origin}/panel/databases/${id}`);
      await page.getByRole('button', { name: 'Set a new password' }).waitFor();
      expect(await sideways(page)).toBe(0);
      expect(await axeViolations(page)).toEqual([]);
      // In German, too.
      await page.getByLabel('Language').selectOption('de');
      await page.getByRole('button', { name: 'Neues Passwort setzen' }).click();
      await page.getByRole('button', { name: 'Ja, neues Passwort' }).waitFor();
      expect(await page.getByText('gilt sofort nicht mehr').count()).toBe(1);
      await page.getByRole('button', { name: 'Abbrechen' }).click();
      await page.getByRole('link', { name: `Datenbanken von ${x.end.packageName}` }).click();
      await page.getByRole('heading', { level: 1, name: `Datenbanken von ${x.end.packageName}` }).waitFor();
      await page.getByRole('button', { name: 'Datenbank anlegen' }).waitFor();
      expect(await sideways(page)).toBe(0);
      expect(await axeViolations(page)).toEqual([]);
      expect(problems).toEqual([]);
    });
  });
});
