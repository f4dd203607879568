// What the authoritative DNS server answers (docs/decisions/0003-dns-propagation.md): SOA/NS from
// the settings, every record type, CNAME chains, wildcards (RFC 4592), NXDOMAIN vs NODATA,
// delegations with glue, nested zones and REFUSED outside our zones — over UDP and TCP, checked
// with dns-packet.
import dnsPacket from 'dns-packet';
import { describe, expect, it } from 'vitest';
import { ENGINES } from '../helpers/app.js';
import { HEX32, HEX32B, ask, head, rr, serveTestZones, soa } from '../helpers/dns.js';

describe.each(ENGINES)('DNS server on %s', (engine) => {
  let port: number;
  let serial: number;
  serveTestZones(engine, (s) => ({ port, serial } = s));

  describe.each(['udp', 'tcp'] as const)('over %s', (transport) => {
    it('SOA at the apex: authoritative, serial = domains.dns_serial, names from DNS_NAMESERVERS / DNS_HOSTMASTER', async () => {
      const { p } = await ask(port, transport, 'zone.example', 'SOA');
      expect(serial).toBe(2); // 1 at creation, +1 for the change that added the records
      expect(head(p)).toEqual({ rcode: 'NOERROR', aa: true, tc: false, rd: false, ra: false, qr: true, opcode: 'QUERY' });
      expect(p.answers.map(rr)).toEqual([{ ...soa('zone.example', serial, 3600) }]);
      expect(p.authorities).toEqual([]);
      expect(p.additionals).toEqual([]);
    });

    it('NS at the apex of every zone come from the settings', async () => {
      for (const zone of ['zone.example', 'other.example', 'child.zone.example']) {
        const { p } = await ask(port, transport, zone, 'NS');
        expect(head(p).aa).toBe(true);
        expect(p.answers.map(rr)).toEqual([
          { name: zone, type: 'NS', ttl: 3600, data: 'ns1.dns.test' },
          { name: zone, type: 'NS', ttl: 3600, data: 'ns2.dns.test' },
        ]);
      }
    });

    it('A, AAAA, MX, TXT, CAA at the apex; SRV, TLSA below it; record TTLs kept', async () => {
      const cases: Array<[string, string, unknown[]]> = [
        ['zone.example', 'A', [{ name: 'zone.example', type: 'A', ttl: 3600, data: '192.0.2.1' }]],
        ['zone.example', 'AAAA', [{ name: 'zone.example', type: 'AAAA', ttl: 3600, data: '2001:db8::1' }]],
        ['zone.example', 'MX', [
          { name: 'zone.example', type: 'MX', ttl: 3600, data: { preference: 10, exchange: 'mail.zone.example' } },
          { name: 'zone.example', type: 'MX', ttl: 3600, data: { preference: 20, exchange: 'mail2.zone.example' } },
        ]],
        ['zone.example', 'TXT', [{ name: 'zone.example', type: 'TXT', ttl: 3600, data: ['v=spf1 mx -all'] }]],
        ['zone.example', 'CAA', [{ name: 'zone.example', type: 'CAA', ttl: 3600, data: { flags: 0, tag: 'issue', value: 'letsencrypt.org' } }]],
        ['_sip._tcp.zone.example', 'SRV', [{ name: '_sip._tcp.zone.example', type: 'SRV', ttl: 3600, data: { priority: 0, weight: 5, port: 5060, target: 'sip.zone.example' } }]],
        ['_443._tcp.www2.zone.example', 'TLSA', [{ name: '_443._tcp.www2.zone.example', type: 'TLSA', ttl: 3600, data: { usage: 3, selector: 1, matchingType: 1, certificate: HEX32 } }]],
        ['mail.zone.example', 'A', [{ name: 'mail.zone.example', type: 'A', ttl: 600, data: '192.0.2.25' }]],
        ['_acme-challenge.zone.example', 'TXT', [{ name: '_acme-challenge.zone.example', type: 'TXT', ttl: 3600, data: ['token-value'] }]],
      ];
      for (const [name, type, answers] of cases) {
        const { p } = await ask(port, transport, name, type);
        expect({ name, type, ...head(p), answers: p.answers.map(rr), authorities: p.authorities }).toEqual({
          name, type, rcode: 'NOERROR', aa: true, tc: false, rd: false, ra: false, qr: true, opcode: 'QUERY', answers, authorities: [],
        });
      }
    });

    it('CNAME: answered at its name and followed within our zones (same zone, another zone)', async () => {
      const w = await ask(port, transport, 'www.zone.example', 'A');
      expect({ ...head(w.p), answers: w.p.answers.map(rr) }).toMatchObject({
        rcode: 'NOERROR', aa: true,
        answers: [
          { name: 'www.zone.example', type: 'CNAME', ttl: 3600, data: 'zone.example' },
          { name: 'zone.example', type: 'A', ttl: 3600, data: '192.0.2.1' },
        ],
      });
      const asCname = await ask(port, transport, 'www.zone.example', 'CNAME');
      expect(asCname.p.answers.map(rr)).toEqual([{ name: 'www.zone.example', type: 'CNAME', ttl: 3600, data: 'zone.example' }]);
      const cross = await ask(port, transport, 'cross.zone.example', 'A');
      expect(cross.p.answers.map(rr)).toEqual([
        { name: 'cross.zone.example', type: 'CNAME', ttl: 3600, data: 'www.other.example' },
        { name: 'www.other.example', type: 'A', ttl: 3600, data: '192.0.2.201' },
      ]);
    });

    it('CNAME out of our zones stops at the CNAME; to a missing name gives NXDOMAIN (RFC 6604); loops end', async () => {
      const ext = await ask(port, transport, 'ext.zone.example', 'A');
      expect({ ...head(ext.p), answers: ext.p.answers.map(rr), authorities: ext.p.authorities }).toMatchObject({
        rcode: 'NOERROR', aa: true, answers: [{ name: 'ext.zone.example', type: 'CNAME', ttl: 3600, data: 'target.elsewhere.example' }], authorities: [],
      });
      const dangling = await ask(port, transport, 'dangling.zone.example', 'A');
      expect({ ...head(dangling.p), answers: dangling.p.answers.map(rr), authorities: dangling.p.authorities.map(rr) }).toMatchObject({
        rcode: 'NXDOMAIN', aa: true,
        answers: [{ name: 'dangling.zone.example', type: 'CNAME', ttl: 3600, data: 'missing.zone.example' }],
        authorities: [soa('zone.example', serial)],
      });
      const loop = await ask(port, transport, 'loop1.zone.example', 'A');
      expect(loop.p.rcode).toBe('NOERROR');
      expect(loop.p.answers.map(rr)).toEqual([
        { name: 'loop1.zone.example', type: 'CNAME', ttl: 3600, data: 'loop2.zone.example' },
        { name: 'loop2.zone.example', type: 'CNAME', ttl: 3600, data: 'loop1.zone.example' },
      ]);
    });

    it('wildcards (RFC 4592): synthesis at any depth, not for existing names, NODATA for other types, CNAME wildcards', async () => {
      const one = await ask(port, transport, 'x.wild.zone.example', 'A');
      expect({ ...head(one.p), answers: one.p.answers.map(rr) }).toMatchObject({
        rcode: 'NOERROR', aa: true, answers: [{ name: 'x.wild.zone.example', type: 'A', ttl: 3600, data: '192.0.2.99' }],
      });
      const deep = await ask(port, transport, 'y.x.wild.zone.example', 'TXT');
      expect(deep.p.answers.map(rr)).toEqual([{ name: 'y.x.wild.zone.example', type: 'TXT', ttl: 3600, data: ['wildcard'] }]);
      const real = await ask(port, transport, 'real.wild.zone.example', 'A');
      expect(real.p.answers.map(rr)).toEqual([{ name: 'real.wild.zone.example', type: 'A', ttl: 3600, data: '192.0.2.100' }]);
      // An existing name never falls back to the wildcard, not even for a type it lacks.
      const realTxt = await ask(port, transport, 'real.wild.zone.example', 'TXT');
      expect({ rcode: realTxt.p.rcode, answers: realTxt.p.answers, authorities: realTxt.p.authorities.map(rr) }).toEqual({
        rcode: 'NOERROR', answers: [], authorities: [soa('zone.example', serial)],
      });
      const noType = await ask(port, transport, 'x.wild.zone.example', 'MX');
      expect({ rcode: noType.p.rcode, aa: noType.p.flag_aa, answers: noType.p.answers, authorities: noType.p.authorities.map(rr) }).toEqual({
        rcode: 'NOERROR', aa: true, answers: [], authorities: [soa('zone.example', serial)],
      });
      const cw = await ask(port, transport, 'anything.cw.zone.example', 'A');
      expect(cw.p.answers.map(rr)).toEqual([
        { name: 'anything.cw.zone.example', type: 'CNAME', ttl: 3600, data: 'mail.zone.example' },
        { name: 'mail.zone.example', type: 'A', ttl: 600, data: '192.0.2.25' },
      ]);
      // A wildcard at the apex answers every missing name of its zone.
      const apexWild = await ask(port, transport, 'nothing.other.example', 'A');
      expect(apexWild.p.answers.map(rr)).toEqual([{ name: 'nothing.other.example', type: 'A', ttl: 3600, data: '192.0.2.200' }]);
    });

    it('NXDOMAIN vs NODATA: both authoritative with the SOA (TTL = MINIMUM) in the authority section', async () => {
      const nx = await ask(port, transport, 'nope.zone.example', 'A');
      expect({ ...head(nx.p), answers: nx.p.answers, authorities: nx.p.authorities.map(rr) }).toEqual({
        rcode: 'NXDOMAIN', aa: true, tc: false, rd: false, ra: false, qr: true, opcode: 'QUERY', answers: [], authorities: [soa('zone.example', serial)],
      });
      const nodata = await ask(port, transport, 'mail.zone.example', 'AAAA');
      expect({ ...head(nodata.p), answers: nodata.p.answers, authorities: nodata.p.authorities.map(rr) }).toEqual({
        rcode: 'NOERROR', aa: true, tc: false, rd: false, ra: false, qr: true, opcode: 'QUERY', answers: [], authorities: [soa('zone.example', serial)],
      });
      // Empty non-terminals exist: b.c and c (from a.b.c) are NODATA, not NXDOMAIN; the wildcard's parent too.
      for (const ent of ['b.c.zone.example', 'c.zone.example', 'wild.zone.example']) {
        const r = await ask(port, transport, ent, 'A');
        expect({ ent, rcode: r.p.rcode, answers: r.p.answers, authorities: r.p.authorities.map(rr) }).toEqual({
          ent, rcode: 'NOERROR', answers: [], authorities: [soa('zone.example', serial)],
        });
      }
    });

    it('only active and deleting records are served; a record whose data does not parse is left out', async () => {
      const pending = await ask(port, transport, 'pending.zone.example', 'A');
      expect(pending.p.rcode).toBe('NXDOMAIN');
      const going = await ask(port, transport, 'going.zone.example', 'A');
      expect(going.p.answers.map(rr)).toEqual([{ name: 'going.zone.example', type: 'A', ttl: 3600, data: '192.0.2.78' }]);
      const bad = await ask(port, transport, 'bad.zone.example', 'A');
      expect({ rcode: bad.p.rcode, answers: bad.p.answers }).toEqual({ rcode: 'NXDOMAIN', answers: [] });
    });

    it('NS below the apex is a delegation: a referral without AA, with glue; DS at the cut is ours', async () => {
      for (const [name, type] of [['host.sub.zone.example', 'A'], ['sub.zone.example', 'NS'], ['sub.zone.example', 'A'], ['ns1.sub.zone.example', 'A']]) {
        const r = await ask(port, transport, name, type);
        expect({ name, ...head(r.p), answers: r.p.answers, authorities: r.p.authorities.map(rr), additionals: r.p.additionals.map(rr) }).toEqual({
          name, rcode: 'NOERROR', aa: false, tc: false, rd: false, ra: false, qr: true, opcode: 'QUERY', answers: [],
          authorities: [
            { name: 'sub.zone.example', type: 'NS', ttl: 3600, data: 'ns1.sub.zone.example' },
            { name: 'sub.zone.example', type: 'NS', ttl: 3600, data: 'ns.elsewhere.example' },
          ],
          additionals: [{ name: 'ns1.sub.zone.example', type: 'A', ttl: 3600, data: '192.0.2.53' }],
        });
      }
      const ds = await ask(port, transport, 'sub.zone.example', 'DS');
      expect({ ...head(ds.p), answers: ds.p.answers.map(rr) }).toMatchObject({
        rcode: 'NOERROR', aa: true, answers: [{ name: 'sub.zone.example', type: 'DS', ttl: 3600, data: { keyTag: 12345, algorithm: 13, digestType: 2, digest: HEX32B } }],
      });
    });

    it('a zone inside another zone of ours answers for itself; DS at its apex comes from the parent side', async () => {
      const www = await ask(port, transport, 'www.child.zone.example', 'A');
      expect(www.p.answers.map(rr)).toEqual([{ name: 'www.child.zone.example', type: 'A', ttl: 3600, data: '192.0.2.210' }]);
      const childSoa = await ask(port, transport, 'nope.child.zone.example', 'A');
      expect(childSoa.p.authorities.map(rr)).toEqual([soa('child.zone.example', 2)]);
      const ds = await ask(port, transport, 'child.zone.example', 'DS');
      expect({ rcode: ds.p.rcode, aa: ds.p.flag_aa, authorities: ds.p.authorities.map(rr) }).toEqual({
        rcode: 'NOERROR', aa: true, authorities: [soa('zone.example', serial)],
      });
    });

    it('REFUSED, without AA, for names outside our zones (and for domains without presence)', async () => {
      for (const name of ['example.org', 'nopresence.example', 'www.nopresence.example', 'example', '.', 'zone.example.org']) {
        const r = await ask(port, transport, name, 'A');
        expect({ name, ...head(r.p), answers: r.p.answers, authorities: r.p.authorities }).toEqual({
          name, rcode: 'REFUSED', aa: false, tc: false, rd: false, ra: false, qr: true, opcode: 'QUERY', answers: [], authorities: [],
        });
      }
    });

    it('names match ignoring case; the question is echoed exactly as asked', async () => {
      const { p, raw, sent } = await ask(port, transport, 'WwW.ZoNe.ExAmPlE', 'A');
      expect(p.questions).toEqual([{ name: 'WwW.ZoNe.ExAmPlE', type: 'A', class: 'IN' }]);
      expect(raw.subarray(12, sent.length)).toEqual(sent.subarray(12));
      expect(p.answers.map(rr)).toEqual([
        { name: 'WwW.ZoNe.ExAmPlE', type: 'CNAME', ttl: 3600, data: 'zone.example' },
        { name: 'zone.example', type: 'A', ttl: 3600, data: '192.0.2.1' },
      ]);
      expect(p.id).toBe(dnsPacket.decode(sent).id);
    });

    it('RD set: answered normally, RD copied, RA stays 0', async () => {
      const { p } = await ask(port, transport, 'zone.example', 'A', { rd: true });
      expect(head(p)).toEqual({ rcode: 'NOERROR', aa: true, tc: false, rd: true, ra: false, qr: true, opcode: 'QUERY' });
      expect(p.answers.map(rr)).toEqual([{ name: 'zone.example', type: 'A', ttl: 3600, data: '192.0.2.1' }]);
    });

    it('ANY answers every record set at the name', async () => {
      const { p } = await ask(port, transport, 'zone.example', 'ANY', { edns: 1232 });
      expect(p.flag_aa).toBe(true);
      expect(p.answers.map((a) => a.type)).toEqual(['SOA', 'NS', 'NS', 'A', 'AAAA', 'MX', 'MX', 'TXT', 'CAA']);
    });
  });
});
