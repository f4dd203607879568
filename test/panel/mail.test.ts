// The customer panel's e-mail pages in Chromium (API guide "The customer panel", "E-mail
// addresses", "Password rules") against the local stack's real Dovecot and Postfix on both
// engines: adding a mailbox (its generated password shown once, logging in over IMAP) and a
// forward, the live password checklist and the API's refusal at the field, description, antispam
// and forward targets, a new and an own password, the autoresponder's four keys one per request,
// application passwords, deleting with the warning that the mail goes for good — each job turning
// done in place and each change then checked through the API — a reseller acting for an end
// customer, another customer's address answering not found, the keyboard alone, phone width, and
// axe-core on every page.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { ENGINES, call } from '../helpers/app.js';
import { GOOD_PASSWORD, postEmail, useMailSuite } from '../helpers/email.js';
import { imapLogin } from '../helpers/imap.js';
import { axeViolations, BROWSER_TEST_MS, chromiumMissing, requireBuiltPanel } from '../helpers/panel-browser.js';
import { usePanelBrowser } from '../helpers/panel-login.js';
import { requirable } from '../helpers/required.js';
import { describeMailStack } from '../helpers/stack.js';
import type { Tenant } from '../helpers/tenants.js';

/** The contacts' portal password; it follows every password rule, so only the customer-portal rule refuses it for a mailbox. */
const PORTAL = GOOD_PASSWORD;
/** A password of one's own that follows every rule. */
const OWN = 'Kx9#pQ2!mW7?zR4&vT6b';
const JOB_MS = 30_000;

requirable(chromiumMissing)('the e-mail pages of the customer panel in Chromium', () => {
  describeMailStack('on the local stack', () => {
    describe.each(ENGINES)('%s', { timeout: BROWSER_TEST_MS }, (engine) => {
      const s = useMailSuite(engine);
      const b = usePanelBrowser(() => s.hostplaneUrl);
      beforeAll(async () => {
        requireBuiltPanel();
        for (const who of [s.x.reseller, s.x.end1, s.x.end2]) await s.t.admin.customers.setPortalPassword(who.contactId, PORTAL);
      });

      const emailOf = (who: Tenant) => `admin@${who.domain}`;
      const origin = () => s.hostplaneUrl;
      const get = (path: string, who: Tenant) => call(s.t.app, 'GET', path, { token: who.token });
      /** The address as the API shows it to `who`, or undefined. */
      const viaApi = async (address: string, who: Tenant) =>
        (await get(`/email-addresses?filter[address]=${encodeURIComponent(address)}`, who)).json.data[0] as { id: string; attributes: Record<string, unknown> } | undefined;
      const ruleState = (page: Page, field: string, rule: string) => page.locator(`[data-rules-for="${field}"] [data-rule="${rule}"]`).getAttribute('data-state');
      const liveStates = (page: Page, field: string) =>
        page.locator(`[data-rules-for="${field}"] [data-state]:not([data-state="api"])`).evaluateAll((lis) => lis.map((li) => li.getAttribute('data-state')));

      async function mailPage(who: Tenant, o = {}) {
        const session = await b.loggedIn(emailOf(who), PORTAL, o);
        await session.page.getByRole('navigation').getByRole('link', { name: 'E-mail' }).click();
        await session.page.getByRole('heading', { level: 1, name: 'E-mail addresses' }).waitFor();
        await session.page.locator('form.address-form').waitFor();
        return session;
      }
      /** Opens an address's page from the list. */
      async function settingsOf(page: Page, address: string) {
        await page.getByRole('link', { name: `Settings of ${address}` }).click();
        await page.getByRole('heading', { level: 1, name: address }).waitFor();
        await page.getByRole('heading', { level: 2, name: 'Settings' }).waitFor();
      }

      it('adds a mailbox: its generated password is shown once, the job turns done in place, the API shows it and the password logs in over IMAP', async () => {
        const { page, problems } = await mailPage(s.x.end1);
        const address = `info@${s.x.end1.domain}`;
        await page.getByText('There are no addresses yet.').waitFor();
        expect(await axeViolations(page)).toEqual([]);
        const form = page.locator('form.address-form');
        await form.getByLabel('Name before the @').fill('info');
        await form.getByLabel('Description').fill('shop enquiries');
        await form.getByRole('button', { name: 'Add address' }).click();
        const secret = page.locator('[data-secret]');
        await secret.waitFor();
        const password = await secret.locator('.secret-value').inputValue();
        expect(password).toMatch(/^[A-Za-z0-9][A-Za-z0-9._-]{18}[A-Za-z0-9]$/);
        expect(await secret.innerText()).toContain('you won’t see it again');
        await page.getByText(`Adding ${address}: done`).waitFor({ timeout: JOB_MS });
        expect(await axeViolations(page)).toEqual([]);

        const a = await viaApi(address, s.x.end1);
        expect(a?.attributes).toMatchObject({ address, address_type: 'mailbox', description: 'shop enquiries', antispam: 'reject', forward_to: [] });
        expect(a?.attributes).not.toHaveProperty('password');
        await page.locator(`tr[data-address="${a!.id}"]`).waitFor();
        expect(await imapLogin(s.imap, address, password)).toBe('OK');

        // Hidden for good: neither the page nor a reload shows it again.
        await secret.getByRole('button', { name: 'I have saved it' }).click();
        expect(await page.locator('[data-secret]').count()).toBe(0);
        await page.reload();
        await page.locator(`tr[data-address="${a!.id}"]`).waitFor();
        expect(await page.content()).not.toContain(password);
        expect(problems).toEqual([]);
      });

      it("the own password's checklist follows the typing; the API's refusal appears at the field and nothing is made; a good one is never echoed and logs in", async () => {
        const { page, problems } = await mailPage(s.x.end1);
        const form = page.locator('form.address-form');
        // admin@<domain> is the contact's address: the portal password, which breaks no other rule, is refused by the API alone.
        const address = emailOf(s.x.end1);
        await form.getByLabel('Name before the @').fill('admin');
        await form.getByLabel('Set my own password').check();
        const field = page.locator('#new-password');
        await field.fill('short');
        expect(await ruleState(page, 'new-password', 'length')).toBe('unmet');
        await field.fill('Admin-Vq7#mZ2!xB9?');
        expect(await ruleState(page, 'new-password', 'length')).toBe('met');
        expect(await ruleState(page, 'new-password', 'user_name')).toBe('unmet');
        await field.fill('abcd-Vq7#mZ2!xB9?');
        expect(await ruleState(page, 'new-password', 'sequence')).toBe('unmet');
        await field.fill(PORTAL);
        expect(await liveStates(page, 'new-password')).toEqual(Array(8).fill('met'));
        expect(await page.locator('#new-password-summary').innerText()).toContain('8 of the 8 rules checked here are met');
        expect(await axeViolations(page)).toEqual([]);

        await form.getByRole('button', { name: 'Add address' }).click();
        const error = page.locator('#new-password-error');
        await error.waitFor();
        expect(await error.innerText()).toContain('This password does not follow the password rules.');
        expect(await error.innerText()).toContain('customer-portal password');
        expect(await field.getAttribute('aria-invalid')).toBe('true');
        await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('new-password');
        expect(await axeViolations(page)).toEqual([]);
        expect(await viaApi(address, s.x.end1)).toBeUndefined();

        await field.fill(OWN);
        await form.getByRole('button', { name: 'Add address' }).click();
        await page.getByText(`Adding ${address}: done`).waitFor({ timeout: JOB_MS });
        expect(await page.locator('[data-secret]').count()).toBe(0);
        expect(await page.content()).not.toContain(OWN);
        expect((await viaApi(address, s.x.end1))?.attributes.address_type).toBe('mailbox');
        expect(await imapLogin(s.imap, address, OWN)).toBe('OK');
        expect(problems).toEqual([]);
      });

      it('adds a forward, then on its page changes description and antispam and adds and removes targets, each visible through the API', async () => {
        const { page, problems } = await mailPage(s.x.end1);
        const address = `orders@${s.x.end1.domain}`;
        const form = page.locator('form.address-form');
        await form.getByLabel('Name before the @').fill('orders');
        await form.getByLabel('Kind').selectOption('forward');
        expect(await form.getByLabel('Set my own password').count()).toBe(0);
        await form.getByLabel('Forwards to').fill('sam+orders@example.net, info@example.org');
        await form.getByRole('button', { name: 'Add address' }).click();
        await page.getByText(`Adding ${address}: done`).waitFor({ timeout: JOB_MS });
        expect((await viaApi(address, s.x.end1))?.attributes).toMatchObject({ address_type: 'forward', forward_to: ['sam+orders@example.net', 'info@example.org'] });

        await settingsOf(page, address);
        expect(await axeViolations(page)).toEqual([]);
        // A forward has no password, autoresponder or application passwords.
        expect(await page.getByRole('heading', { name: 'Password' }).count()).toBe(0);
        expect(await page.getByRole('heading', { name: 'Autoresponder' }).count()).toBe(0);

        await page.getByLabel('Description').fill('orders to the team');
        await page.getByLabel('Spam handling').selectOption('none');
        await page.getByRole('button', { name: 'Save', exact: true }).click();
        // A change from reject waits for the spam filter (API guide "E-mail addresses": antispam).
        await page.getByText('Saved.').waitFor({ timeout: JOB_MS });
        expect((await viaApi(address, s.x.end1))?.attributes).toMatchObject({ description: 'orders to the team', antispam: 'none' });

        await page.getByLabel('Forward also to').fill('team@example.org');
        await page.getByRole('button', { name: 'Add target' }).click();
        await page.locator('[data-target="team@example.org"]').waitFor();
        await page.getByRole('button', { name: 'Remove sam+orders@example.net' }).click();
        await page.locator('[data-target="sam+orders@example.net"]').waitFor({ state: 'detached' });
        expect((await viaApi(address, s.x.end1))?.attributes.forward_to).toEqual(['info@example.org', 'team@example.org']);

        // The API's refusal of a target (a path parameter) appears at the field; nothing changes.
        await page.getByLabel('Forward also to').fill('not an address');
        await page.getByRole('button', { name: 'Add target' }).click();
        await page.locator('#forward-target-error').waitFor();
        expect(await page.locator('#forward-target-error').innerText()).toContain('is not an e-mail address');
        expect(await axeViolations(page)).toEqual([]);
        expect((await viaApi(address, s.x.end1))?.attributes.forward_to).toEqual(['info@example.org', 'team@example.org']);
        expect(problems).toEqual([]);
      });

      it("a mailbox's page: a refused own password at the field, a new generated one shown once, the autoresponder one key per request, application passwords", async () => {
        const { page, problems } = await mailPage(s.x.end1);
        const address = `info@${s.x.end1.domain}`;
        await settingsOf(page, address);
        expect(await axeViolations(page)).toEqual([]);
        const id = (await viaApi(address, s.x.end1))!.id;

        // The guide's example password meets every rule the page checks; the API refuses it.
        await page.getByLabel('New password').fill('Lantern7-Orbit-Fjord2');
        expect(await liveStates(page, 'own-password')).toEqual(Array(8).fill('met'));
        await page.getByRole('button', { name: 'Set password' }).click();
        await page.locator('#own-password-error').waitFor();
        expect(await page.locator('#own-password-error').innerText()).toContain('shown as an example in our documentation');
        expect(await imapLogin(s.imap, address, 'Lantern7-Orbit-Fjord2')).toBe('NO');
        await page.getByLabel('New password').fill(OWN);
        await page.getByRole('button', { name: 'Set password' }).click();
        await page.locator('.password-form').getByText('Saved.').waitFor();
        expect(await imapLogin(s.imap, address, OWN)).toBe('OK');

        await page.getByRole('button', { name: 'Generate a new password' }).click();
        const secret = page.locator('[data-secret]');
        await secret.waitFor();
        const generated = await secret.locator('.secret-value').inputValue();
        expect(await imapLogin(s.imap, address, generated)).toBe('OK');
        expect(await imapLogin(s.imap, address, OWN)).toBe('NO');
        await secret.getByRole('button', { name: 'I have saved it' }).click();

        // The autoresponder: a clear on/off, then its text and dates, each its own PATCH.
        const auto = async () => (await get(`/email-addresses/${id}`, s.x.end1)).json.data.attributes.autoresponder;
        await page.getByText('The autoresponder is off.').waitFor();
        await page.getByRole('button', { name: 'Switch the autoresponder on' }).click();
        await page.getByText('The autoresponder is on').waitFor();
        expect((await auto()).active).toBe(true);
        const berlin = (days: number) => new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Berlin' }).format(new Date(Date.now() + days * 86_400_000));
        await page.getByLabel('Reply text').fill('Back on Monday.');
        await page.getByLabel('Switches off on').fill(berlin(10));
        await page.getByRole('button', { name: 'Save autoresponder' }).click();
        await page.locator('.autoresponder-form').getByText('Saved.').waitFor();
        expect(await auto()).toEqual({ text: 'Back on Monday.', active: true, activates: null, expires: berlin(10) });
        // A date before today: the API's refusal at its field; the text saved before it stays.
        await page.getByLabel('Switches on on').fill('2020-01-01');
        await page.getByRole('button', { name: 'Save autoresponder' }).click();
        await page.locator('#auto-activates-error').waitFor();
        await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('auto-activates');
        expect(await axeViolations(page)).toEqual([]);
        expect((await auto()).activates).toBe(null);
        await page.getByRole('button', { name: 'Switch the autoresponder off' }).click();
        await page.getByText('The autoresponder is off.').waitFor();
        expect((await auto()).active).toBe(false);

        // Application passwords: shown once, logs in, listed with its last use, deleted.
        await page.getByText('There are no application passwords yet.').waitFor();
        await page.getByLabel('Device').fill('Laptop');
        await page.getByLabel('Program').fill('Thunderbird');
        await page.getByRole('button', { name: 'Add application password' }).click();
        await secret.waitFor();
        expect(await secret.innerText()).toContain('The application password for Thunderbird on Laptop');
        const appPassword = await secret.locator('.secret-value').inputValue();
        const row = page.locator('tr[data-app-password]');
        await row.waitFor();
        expect(await row.innerText()).toMatch(/Laptop\s+Thunderbird[\s\S]*never/);
        expect(await axeViolations(page)).toEqual([]);
        expect(await imapLogin(s.imap, address, appPassword)).toBe('OK');
        const apps = (await get(`/email-addresses/${id}/application-passwords`, s.x.end1)).json.data;
        expect(apps.map((p: { attributes: object }) => p.attributes)).toMatchObject([{ device: 'Laptop', application: 'Thunderbird' }]);
        await page.getByRole('button', { name: 'Delete: Laptop · Thunderbird' }).click();
        await page.getByRole('button', { name: 'Yes, delete' }).click();
        await page.getByText('There are no application passwords yet.').waitFor();
        expect((await get(`/email-addresses/${id}/application-passwords`, s.x.end1)).json.data).toEqual([]);
        expect(await imapLogin(s.imap, address, appPassword)).toBe('NO');
        expect(problems).toEqual([]);
      });

      it("deletes a mailbox after a confirmation that says its mail goes for good; the job turns done and the mailbox is gone", async () => {
        const { page, problems } = await mailPage(s.x.end1);
        const address = emailOf(s.x.end1);
        const id = (await viaApi(address, s.x.end1))!.id;
        await page.getByRole('button', { name: `Delete: ${address}` }).click();
        const confirm = page.locator(`tr[data-address="${id}"] .confirm`);
        expect(await confirm.innerText()).toContain('All its stored mail is deleted for good');
        await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe(`delete-yes-${id}`);
        await page.getByRole('button', { name: 'Yes, delete' }).click();
        await page.getByText(`Deleting ${address}: done`).waitFor({ timeout: JOB_MS });
        await page.locator(`tr[data-address="${id}"]`).waitFor({ state: 'detached' });
        expect((await get(`/email-addresses/${id}`, s.x.end1)).status).toBe(404);
        expect(await imapLogin(s.imap, address, OWN)).toBe('NO');
        expect(problems).toEqual([]);
      });

      it('a reseller switches to an end customer and adds an address for it, visible through the API as that customer', async () => {
        const { page, problems } = await b.loggedIn(emailOf(s.x.reseller), PORTAL);
        await page.getByLabel('Customer').selectOption(s.x.end2.customerId);
        await page.locator(`[data-package="${s.x.end2.packageId}"]`).waitFor();
        await page.getByRole('navigation').getByRole('link', { name: 'E-mail' }).click();
        await page.locator(`form.address-form`).waitFor();
        // Only end2's package and domains: end1's addresses are not listed.
        expect(await page.locator('[data-package]').evaluateAll((els) => els.map((e) => e.getAttribute('data-package')))).toEqual([s.x.end2.packageId]);
        expect(await page.getByText(s.x.end1.domain).count()).toBe(0);
        const form = page.locator('form.address-form');
        await form.getByLabel('Name before the @').fill('hello');
        await form.getByRole('button', { name: 'Add address' }).click();
        const address = `hello@${s.x.end2.domain}`;
        await page.getByText(`Adding ${address}: done`).waitFor({ timeout: JOB_MS });
        const password = await page.locator('[data-secret] .secret-value').inputValue();
        expect((await viaApi(address, s.x.end2))?.attributes.address_type).toBe('mailbox');
        expect(await imapLogin(s.imap, address, password)).toBe('OK');
        expect(await axeViolations(page)).toEqual([]);
        expect(problems).toEqual([]);
      });

      it("another customer's address is never listed and its URL says not found", async () => {
        const other = await postEmail(s.t, s.x.solo.token, { address: `secret@${s.x.solo.domain}`, address_type: 'forward', forward_to: ['x@example.net'] });
        expect(other.status).toBe(202);
        const { page, problems } = await mailPage(s.x.end1);
        for (const id of [other.json.data.id as string, '999999', 'abc']) {
          await page.goto(`${origin()}/panel/email/${id}`);
          await page.getByRole('heading', { level: 1, name: 'Not found' }).waitFor();
          expect(await page.getByText(s.x.solo.domain).count()).toBe(0);
        }
        expect(await axeViolations(page)).toEqual([]);
        await page.goto(`${origin()}/panel/email`);
        await page.locator('tr[data-address]').first().waitFor();
        expect(await page.getByText(`secret@${s.x.solo.domain}`).count()).toBe(0);
        expect(problems).toEqual([]);
      });

      it('adds a forward with the keyboard alone', async () => {
        const { page, problems } = await mailPage(s.x.end1);
        for (let i = 0; i < 200 && (await page.evaluate(() => document.activeElement?.id)) !== 'new-local'; i++) await page.keyboard.press('Tab');
        await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('new-local');
        await page.keyboard.type('keys');
        await page.keyboard.press('Tab'); // the domain
        await page.keyboard.press('Tab'); // the kind: mailbox, forward
        await page.keyboard.press('ArrowDown');
        expect(await page.locator('#new-address_type').inputValue()).toBe('forward');
        await page.keyboard.press('Tab'); // spam handling
        await page.keyboard.press('Tab');
        await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('new-forward_to');
        await page.keyboard.type('typed@example.net');
        await page.keyboard.press('Enter');
        const address = `keys@${s.x.end1.domain}`;
        await page.getByText(`Adding ${address}: done`).waitFor({ timeout: JOB_MS });
        expect((await viaApi(address, s.x.end1))?.attributes).toMatchObject({ address_type: 'forward', forward_to: ['typed@example.net'] });
        expect(problems).toEqual([]);
      });

      it('works at phone width, in English and German: neither the list nor an address page scrolls sideways, and axe finds nothing serious', async () => {
        // An address of its own: the test does not depend on the others.
        const address = `phone@${s.x.end1.domain}`;
        expect((await postEmail(s.t, s.x.end1.token, { address, address_type: 'mailbox', forward_to: ['a-long-target-address@example.net'] })).status).toBe(202);
        const { page, problems } = await mailPage(s.x.end1, { viewport: { width: 375, height: 740 } });
        const sideways = () => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        await page.locator('tr[data-address]').first().waitFor();
        expect(await sideways()).toBe(0);
        expect(await axeViolations(page)).toEqual([]);
        await settingsOf(page, address);
        await page.getByLabel('New password').fill('short');
        expect(await sideways()).toBe(0);
        expect(await axeViolations(page)).toEqual([]);
        // In German, the checklist too (the language of the page, API guide "The customer panel").
        await page.getByLabel('Language').selectOption('de');
        await page.getByRole('heading', { level: 2, name: 'Abwesenheitsnotiz' }).waitFor();
        expect(await page.locator('[data-rules-for="own-password"] [data-rule="length"]').textContent()).toContain('16 bis 72 Zeichen (nicht erfüllt)');
        expect(await sideways()).toBe(0);
        expect(await axeViolations(page)).toEqual([]);
        expect(problems).toEqual([]);
      });
    });
  });
});
