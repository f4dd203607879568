// Fixtures of the webhook tests (API guide "Webhooks"; docs/decisions/0027-webhooks.md): a real
// receiver on loopback (node:http, port 0) that records what arrives and answers as a test says, an
// app with the worker, the DNS server (DNS record jobs finish once it answers) and a webhook sender
// whose clock a test moves forward, the Standard Webhooks check a receiver makes, and a DNS server
// whose answers a test scripts (receivers' names that change their address between lookups).
import crypto from 'node:crypto';
import dgram from 'node:dgram';
import dns from 'node:dns';
import http from 'node:http';
import dnsPacket, { type DecodedPacket } from 'dns-packet';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll } from 'vitest';
import { call, createTestApp, type EngineName, type TestApp, type TestStore } from './app.js';
import { seedTenants, type Tenants } from './tenants.js';
import { filledLater } from './suite.js';
import { WebhookDispatcher } from '../../src/resources/webhooks/webhooks.dispatcher.js';
import type { ResolveName } from '../../src/resources/webhooks/webhooks.sender.js';
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

/** A receiver on 127.0.0.1 (or `host`, `port`): `const rx = await receiver(); rx.url('/a')`; answers 204 unless `rx.respond(…)` says otherwise. */
export async function receiver(o: { host?: string; port?: number } = {}) {
  const host = o.host ?? '127.0.0.1';
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
  await new Promise<void>((resolve) => server.listen(o.port ?? 0, host, resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    got,
    port,
    url: (path = '/hook') => `http://${host}:${port}${path}`,
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

/** A sender on the app's store (or another store, as a second instance) with the app's settings (or others), polling every 20 ms and purging every 100 ms, with `clock` (and a resolver of names). */
export function startSender(t: TestApp, clock = testClock(), o: { store?: TestStore['store']; concurrency?: number; config?: TestApp['config']; resolve?: ResolveName } = {}) {
  const sender = new WebhookDispatcher({
    store: o.store ?? t.store, config: o.config ?? t.config, log: t.app.log, now: clock.now, pollMs: 20, purgeEveryMs: 100, concurrency: o.concurrency, resolve: o.resolve,
  });
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

/**
 * A DNS server on 127.0.0.1:`port` (UDP) whose answers a test scripts: an A question, for any name,
 * gets the address `answerA(n)` (n: the A questions before it) with TTL 0, so no resolver keeps it;
 * other questions get no records. `resolve` asks it, and only it, as a stub resolver does (c-ares).
 * `const ns = await scriptedDns(23053); ns.answerA((n) => (n % 2 ? '127.0.0.1' : '127.0.0.2'))`.
 */
export async function scriptedDns(port: number) {
  let answerA: (n: number) => string = () => '127.0.0.2';
  let aQuestions = 0;
  const sock = dgram.createSocket('udp4');
  sock.on('message', (msg, from) => {
    let q: DecodedPacket;
    try {
      q = dnsPacket.decode(msg);
    } catch {
      return;
    }
    const question = q.questions?.[0];
    if (!question) return;
    const answers = question.type === 'A' ? [{ name: question.name, type: 'A' as const, class: 'IN' as const, ttl: 0, data: answerA(aQuestions++) }] : [];
    sock.send(dnsPacket.encode({ type: 'response', id: q.id, flags: dnsPacket.AUTHORITATIVE_ANSWER, questions: q.questions, answers }), from.port, from.address);
  });
  await new Promise<void>((resolve, reject) => {
    sock.once('error', reject);
    sock.bind(port, '127.0.0.1', () => resolve());
  });
  const resolver = new dns.promises.Resolver({ timeout: 2000, tries: 1 });
  resolver.setServers([`127.0.0.1:${port}`]);
  const none = (err: NodeJS.ErrnoException): string[] => {
    if (err.code === 'ENODATA') return [];
    throw err;
  };
  const resolve: ResolveName = async (host) => [
    ...(await resolver.resolve4(host).catch(none)).map((address) => ({ address, family: 4 })),
    ...(await resolver.resolve6(host).catch(none)).map((address) => ({ address, family: 6 })),
  ];
  return {
    resolve,
    /** From now on, the n-th A question (counted from 0 again) is answered `f(n)`. */
    answerA: (f: (n: number) => string) => void ((answerA = f), (aQuestions = 0)),
    /** A questions since the last `answerA`. */
    aQuestions: () => aQuestions,
    close: () => new Promise<void>((r) => sock.close(() => r())),
  };
}
