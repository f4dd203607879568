// The limiter itself (API guide "Rate limits and blocking"; docs/decisions/0002-rate-limiting.md):
// the sliding window per client on a fake clock, the error block, the address a client is limited
// by (IPv6 /64 grouping, TRUST_PROXY), and router errors sharing the budget. Over HTTP on both
// engines: limits.test.ts.
import net from 'node:net';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import Fastify, { type FastifyReply } from 'fastify';
import { MemoryLimiter, clientKey, type LimitSettings } from '../../src/limits/limiter.js';
import { limitRouterError, registerLimits } from '../../src/limits/plugin.js';
import { AppError } from '../../src/errors.js';
import { LinkBuilder } from '../../src/jsonapi/document.js';
import { BASE } from '../helpers/app.js';

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
