// DNS record validation, properties (fast-check; API guide "DNS records"): whatever a client
// sends gets a record or field problems, never an exception; accepted data normalises idempotently (so
// written twice it is found identical); and every stored record goes on the wire (src/dns/rdata.ts).
import fc from 'fast-check';
import dnsPacket from 'dns-packet';
import { describe, expect, it } from 'vitest';
import { normaliseData, normaliseRecord, parseOwnerName, type RecordType } from '../../../src/resources/dns-records/dns-records.rules.js';
import { toAnswer } from '../../../src/dns/rdata.js';

const ZONE = 'example.com';

/** A host label in random letter case. */
const label = fc
  .stringMatching(/^[a-z0-9]([a-z0-9-]{0,14}[a-z0-9])?$/)
  .filter((l) => !/^xn--/.test(l) && !/^[0-9]+$/.test(l));
const randomCase = (s: string) =>
  fc.array(fc.boolean(), { minLength: s.length, maxLength: s.length }).map((up) => [...s].map((c, i) => (up[i] ? c.toUpperCase() : c)).join(''));
/** An absolute host name as clients write it: any case, with or without the trailing dot. */
const host = fc
  .tuple(fc.array(label, { minLength: 1, maxLength: 3 }), fc.constantFrom('com', 'net', 'example', 'de'), fc.boolean())
  .chain(([ls, tld, dot]) => randomCase(`${[...ls, tld].join('.')}${dot ? '.' : ''}`));
const u16 = fc.integer({ min: 0, max: 65535 });
const sp = fc.constantFrom(' ', '  ', '\t', ' \t ');
const hexOf = (bytes: number) => fc.uint8Array({ minLength: bytes, maxLength: bytes }).chain((b) => randomCase(Buffer.from(b).toString('hex')));
const join = (parts: fc.Arbitrary<string>[]) => fc.tuple(sp, ...parts.flatMap((p) => [p, sp])).map((xs) => xs.join(''));

const ipv6Group = fc.integer({ min: 0, max: 0xffff }).map((n) => n.toString(16));

/** Valid `data` per type, written in the many ways clients write it. */
const DATA: Record<RecordType, fc.Arbitrary<string>> = {
  A: fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((o) => o.join('.')),
  AAAA: fc.array(ipv6Group, { minLength: 8, maxLength: 8 }).chain((g) => randomCase(g.join(':'))),
  CNAME: host,
  NS: host,
  MX: join([u16.map(String), host]),
  TXT: fc.string({ minLength: 1, maxLength: 600, unit: 'grapheme' }).filter((s) => !/[\u0000-\u001f\u007f-\u009f]/.test(s)),
  SRV: join([u16.map(String), u16.map(String), u16.map(String), host]),
  CAA: fc
    .tuple(fc.nat(255), fc.constantFrom('issue', 'ISSUEWILD', 'Iodef', 'tbs'), host, fc.boolean())
    .map(([flags, tag, h, quoted]) => {
      const value = tag.toLowerCase() === 'iodef' ? `mailto:sec@${h.replace(/\.$/, '')}` : h.replace(/\.$/, '');
      return `${flags} ${tag} ${quoted ? `"${value}"` : value}`;
    }),
  DS: fc
    .tuple(u16, fc.integer({ min: 1, max: 255 }), fc.constantFrom([1, 20], [2, 32], [4, 48]))
    .chain(([tag, alg, [type, bytes]]) => hexOf(bytes).map((hex) => `${tag} ${alg} ${type} ${hex.slice(0, 8)} ${hex.slice(8)}`)),
  TLSA: fc
    .tuple(fc.nat(3), fc.nat(1), fc.constantFrom([0, 40], [1, 32], [2, 64]))
    .chain(([usage, sel, [mt, bytes]]) => hexOf(bytes).map((hex) => `${usage} ${sel} ${mt} ${hex}`)),
};

const NAME_FOR: Record<RecordType, string> = {
  A: 'www', AAAA: 'www', CNAME: 'alias', NS: 'sub', MX: '', TXT: '_acme-challenge', SRV: '_sip._tcp', CAA: '', DS: 'sub', TLSA: '_443._tcp',
};

describe('DNS record validation (properties)', () => {
  it.each(Object.keys(DATA) as RecordType[])('%s: accepted data normalises idempotently and the DNS server can serve it', (type) => {
    fc.assert(
      fc.property(DATA[type], (data) => {
        const stored = normaliseData(type, data);
        expect(normaliseData(type, stored)).toBe(stored);
        const answer = toAnswer({ name: NAME_FOR[type], record_type: type, data: stored, ttl: 3600 }, ZONE);
        expect(() => dnsPacket.answer.encode(answer)).not.toThrow();
      }),
      { numRuns: 150 },
    );
  });

  it('whatever a client sends, validation returns a record or field problems, never an exception', () => {
    const anyString = fc.oneof(fc.string({ maxLength: 40 }), fc.string({ maxLength: 40, unit: 'grapheme' }), fc.string({ maxLength: 40, unit: 'binary' }));
    fc.assert(
      fc.property(
        fc.oneof(fc.constantFrom('A', 'aaaa', 'CNAME', 'MX', 'TXT', 'SRV', 'CAA', 'NS', 'DS', 'TLSA', 'SOA'), anyString),
        fc.option(anyString, { nil: undefined }),
        fc.oneof(anyString, Object.values(DATA)[0], DATA.MX, DATA.CAA),
        fc.option(fc.oneof(fc.integer(), fc.double()), { nil: undefined }),
        (record_type, name, data, ttl) => {
          const r = normaliseRecord({ record_type, name, data, ttl }, 3600);
          if ('problems' in r) {
            expect(r.problems.length).toBeGreaterThan(0);
            for (const p of r.problems) expect(['record_type', 'name', 'data', 'ttl']).toContain(p.field);
          } else {
            // Accepted: the DNS server can serve it (owner name and data).
            expect(() => toAnswer({ name: r.record.name.ace, record_type: r.record.record_type, data: r.record.data, ttl: r.record.ttl }, ZONE)).not.toThrow();
          }
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('owner names: Unicode and ACE spellings, any case, name the same record', () => {
    const uLabel = fc.oneof(label, fc.constantFrom('bücher', 'münchen', 'straße', 'ñandú', '日本', '_dmarc', '_tcp'));
    fc.assert(
      fc.property(fc.array(uLabel, { minLength: 1, maxLength: 4 }), fc.boolean(), (labels, wildcard) => {
        const input = [...(wildcard ? ['*'] : []), ...labels].join('.');
        const parsed = parseOwnerName(input);
        expect(parseOwnerName(parsed.ace)).toEqual(parsed);
        expect(parseOwnerName(parsed.unicode)).toEqual(parsed);
        // ASCII letters in upper case (Unicode upper-casing changes names: ß → SS).
        expect(parseOwnerName(input.replace(/[a-z]/g, (c) => c.toUpperCase())).ace).toBe(parsed.ace);
        expect(parsed.ace).toMatch(/^[a-z0-9_*.-]+$/);
      }),
      { numRuns: 500 },
    );
  });
});
