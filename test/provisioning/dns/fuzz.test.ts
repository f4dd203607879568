// Fuzzing the DNS packet path (issue 3 item 3): garbage over UDP and TCP never stops a running server,
// and without sockets every reply to arbitrary or mutated bytes is null or a decodable response;
// presentation forms of record data parse as the wire expects (provisioning/dns/rdata.ts).
import dgram from 'node:dgram';
import dnsPacket from 'dns-packet';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ENGINES } from '../../helpers/app.js';
import { ZONE, ask, query, rr, serveTestZones, tcp } from '../../helpers/dns.js';
import { answerQuery } from '../../../src/provisioning/dns/query.js';
import { Zone, ZoneSet } from '../../../src/provisioning/dns/zone.js';
import { parseCaaValue, parseName, splitTxt, toAnswer } from '../../../src/provisioning/dns/rdata.js';

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
