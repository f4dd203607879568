// Fuzzing the DNS packet path (docs/decisions/0003-dns-propagation.md): garbage over UDP and TCP
// never stops a running server, and without sockets every reply to arbitrary or mutated bytes is
// null or a decodable response; presentation forms of record data parse as the wire expects
// (src/dns/rdata.ts). The quick path from the zones' wire form gives what the general path gives
// (docs/decisions/0014-dns-zones-in-wire-form.md), and a zone changed owner by owner equals the
// zone built whole.
import dgram from 'node:dgram';
import dnsPacket from 'dns-packet';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ENGINES } from '../helpers/app.js';
import { ZONE, ask, query, rr, serveTestZones, tcp } from '../helpers/dns.js';
import { answerQuery } from '../../src/dns/query.js';
import { Zone, ZoneSet } from '../../src/dns/zone.js';
import { zoneRecords } from '../../src/dns/transfer-messages.js';
import { parseCaaValue, parseName, rdataOf, splitTxt, toAnswer, toWireRecord, type StoredRecord } from '../../src/dns/rdata.js';

describe.each(ENGINES)('DNS server on %s', (engine) => {
  let port: number;
  serveTestZones(engine, (s) => ({ port } = s));

  describe('malformed and unusual messages', () => {
    it('garbage over UDP and TCP never stops the server (fast-check)', async () => {
      // Many packets at once (replies are not awaited one by one); the pure path is fuzzed harder below.
      const packets = fc.sample(fc.uint8Array({ minLength: 0, maxLength: 300 }), 400).map((b) => Buffer.from(b));
      const sock = dgram.createSocket('udp4');
      await Promise.all(packets.map((b) => new Promise((r) => sock.send(b, port, '127.0.0.1', r))));
      sock.close();
      const frames = fc.sample(fc.uint8Array({ minLength: 0, maxLength: 200 }), 50).map((bytes) => Buffer.from(bytes));
      await Promise.all(frames.map((b) => tcp(port, [], { raw: Buffer.concat([Buffer.from([b.length >> 8, b.length & 0xff]), b]), expect: 1, timeoutMs: 200 })));
      // A frame announcing more than it sends, then closing: nothing to answer, nothing breaks.
      await tcp(port, [], { raw: Buffer.from([0x01, 0x00, 0x12, 0x34]), timeoutMs: 100 });
      const after = await ask(port, 'udp', 'zone.example', 'A');
      expect(after.p.answers.map(rr)).toEqual([{ name: 'zone.example', type: 'A', ttl: 3600, data: '192.0.2.1' }]);
    });
  });
});

describe('DNS data and packet handling without sockets', () => {
  const settings = { nameservers: ['ns1.dns.test'], hostmaster: 'hostmaster.dns.test', ttl: 3600, refresh: 3600, retry: 600, expire: 1209600, minimum: 300 };
  const zones = new ZoneSet();
  zones.set(Zone.build('zone.example', 5, ZONE.filter((r) => !r[3]?.state || r[3].state !== 'pending').map(([name, record_type, data, o]) => ({ name, record_type, data, ttl: o?.ttl ?? 3600 })), settings));

  it('presentation forms parse as the wire expects', () => {
    expect(toAnswer({ name: '', record_type: 'MX', data: '0 .', ttl: 300 }, 'zone.example')).toEqual({
      type: 'MX', class: 'IN', name: 'zone.example', ttl: 300, data: { preference: 0, exchange: '' },
    });
    expect(toAnswer({ name: '*.Wild', record_type: 'CNAME', data: 'Target.Example.', ttl: 300 }, 'zone.example')).toMatchObject({ name: '*.wild.zone.example', data: 'target.example' });
    expect(parseCaaValue('"a\\"b\\\\c\\065"')).toBe('a"b\\cA');
    expect(parseCaaValue('bare')).toBe('bare');
    expect(splitTxt('').map((b) => b.length)).toEqual([0]);
    expect(splitTxt('x'.repeat(510)).map((b) => b.length)).toEqual([255, 255]);
    expect(parseName('.', { root: true })).toBe('');
    for (const [type, data] of [['A', '1.2.3'], ['A', '01.2.3.4'], ['AAAA', 'fe80::1%eth0'], ['MX', '70000 mx.example'], ['SRV', '1 2 3'], ['CAA', '0 issue "open'], ['DS', '1 2 3 ABC'], ['TLSA', '3 1 1 zz'], ['CNAME', 'a..b'], ['CNAME', 'a b'], ['NS', `${'x'.repeat(64)}.example`], ['HINFO', 'x']]) {
      expect(() => toAnswer({ name: 'x', record_type: type, data, ttl: 300 }, 'zone.example'), `${type} ${data}`).toThrow();
    }
    expect(() => toAnswer({ name: 'a.*', record_type: 'A', data: '192.0.2.1', ttl: 300 }, 'zone.example')).toThrow();
  });

  /** A reply as a client reads it: every field dns-packet decodes, the id and flags included. */
  const seen = (out: Buffer | null) => (out === null ? null : dnsPacket.decode(out));
  /**
   * The quick path against the general one. Its owner names are compressed, so a reply the general
   * path must truncate over UDP may fit: then it must equal the general path's untruncated reply.
   */
  const agree = (msg: Buffer, transport: 'udp' | 'tcp', label = '') => {
    const out = seen(answerQuery(zones, msg, { transport }));
    let general = seen(answerQuery(zones, msg, { transport, general: true }));
    if (general?.flag_tc && out && !out.flag_tc) general = seen(answerQuery(zones, msg, { transport: 'tcp', general: true }));
    expect(out, label).toEqual(general);
  };
  const names = [...new Set(ZONE.map(([n]) => (n === '' ? 'zone.example' : `${n.replace('*', 'x')}.zone.example`)))];
  const questions = [...names, 'nothere.zone.example', 'deep.x.wild.zone.example', 'c.zone.example', 'b.c.zone.example', 'x.sub.zone.example', 'outside.example', 'Zone.Example', 'MAIL.zone.EXAMPLE', 'X.Wild.Zone.Example'];
  const types = ['A', 'AAAA', 'MX', 'TXT', 'CNAME', 'SRV', 'CAA', 'NS', 'SOA', 'DS', 'TLSA', 'ANY', 'PTR'];

  it('the quick path answers every question as the general path does: names, types, case, EDNS sizes, UDP and TCP', () => {
    let quick = 0;
    for (const name of questions) {
      for (const type of types) {
        for (const edns of [undefined, 512, 600, 1232, 4096]) {
          for (const transport of ['udp', 'tcp'] as const) {
            const msg = query(name, type, { edns, rd: name.length % 2 === 0 });
            agree(msg, transport, `${name} ${type} ${edns} ${transport}`);
            const out = answerQuery(zones, msg, { transport });
            const general = answerQuery(zones, msg, { transport, general: true });
            if (out && general && out.length < general.length) quick++;
          }
        }
      }
    }
    // The quick path did answer (its replies are shorter: owner names compressed).
    expect(quick).toBeGreaterThan(300);
  });

  it('quick and general paths agree on mutated queries and EDNS options (fast-check)', () => {
    const withOptions = (name: string, options: { code: number; data: Buffer }[]) =>
      dnsPacket.encode({ type: 'query', id: 7, questions: [{ name, type: 'A', class: 'IN' }], additionals: [{ type: 'OPT', name: '.', udpPayloadSize: 1232, options }] });
    fc.assert(
      fc.property(
        fc.constantFrom(...questions),
        fc.constantFrom(...types),
        fc.array(fc.record({ code: fc.constantFrom(3, 8, 10, 11, 12, 14, 65001), data: fc.uint8Array({ maxLength: 12 }).map((b) => Buffer.from(b)) }), { maxLength: 3 }),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 3 }),
        (name, type, options, flips) => {
          const msg = options.length ? withOptions(name, options) : query(name, type, { edns: 1232 });
          for (const [i, v] of flips) msg[i % msg.length] = v;
          try {
            seen(answerQuery(zones, msg, { transport: 'udp', general: true }));
          } catch {
            return; // a reply dns-packet cannot read back either way is the other fuzz tests' concern
          }
          agree(msg, 'udp');
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('a zone changed owner by owner equals the zone built whole, and the change lists what went and came', () => {
    const rows = (list: typeof ZONE) => list.filter((r) => r[3]?.state !== 'pending').map(([name, record_type, data, o]) => ({ name, record_type, data, ttl: o?.ttl ?? 3600 }));
    const before = rows(ZONE);
    // New owners (one below an empty non-terminal), changed sets, removed owners (the last record
    // under an empty non-terminal, a delegation, a wildcard), and the apex.
    const after = [
      ...before.filter((r) => !['a.b.c', 'sub', 'ns1.sub', '*.wild', 'mail'].includes(r.name) && !(r.name === '' && r.record_type === 'TXT')),
      { name: 'mail', record_type: 'A', data: '192.0.2.26', ttl: 600 },
      { name: 'x.y.new', record_type: 'TXT', data: 'fresh', ttl: 300 },
      { name: '', record_type: 'TXT', data: 'v=spf1 -all', ttl: 3600 },
    ];
    const touched = ['a.b.c', 'sub', 'ns1.sub', '*.wild', 'mail', 'x.y.new', ''];
    const zone = Zone.build('zone.example', 5, before, settings);
    const abs = (n: string) => (n === '' ? 'zone.example' : `${n}.zone.example`);
    const change = zone.replaceOwners(6, touched.map(abs), after.filter((r) => touched.includes(r.name)));
    const whole = Zone.build('zone.example', 6, after, settings);
    const sorted = (z: Zone) => zoneRecords(z).map((b) => b.toString('hex')).sort();
    expect(sorted(zone)).toEqual(sorted(whole));
    expect(zone.soa).toEqual(whole.soa);
    expect([...zone.cuts]).toEqual([...whole.cuts]);
    for (const n of ['b.c.zone.example', 'c.zone.example', 'y.new.zone.example', 'new.zone.example', 'sub.zone.example', 'wild.zone.example']) {
      expect(zone.exists(n), n).toBe(whole.exists(n));
    }
    expect(zone.exists('c.zone.example')).toBe(false);
    expect(zone.exists('y.new.zone.example')).toBe(true);
    const text = (list: Buffer[]) => list.map((b) => { const a = dnsPacket.decode(Buffer.concat([Buffer.from('000084000000000100000000', 'hex'), b])).answers[0]; return `${a.name} ${a.type}`; }).sort();
    expect(text(change.added)).toEqual(['x.y.new.zone.example TXT', 'mail.zone.example A', 'zone.example TXT'].sort());
    expect(text(change.removed)).toEqual(['*.wild.zone.example A', '*.wild.zone.example TXT', 'a.b.c.zone.example A', 'mail.zone.example A', 'ns1.sub.zone.example A', 'sub.zone.example DS', 'sub.zone.example NS', 'sub.zone.example NS', 'zone.example TXT'].sort());
    // Answers from the changed zone equal those from the zone built whole.
    const changed = new ZoneSet();
    changed.set(zone);
    const rebuilt = new ZoneSet();
    rebuilt.set(whole);
    for (const name of [...questions, 'x.y.new.zone.example', 'y.new.zone.example', 'q.wild.zone.example']) {
      for (const type of types) {
        const msg = query(name, type, { edns: 1232, id: 1 });
        expect(seen(answerQuery(changed, msg, { transport: 'udp' })), `${name} ${type}`).toEqual(seen(answerQuery(rebuilt, msg, { transport: 'udp' })));
      }
    }
  });

  /**
   * toWireRecord gives what toAnswer + dns-packet give (owner, TTL, RDATA), or refuses what toAnswer
   * refuses; true when the record was encoded and compared.
   */
  const encodedAsReference = (rec: StoredRecord): boolean => {
    let a;
    try {
      a = toAnswer(rec, 'zone.example');
    } catch {
      expect(() => toWireRecord(rec, 'zone.example'), `${rec.record_type} ${rec.data}`).toThrow();
      return false;
    }
    const w = toWireRecord(rec, 'zone.example');
    expect({ owner: w.owner, ttl: w.ttl, rdata: w.rdata.toString('hex') }, `${rec.record_type} ${rec.data}`).toEqual({ owner: a.name, ttl: a.ttl, rdata: rdataOf(a).toString('hex') });
    return true;
  };

  it('records are written as dns-packet writes them (the common types are encoded directly)', () => {
    const rows = [...ZONE.map(([name, record_type, data, o]) => ({ name, record_type, data, ttl: o?.ttl ?? 3600 })),
      { name: 'x', record_type: 'MX', data: '0 .', ttl: 1 }, { name: 'x', record_type: 'TXT', data: '', ttl: 1 }, { name: 'x', record_type: 'PTR', data: 'a.b.example.', ttl: 1 },
      { name: 'x', record_type: 'A', data: ' 0.0.0.0 ', ttl: 0 }, { name: 'x', record_type: 'TXT', data: 'x'.repeat(600), ttl: 1 }];
    const compared = rows.filter(encodedAsReference).length;
    expect(compared).toBeGreaterThan(150);
  });

  it('rows of any name, type, data and TTL are encoded as toAnswer and dns-packet encode them, or refused alike (fast-check)', () => {
    // toWireRecord writes the rows the API stores (plain names, A, short TXT) without toAnswer's
    // objects (docs/decisions/0014-dns-zones-in-wire-form.md); the reference is toAnswer +
    // dns-packet for every row.
    const name = fc.oneof(
      fc.constantFrom('', '@', 'www', 'WWW', '*', '*.x', 'x.*', 'a.b', 'a..b', 'b.', '_dmarc', 'h-1', 'x'.repeat(63), 'x'.repeat(64), `${'y'.repeat(60)}.${'y'.repeat(60)}.${'y'.repeat(60)}.${'y'.repeat(50)}`),
      fc.stringMatching(/^[a-zA-Z0-9_*.@ -]{0,20}$/),
    );
    const octet = fc.integer({ min: 0, max: 300 }).map(String);
    const a = fc.oneof(
      fc.ipV4(),
      fc.tuple(octet, octet, octet, octet).map((o) => o.join('.')),
      fc.constantFrom('01.2.3.4', '1.2.3', ' 192.0.2.1 ', '192.0.2.1\n', '1.2.3.4.5', '', '0.0.0.0', '255.255.255.255', '256.0.0.1', '1.2.3.04'),
    );
    const txt = fc.oneof(fc.string({ maxLength: 300 }), fc.string({ unit: 'grapheme', minLength: 60, maxLength: 140 }), fc.constantFrom('', ' ', 'x'.repeat(255), 'x'.repeat(256), 'é'.repeat(128), 'é'.repeat(127)));
    const row = fc.record({
      name,
      record_type: fc.constantFrom('A', 'a', 'TXT', 'Txt', 'MX', 'AAAA'),
      data: fc.oneof(a, txt, fc.constantFrom('10 mail.example.', '2001:db8::1')),
      ttl: fc.oneof(fc.integer({ min: 0, max: 0x7fffffff }), fc.constantFrom(-1, 0x80000000, 1.5, 3600)),
    });
    fc.assert(fc.property(row, (rec) => void encodedAsReference(rec)), { numRuns: 5000 });
  });

  it('a zone built owner by owner, as the store reads it, equals the zone built from its records grouped first (fast-check)', () => {
    // Zone.build puts each owner as soon as the next begins
    // (docs/decisions/0014-dns-zones-in-wire-form.md); rows whose names spell one owner twice ('@'
    // and '', capitals) come back to it, and it falls back to grouping.
    const rec = fc.record({
      name: fc.constantFrom('', '@', 'www', 'WWW', 'a.b', 'b', 'sub', 'ns1.sub', '*', '*.w', 'x.y.z', 'bad..name'),
      record_type: fc.constantFrom('A', 'TXT', 'MX', 'NS', 'CNAME', 'AAAA', 'SOA'),
      ttl: fc.constantFrom(60, 300, 3600),
      n: fc.integer({ min: 0, max: 9 }),
    });
    const dataOf = (type: string, n: number) =>
      ({ A: `192.0.2.${n}`, TXT: `text ${n}`, MX: `${n} mx${n}.example.`, NS: `ns${n}.example.`, CNAME: `c${n}.example.`, AAAA: n === 9 ? 'not an address' : `2001:db8::${n}`, SOA: 'x' })[type]!;
    // As the store reads them: by name, type and id (SQLite's and PostgreSQL's C collation alike for ASCII).
    const storeOrder = (a: StoredRecord, b: StoredRecord) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.record_type < b.record_type ? -1 : a.record_type > b.record_type ? 1 : a.id! - b.id!);
    const probes = ['zone.example', 'www.zone.example', 'b.zone.example', 'a.b.zone.example', 'y.z.zone.example', 'z.zone.example', 'sub.zone.example', 'q.w.zone.example', 'nothing.zone.example'];
    const view = (z: Zone) => ({ nodes: [...z.nodes], cuts: [...z.cuts].sort(), exists: probes.map((p) => z.exists(p)), serial: z.serial });
    fc.assert(
      fc.property(fc.array(rec, { maxLength: 40 }), fc.boolean(), (list, sorted) => {
        const rows: StoredRecord[] = list.map((r, i) => ({ name: r.name, record_type: r.record_type, data: dataOf(r.record_type, r.n), ttl: r.ttl, id: i + 1 }));
        if (sorted) rows.sort(storeOrder);
        const skips: string[][] = [[], []];
        const built = Zone.build('zone.example', 9, rows, settings, (r, why) => skips[0].push(`${r.id} ${why}`));
        const grouped = Zone.buildGrouped('zone.example', 9, rows, settings, (r, why) => skips[1].push(`${r.id} ${why}`));
        expect(view(built)).toEqual(view(grouped));
        expect(skips[0]).toEqual(skips[1]);
      }),
      { numRuns: 3000 },
    );
  });

  it('every reply to arbitrary bytes is null or a decodable response with the same id (fast-check)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 0, maxLength: 512 }), fc.constantFrom('udp' as const, 'tcp' as const), (bytes, transport) => {
        const msg = Buffer.from(bytes);
        const out = answerQuery(zones, msg, { transport });
        if (out === null) return;
        const p = dnsPacket.decode(out);
        expect(p.id).toBe(msg.readUInt16BE(0));
        expect(p.flag_qr).toBe(true);
        if (transport === 'udp') expect(out.length).toBeLessThanOrEqual(1232);
      }),
      { numRuns: 3000 },
    );
  });

  it('mutated valid queries never throw and answer within the limits (fast-check)', () => {
    const seeds = [
      query('zone.example', 'A', { edns: 1232 }),
      query('x.wild.zone.example', 'TXT'),
      query('many.zone.example', 'A'),
      query('host.sub.zone.example', 'A', { rd: true }),
    ];
    fc.assert(
      fc.property(
        fc.constantFrom(...seeds),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 6 }),
        fc.option(fc.nat()),
        (seed, flips, cut) => {
          const msg = Buffer.from(seed);
          for (const [i, v] of flips) msg[i % msg.length] = v;
          const m = cut === null ? msg : msg.subarray(0, cut % (msg.length + 1));
          const out = answerQuery(zones, m, { transport: 'udp' });
          if (out) expect(dnsPacket.decode(out).flag_qr).toBe(true);
        },
      ),
      { numRuns: 3000 },
    );
  });
});
