// Fixtures of the webhook tests (API guide "Webhooks"; docs/decisions/0027-webhooks.md): a real
// receiver on loopback (node:http, port 0) that records what arrives and answers as a test says, an
// app with the worker, the DNS server (DNS record jobs finish once it answers) and a webhook sender
// whose clock a test moves forward, and the Standard Webhooks check a receiver makes.
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll } from 'vitest';
import { call, createTestApp, type EngineName, type TestApp, type TestStore } from './app.js';
import { seedTenants, type Tenants } from './tenants.js';
import { filledLater } from './suite.js';
import { WebhookDispatcher } from '../../src/resources/webhooks/webhooks.dispatcher.js';
import { waitFor } from './wait.js';

/** One request as the receiver got it. */
export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  json: any;
  /** What the receiver answered. */
  status: number;
}

/** How the receiver answers a request: a status, after a delay; what a handler may do first (read the API). */
export interface Answer {
  status: number;
  delayMs?: number;
}

export type Responder = (r: Omit<Received, 'status'>) => Answer | Promise<Answer>;

/** A receiver on 127.0.0.1: `const rx = await receiver(); rx.url('/a')`; answers 204 unless `rx.respond(…)` says otherwise. */
export async function receiver() {
  const got: Received[] = [];
  let respond: Responder = () => ({ status: 204 });
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const r = { path: req.url ?? '', headers: req.headers, body, json: JSON.parse(body || 'null') };
      const a = await respond(r);
      if (a.delayMs) await new Promise((resolve) => setTimeout(resolve, a.delayMs));
      got.push({ ...r, status: a.status });
      if (!res.destroyed) res.writeHead(a.status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    got,
    port,
    url: (path = '/hook') => `http://127.0.0.1:${port}${path}`,
    /** How it answers from now on. */
    respond: (f: Responder) => void (respond = f),
    /** What arrived at `path`. */
    at: (path: string) => got.filter((r) => r.path === path),
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

export type Receiver = Awaited<ReturnType<typeof receiver>>;

/** A clock the sender reads: real time plus what a test added (`clock.advance(24 * HOUR)`). */
export function testClock() {
  let offset = 0;
  return { now: () => new Date(Date.now() + offset), advance: (ms: number) => void (offset += ms) };
}

/** A Standard Webhooks receiver's check: the signature header holds `v1,` + HMAC-SHA256 of `id.timestamp.body` with the secret's bytes. */
export function verifies(secret: string, r: { headers: http.IncomingHttpHeaders; body: string }): boolean {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = crypto.createHmac('sha256', key).update(`${r.headers['webhook-id']}.${r.headers['webhook-timestamp']}.${r.body}`).digest('base64');
  return String(r.headers['webhook-signature']).split(' ').includes(`v1,${expected}`);
}

/** A sender on the app's store (or another store, as a second instance) with the app's settings (or others), polling every 20 ms and purging every 100 ms, with `clock`. */
export function startSender(t: TestApp, clock = testClock(), o: { store?: TestStore['store']; concurrency?: number; config?: TestApp['config'] } = {}) {
  const sender = new WebhookDispatcher({ store: o.store ?? t.store, config: o.config ?? t.config, log: t.app.log, now: clock.now, pollMs: 20, purgeEveryMs: 100, concurrency: o.concurrency });
  sender.start();
  return sender;
}

/**
 * An app with the standard tenants, the worker and the DNS server, its webhooks allowed to reach
 * loopback, for the tests of the enclosing describe; `s.sender` runs with `s.clock`, and
 * `s.rx` is a receiver. Stopped after the suite.
 */
export function useWebhooksSuite(engine: EngineName, env: Record<string, string> = {}) {
  const s = {
    t: filledLater<TestApp>(),
    x: filledLater<Tenants>(),
    rx: filledLater<Receiver>(),
    clock: testClock(),
    sender: null as WebhookDispatcher | null,
  };
  beforeAll(async () => {
    Object.assign(s.t, await createTestApp(engine, { WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8', JOB_POLL_MS: '20', ...env }, { worker: true, dns: true }));
    Object.assign(s.x, await seedTenants(s.t.admin));
    Object.assign(s.rx, await receiver());
    s.sender = startSender(s.t, s.clock);
  });
  afterAll(async () => {
    await s.sender?.stop();
    await s.rx.close?.();
    await s.t.close?.();
  });
  return s;
}

/** POST /webhooks as `token`: `await createWebhook(t, token, { url, events: ['*'] })`. */
export const createWebhook = (t: Pick<TestApp, 'app'>, token: string, attributes: Record<string, unknown>) =>
  call(t.app, 'POST', '/webhooks', { token, body: { data: { type: 'webhook', attributes } } });

/** A TXT record in `domain` through the API; returns the 202. */
export const postTxt = (t: Pick<TestApp, 'app'>, token: string, domain: string, name: string, data = 'v') =>
  call(t.app, 'POST', '/dns-records', { token, body: { data: { type: 'dns-record', attributes: { record_type: 'TXT', name, domain, data, ttl: 300 } } } });

/** Waits until `rx` has `n` requests at `path` (answered), and returns them. */
export const arrived = (rx: Receiver, path: string, n: number, ms = 15_000) => waitFor(`${n} deliveries at ${path}`, async () => (rx.at(path).length >= n ? rx.at(path) : null), ms);
