// The customer panel's account pages in Chromium on both engines (API guide "The customer panel",
// "Panel sessions (extension)", "Domains", "Domain availability"): two-factor login enrolled on the
// security page — its QR code read back and a code computed from the shown secret logging in —
// then turned off with a recovery code; the presence flags switched on the domains page by a
// customer and by a reseller for its end customer; domain availability in the user's words, with
// the keyboard alone; axe-core on each page; the security page at phone width. Each change is
// then checked through the API.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import jsQRModule from 'jsqr';
import type { Page } from 'playwright-core';
import { ENGINES, call } from '../helpers/app.js';
import { startRdapServer, type RdapServer } from '../helpers/domain-availability.js';
import { codeAt, loginBody } from '../helpers/panel.js';
import { axeViolations, BROWSER_TEST_MS, chromiumMissing } from '../helpers/panel-browser.js';
import { PANEL_PW, emailOf, usePanelSuite } from '../helpers/panel-suite.js';
import { requirable } from '../helpers/required.js';

// jsqr is CommonJS whose types declare an ES default export: under NodeNext that default is the module, whose `default` is the function.
const jsQR = jsQRModule.default;

/** The pixels of the page's QR code (an inline SVG drawn onto a canvas), decoded by jsQR as a phone's camera app would. */
async function readQr(page: Page, selector: string): Promise<string | null> {
  const { n, b64 } = await page.evaluate(async (sel) => {
    const svg = document.querySelector(sel)!;
    const img = new Image();
    img.src = `data:image/svg+xml;base64,${btoa(new XMLSerializer().serializeToString(svg))}`;
    await img.decode();
    const size = 400;
    const canvas = document.createElement('canvas');
    canvas.width = canvas.height = size;
    const g = canvas.getContext('2d')!;
    g.drawImage(img, 0, 0, size, size);
    let bytes = '';
    for (const b of g.getImageData(0, 0, size, size).data) bytes += String.fromCharCode(b);
    return { n: size, b64: btoa(bytes) };
  }, selector);
  return jsQR(new Uint8ClampedArray(Buffer.from(b64, 'base64')), n, n)?.data ?? null;
}

const sideways = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
const focusedId = (page: Page) => page.evaluate(() => document.activeElement?.id);
/** A domain without DNSSEC, as `presence.dnssec` shows it (API guide "DNSSEC (extension)"). */
const UNSIGNED = { enabled: false, state: 'unsigned', ds_records: [], dnskeys: [] };

requirable(chromiumMissing)('the customer panel: security, presence flags, domain availability', () => {
  describe.each(ENGINES)('%s', { timeout: BROWSER_TEST_MS }, (engine) => {
    let rdap: RdapServer;
    beforeAll(async () => {
      rdap = await startRdapServer();
    });
    afterAll(() => rdap?.close());
    // .test names are looked up at the local RDAP server: taken.* registered, anything else free.
    const { s, t, x, open, loggedIn, viaNav, apiAs } = usePanelSuite(engine, () => ({ RDAP_SERVERS: `test=${rdap.base}/rdap/` }));
    const login = (email: string, totp_code?: string) => call(t.app, 'POST', '/session', { body: loginBody(email, PANEL_PW, totp_code) });

    it('two-factor login: enrolled with the QR code, confirmed (recovery codes shown once), then logout and login with a code, turned off with a recovery code', async () => {
      const { page, problems } = await loggedIn(x.solo);
      await viaNav(page, 'Security', 'Security');
      // The heading comes first; the state with the session read again.
      await page.getByText('Two-factor login is off').waitFor();
      expect(await axeViolations(page)).toEqual([]);

      const enrolled = page.waitForResponse((r) => r.url() === `${s.origin}/session/totp` && r.request().method() === 'POST');
      await page.getByRole('button', { name: 'Set up two-factor login' }).click();
      const { otpauth_uri, secret } = (await (await enrolled).json()).data.attributes as { otpauth_uri: string; secret: string };
      await page.locator('#totp-qr').waitFor();
      // The QR code reads back as the API's URI, and the secret shown is the one in it.
      expect(await readQr(page, '#totp-qr')).toBe(otpauth_uri);
      expect(otpauth_uri).toMatch(/^otpauth:\/\/totp\/hostplane:admin%40solo\.example\?secret=[A-Z2-7]+&/);
      const shown = (await page.locator('#totp-secret').textContent())!;
      expect(shown).toBe(secret);
      expect(await page.getByRole('img', { name: 'QR code for your authenticator app' }).count()).toBe(1);
      expect(await axeViolations(page)).toEqual([]);

      // A wrong code: the API's error at the field, and two-factor login stays off.
      await page.getByLabel('Code from your authenticator app').fill(codeAt(shown, 10));
      await page.getByRole('button', { name: 'Turn on' }).click();
      await page.locator('#totp-code-error').waitFor();
      expect(await page.locator('#totp-code').getAttribute('aria-invalid')).toBe('true');
      await expect.poll(() => focusedId(page)).toBe('totp-code');
      expect((await login(emailOf(x.solo))).status).toBe(201);

      // The right code, computed from the secret as shown: on, and the recovery codes this once.
      await page.getByLabel('Code from your authenticator app').fill(codeAt(shown));
      await page.getByRole('button', { name: 'Turn on' }).click();
      await page.getByRole('heading', { name: 'Your recovery codes' }).waitFor();
      const codes = await page.locator('.recovery-codes code').allTextContents();
      expect(codes).toHaveLength(10);
      for (const c of codes) expect(c).toMatch(/^[a-z2-9]{5}-[a-z2-9]{5}$/);
      expect(await axeViolations(page)).toEqual([]);
      const refused = await login(emailOf(x.solo));
      expect(refused.status).toBe(401);
      expect(refused.json.errors[0].id).toBe('totp_required');
      await page.getByRole('button', { name: 'I have stored them' }).click();
      await page.reload();
      await page.getByText('Two-factor login is on').waitFor();
      expect(await page.locator('body').innerText()).not.toContain(codes[0]);

      // Log out, log in again: the password, then a code from the secret (the next step: the one
      // that confirmed is spent).
      await page.getByRole('button', { name: 'Log out' }).click();
      await page.getByRole('heading', { level: 1, name: 'Log in' }).waitFor();
      await page.getByLabel('E-mail address').fill(emailOf(x.solo));
      await page.getByLabel('Portal password').fill(PANEL_PW);
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.getByLabel('Code from your authenticator app').fill(codeAt(shown, 1));
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.getByRole('heading', { level: 1, name: 'Your packages' }).waitFor();

      // Off, with a recovery code: the password alone logs in again.
      await viaNav(page, 'Security', 'Security');
      await page.getByLabel('Current code or a recovery code').fill('aaaaa-aaaaa');
      await page.getByRole('button', { name: 'Turn off two-factor login' }).click();
      await page.locator('#totp-off-code-error').waitFor();
      expect((await login(emailOf(x.solo))).status).toBe(401);
      await page.getByLabel('Current code or a recovery code').fill(codes[3]);
      await page.getByRole('button', { name: 'Turn off two-factor login' }).click();
      await page.getByRole('status').filter({ hasText: 'Two-factor login is off.' }).waitFor();
      expect((await login(emailOf(x.solo))).status).toBe(201);
      expect(await axeViolations(page)).toEqual([]);
      expect(problems).toEqual([]);
    });

    it('switches the presence flags on the domains page, as the customer and as its reseller; the API shows each change', async () => {
      const presence = async (who: typeof x.end1) => (await apiAs(who, `/domains/${who.domain}`)).json.data.attributes.presence;
      const { page, problems } = await loggedIn(x.end1);
      await viaNav(page, 'Domains', 'Domains');
      // Exact names below: "Lock DNS updates" is part of "Unlock DNS updates".
      const row = page.locator(`tr[data-domain="${x.end1.domain}"]`);
      await row.getByRole('button', { name: `Lock DNS updates: ${x.end1.domain}`, exact: true }).click();
      await row.getByRole('button', { name: `Unlock DNS updates: ${x.end1.domain}`, exact: true }).waitFor();
      expect(await row.locator('[data-flag="lock"]').innerText()).toMatch(/^on/);
      expect(await presence(x.end1)).toEqual({ dns_update_lock: true, dns_migration_mode: { enabled: false }, dnssec: UNSIGNED });
      await row.getByRole('button', { name: `Turn on migration mode: ${x.end1.domain}`, exact: true }).click();
      await row.getByRole('button', { name: `Turn off migration mode: ${x.end1.domain}`, exact: true }).waitFor();
      expect(await presence(x.end1)).toEqual({ dns_update_lock: true, dns_migration_mode: { enabled: true }, dnssec: UNSIGNED });
      await row.getByRole('button', { name: `Unlock DNS updates: ${x.end1.domain}`, exact: true }).click();
      await row.getByRole('button', { name: `Lock DNS updates: ${x.end1.domain}`, exact: true }).waitFor();
      expect(await presence(x.end1)).toEqual({ dns_update_lock: false, dns_migration_mode: { enabled: true }, dnssec: UNSIGNED });
      expect(await axeViolations(page)).toEqual([]);
      // The page shows what the API has after a reload too.
      await page.reload();
      await page.getByRole('button', { name: `Turn off migration mode: ${x.end1.domain}`, exact: true }).waitFor();

      const r = await loggedIn(x.reseller);
      await r.page.getByLabel('Customer').selectOption(x.end2.customerId);
      await r.page.locator(`[data-package="${x.end2.packageId}"]`).waitFor();
      await viaNav(r.page, 'Domains', 'Domains');
      await r.page.getByRole('button', { name: `Turn on migration mode: ${x.end2.domain}`, exact: true }).click();
      await r.page.getByRole('button', { name: `Turn off migration mode: ${x.end2.domain}`, exact: true }).waitFor();
      expect(await r.page.locator('tr[data-domain]').count()).toBe(1);
      expect(await presence(x.end2)).toEqual({ dns_update_lock: false, dns_migration_mode: { enabled: true }, dnssec: UNSIGNED });
      expect(await presence(x.end1)).toEqual({ dns_update_lock: false, dns_migration_mode: { enabled: true }, dnssec: UNSIGNED });
      expect([...problems, ...r.problems]).toEqual([]);
    });

    it('checks domain availability with the keyboard alone: each answer in the user’s words, as the API answers it; a bad name is refused at the field', async () => {
      const { page, problems } = await loggedIn(x.end1);
      await page.goto(`${s.origin}/panel/availability`);
      await page.getByRole('heading', { level: 1, name: 'Domain availability' }).waitFor();
      expect(await axeViolations(page)).toEqual([]);
      for (let i = 0; i < 60 && (await focusedId(page)) !== 'availability-names'; i++) await page.keyboard.press('Tab');
      await expect.poll(() => focusedId(page)).toBe('availability-names');
      const names = [x.end1.domain, 'taken.test', 'free-name.test'];
      await page.keyboard.type(`${names.join(', ')} `);
      await page.keyboard.press('Enter');
      await page.locator('tr[data-availability]').nth(2).waitFor();
      const api = (await apiAs(x.end1, `/domain-availability/${names.join(',')}`)).json.data as { id: string; attributes: { available: boolean | null; reason: string } }[];
      expect(api.map((a) => a.attributes.available)).toEqual([false, false, true]);
      const words = { true: 'Available: it can be registered.', false: 'Taken: it is registered already.' };
      for (const a of api) {
        expect(await page.locator(`tr[data-availability="${a.id}"] td`).innerText()).toBe(words[String(a.attributes.available) as 'true' | 'false']);
      }
      expect(await axeViolations(page)).toEqual([]);

      // Unknown (no RDAP server for .example): the API's reason is shown.
      await page.keyboard.press('Shift+Tab');
      await page.keyboard.press('Shift+Tab');
      await page.getByLabel('Domain names').fill('new-name.example');
      await page.keyboard.press('Enter');
      await page.getByText('Unknown: no answer could be had (No RDAP server configured for .example.).').waitFor();

      // A name that is no domain name: the API's error at the field, with its detail.
      await page.getByLabel('Domain names').fill('bad_name.example');
      await page.keyboard.press('Enter');
      const error = page.locator('#availability-names-error');
      await error.waitFor();
      expect(await error.innerText()).toContain('This value is not accepted.');
      expect(await error.innerText()).toContain('"bad_name.example" is not a domain name');
      expect(await page.locator('tr[data-availability]').count()).toBe(0);
      expect(await axeViolations(page)).toEqual([]);
      expect(problems).toEqual([]);
    });

    it('a reseller acting for an end customer checks domain availability: the answers the API gives it, the switch kept', async () => {
      const r = await loggedIn(x.reseller);
      await r.page.getByLabel('Customer').selectOption(x.end2.customerId);
      await r.page.locator(`[data-package="${x.end2.packageId}"]`).waitFor();
      await viaNav(r.page, 'Domain check', 'Domain availability');
      const names = [x.end2.domain, 'free-name.test'];
      await r.page.getByLabel('Domain names').fill(names.join(', '));
      await r.page.getByRole('button', { name: 'Check' }).click();
      await r.page.locator('tr[data-availability]').nth(1).waitFor();
      const api = (await apiAs(x.reseller, `/domain-availability/${names.join(',')}`)).json.data as { id: string; attributes: { available: boolean | null } }[];
      expect(api.map((a) => a.attributes.available)).toEqual([false, true]);
      expect(await r.page.locator(`tr[data-availability="${api[0].id}"] td`).innerText()).toBe('Taken: it is registered already.');
      expect(await r.page.locator(`tr[data-availability="${api[1].id}"] td`).innerText()).toBe('Available: it can be registered.');
      expect(await r.page.getByLabel('Customer').inputValue()).toBe(x.end2.customerId);
      expect(r.problems).toEqual([]);
    });

    it('at phone width (375 px) the security page with its QR code scrolls not sideways, and axe finds nothing serious', async () => {
      const { page, problems } = await loggedIn(x.end2, { viewport: { width: 375, height: 740 } });
      await page.goto(`${s.origin}/panel/security`);
      await page.getByRole('button', { name: 'Set up two-factor login' }).click();
      await page.locator('#totp-qr').waitFor();
      expect(await sideways(page)).toBe(0);
      expect(await readQr(page, '#totp-qr')).toMatch(/^otpauth:\/\/totp\/hostplane:admin%40end2\.example\?secret=/);
      expect(await axeViolations(page)).toEqual([]);
      await page.goto(`${s.origin}/panel/domains`);
      await page.locator('tr[data-domain]').first().waitFor();
      expect(await sideways(page)).toBe(0);
      expect(await axeViolations(page)).toEqual([]);
      expect(problems).toEqual([]);
    });

    it('speaks German on the new pages', async () => {
      const { page, problems } = await open({ locale: 'de-DE' });
      await page.goto(`${s.origin}/panel/login`);
      await page.getByLabel('E-Mail-Adresse').fill(emailOf(x.end1));
      await page.getByLabel('Kundenportal-Passwort').fill(PANEL_PW);
      await page.getByRole('button', { name: 'Anmelden' }).click();
      await page.getByRole('heading', { level: 1, name: 'Ihre Pakete' }).waitFor();
      await viaNav(page, 'Sicherheit', 'Sicherheit');
      await page.getByRole('button', { name: 'Anmeldung in zwei Schritten einrichten' }).waitFor();
      await viaNav(page, 'Domain-Prüfung', 'Domain-Verfügbarkeit');
      await page.getByLabel('Domainnamen').fill('taken.test');
      await page.getByRole('button', { name: 'Prüfen' }).click();
      await page.getByText('Vergeben: Sie ist bereits registriert.').waitFor();
      expect(await axeViolations(page)).toEqual([]);
      expect(problems).toEqual([]);
    });
  });
});
