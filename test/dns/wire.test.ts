// The DNS server's wire handling (docs/decisions/0003-dns-propagation.md; RFC 1035 §4.2, RFC 6891):
// long TXT split into 255-byte strings, EDNS0 (OPT, BADVERS), truncation (TC) and retry over TCP,
// malformed messages (FORMERR, NOTIMP, no reply) and several queries on one TCP connection.
import dnsPacket, { type DecodedPacket } from 'dns-packet';
import { describe, expect, it } from 'vitest';
import { ENGINES } from '../helpers/app.js';
import { LONG_TXT, OPT, ask, head, query, rr, serveTestZones, tcp, udp } from '../helpers/dns.js';

describe.each(ENGINES)('DNS server on %s', (engine) => {
  let port: number;
  serveTestZones(engine, (s) => ({ port } = s));

  describe.each(['udp', 'tcp'] as const)('over %s', (transport) => {
    it('a TXT value longer than 255 bytes goes out as 255-byte strings (UTF-8 bytes, not characters)', async () => {
      const { p } = await ask(port, transport, 'long.zone.example', 'TXT', { edns: 1232 });
      const strings = p.answers[0].data as Buffer[];
      expect(strings.map((b) => b.length)).toEqual([255, 255, Buffer.byteLength(LONG_TXT) - 510]);
      expect(Buffer.concat(strings).toString('utf8')).toBe(LONG_TXT);
    });

    it('EDNS0: OPT in the reply only when asked with one; version > 0 gets BADVERS', async () => {
      const plain = await ask(port, transport, 'zone.example', 'A');
      expect(plain.p.additionals).toEqual([]);
      const edns = await ask(port, transport, 'zone.example', 'A', { edns: 4096 });
      expect(edns.p.additionals.map(rr)).toEqual([OPT]);
      const twoOpts = dnsPacket.encode({ type: 'query', id: 78, questions: [{ name: 'zone.example', type: 'A' }], additionals: [{ type: 'OPT', name: '.', udpPayloadSize: 1232 }, { type: 'OPT', name: '.', udpPayloadSize: 1232 }] });
      const two = dnsPacket.decode((transport === 'udp' ? await udp(port, twoOpts) : (await tcp(port, [twoOpts]))[0])!);
      expect({ id: two.id, rcode: two.rcode, answers: two.answers }).toEqual({ id: 78, rcode: 'FORMERR', answers: [] });
      const v1 = dnsPacket.encode({ type: 'query', id: 77, questions: [{ name: 'zone.example', type: 'A' }], additionals: [{ type: 'OPT', name: '.', udpPayloadSize: 1232, ednsVersion: 1 }] });
      const raw = transport === 'udp' ? await udp(port, v1) : (await tcp(port, [v1]))[0];
      const p = dnsPacket.decode(raw!);
      // BADVERS = 16: the upper bits in the OPT, 0 in the header.
      expect({ ...head(p), answers: p.answers, opt: p.additionals.map(rr) }).toEqual({
        rcode: 'NOERROR', aa: false, tc: false, rd: false, ra: false, qr: true, opcode: 'QUERY', answers: [], opt: [{ ...OPT, extendedRcode: 1 }],
      });
    });
  });

  describe('truncation', () => {
    const count = (p: DecodedPacket) => p.answers.length;
    it('without EDNS a UDP reply over 512 bytes (names compressed) is truncated: TC, no records; TCP gives the whole answer', async () => {
      const u = await ask(port, 'udp', 'some.zone.example', 'A');
      expect({ ...head(u.p), answers: u.p.answers, authorities: u.p.authorities, additionals: u.p.additionals }).toEqual({
        rcode: 'NOERROR', aa: true, tc: true, rd: false, ra: false, qr: true, opcode: 'QUERY', answers: [], authorities: [], additionals: [],
      });
      expect(u.raw.length).toBeLessThanOrEqual(512);
      const t = await ask(port, 'tcp', 'some.zone.example', 'A');
      expect({ tc: t.p.flag_tc, n: count(t.p) }).toEqual({ tc: false, n: 40 });
    });

    it('with EDNS the advertised size is respected (at least 512, at most 1232)', async () => {
      const fits = await ask(port, 'udp', 'some.zone.example', 'A', { edns: 1232 });
      expect({ tc: fits.p.flag_tc, n: count(fits.p), opt: fits.p.additionals.map(rr) }).toEqual({ tc: false, n: 40, opt: [OPT] });
      const small = await ask(port, 'udp', 'some.zone.example', 'A', { edns: 600 });
      expect({ tc: small.p.flag_tc, n: count(small.p), opt: small.p.additionals.map(rr) }).toEqual({ tc: true, n: 0, opt: [OPT] });
      const tiny = await ask(port, 'udp', 'mail.zone.example', 'A', { edns: 100 });
      expect({ tc: tiny.p.flag_tc, n: count(tiny.p) }).toEqual({ tc: false, n: 1 });
      // Larger than we ever send over UDP: still truncated at 1232, whatever 4096 says.
      const big = await ask(port, 'udp', 'many.zone.example', 'A', { edns: 4096 });
      expect({ tc: big.p.flag_tc, n: count(big.p), len: big.raw.length <= 1232 }).toEqual({ tc: true, n: 0, len: true });
      const overTcp = await ask(port, 'tcp', 'many.zone.example', 'A', { edns: 4096 });
      expect({ tc: overTcp.p.flag_tc, n: count(overTcp.p) }).toEqual({ tc: false, n: 100 });
    });
  });

  describe('malformed and unusual messages', () => {
    const header = (id: number, flags: number, qd: number, an = 0, ns = 0, ar = 0) => {
      const b = Buffer.alloc(12);
      b.writeUInt16BE(id, 0);
      b.writeUInt16BE(flags, 2);
      b.writeUInt16BE(qd, 4);
      b.writeUInt16BE(an, 6);
      b.writeUInt16BE(ns, 8);
      b.writeUInt16BE(ar, 10);
      return b;
    };
    const question = query('zone.example', 'A').subarray(12);

    it('FORMERR for no question, two questions, a cut-off question, trailing garbage in counted sections', async () => {
      const cases: Array<[string, Buffer]> = [
        ['no question', header(1, 0, 0)],
        ['two questions', Buffer.concat([header(2, 0, 2), question, question])],
        ['cut-off question', Buffer.concat([header(3, 0, 1), question.subarray(0, 5)])],
        ['answer count without answers', Buffer.concat([header(4, 0, 1, 3), question])],
        ['label longer than 63', Buffer.concat([header(5, 0, 1), Buffer.from([64]), Buffer.alloc(64, 97), Buffer.from([0, 0, 1, 0, 1])])],
      ];
      for (const [what, msg] of cases) {
        for (const transport of ['udp', 'tcp'] as const) {
          const raw = transport === 'udp' ? await udp(port, msg) : (await tcp(port, [msg]))[0];
          expect(raw, `${what} over ${transport}`).toBeTruthy();
          const p = dnsPacket.decode(raw!);
          expect({ what, id: p.id, rcode: p.rcode, qr: p.flag_qr, aa: p.flag_aa, answers: p.answers }).toEqual({
            what, id: msg.readUInt16BE(0), rcode: 'FORMERR', qr: true, aa: false, answers: [],
          });
        }
      }
    });

    it('NOTIMP for opcodes other than QUERY (NOTIFY, UPDATE, IQUERY), opcode echoed', async () => {
      for (const opcode of [1, 4, 5]) {
        const msg = Buffer.concat([header(90 + opcode, opcode << 11, 1), question]);
        const p = dnsPacket.decode((await udp(port, msg))!);
        expect({ opcode: (p.flags >> 11) & 0xf, rcode: p.rcode, qr: p.flag_qr, answers: p.answers, questions: p.questions }).toEqual({
          opcode, rcode: 'NOTIMP', qr: true, answers: [], questions: [{ name: 'zone.example', type: 'A', class: 'IN' }],
        });
      }
    });

    it('no reply to responses or to fragments shorter than a header; other classes and zone transfers are refused', async () => {
      expect(await udp(port, Buffer.concat([header(7, 0x8000, 1), question]), 300)).toBeNull();
      expect(await udp(port, Buffer.from([1, 2, 3]), 300)).toBeNull();
      for (const [name, type, klass] of [['zone.example', 'A', 'CH'], ['zone.example', 'AXFR', 'IN'], ['zone.example', 'IXFR', 'IN']]) {
        const { p } = await ask(port, 'tcp', name, type, { klass });
        expect({ type, klass, rcode: p.rcode, aa: p.flag_aa, answers: p.answers }).toEqual({ type, klass, rcode: 'REFUSED', aa: false, answers: [] });
      }
    });

    it('TCP: several queries on one connection, also when the bytes arrive one at a time', async () => {
      const msgs = [query('zone.example', 'A', { id: 11 }), query('mail.zone.example', 'A', { id: 12 }), query('nope.zone.example', 'A', { id: 13 })];
      for (const dribble of [false, true]) {
        const replies = (await tcp(port, msgs, { dribble })).map((r) => dnsPacket.decode(r));
        expect(replies.map((p) => [p.id, p.rcode, p.answers.length])).toEqual([[11, 'NOERROR', 1], [12, 'NOERROR', 1], [13, 'NXDOMAIN', 0]]);
      }
    });
  });
});
