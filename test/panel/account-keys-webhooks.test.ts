// The customer panel's SSH keys and webhooks pages in Chromium on both engines (API guide "SSH
// keys", "Webhooks", "The customer panel"): a key added (its fingerprint shown, its job done once
// the key file holds it) and removed, by a customer and by a reseller for its end customer; a
// webhook created (its secret shown once, and it signs what arrives), changed, paused, its
// deliveries with the failed-only filter, deleted; another customer's webhook URL says not found;
// the API's errors at their fields; axe-core on each page. Each change is checked through the API.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES } from '../helpers/app.js';
import { axeViolations, BROWSER_TEST_MS, chromiumMissing } from '../helpers/panel-browser.js';
import { usePanelSuite } from '../helpers/panel-suite.js';
import { requirable } from '../helpers/required.js';
import { ED25519, sshKeygenView } from '../helpers/ssh-keys.js';
import { waitFor } from '../helpers/wait.js';
import { postTxt, receiver, startSender, verifies, type Receiver } from '../helpers/webhooks.js';
import type { WebhookDispatcher } from '../../src/resources/webhooks/webhooks.dispatcher.js';

requirable(chromiumMissing)('the customer panel: SSH keys and webhooks', () => {
  describe.each(ENGINES)('%s', { timeout: BROWSER_TEST_MS }, (engine) => {
    const { s, t, x, loggedIn, viaNav, apiAs, keyFile } = usePanelSuite(engine);
    let rx: Receiver;
    let sender: WebhookDispatcher;
    beforeAll(async () => {
      rx = await receiver();
      sender = startSender(t);
    });
    afterAll(async () => {
      await sender?.stop();
      await rx?.close();
    });

    it('SSH keys: a refused key at its field, then a key added (fingerprint shown, live in the key file) and removed, each job done in place; a reseller adds one for its end customer', async () => {
      const keysOf = async (who: typeof x.end1) => (await apiAs(who, `/ssh-keys?filter[package_id]=${who.packageId}`)).json.data as { id: string; attributes: Record<string, unknown> }[];
      const { page, problems } = await loggedIn(x.end1);
      await viaNav(page, 'SSH keys', 'SSH keys');
      await page.getByText('There are no SSH keys yet.').waitFor();
      expect(await axeViolations(page)).toEqual([]);

      await page.getByLabel('Public key').fill('ssh-dss AAAAB3NzaC1kc3MAAACBAP me@old');
      await page.getByRole('button', { name: 'Add key' }).click();
      await page.locator('#key-public_key-error').waitFor();
      expect(await page.locator('#key-public_key').getAttribute('aria-invalid')).toBe('true');
      await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('key-public_key');
      expect(await axeViolations(page)).toEqual([]);
      expect(await keysOf(x.end1)).toEqual([]);

      const key = ED25519[0];
      const { fingerprint } = sshKeygenView(key.line);
      await page.getByLabel('Public key').fill(key.line);
      await page.getByLabel('Description').fill('laptop');
      await page.getByRole('button', { name: 'Add key' }).click();
      await page.getByText(`Adding key ${fingerprint}: done`).waitFor({ timeout: 20_000 });
      const [added] = await keysOf(x.end1);
      expect(added.attributes).toMatchObject({ package_id: x.end1.packageId, fingerprint, algorithm: 'ssh-ed25519', description: 'laptop' });
      expect(await keyFile('u_end1')).toEqual([expect.stringContaining(key.line.split(' ')[1])]);
      const row = page.locator(`tr[data-key="${added.id}"]`);
      expect(await row.innerText()).toContain(fingerprint);
      expect(await row.innerText()).toContain('end1 package');

      await row.getByRole('button', { name: `Remove: ${fingerprint}` }).click();
      await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe(`key-delete-${added.id}-yes`);
      await page.keyboard.press('Enter');
      await page.getByText(`Deleting key ${fingerprint}: done`).waitFor({ timeout: 20_000 });
      expect(await keysOf(x.end1)).toEqual([]);
      expect(await keyFile('u_end1')).toEqual([]);
      await row.waitFor({ state: 'detached' });
      expect(await axeViolations(page)).toEqual([]);

      const r = await loggedIn(x.reseller);
      await r.page.getByLabel('Customer').selectOption(x.end2.customerId);
      await r.page.locator(`[data-package="${x.end2.packageId}"]`).waitFor();
      await viaNav(r.page, 'SSH keys', 'SSH keys');
      await r.page.getByLabel('Public key').fill(ED25519[1].line);
      await r.page.getByRole('button', { name: 'Add key' }).click();
      const fp2 = sshKeygenView(ED25519[1].line).fingerprint;
      await r.page.getByText(`Adding key ${fp2}: done`).waitFor({ timeout: 20_000 });
      expect((await keysOf(x.end2)).map((k) => k.attributes.fingerprint)).toEqual([fp2]);
      expect(await keyFile('u_end2')).toHaveLength(1);
      expect([...problems, ...r.problems]).toEqual([]);
    });

    it('webhooks: refused URL and event at their fields; created with its secret shown once, which signs what arrives; deliveries with the failed-only filter; changed, paused, deleted', async () => {
      const hooksOf = async (who: typeof x.end1) => (await apiAs(who, '/webhooks')).json.data as { id: string; attributes: Record<string, unknown> }[];
      const { page, problems } = await loggedIn(x.end1);
      await viaNav(page, 'Webhooks', 'Webhooks');
      await page.getByText('There are no webhooks yet.').waitFor();
      expect(await axeViolations(page)).toEqual([]);
      const form = page.locator('form.webhook-form').last();

      await form.getByLabel('URL').fill('ftp://hooks.example.net/x');
      await form.getByRole('button', { name: 'Add webhook' }).click();
      await page.locator('#webhook-new-url-error').waitFor();
      await form.getByLabel('URL').fill(rx.url('/end1'));
      await form.getByLabel('Events').fill('queue-job.done, no.such-event');
      await form.getByRole('button', { name: 'Add webhook' }).click();
      await page.locator('#webhook-new-events-error').waitFor();
      expect(await page.locator('#webhook-new-url-error').count()).toBe(0);
      expect(await page.locator('#webhook-new-events-error').innerText()).toContain('no.such-event');
      expect(await axeViolations(page)).toEqual([]);
      expect(await hooksOf(x.end1)).toEqual([]);

      await form.getByLabel('Events').fill('queue-job.done');
      await form.getByLabel('Description').fill('deploy bot');
      await form.getByRole('button', { name: 'Add webhook' }).click();
      const secret = (await page.locator('#webhook-secret').textContent())!;
      expect(secret).toMatch(/^whsec_/);
      const [hook] = await hooksOf(x.end1);
      expect(hook.attributes).toMatchObject({ customer_id: x.end1.customerId, url: rx.url('/end1'), events: ['queue-job.done'], description: 'deploy bot', active: true });
      expect(hook.attributes).not.toHaveProperty('secret');
      await page.locator(`tr[data-webhook="${hook.id}"]`).waitFor();

      // The first event is refused by the receiver, the second taken: one failed and one delivered attempt.
      let answered = 0;
      rx.respond(() => ({ status: answered++ === 0 ? 500 : 204 }));
      for (const name of ['hook-one', 'hook-two']) expect((await postTxt(t, x.end1.token, x.end1.domain, name)).status).toBe(202);
      const got = await waitFor('two attempts', async () => (rx.at('/end1').length >= 2 ? rx.at('/end1') : null), 20_000);
      expect(got.every((r) => verifies(secret, r))).toBe(true);

      await page.getByRole('link', { name: `Deliveries of ${rx.url('/end1')}` }).click();
      await page.getByRole('heading', { level: 1, name: `Deliveries of ${rx.url('/end1')}` }).waitFor();
      await page.locator('tr[data-delivery]').nth(1).waitFor();
      expect(await axeViolations(page)).toEqual([]);
      const all = await page.locator('tr[data-delivery]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-status')));
      expect(all).toContain('failed');
      expect(all).toContain('delivered');
      await page.getByLabel('Failed ones only').check();
      await page.waitForFunction(() => !document.querySelector('tr[data-delivery][data-status="delivered"]'));
      const failed = (await apiAs(x.end1, `/webhooks/${hook.id}/deliveries?filter[status]=failed`)).json.data as { id: string }[];
      expect(await page.locator('tr[data-delivery]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-delivery')))).toEqual(failed.map((d) => d.id));
      expect(await page.locator('tr[data-delivery]').first().innerText()).toContain('failed');

      await page.getByRole('link', { name: 'All webhooks' }).click();
      const row = page.locator(`tr[data-webhook="${hook.id}"]`);
      await row.getByRole('button', { name: `Change: ${rx.url('/end1')}` }).click();
      await page.locator(`#webhook-${hook.id}-events`).fill('*');
      await page.locator(`#webhook-${hook.id}-description`).fill('every event');
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
      expect((await hooksOf(x.end1))[0].attributes).toMatchObject({ events: ['*'], description: 'every event', active: true });
      // The secret was shown once: a reload shows it no more.
      await page.reload();
      await row.waitFor();
      expect(await page.getByText(secret).count()).toBe(0);
      await row.getByRole('button', { name: `Pause: ${rx.url('/end1')}` }).click();
      await row.getByRole('button', { name: `Resume: ${rx.url('/end1')}` }).waitFor();
      expect((await hooksOf(x.end1))[0].attributes.active).toBe(false);
      await row.getByRole('button', { name: `Delete: ${rx.url('/end1')}` }).click();
      await page.getByRole('button', { name: 'Yes, delete' }).click();
      await row.waitFor({ state: 'detached' });
      expect(await hooksOf(x.end1)).toEqual([]);
      expect(await axeViolations(page)).toEqual([]);
      expect(problems).toEqual([]);
    });

    it("a reseller makes a webhook for its end customer; another customer's webhook is never listed and its URL says not found", async () => {
      const r = await loggedIn(x.reseller);
      await r.page.getByLabel('Customer').selectOption(x.end2.customerId);
      await r.page.locator(`[data-package="${x.end2.packageId}"]`).waitFor();
      await viaNav(r.page, 'Webhooks', 'Webhooks');
      const form = r.page.locator('form.webhook-form').last();
      await form.getByLabel('URL').fill(rx.url('/end2'));
      await form.getByRole('button', { name: 'Add webhook' }).click();
      await r.page.locator('#webhook-secret').waitFor();
      const hooks = (await apiAs(x.end2, '/webhooks')).json.data as { id: string; attributes: Record<string, unknown> }[];
      expect(hooks.map((h) => h.attributes)).toEqual([expect.objectContaining({ customer_id: x.end2.customerId, url: rx.url('/end2'), events: ['queue-job.done', 'queue-job.failed'] })]);
      // Its deliveries; switching to another customer leaves them for that customer's webhooks, and the one-time secret is gone.
      await r.page.getByRole('link', { name: `Deliveries of ${rx.url('/end2')}` }).click();
      await r.page.getByText('No deliveries in the last 7 days.').waitFor();
      expect(await axeViolations(r.page)).toEqual([]);
      await r.page.getByLabel('Customer').selectOption(x.end1.customerId);
      await r.page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor();
      await r.page.getByText('There are no webhooks yet.').waitFor();
      expect(await r.page.locator('#webhook-secret').count()).toBe(0);

      const { page, problems } = await loggedIn(x.end1);
      await viaNav(page, 'Webhooks', 'Webhooks');
      await page.getByText('There are no webhooks yet.').waitFor();
      for (const id of [hooks[0].id, '999999', 'x']) {
        await page.goto(`${s.origin}/panel/webhooks/${id}/deliveries`);
        await page.getByRole('heading', { level: 1, name: 'Not found' }).waitFor();
        expect(await page.getByText(rx.url('/end2')).count()).toBe(0);
      }
      expect(await axeViolations(page)).toEqual([]);
      expect([...problems, ...r.problems]).toEqual([]);
    });
  });
});
