// Where deliveries may go, judged again when each is sent (API guide "Webhooks"; docs/decisions/
// 0027-webhooks.md): a name is resolved and every address it has is judged before anything connects,
// and a literal address the API once took is judged by the sending process's own settings. Here the
// API allows loopback (WEBHOOK_ALLOW_CIDRS) and the first sender does not: nothing reaches the
// receiver. Then a sender that allows loopback meets a receiver whose certificate nobody vouches for.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, call, createTestApp, testConfig, type TestApp } from '../../helpers/app.js';
import { seedTenants, type Tenants } from '../../helpers/tenants.js';
import { filledLater } from '../../helpers/suite.js';
import { jobDone } from '../../helpers/jobs.js';
import { invalidAttribute } from '../../helpers/errors.js';
import { sleep, waitFor } from '../../helpers/wait.js';
import { createWebhook, postTxt, receiver, startSender, type Receiver } from '../../helpers/webhooks.js';
import type { WebhookDispatcher } from '../../../src/resources/webhooks/webhooks.dispatcher.js';

describe.each(ENGINES)('webhook addresses at delivery on %s', { timeout: 60_000 }, (engine) => {
  const t = filledLater<TestApp>();
  const x = filledLater<Tenants>();
  const rx = filledLater<Receiver>();
  let sender: WebhookDispatcher;
  const DENY = { WEBHOOK_DENY_CIDRS: '8.8.8.0/24' };

  beforeAll(async () => {
    Object.assign(t, await createTestApp(engine, { WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8', JOB_POLL_MS: '20', ...DENY }, { worker: true, dns: true }));
    Object.assign(x, await seedTenants(t.admin));
    Object.assign(rx, await receiver());
    sender = startSender(t, undefined, { config: testConfig(DENY) });
  });
  afterAll(async () => {
    await sender?.stop();
    await rx.close?.();
    await t.close?.();
  });

  it('a name that resolves to loopback, and a loopback address, are refused when sent: the attempt says why, nothing connects', async () => {
    const token = x.end1.token;
    const byName = await createWebhook(t, token, { url: `https://localhost:${rx.port}/by-name`, events: ['queue-job.done'] });
    const byAddress = await createWebhook(t, token, { url: rx.url('/by-address'), events: ['queue-job.done'] });
    expect([byName.status, byAddress.status]).toEqual([201, 201]);
    await jobDone(t, token, await postTxt(t, token, 'end1.example', '_refused'));
    const attempt = (id: string) =>
      waitFor(`the attempt of webhook ${id}`, async () => (await call(t.app, 'GET', `/webhooks/${id}/deliveries`, { token })).json.data[0]);
    expect((await attempt(byName.json.data.id)).attributes).toMatchObject({
      status: 'failed', response_status: null, next_attempt_at: expect.any(String),
      error: expect.stringMatching(/^localhost resolves to (127\.0\.0\.1|::1), which is a loopback address: webhooks are not sent there$/),
    });
    expect((await attempt(byAddress.json.data.id)).attributes).toMatchObject({
      status: 'failed', response_status: null, error: '127.0.0.1 is a loopback address: webhooks are not sent there',
    });
    await sleep(200);
    expect(rx.got).toEqual([]);
    for (const w of [byName, byAddress]) await call(t.app, 'DELETE', `/webhooks/${w.json.data.id}`, { token });
  });

  it('TLS is verified: a receiver with a self-signed certificate gets nothing, and the attempt says why', async () => {
    await sender.stop();
    sender = startSender(t);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hostplane-webhook-tls-'));
    const [key, cert] = [path.join(dir, 'key.pem'), path.join(dir, 'cert.pem')];
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
    let reached = 0;
    const server = https.createServer({ key: fs.readFileSync(key), cert: fs.readFileSync(cert) }, (_req, res) => {
      reached++;
      res.writeHead(204).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const token = x.end2.token;
    try {
      const hook = await createWebhook(t, token, { url: `https://127.0.0.1:${(server.address() as AddressInfo).port}/tls`, events: ['queue-job.done'] });
      await jobDone(t, token, await postTxt(t, token, 'end2.example', '_tls'));
      const attempt = await waitFor('the attempt', async () => (await call(t.app, 'GET', `/webhooks/${hook.json.data.id}/deliveries`, { token })).json.data[0]);
      expect(attempt.attributes).toMatchObject({ status: 'failed', response_status: null, error: 'could not deliver: self-signed certificate' });
      expect(reached).toBe(0);
      await call(t.app, 'DELETE', `/webhooks/${hook.json.data.id}`, { token });
    } finally {
      server.closeAllConnections();
      server.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("the operator's own networks (WEBHOOK_DENY_CIDRS) are refused like the special ranges", async () => {
    const r = await createWebhook(t, x.end1.token, { url: 'https://8.8.8.8/hook', events: ['*'] });
    expect(r.json).toEqual(
      invalidAttribute('/webhooks', 'url', "8.8.8.8 is an address of the service's own networks: webhooks are never sent to loopback, private, link-local, multicast, unspecified or other special addresses, nor to the service's own."),
    );
  });
});
