// Limits shared through Redis (API guide "Rate limits and blocking", "Errors",
// docs/decisions/0002-rate-limiting.md): two instances admit exactly N and share the error block;
// with Redis down or hung each falls back to its own in-memory limits, logged and counted. Needs
// TEST_REDIS_URL (redis://127.0.0.1:6379).
import crypto from 'node:crypto';
import net from 'node:net';
import { PassThrough } from 'node:stream';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RedisLimiter } from '../../src/limits/redis-limiter.js';
import { BASE, ENGINES, call, createTestApp, freshStore, testConfig, type TestApp, type TestStore } from '../helpers/app.js';
import { requirable } from '../helpers/required.js';
import { seedTenants, type Tenants } from '../helpers/tenants.js';
import { sleep } from '../helpers/wait.js';

const REDIS_URL = process.env.TEST_REDIS_URL;
const suite = requirable(REDIS_URL ? null : 'TEST_REDIS_URL is not set');
/** One key prefix per test run, so parallel runs and old keys never meet. */
const PREFIX = `hostplane-test:${crypto.randomUUID()}:`;

/** A TCP server that answers Redis's ready check and then never answers again (a hung Redis). */
async function hungRedis() {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => {});
    s.on('data', (d) => {
      // Small commands arrive whole; answer the handshake (CLIENT SETINFO, INFO), swallow scripts.
      for (const command of String(d).split(/\*\d+\r\n/).filter(Boolean)) {
        if (/^\$\d+\r\n(evalsha|eval)\r\n/i.test(command)) continue;
        if (/^\$\d+\r\ninfo\r\n/i.test(command)) {
          const body = '# Server\r\nloading:0\r\n';
          s.write(`$${Buffer.byteLength(body)}\r\n${body}\r\n`);
        } else {
          s.write('+OK\r\n');
        }
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `redis://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

/** A TCP relay in front of the real Redis that can be cut and restored (an outage and recovery). */
async function relay(target: URL) {
  const sockets = new Set<net.Socket>();
  let server: net.Server | null = null;
  let port = 0;
  const start = () =>
    new Promise<void>((resolve) => {
      server = net.createServer((client) => {
        const upstream = net.connect(Number(target.port || 6379), target.hostname);
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
          s.on('error', () => {});
        }
        client.pipe(upstream).pipe(client);
      });
      server.listen(port, '127.0.0.1', () => {
        port = (server!.address() as net.AddressInfo).port;
        resolve();
      });
    });
  await start();
  return {
    get url() {
      return `redis://127.0.0.1:${port}`;
    },
    async cut() {
      const s = server!;
      server = null;
      for (const sock of sockets) sock.destroy();
      await new Promise((r) => s.close(r));
    },
    restore: start,
    async close() {
      if (server) await this.cut();
    },
  };
}

const metricValue = async (t: TestApp, name: string) => {
  const text = (await call(t.app, 'GET', '/metrics')).body;
  const m = new RegExp(`^${name} (\\d+)$`, 'm').exec(text);
  return m ? Number(m[1]) : null;
};

suite('rate limits shared through Redis', () => describe.each(ENGINES)('on %s', (engine) => {
  let ts: TestStore;
  let x: Tenants;
  const apps: TestApp[] = [];
  let admin: Redis;

  /** An app on the shared database whose limiter is a RedisLimiter on `url` (default: the test Redis). */
  const app = async (env: Record<string, string>, o: { url?: string; prefix?: string; logStream?: NodeJS.WritableStream } = {}) => {
    const limiter = new RedisLimiter(testConfig(env), { url: o.url ?? REDIS_URL!, prefix: o.prefix ?? PREFIX + crypto.randomUUID() + ':' });
    const t = await createTestApp(engine, { ...env, REDIS_URL: o.url ?? REDIS_URL! }, { store: ts, limiter, logStream: o.logStream });
    apps.push(t);
    return t;
  };
  /** Waits until a new RedisLimiter has connected, so the first decisions are Redis's. */
  const connected = async (t: TestApp) => {
    const redis = (t.limiter as unknown as { redis: Redis }).redis;
    for (let i = 0; i < 50 && redis.status !== 'ready'; i++) await sleep(20);
    expect(redis.status).toBe('ready');
  };

  beforeAll(async () => {
    ts = await freshStore(engine);
    const seed = await createTestApp(engine, {}, { store: ts });
    x = await seedTenants(seed.admin);
    await seed.close();
    admin = new Redis(REDIS_URL!);
  });
  afterEach(async () => {
    for (const a of apps.splice(0)) await a.close();
  });
  afterAll(async () => {
    // Leave nothing behind in the shared Redis.
    const keys = await admin.keys(`${PREFIX}*`);
    if (keys.length) await admin.del(...keys);
    admin.disconnect();
    await ts?.drop();
  });

  const LIMIT_10 = { RATE_LIMIT_MAX: '10', RATE_LIMIT_WINDOW_S: '10' };

  it('two instances sharing one Redis: 50 parallel requests split across both → exactly 10 accepted', async () => {
    const prefix = PREFIX + 'pair:';
    const a = await app(LIMIT_10, { prefix });
    const b = await app(LIMIT_10, { prefix });
    await connected(a);
    await connected(b);
    const rs = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        call((i % 2 ? a : b).app, 'GET', '/customers', { token: x.reseller.token, remoteAddress: '198.51.100.60' }),
      ),
    );
    const ok = rs.filter((r) => r.status === 200);
    const limited = rs.filter((r) => r.status === 429);
    expect(ok.length).toBe(10);
    expect(limited.length).toBe(40);
    expect(ok.map((r) => Number(r.headers['ratelimit-remaining'])).sort((p, q) => p - q)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    for (const r of limited) {
      expect(r.headers['retry-after']).toMatch(/^(9|10)$/);
      expect(r.headers['ratelimit-limit']).toBe('10');
      expect(r.headers['ratelimit-remaining']).toBe('0');
      expect(r.json).toEqual({
        errors: [{ id: 'rate_limited', status: '429', title: 'Too many requests', detail: 'At most 10 requests per window are allowed.' }],
        links: { self: `${BASE}/customers` },
      });
    }
    // Another client still has its whole budget on either instance.
    const other = await call(a.app, 'GET', '/customers', { token: x.reseller.token, remoteAddress: '198.51.100.61' });
    expect(other.status).toBe(200);
    expect(other.headers['ratelimit-remaining']).toBe('9');
    // IPv6 clients of one /64 share the Redis budget too.
    expect((await call(a.app, 'GET', '/customers', { token: x.reseller.token, remoteAddress: '2001:db8:60::1' })).headers['ratelimit-remaining']).toBe('9');
    expect((await call(b.app, 'GET', '/customers', { token: x.reseller.token, remoteAddress: '2001:db8:60::2' })).headers['ratelimit-remaining']).toBe('8');
  });

  it('the shared window slides (1 s window, real time)', async () => {
    const prefix = PREFIX + 'slide:';
    const a = await app({ RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_S: '1' }, { prefix });
    const b = await app({ RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_S: '1' }, { prefix });
    await connected(a);
    await connected(b);
    const get = (t: TestApp) => call(t.app, 'GET', '/customers', { token: x.reseller.token, remoteAddress: '198.51.100.62' });
    const first = await Promise.all([get(a), get(b), get(a), get(b)]);
    const answered = Date.now();
    expect(first.map((r) => r.status).sort()).toEqual([200, 200, 200, 429]);
    await sleep(Math.max(0, answered + 1100 - Date.now()));
    const again = await Promise.all([get(b), get(a), get(b), get(a)]);
    expect(again.map((r) => r.status).sort()).toEqual([200, 200, 200, 429]);
  });

  it('the error block is shared: errors on one instance block the client on the other', async () => {
    const prefix = PREFIX + 'block:';
    const env = { RATE_LIMIT_MAX: '1000', ERROR_BLOCK_MAX: '3', ERROR_BLOCK_WINDOW_S: '60', ERROR_BLOCK_DURATION_S: '30' };
    const a = await app(env, { prefix });
    const b = await app(env, { prefix });
    await connected(a);
    await connected(b);
    const ip = '198.51.100.63';
    for (let i = 0; i < 3; i++) expect((await call(a.app, 'GET', '/customers', { token: 'hp_bad', remoteAddress: ip })).status).toBe(401);
    // Errors are recorded after the response went out; give the last one a moment to land.
    let r = await call(b.app, 'GET', '/customers', { token: x.reseller.token, remoteAddress: ip });
    for (let i = 0; i < 20 && r.status === 200; i++) {
      await sleep(25);
      r = await call(b.app, 'GET', '/customers', { token: x.reseller.token, remoteAddress: ip });
    }
    expect(r.status).toBe(429);
    expect(r.headers['retry-after']).toMatch(/^(29|30)$/);
    expect(r.headers['ratelimit-remaining']).toBe('0');
    expect(r.json).toEqual({
      errors: [{ id: 'too_many_errors', status: '429', title: 'Too many errors', detail: 'Too many failed requests; API access is blocked for a while.' }],
      links: { self: `${BASE}/customers` },
    });
    expect((await call(a.app, 'GET', '/customers', { token: x.reseller.token, remoteAddress: ip })).status).toBe(429);
    expect((await call(a.app, 'GET', '/customers', { token: x.reseller.token, remoteAddress: '198.51.100.64' })).status).toBe(200);
  });

  it('Redis down: requests are served and limited per instance in memory, never a 500; the fallback is counted and logged once', async () => {
    const lines: string[] = [];
    const logStream = new PassThrough();
    logStream.on('data', (c) => lines.push(...String(c).split('\n').filter(Boolean)));
    const down = 'redis://127.0.0.1:1';
    const a = await app({ ...LIMIT_10, LOG_LEVEL: 'warn' }, { url: down, logStream });
    const b = await app(LIMIT_10, { url: down });
    const started = Date.now();
    const rs = await Promise.all(
      Array.from({ length: 50 }, (_, i) => call((i % 2 ? a : b).app, 'GET', '/customers', { token: x.reseller.token, remoteAddress: '198.51.100.65' })),
    );
    expect(Date.now() - started).toBeLessThan(3000);
    expect(rs.filter((r) => r.status >= 500)).toEqual([]);
    // Each instance enforces the limit on its own: 10 each.
    expect(rs.filter((r) => r.status === 200).length).toBe(20);
    expect(rs.filter((r) => r.status === 429).length).toBe(30);
    for (const r of rs.filter((q) => q.status === 429)) expect(r.json.errors[0].id).toBe('rate_limited');
    for (const r of rs) expect(r.body).not.toMatch(/ECONNREFUSED|Stream isn't writeable|redis/i);
    // Error responses still count towards the (per-instance) error block.
    expect((await call(a.app, 'GET', '/customers', { token: 'hp_bad', remoteAddress: '198.51.100.66' })).status).toBe(401);
    expect(await metricValue(a, 'hostplane_rate_limit_fallback_total')).toBe(25 + 2);
    const warnings = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'rate-limit store unavailable; limiting per instance in memory');
    expect(warnings.length).toBe(1);
    expect(warnings[0]).toMatchObject({ level: 40, fallbacks: 1, reason: expect.any(String) });
    // And the app closes cleanly and quickly.
    const closing = Date.now();
    await a.close();
    apps.splice(apps.indexOf(a), 1);
    expect(Date.now() - closing).toBeLessThan(2000);
    // No reconnect attempts after close.
    const redis = (a.limiter as unknown as { redis: Redis }).redis;
    let reconnects = 0;
    redis.on('reconnecting', () => reconnects++);
    redis.on('connect', () => reconnects++);
    await sleep(700);
    expect(reconnects).toBe(0);
    expect(['end', 'close', 'reconnecting']).toContain(redis.status);
  });

  it('a Redis that accepts connections but never answers does not hang requests (command timeout)', async () => {
    const hung = await hungRedis();
    try {
      const t = await app({ RATE_LIMIT_MAX: '2', RATE_LIMIT_WINDOW_S: '10' }, { url: hung.url });
      await connected(t);
      const reasons: string[] = [];
      t.limiter.onFallback!((err) => reasons.push(err.message));
      const timings: number[] = [];
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) {
        const s = Date.now();
        const r = await call(t.app, 'GET', '/customers', { token: x.reseller.token, remoteAddress: '198.51.100.67' });
        timings.push(Date.now() - s);
        statuses.push(r.status);
      }
      expect(statuses).toEqual([200, 200, 429]);
      // The first decision waits for the command timeout (500 ms); after it Redis is left alone for
      // a moment, so the next requests are decided in memory without asking it.
      for (const ms of timings) expect(ms).toBeLessThan(1500);
      expect(reasons).toEqual(['Command timed out', 'Redis timed out recently; not asked for a moment', 'Redis timed out recently; not asked for a moment']);
      expect(await metricValue(t, 'hostplane_rate_limit_fallback_total')).toBeGreaterThanOrEqual(3);
    } finally {
      for (const a of apps.splice(0)) await a.close();
      await hung.close();
    }
  });

  it('after an outage the instances share Redis again', async () => {
    const r = await relay(new URL(REDIS_URL!));
    try {
      const prefix = PREFIX + 'recover:';
      const a = await app({ RATE_LIMIT_MAX: '4', RATE_LIMIT_WINDOW_S: '10' }, { url: r.url, prefix });
      const b = await app({ RATE_LIMIT_MAX: '4', RATE_LIMIT_WINDOW_S: '10' }, { url: r.url, prefix });
      await connected(a);
      await connected(b);
      await r.cut();
      // During the outage each instance limits on its own.
      const during = await Promise.all(
        Array.from({ length: 10 }, (_, i) => call((i % 2 ? a : b).app, 'GET', '/customers', { token: x.reseller.token, remoteAddress: '198.51.100.68' })),
      );
      expect(during.filter((q) => q.status === 200).length).toBe(8);
      await r.restore();
      await connected(a);
      await connected(b);
      const after = await Promise.all(
        Array.from({ length: 10 }, (_, i) => call((i % 2 ? a : b).app, 'GET', '/customers', { token: x.reseller.token, remoteAddress: '198.51.100.69' })),
      );
      expect(after.filter((q) => q.status === 200).length).toBe(4);
    } finally {
      for (const a of apps.splice(0)) await a.close();
      await r.close();
    }
  }, 20_000);
}));
