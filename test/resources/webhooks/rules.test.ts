// The rules of webhooks without I/O (API guide "Webhooks"; docs/decisions/0027-webhooks.md), as
// properties (fast-check): where deliveries may go (IPv4 and IPv6, IPv4 inside IPv6, the operator's
// ranges), what a URL may be, the events there are (held to the job registry), the retry schedule,
// and the signature against the Standard Webhooks reference vector.
import os from 'node:os';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildJobs } from '../../../src/resources/jobs.js';
import { JOB_TYPE_SEGMENTS } from '../../../src/resources/queue-jobs/queue-jobs.schema.js';
import { addressPolicy, judgeAddress } from '../../../src/resources/webhooks/webhooks.addresses.js';
import { EVENT_TYPES, RETRY_WINDOW_MS, eventsProblem, nextAttemptAt, webhookUrl } from '../../../src/resources/webhooks/webhooks.rules.js';
import { generateSecret, sign } from '../../../src/resources/webhooks/webhooks.secrets.js';
import { SecretBox } from '../../../src/security/secret-box.js';

const none = addressPolicy({ allowCidrs: [], denyCidrs: [] });
const octet = fc.integer({ min: 0, max: 255 });
const v4In = (a: number, b?: number) => fc.tuple(b === undefined ? octet : fc.constant(b), octet, octet).map(([x, y, z]) => `${a}.${x}.${y}.${z}`);
const hex = (a: string) => a.split('.').map(Number).reduce((w, n, i) => (i % 2 ? [...w.slice(0, -1), (w.at(-1)! << 8) | n] : [...w, n]), [] as number[]).map((n) => n.toString(16));

/** Addresses in ranges no webhook may reach, with the kind the refusal names. */
const SPECIAL: [fc.Arbitrary<string>, string][] = [
  [v4In(10), 'private'],
  [v4In(127), 'loopback'],
  [v4In(169, 254), 'link-local'],
  [v4In(192, 168), 'private'],
  [fc.tuple(fc.integer({ min: 16, max: 31 }), octet, octet).map(([b, c, d]) => `172.${b}.${c}.${d}`), 'private'],
  [fc.tuple(fc.integer({ min: 224, max: 239 }), octet, octet, octet).map((o) => o.join('.')), 'multicast'],
  [v4In(0), 'unspecified'],
  [fc.tuple(fc.integer({ min: 0xfc00, max: 0xfdff }), fc.integer({ min: 0, max: 0xffff })).map(([a, b]) => `${a.toString(16)}::${b.toString(16)}`), 'private (unique local)'],
  [fc.integer({ min: 0, max: 0xffff }).map((n) => `fe80::${n.toString(16)}`), 'link-local'],
  [fc.integer({ min: 0, max: 0xffff }).map((n) => `ff02::${n.toString(16)}`), 'multicast'],
];

describe('where webhooks may go', () => {
  it('refuses every address of the special ranges, and the same IPv4 address in each IPv6 form that carries it', () => {
    for (const [arb, kind] of SPECIAL) {
      fc.assert(
        fc.property(arb, (address) => {
          expect(judgeAddress(address, none)).toEqual({ ok: false, reason: `a ${kind} address` });
          if (address.includes(':')) return;
          const [w1, w2] = hex(address);
          for (const [form, via] of [[`::ffff:${address}`, 'IPv4-mapped'], [`::ffff:${w1}:${w2}`, 'IPv4-mapped'], [`64:ff9b::${address}`, 'NAT64'], [`2002:${w1}:${w2}::1`, '6to4']]) {
            expect(judgeAddress(form, none), form).toEqual({ ok: false, reason: `a ${kind} address (${via}, carrying ${address})` });
          }
        }),
      );
    }
  });

  it('refuses :: and ::1 and whatever is outside global unicast IPv6; takes public addresses', () => {
    expect(judgeAddress('::', none)).toEqual({ ok: false, reason: 'a unspecified address' });
    expect(judgeAddress('::1', none)).toEqual({ ok: false, reason: 'a loopback address' });
    expect(judgeAddress('::7f00:1', none)).toEqual({ ok: false, reason: 'a reserved address' });
    expect(judgeAddress('2001:db8::1', none)).toEqual({ ok: false, reason: 'a documentation address' });
    for (const a of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '2a00:1450:4001:80b::200e', '::ffff:8.8.4.4']) expect(judgeAddress(a, none), a).toEqual({ ok: true, allowed: false });
  });

  it("allows whatever the operator's ranges hold (special or not, in any IPv6 form), and refuses its denied ranges", () => {
    fc.assert(
      fc.property(octet, octet, octet, (x, y, z) => {
        const policy = addressPolicy({ allowCidrs: [`127.${x}.0.0/16`, 'fd00:1::/32'], denyCidrs: [`8.${x}.0.0/16`] });
        expect(judgeAddress(`127.${x}.${y}.${z}`, policy)).toEqual({ ok: true, allowed: true });
        expect(judgeAddress(`::ffff:127.${x}.${y}.${z}`, policy)).toEqual({ ok: true, allowed: true });
        expect(judgeAddress(`fd00:1::${y.toString(16)}`, policy)).toEqual({ ok: true, allowed: true });
        expect(judgeAddress(`8.${x}.${y}.${z}`, policy)).toEqual({ ok: false, reason: "an address of the service's own networks" });
        expect(judgeAddress(`127.${(x + 1) % 256}.${y}.${z}`, policy)).toEqual({ ok: false, reason: 'a loopback address' });
      }),
    );
  });

  it("refuses this host's own addresses: as what they are, or as this server's", () => {
    const own = Object.values(os.networkInterfaces()).flatMap((list) => list ?? []);
    expect(own.length).toBeGreaterThan(0);
    for (const { address } of own) {
      const verdict = judgeAddress(address, none);
      expect(verdict, address).toEqual({ ok: false, reason: expect.stringMatching(/^an? .* address$/) });
    }
  });
});

describe('a webhook URL', () => {
  // Not `xn--…`: such a label is punycode, and most strings are not valid punycode (the URL parser refuses them).
  const label = fc.stringMatching(/^[a-z][a-z0-9-]{0,20}[a-z0-9]$/).filter((l) => !l.startsWith('xn--'));
  const host = fc.array(label, { minLength: 2, maxLength: 4 }).map((l) => l.join('.'));
  const path = fc.stringMatching(/^(\/[a-zA-Z0-9._~-]{0,12}){0,4}$/);

  it('takes any https URL of a name and keeps it as the URL parser writes it; refuses the same as http without allowed ranges', () => {
    fc.assert(
      fc.property(host, path, (h, p) => {
        const url = `https://${h}${p || '/'}`;
        expect(webhookUrl(url, none)).toEqual({ ok: true, url: new URL(url).href });
        expect(webhookUrl(url.replace('https:', 'http:'), none).ok).toBe(false);
        expect(webhookUrl(url.replace('https:', 'http:'), addressPolicy({ allowCidrs: ['10.0.0.0/8'], denyCidrs: [] })).ok).toBe(true);
      }),
    );
  });

  it('refuses a special address in every spelling the URL parser reads as one (dotted, one number, hex, octal)', () => {
    fc.assert(
      fc.property(SPECIAL[1][0], (address) => {
        const n = address.split('.').reduce((acc, o) => acc * 256 + Number(o), 0);
        for (const spelled of [address, String(n), `0x${n.toString(16)}`, address.split('.').map((o) => `0${Number(o).toString(8)}`).join('.')]) {
          const r = webhookUrl(`https://${spelled}/hook`, none);
          expect(r.ok, spelled).toBe(false);
          if (!r.ok) expect(r.detail).toMatch(new RegExp(`^${address.replace(/\./g, '\\.')} is a loopback address`));
        }
      }),
    );
  });

  it('refuses anything that is not a string without throwing', () => {
    fc.assert(
      fc.property(fc.anything().filter((v) => typeof v !== 'string'), (v) => {
        expect(webhookUrl(v, none).ok).toBe(false);
      }),
    );
  });
});

describe('events', () => {
  it('lists an object event for exactly the create, update and delete jobs the application has', () => {
    const jobs = buildJobs();
    const past = { create: 'created', update: 'updated', delete: 'deleted' } as const;
    const expected = Object.keys(JOB_TYPE_SEGMENTS).flatMap((type) =>
      (Object.keys(past) as (keyof typeof past)[]).filter((a) => jobs.get(type, a)).map((a) => `${type}.${past[a]}`),
    );
    expect(EVENT_TYPES).toEqual(['*', 'queue-job.done', 'queue-job.failed', ...expected]);
  });

  it('takes any list of known events, each once; points at the first entry that is unknown or repeated', () => {
    fc.assert(
      fc.property(fc.shuffledSubarray([...EVENT_TYPES], { minLength: 1 }), fc.string(), fc.nat(), (events, other, at) => {
        expect(eventsProblem(events)).toBeNull();
        const i = at % (events.length + 1);
        if (!EVENT_TYPES.includes(other)) expect(eventsProblem([...events.slice(0, i), other, ...events.slice(i)])?.at).toBe(`events/${i}`);
        expect(eventsProblem([...events, events[0]])?.at).toBe(`events/${events.length}`);
      }),
    );
  });
});

describe('retries', () => {
  it('come later each time, never after the 24-h window, and stop once it is over', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 0, max: 2 * RETRY_WINDOW_MS }), (attempts, elapsed) => {
        const t0 = Date.UTC(2026, 0, 1);
        const next = nextAttemptAt(attempts, t0, t0 + elapsed);
        if (elapsed >= RETRY_WINDOW_MS) {
          expect(next).toBeNull();
          return;
        }
        expect(next).toBeGreaterThan(t0 + elapsed);
        expect(next).toBeLessThanOrEqual(t0 + RETRY_WINDOW_MS);
        const later = nextAttemptAt(attempts + 1, t0, t0 + elapsed)!;
        expect(later).toBeGreaterThanOrEqual(next!);
      }),
    );
    expect(nextAttemptAt(1, 0, 0)).toBe(5_000);
    expect(nextAttemptAt(2, 0, 0)).toBe(300_000);
  });
});

describe('secrets', () => {
  it('sign as the Standard Webhooks reference vector does', () => {
    expect(sign('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}')).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('are sealed so that each key opens what it sealed, and a changed seal does not open', () => {
    const a = { id: 'a', key: Buffer.alloc(32, 1) };
    const b = { id: 'b', key: Buffer.alloc(32, 2) };
    const secret = generateSecret();
    const byA = new SecretBox([a, b]).seal(secret);
    expect(byA.startsWith('a.')).toBe(true);
    expect(new SecretBox([b, a]).open(byA)).toBe(secret);
    expect(() => new SecretBox([b]).open(byA)).toThrow(/sealed with key a/);
    const [id, iv, text, tag] = byA.split('.');
    const flipped = Buffer.from(text, 'base64url');
    flipped[0] ^= 1;
    expect(() => new SecretBox([a]).open([id, iv, flipped.toString('base64url'), tag].join('.'))).toThrow();
  });
});
