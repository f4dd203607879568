// Limits under attack (API guide "Rate limits and blocking", "Errors";
// docs/decisions/0002-rate-limiting.md): a sliding window per client IP on a fake clock, one budget
// across routes, 429 with Retry-After and RateLimit headers, the error block, IPv6 /64 grouping,
// exempt operational endpoints, TRUST_PROXY, router errors in the budget.
import net from 'node:net';
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import Fastify, { type FastifyReply } from 'fastify';
import { MemoryLimiter, clientKey, type LimitSettings } from '../../src/limits/limiter.js';
import { limitRouterError, registerLimits } from '../../src/limits/plugin.js';
import { AppError } from '../../src/errors.js';
import { LinkBuilder } from '../../src/jsonapi/document.js';
import { BASE, ENGINES, call, createTestApp, freshStore, testConfig, type TestApp, type TestStore } from '../helpers/app.js';
import { errorBody } from '../helpers/errors.js';
import { seedTenants, type Tenants } from '../helpers/tenants.js';
import { sleep } from '../helpers/wait.js';

const settings = (max: number, windowMs: number, errorMax = 1000, errorWindowMs = 600_000, durationMs = 900_000): LimitSettings => ({
  rateLimit: { max, windowMs },
  errorBlock: { max: errorMax, windowMs: errorWindowMs, durationMs },
});

describe('MemoryLimiter (sliding log, fake clock)', () => {
  let clock = 0;
  const limiters: MemoryLimiter[] = [];
  const make = (s: LimitSettings) => {
    const l = new MemoryLimiter(s, () => clock);
    limiters.push(l);
    return l;
  };
  afterEach(async () => {
    clock = 0;
    for (const l of limiters.splice(0)) await l.close();
  });

  it('admits max per window and tells when the next slot frees', async () => {
    const l = make(settings(3, 1000));
    clock = 10_000;
    expect(await l.hit('a')).toEqual({ allowed: true, blocked: false, limit: 3, remaining: 2, resetMs: 1000 });
    clock = 10_100;
    expect(await l.hit('a')).toEqual({ allowed: true, blocked: false, limit: 3, remaining: 1, resetMs: 900 });
    clock = 10_200;
    expect(await l.hit('a')).toEqual({ allowed: true, blocked: false, limit: 3, remaining: 0, resetMs: 800 });
    clock = 10_999;
    expect(await l.hit('a')).toEqual({ allowed: false, blocked: false, limit: 3, remaining: 0, resetMs: 1 });
    // The oldest leaves at exactly 10 000 + window: one slot, not three.
    clock = 11_000;
    expect(await l.hit('a')).toEqual({ allowed: true, blocked: false, limit: 3, remaining: 0, resetMs: 100 });
    expect((await l.hit('a')).allowed).toBe(false);
    clock = 11_100;
    expect((await l.hit('a')).allowed).toBe(true);
  });

  it('a fixed-window boundary burst is not admitted twice (never 2× the limit)', async () => {
    const l = make(settings(10, 10_000));
    clock = 9_999;
    for (let i = 0; i < 10; i++) expect((await l.hit('a')).allowed).toBe(true);
    // A fixed window would reset at 10 000 and admit 10 more here.
    clock = 10_000;
    for (let i = 0; i < 10; i++) expect((await l.hit('a')).allowed).toBe(false);
    clock = 19_998;
    expect((await l.hit('a')).allowed).toBe(false);
    clock = 19_999;
    for (let i = 0; i < 10; i++) expect((await l.hit('a')).allowed).toBe(true);
    expect((await l.hit('a')).allowed).toBe(false);
  });

  it('rejected requests do not count: a client that keeps hammering is admitted when its oldest request leaves', async () => {
    const l = make(settings(2, 1000));
    clock = 0;
    await l.hit('a');
    clock = 500;
    await l.hit('a');
    for (clock = 501; clock < 1000; clock += 7) expect((await l.hit('a')).allowed).toBe(false);
    clock = 1000;
    expect(await l.hit('a')).toMatchObject({ allowed: true, remaining: 0 });
  });

  it('clients do not share budgets', async () => {
    const l = make(settings(1, 1000));
    expect((await l.hit('a')).allowed).toBe(true);
    expect((await l.hit('a')).allowed).toBe(false);
    expect((await l.hit('b')).allowed).toBe(true);
  });

  it('property: never more than max admitted in any window, and every rejection is forced by max admissions in the window', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 2000 }),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 400 }), fc.constantFrom('a', 'b')), { minLength: 1, maxLength: 120 }),
        async (max, windowMs, steps) => {
          const l = new MemoryLimiter(settings(max, windowMs), () => clock);
          try {
            clock = 0;
            const admitted: Record<string, number[]> = { a: [], b: [] };
            for (const [gap, client] of steps) {
              clock += gap;
              const d = await l.hit(client);
              const inWindow = admitted[client].filter((t) => t > clock - windowMs).length;
              expect(d.allowed).toBe(inWindow < max);
              expect(d.remaining).toBe(d.allowed ? max - inWindow - 1 : 0);
              if (d.allowed) admitted[client].push(clock);
            }
            for (const times of Object.values(admitted)) {
              for (const start of times) expect(times.filter((t) => t >= start && t < start + windowMs).length).toBeLessThanOrEqual(max);
            }
          } finally {
            await l.close();
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('error block: max errors within the window block the client for the duration', async () => {
    const l = make(settings(100, 1000, 3, 10_000, 60_000));
    clock = 0;
    await l.recordError('a');
    clock = 1000;
    await l.recordError('a');
    expect((await l.hit('a')).allowed).toBe(true);
    clock = 2000;
    await l.recordError('a');
    expect(await l.hit('a')).toEqual({ allowed: false, blocked: true, limit: 100, remaining: 0, resetMs: 60_000 });
    expect((await l.hit('b')).allowed).toBe(true);
    clock = 61_999;
    expect(await l.hit('a')).toMatchObject({ allowed: false, blocked: true, resetMs: 1 });
    clock = 62_000;
    expect(await l.hit('a')).toMatchObject({ allowed: true, blocked: false });
    // The block starts a new error count.
    await l.recordError('a');
    expect((await l.hit('a')).allowed).toBe(true);
  });

  it('errors older than the error window do not add up', async () => {
    const l = make(settings(100, 1000, 3, 10_000, 60_000));
    for (const t of [0, 5000, 10_000, 14_000]) {
      clock = t;
      await l.recordError('a');
    }
    // at 14 000 the errors of (4 000, 14 000] are 10 000 and 14 000 (and 5 000): three → blocked
    expect((await l.hit('a')).blocked).toBe(true);
    const m = make(settings(100, 1000, 3, 10_000, 60_000));
    for (const t of [0, 10_000, 20_000, 30_000]) {
      clock = t;
      await m.recordError('a');
    }
    expect((await m.hit('a')).blocked).toBe(false);
  });
});

describe('clientKey: the address a client is limited by', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['::FFFF:203.0.113.7', '203.0.113.7'],
    ['2001:db8:1:2::1', '2001:db8:1:2::/64'],
    ['2001:0db8:0001:0002:ffff:ffff:ffff:ffff', '2001:db8:1:2::/64'],
    ['2001:DB8:1:2:A::', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['::', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['64:ff9b::198.51.100.1', '64:ff9b:0:0::/64'],
  ])('%s → %s', (ip, key) => {
    expect(clientKey(ip)).toBe(key);
  });

  it('property: two IPv6 addresses share a key exactly when they are in one /64 (oracle: net.BlockList)', () => {
    const group = fc.integer({ min: 0, max: 0xffff }).map((n) => n.toString(16));
    const groups = (n: number) => fc.array(group, { minLength: n, maxLength: n });
    /** An address in full, tail-compressed, middle-compressed or upper-case form, and the groups it stands for. */
    const render = (g: string[], style: number): [string, string[]] => {
      if (style === 1) {
        const z = [...g.slice(0, 5), '0', '0', '0'];
        return [`${z.slice(0, 5).join(':')}::`, z];
      }
      if (style === 2) {
        const z = [g[0], '0', '0', ...g.slice(3)];
        return [`${g[0]}::${g.slice(3).join(':')}`, z];
      }
      if (style === 3) return [g.map((x) => x.padStart(4, '0').toUpperCase()).join(':'), g];
      return [g.join(':'), g];
    };
    fc.assert(
      fc.property(groups(8), fc.integer({ min: 0, max: 3 }), fc.boolean(), groups(4), groups(8), fc.integer({ min: 0, max: 3 }), (ga, sa, sameNet, tail, other, sb) => {
        const [a, aGroups] = render(ga, sa);
        const [b] = render(sameNet ? [...aGroups.slice(0, 4), ...tail] : other, sb);
        const list = new net.BlockList();
        list.addSubnet(a, 64, 'ipv6');
        expect(clientKey(a) === clientKey(b), `${a} vs ${b}`).toBe(list.check(b, 'ipv6'));
      }),
      { numRuns: 1000 },
    );
  });
});

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

// Errors the router answers itself (malformed percent-encoding, over-long path segments) never run
// a hook; limitRouterError gives them the same budget and error count (wired in app.ts's
// frameworkErrors). Tested here on a bare Fastify instance with the limits plugin.
describe('limitRouterError: router errors share the budget', () => {
  const build = async (s: LimitSettings) => {
    const limiter = new MemoryLimiter(s);
    const app = Fastify({
      frameworkErrors: (_e, request, reply) => {
        void limitRouterError(limiter, request, reply, new AppError('bad_request', 'The URL is malformed.')).then((err) =>
          (reply as unknown as FastifyReply).code(err.status).headers(err.headers ?? {}).send({ id: err.code }),
        );
      },
    });
    registerLimits(app, { limiter, links: new LinkBuilder(BASE) });
    app.get('/things/:id', async () => ({ ok: true }));
    await app.ready();
    return { app, limiter };
  };
  const get = (app: Awaited<ReturnType<typeof build>>['app'], url: string, remoteAddress = '198.51.100.90') =>
    app.inject({ method: 'GET', url, remoteAddress });

  it('a malformed URL takes from the budget and is refused with 429 once it is spent', async () => {
    const { app, limiter } = await build(settings(2, 10_000));
    try {
      const a = await get(app, '/things/%zz');
      expect([a.statusCode, a.json(), a.headers['ratelimit-remaining']]).toEqual([400, { id: 'bad_request' }, '1']);
      expect((await get(app, '/things/1')).statusCode).toBe(200);
      const c = await get(app, '/things/%zz');
      expect([c.statusCode, c.json(), c.headers['retry-after']]).toEqual([429, { id: 'rate_limited' }, '10']);
      expect((await get(app, '/things/%zz', '198.51.100.91')).statusCode).toBe(400);
    } finally {
      await app.close();
      await limiter.close();
    }
  });

  it('malformed URLs count as errors towards the block', async () => {
    const { app, limiter } = await build(settings(100, 10_000, 2, 60_000, 30_000));
    try {
      expect((await get(app, '/things/%zz')).statusCode).toBe(400);
      expect((await get(app, '/things/%zz')).statusCode).toBe(400);
      // A routed request of the blocked client (this bare app has Fastify's own error body).
      const r = await get(app, '/things/1');
      expect([r.statusCode, r.json().code, r.headers['retry-after']]).toEqual([429, 'too_many_errors', '30']);
      const again = await get(app, '/things/%zz');
      expect([again.statusCode, again.json()]).toEqual([429, { id: 'too_many_errors' }]);
    } finally {
      await app.close();
      await limiter.close();
    }
  });
});
