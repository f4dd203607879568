// Limits under attack over HTTP (API guide "Rate limits and blocking", "Errors";
// docs/decisions/0002-rate-limiting.md): one budget across routes, 429 with Retry-After and
// RateLimit headers, the error block, exempt operational endpoints, TRUST_PROXY. The limiter alone:
// limiter.test.ts.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type FastifyReply } from 'fastify';
import { MemoryLimiter } from '../../src/limits/limiter.js';
import { BASE, ENGINES, call, createTestApp, freshStore, testConfig, type TestApp, type TestStore } from '../helpers/app.js';
import { errorBody } from '../helpers/errors.js';
import { seedTenants, type Tenants } from '../helpers/tenants.js';
import { sleep } from '../helpers/wait.js';

const rateLimited = (url: string, max: number) =>
  errorBody('rate_limited', 429, 'Too many requests', `At most ${max} requests per window are allowed.`, `${BASE}${url}`);
const tooManyErrors = (url: string) =>
  errorBody('too_many_errors', 429, 'Too many errors', 'Too many failed requests; API access is blocked for a while.', `${BASE}${url}`);

describe.each(ENGINES)('rate limits over HTTP on %s', (engine) => {
  let ts: TestStore;
  let x: Tenants;
  const apps: TestApp[] = [];
  /** An app on the shared database with these settings (and optionally a fake clock). */
  const app = async (env: Record<string, string>, now?: () => number) => {
    const limiter = now ? new MemoryLimiter(testConfig(env), now) : undefined;
    const a = await createTestApp(engine, env, { store: ts, limiter });
    apps.push(a);
    return a;
  };
  beforeAll(async () => {
    ts = await freshStore(engine);
    const seed = await createTestApp(engine, {}, { store: ts });
    x = await seedTenants(seed.admin);
    await seed.close();
  });
  afterEach(async () => {
    for (const a of apps.splice(0)) await a.close();
  });
  afterAll(() => ts?.drop());

  const LIMIT_10 = { RATE_LIMIT_MAX: '10', RATE_LIMIT_WINDOW_S: '10' };

  it('50 parallel requests from one IP → exactly 10 accepted, 40 × 429 rate_limited with Retry-After and RateLimit headers (API guide "Rate limits and blocking")', async () => {
    const t = await app(LIMIT_10);
    const rs = await Promise.all(
      Array.from({ length: 50 }, () => call(t.app, 'GET', '/customers', { token: x.reseller.token, remoteAddress: '198.51.100.10' })),
    );
    const ok = rs.filter((r) => r.status === 200);
    const limited = rs.filter((r) => r.status === 429);
    expect(ok.length).toBe(10);
    expect(limited.length).toBe(40);
    expect(ok.map((r) => Number(r.headers['ratelimit-remaining'])).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    for (const r of ok) {
      expect(r.headers['ratelimit-limit']).toBe('10');
      expect(r.headers['ratelimit-reset']).toBe('10');
      expect(r.headers['retry-after']).toBeUndefined();
      expect(r.json.meta).toEqual({ total: 3 });
    }
    for (const r of limited) {
      expect(r.headers['retry-after']).toBe('10');
      expect(r.headers['ratelimit-limit']).toBe('10');
      expect(r.headers['ratelimit-remaining']).toBe('0');
      expect(r.headers['ratelimit-reset']).toBe('10');
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.json).toEqual(rateLimited('/customers', 10));
    }
  });

  it('a 429 follows the negotiated content type', async () => {
    const t = await app({ RATE_LIMIT_MAX: '1' });
    const headers = { accept: 'application/vnd.hostplane.v1+json' };
    expect((await call(t.app, 'GET', '/customers', { token: x.reseller.token, headers, remoteAddress: '198.51.100.11' })).status).toBe(200);
    const r = await call(t.app, 'GET', '/customers', { token: x.reseller.token, headers, remoteAddress: '198.51.100.11' });
    expect(r.status).toBe(429);
    expect(r.headers['content-type']).toBe('application/vnd.api+json');
    expect(r.json).toEqual(rateLimited('/customers', 1));
  });

  it('sliding window over HTTP (fake clock): never more than 10 in any 10 s window, exact Reset and Retry-After', async () => {
    let clock = 1_000_000;
    const t = await app(LIMIT_10, () => clock);
    const get = () => call(t.app, 'GET', '/customers', { token: x.reseller.token, remoteAddress: '198.51.100.12' });
    // 10 requests spread over 9 s: all accepted.
    for (let i = 0; i < 10; i++) {
      clock = 1_000_000 + i * 1000;
      const r = await get();
      expect(r.status).toBe(200);
      expect(r.headers['ratelimit-remaining']).toBe(String(9 - i));
      expect(r.headers['ratelimit-reset']).toBe(String(10 - i));
    }
    // At 9.5 s: full, the oldest (t = 0) leaves at 10 s.
    clock = 1_009_500;
    const full = await get();
    expect(full.status).toBe(429);
    expect(full.headers['retry-after']).toBe('1');
    expect(full.headers['ratelimit-reset']).toBe('1');
    // At 10 s exactly one slot is free (a fixed window would give ten).
    clock = 1_010_000;
    expect((await get()).status).toBe(200);
    expect((await get()).status).toBe(429);
    clock = 1_010_999;
    expect((await get()).status).toBe(429);
    clock = 1_011_000;
    expect((await get()).status).toBe(200);
  });

  it('sliding window in real time (1 s window): the budget comes back after the window, not before', async () => {
    const t = await app({ RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_S: '1' });
    const get = () => call(t.app, 'GET', '/customers', { token: x.reseller.token, remoteAddress: '198.51.100.13' });
    const started = Date.now();
    const first = await Promise.all([get(), get(), get(), get()]);
    const answered = Date.now();
    expect(first.map((r) => r.status).sort()).toEqual([200, 200, 200, 429]);
    await sleep(300);
    if (Date.now() - started < 900) expect((await get()).status).toBe(429);
    // Every admission of the first burst happened before `answered`; one window later all are gone.
    await sleep(Math.max(0, answered + 1050 - Date.now()));
    const again = await Promise.all([get(), get(), get(), get()]);
    expect(again.map((r) => r.status).sort()).toEqual([200, 200, 200, 429]);
  });

  it('one budget per IP across routes, 404s and 401s included', async () => {
    const t = await app(LIMIT_10);
    const ip = '198.51.100.14';
    const rs = [];
    for (let i = 0; i < 3; i++) rs.push(await call(t.app, 'GET', '/customers', { token: x.reseller.token, remoteAddress: ip }));
    for (let i = 0; i < 3; i++) rs.push(await call(t.app, 'GET', '/no-such-endpoint', { remoteAddress: ip }));
    for (let i = 0; i < 2; i++) rs.push(await call(t.app, 'GET', '/customers', { token: 'hp_wrong', remoteAddress: ip }));
    rs.push(await call(t.app, 'DELETE', `/customers/${x.end1.customerId}`, { token: x.reseller.token, remoteAddress: ip }));
    rs.push(
      await call(t.app, 'PATCH', `/customers/${x.end1.customerId}`, {
        token: x.reseller.token,
        body: { data: { type: 'customer', id: x.end1.customerId, attributes: {} } },
        remoteAddress: ip,
      }),
    );
    expect(rs.map((r) => r.status)).toEqual([200, 200, 200, 404, 404, 404, 401, 401, 405, 200]);
    expect(rs.map((r) => r.headers['ratelimit-remaining'])).toEqual(['9', '8', '7', '6', '5', '4', '3', '2', '1', '0']);
    for (const [method, url, token] of [
      ['GET', `/customers/${x.end1.customerId}`, x.end1.token],
      ['GET', '/no-such-endpoint', undefined],
      ['GET', '/customers', undefined],
    ] as const) {
      const r = await call(t.app, method, url, { token, remoteAddress: ip });
      expect(r.status).toBe(429);
      expect(r.json).toEqual(rateLimited(url, 10));
    }
  });

  it('other IPs are unaffected; IPv6 addresses of one /64 share a budget; IPv4-mapped IPv6 is the IPv4 client', async () => {
    const t = await app({ RATE_LIMIT_MAX: '2', RATE_LIMIT_WINDOW_S: '10' });
    const status = async (remoteAddress: string) => (await call(t.app, 'GET', '/customers', { token: x.reseller.token, remoteAddress })).status;
    expect([await status('198.51.100.20'), await status('198.51.100.20'), await status('198.51.100.20')]).toEqual([200, 200, 429]);
    expect(await status('198.51.100.21')).toBe(200);
    expect(await status('::ffff:198.51.100.20')).toBe(429);
    expect(await status('::ffff:198.51.100.22')).toBe(200);
    expect(await status('198.51.100.22')).toBe(200);
    expect(await status('198.51.100.22')).toBe(429);
    // One /64: different interface ids, one budget.
    expect(await status('2001:db8:aa:1::1')).toBe(200);
    expect(await status('2001:db8:aa:1:ffff:ffff:ffff:fffe')).toBe(200);
    expect(await status('2001:DB8:AA:1:1234::9')).toBe(429);
    // The neighbouring /64 is another client.
    expect(await status('2001:db8:aa:2::1')).toBe(200);
  });

  it('error block: ERROR_BLOCK_MAX error responses → 429 too_many_errors with Retry-After for ERROR_BLOCK_DURATION_S (API guide "Rate limits and blocking")', async () => {
    let clock = 5_000_000;
    const env = { RATE_LIMIT_MAX: '1000', ERROR_BLOCK_MAX: '5', ERROR_BLOCK_WINDOW_S: '600', ERROR_BLOCK_DURATION_S: '900' };
    const t = await app(env, () => clock);
    const ip = '198.51.100.30';
    const statuses = [];
    for (const [url, token] of [
      ['/customers', 'hp_bad'],
      ['/no-such-endpoint', undefined],
      ['/customers?page[size]=0', x.reseller.token],
      ['/customers/99999999', x.reseller.token],
    ] as const) {
      statuses.push((await call(t.app, 'GET', url, { token, remoteAddress: ip })).status);
      clock += 1000;
    }
    expect(statuses).toEqual([401, 404, 400, 404]);
    // Four errors: still served.
    expect((await call(t.app, 'GET', '/customers', { token: x.reseller.token, remoteAddress: ip })).status).toBe(200);
    expect((await call(t.app, 'GET', '/customers', { token: 'hp_bad', remoteAddress: ip })).status).toBe(401);
    // The fifth error blocks from the moment it is answered: even a valid request is refused for 900 s.
    const r = await call(t.app, 'GET', '/customers', { token: x.reseller.token, remoteAddress: ip });
    expect(r.status).toBe(429);
    expect(r.headers['retry-after']).toBe('900');
    expect(r.headers['ratelimit-remaining']).toBe('0');
    expect(r.headers['ratelimit-reset']).toBe('900');
    expect(r.json).toEqual(tooManyErrors('/customers'));
    // Another client is not blocked.
    expect((await call(t.app, 'GET', '/customers', { token: x.reseller.token, remoteAddress: '198.51.100.31' })).status).toBe(200);
    clock += 899_000;
    const late = await call(t.app, 'GET', '/customers', { token: x.reseller.token, remoteAddress: ip });
    expect(late.status).toBe(429);
    expect(late.headers['retry-after']).toBe('1');
    clock += 1000;
    expect((await call(t.app, 'GET', '/customers', { token: x.reseller.token, remoteAddress: ip })).status).toBe(200);
  });

  it('429 responses do not count towards the error block', async () => {
    let clock = 0;
    const t = await app({ RATE_LIMIT_MAX: '2', RATE_LIMIT_WINDOW_S: '10', ERROR_BLOCK_MAX: '3' }, () => clock);
    const ip = '198.51.100.32';
    const get = () => call(t.app, 'GET', '/customers', { token: x.reseller.token, remoteAddress: ip });
    const rs = [];
    for (let i = 0; i < 12; i++) rs.push((await get()).status);
    expect(rs).toEqual([200, 200, ...Array(10).fill(429)]);
    clock += 10_000;
    const r = await get();
    expect(r.status).toBe(200);
  });

  it('/healthz, /readyz and /metrics are exempt: never limited, never consume a budget', async () => {
    const t = await app({ RATE_LIMIT_MAX: '2', RATE_LIMIT_WINDOW_S: '10' });
    const ip = '198.51.100.40';
    for (let i = 0; i < 20; i++) {
      for (const url of ['/healthz', '/readyz', '/metrics']) {
        const r = await call(t.app, 'GET', url, { remoteAddress: ip });
        expect(r.status).toBe(200);
        expect(r.headers['ratelimit-limit']).toBeUndefined();
      }
    }
    const first = await call(t.app, 'GET', '/customers', { token: x.reseller.token, remoteAddress: ip });
    expect(first.status).toBe(200);
    expect(first.headers['ratelimit-remaining']).toBe('1');
    await call(t.app, 'GET', '/customers', { token: x.reseller.token, remoteAddress: ip });
    expect((await call(t.app, 'GET', '/customers', { token: x.reseller.token, remoteAddress: ip })).status).toBe(429);
    expect((await call(t.app, 'GET', '/healthz', { remoteAddress: ip })).json).toEqual({ status: 'ok' });
  });

  describe('TRUST_PROXY', () => {
    it('unset: a forged X-Forwarded-For from a direct client changes nothing', async () => {
      const t = await app({ RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_S: '10' });
      const rs = [];
      for (let i = 0; i < 6; i++) {
        const r = await call(t.app, 'GET', '/customers', {
          token: x.reseller.token,
          remoteAddress: '198.51.100.50',
          headers: { 'x-forwarded-for': `203.0.113.${i}`, 'x-real-ip': `203.0.113.${i}`, forwarded: `for=203.0.113.${i}` },
        });
        rs.push(r.status);
      }
      expect(rs).toEqual([200, 200, 200, 429, 429, 429]);
    });

    it('TRUST_PROXY=127.0.0.1: the client address from the trusted proxy counts; a forged chain does not help', async () => {
      const t = await app({ RATE_LIMIT_MAX: '2', RATE_LIMIT_WINDOW_S: '10', TRUST_PROXY: '127.0.0.1' });
      const viaProxy = (xff: string) =>
        call(t.app, 'GET', '/customers', { token: x.reseller.token, remoteAddress: '127.0.0.1', headers: { 'x-forwarded-for': xff } });
      // Two clients behind the proxy have their own budgets.
      expect([(await viaProxy('203.0.113.1')).status, (await viaProxy('203.0.113.1')).status, (await viaProxy('203.0.113.1')).status]).toEqual([200, 200, 429]);
      expect((await viaProxy('203.0.113.2')).status).toBe(200);
      // The proxy appends the real address: whatever the client forged before it does not count.
      expect((await viaProxy('10.9.9.9, 203.0.113.1')).status).toBe(429);
      expect((await viaProxy('203.0.113.77, 203.0.113.2')).status).toBe(200);
      expect((await viaProxy('203.0.113.78, 203.0.113.2')).status).toBe(429);
      // A client that is not the proxy cannot pick its address.
      const direct = [];
      for (let i = 0; i < 3; i++) {
        direct.push(
          (await call(t.app, 'GET', '/customers', { token: x.reseller.token, remoteAddress: '198.51.100.51', headers: { 'x-forwarded-for': `203.0.113.${100 + i}` } }))
            .status,
        );
      }
      expect(direct).toEqual([200, 200, 429]);
    });

    it('TRUST_PROXY with a CIDR trusts every proxy in it', async () => {
      const t = await app({ RATE_LIMIT_MAX: '1', RATE_LIMIT_WINDOW_S: '10', TRUST_PROXY: '10.0.0.0/8, 127.0.0.1' });
      const st = async (remoteAddress: string, xff: string) =>
        (await call(t.app, 'GET', '/customers', { token: x.reseller.token, remoteAddress, headers: { 'x-forwarded-for': xff } })).status;
      expect(await st('10.1.2.3', '203.0.113.9')).toBe(200);
      expect(await st('10.7.7.7', '203.0.113.9')).toBe(429);
      // Two trusted hops: the address before them counts.
      expect(await st('127.0.0.1', '203.0.113.10, 10.1.1.1')).toBe(200);
      expect(await st('10.3.3.3', '203.0.113.10')).toBe(429);
    });
  });
});
