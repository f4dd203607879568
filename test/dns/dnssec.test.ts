// DNSSEC from hostplane's own DNS server (docs/decisions/0032-dnssec.md), checked by real tools only:
// an AXFR of a signed zone (CDS/CDNSKEY included) passes ldns-verify-zone and kzonecheck --dnssec on,
// after a change too;
// delv and Unbound, with the zone's DS as trust anchor, validate answers, denials and wildcards, from
// hostplane and from NSD and Knot secondaries. In the process: the chain's canonical order, and a zone
// changed owner by owner against the same zone signed whole.
import dnsPacket, { type DecodedPacket } from 'dns-packet';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, freshStore, testConfig, type TestStore } from '../helpers/app.js';
import { ENV, ZONE, addDomain, addRecords, change, customer, runDig, tcp, udp, type Row } from '../helpers/dns.js';
import { axfrText, delv, dnssecToolsMissing, kzonecheck, ldnsVerify, startTamperer, startUnbound, toolDir } from '../helpers/dnssec.js';
import { requirable } from '../helpers/required.js';
import { secondaryMissing, startSecondary, testKey, type RunningSecondary } from '../helpers/secondaries.js';
import { elapsedUntil } from '../helpers/wait.js';
import { soaSerial } from '../../src/provisioning/dns/driver.js';
import { DnsServer } from '../../src/dns/server.js';
import { answerQuery, quickAnswer } from '../../src/dns/query.js';
import { DnssecRepository } from '../../src/dns/dnssec.repository.js';
import { canonicalKey, dsText, newPrivateKey, signingKey, type SigningKey } from '../../src/dns/dnssec-keys.js';
import { canonicalCompare } from '../../src/dns/signed-form.js';
import { SignedZones } from '../../src/dns/signed-zones.js';
import { ZoneSigner } from '../../src/dns/zone-signer.js';
import { SOA_TIMERS, Zone } from '../../src/dns/zone.js';
import { zoneRecords } from '../../src/dns/transfer-messages.js';
import type { StoredRecord } from '../../src/dns/rdata.js';
import { DnsSecondariesService } from '../../src/admin/dns-secondaries.service.js';

const SIGNED = { ...ENV, DNS_DNSSEC: 'on' };
/** Eleven TXT records that fit a 1232-byte UDP reply alone, not with their signature. */
const FITS: Row[] = Array.from({ length: 11 }, (_, i): Row => ['fits', 'TXT', `${i}`.padEnd(90, 'x')]);

/** A query with EDNS0 (1232), the DO bit when `dnssecOk`, and the AD bit when `ad`. */
const doQuery = (name: string, type: string, dnssecOk: boolean, ad = false) =>
  dnsPacket.encode({
    type: 'query',
    id: 77,
    flags: ad ? dnsPacket.AUTHENTIC_DATA : 0,
    questions: [{ name, type, class: 'IN' }],
    additionals: [{ type: 'OPT', name: '.', udpPayloadSize: 1232, flags: dnssecOk ? dnsPacket.DNSSEC_OK : 0 }],
  });
const kinds = (p: DecodedPacket, section: 'answers' | 'authorities') =>
  p[section].map((a) => (a.type === 'RRSIG' ? `RRSIG ${(a.data as { typeCovered: string }).typeCovered}` : `${a.type} ${a.name}`));
const optFlags = (p: DecodedPacket) => p.additionals.find((a) => a.type === 'OPT')?.flags ?? -1;

// The chain is kept as the owners' names (docs/decisions/0032-dnssec.md): its order must be RFC 4034
// §6.1's, which canonicalKey spells out as strings; ldns-verify-zone checks it on the zones below.
it('names compare in canonical order as their canonical keys do (fast-check, docs/decisions/0032-dnssec.md)', () => {
  const label = fc.stringMatching(/^[a-z0-9_*-]{0,4}$/);
  const name = fc.array(label, { minLength: 0, maxLength: 4 }).map((ls) => ls.join('.'));
  const order = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  fc.assert(fc.property(name, name, (a, b) => Math.sign(canonicalCompare(a, b)) === order(canonicalKey(a), canonicalKey(b))), { numRuns: 5000 });
  expect(['b.a', 'a', 'z.a', 'a.b', 'ab', '*.a', 'a-.a', ''].sort(canonicalCompare)).toEqual(['', 'a', '*.a', 'a-.a', 'b.a', 'z.a', 'ab', 'a.b']);
});

describe.each(ENGINES)('DNSSEC on %s', (engine) => {
  requirable(dnssecToolsMissing())('signed zones checked by ldns-verify-zone, kzonecheck and delv', () => {
    let ts: TestStore;
    let dns: DnsServer;
    let port: number;
    let key: SigningKey;
    const xfr = testKey('xfr-key');
    const dir = toolDir();

    beforeAll(async () => {
      ts = await freshStore(engine);
      const cust = await customer(ts.store);
      await addDomain(ts.store, cust, 'zone.example');
      await addRecords(ts.store, 'zone.example', [...ZONE, ...FITS]);
      await new DnsSecondariesService(ts.store.db).add({ name: 'dig', address: '127.0.0.1:9', keyFileText: xfr.bindFile });
      dns = await DnsServer.start({ store: ts.store, config: testConfig(SIGNED), listen: '127.0.0.1:0' });
      port = dns.port!;
      key = await new DnssecRepository(ts.store.db, []).signingKey('zone.example', 13);
    });
    afterAll(async () => {
      await dns?.stop();
      await ts?.drop();
    });

    it('an AXFR of the signed zone passes ldns-verify-zone and kzonecheck --dnssec on', async () => {
      const text = await axfrText(port, 'zone.example', xfr);
      expect(text).toMatch(/\sDNSKEY\s+257 3 13 /);
      expect(text).toMatch(/\sRRSIG\s+SOA 13 2 /);
      // CDS/CDNSKEY (RFC 7344) at the apex, signed, naming the zone's key.
      expect(text).toMatch(new RegExp(`^zone\\.example\\.\\s+\\d+\\s+IN\\s+CDS\\s+${key.keyTag} 13 2 `, 'm'));
      expect(text).toMatch(/^zone\.example\.\s+\d+\s+IN\s+CDNSKEY\s+257 3 13 /m);
      expect(text).toMatch(/\sRRSIG\s+CDS 13 2 /);
      expect(text).toMatch(/\sRRSIG\s+CDNSKEY 13 2 /);
      const ldns = await ldnsVerify(text, dir);
      expect(ldns.output).toMatch(/Zone is verified and complete/);
      expect(ldns.ok).toBe(true);
      const knot = await kzonecheck(text, 'zone.example', dir);
      expect(knot.output).toBe('');
      expect(knot.ok).toBe(true);
    });

    it('a record changed in the store: the zone verifies again with the new serial, IXFR carries the signatures, delv validates the new answer', async () => {
      const before = dns.zones.get('zone.example')!.serial;
      await change(ts.store, 'zone.example', (db) => db.updateTable('dns_records').set({ data: '192.0.2.26' }).where('domain', '=', 'zone.example').where('name', '=', 'mail').execute(), ['mail']);
      await addRecords(ts.store, 'zone.example', [['new.deep', 'A', '192.0.2.44'], ['aaa', 'TXT', 'first in the chain']]);
      await dns.sync();
      const text = await axfrText(port, 'zone.example', xfr);
      expect(text).toMatch(/^mail\.zone\.example\.\s+600\s+IN\s+A\s+192\.0\.2\.26$/m);
      expect(text).toMatch(/^new\.deep\.zone\.example\.\s+\d+\s+IN\s+A\s+192\.0\.2\.44$/m);
      const ldns = await ldnsVerify(text, dir);
      expect(ldns.output).toMatch(/Zone is verified and complete/);
      const knot = await kzonecheck(text, 'zone.example', dir);
      expect(knot.output).toBe('');
      // IXFR from the serial before: the old and new signatures of what changed, not the whole zone.
      const ixfr = await runDig(port, '+nocmd', '+nostats', '-y', `hmac-sha256:${xfr.name}:${xfr.secret}`, 'zone.example', `IXFR=${before}`);
      const lines = ixfr.split('\n').filter((l) => l && !l.startsWith(';') && !/\sTSIG\s/.test(l));
      expect(lines.filter((l) => /\sSOA\s/.test(l)).length).toBeGreaterThanOrEqual(4);
      expect(lines.some((l) => /^mail\.zone\.example\.\s.*\sRRSIG\s+A 13 3 600 /.test(l))).toBe(true);
      expect(lines.some((l) => /\sRRSIG\s+SOA 13 2 /.test(l))).toBe(true);
      expect(lines.length).toBeLessThan(text.split('\n').length / 2);
      const out = await ask('mail.zone.example', 'A');
      expect(out).toMatch(/^; fully validated\nmail\.zone\.example\.\s+600\s+IN\s+A\s+192\.0\.2\.26$/m);
    });

    it('a delegation added, then removed: the zone verifies each time; its glue is neither signed nor in the NSEC chain', async () => {
      const before = dns.zones.get('zone.example')!.serial;
      await addRecords(ts.store, 'zone.example', [['deleg', 'NS', 'ns.deleg.zone.example'], ['ns.deleg', 'A', '192.0.2.60']]);
      await dns.sync();
      const text = await axfrText(port, 'zone.example', xfr);
      // Signed again whole: an IXFR from before gets the whole zone, glue included.
      const ixfr = await runDig(port, '+nocmd', '+nostats', '-y', `hmac-sha256:${xfr.name}:${xfr.secret}`, 'zone.example', `IXFR=${before}`);
      expect(ixfr).toMatch(/^ns\.deleg\.zone\.example\.\s+\d+\s+IN\s+A\s+192\.0\.2\.60$/m);
      expect(text).toMatch(/^ns\.deleg\.zone\.example\.\s+\d+\s+IN\s+A\s+192\.0\.2\.60$/m);
      expect(text).not.toMatch(/^ns\.deleg\.zone\.example\.\s+\d+\s+IN\s+(RRSIG|NSEC)\s/m);
      expect(text).toMatch(/^deleg\.zone\.example\.\s+\d+\s+IN\s+RRSIG\s+NSEC /m);
      expect(text).not.toMatch(/^deleg\.zone\.example\.\s+\d+\s+IN\s+RRSIG\s+NS /m);
      expect((await ldnsVerify(text, dir)).output).toMatch(/Zone is verified and complete/);
      expect((await kzonecheck(text, 'zone.example', dir)).output).toBe('');
      await change(ts.store, 'zone.example', (db) => db.deleteFrom('dns_records').where('domain', '=', 'zone.example').where('name', '=', 'deleg').execute(), ['deleg']);
      await dns.sync();
      const after = await axfrText(port, 'zone.example', xfr);
      expect(after).toMatch(/^ns\.deleg\.zone\.example\.\s+\d+\s+IN\s+RRSIG\s+A /m);
      expect((await ldnsVerify(after, dir)).output).toMatch(/Zone is verified and complete/);
      expect((await kzonecheck(after, 'zone.example', dir)).output).toBe('');
    });

    it('a change of the whole zone keeps the signatures of what stayed: its IXFR step is the SOA and its signature', async () => {
      const before = dns.zones.get('zone.example')!.serial;
      await change(ts.store, 'zone.example', async () => {});
      await dns.sync();
      const ixfr = await runDig(port, '+nocmd', '+nostats', '-y', `hmac-sha256:${xfr.name}:${xfr.secret}`, 'zone.example', `IXFR=${before}`);
      const lines = ixfr.split('\n').filter((l) => l && !l.startsWith(';') && !/\sTSIG\s/.test(l)).map((l) => l.split(/\s+/).slice(3, 5).join(' '));
      expect(lines).toEqual(['SOA ns1.dns.test.', 'SOA ns1.dns.test.', 'RRSIG SOA', 'SOA ns1.dns.test.', 'RRSIG SOA', 'SOA ns1.dns.test.']);
      const text = await axfrText(port, 'zone.example', xfr);
      expect((await ldnsVerify(text, dir)).output).toMatch(/Zone is verified and complete/);
    });

    it('a zone changed owner by owner serves what the changed zone signed whole serves, with two keys (Ed25519 signs deterministically; docs/decisions/0032-dnssec.md)', () => {
      const settings = { nameservers: ['ns1.dns.test'], hostmaster: 'hostmaster.dns.test', ttl: 3600, ...SOA_TIMERS };
      const keys = [signingKey(newPrivateKey(15), 15), signingKey(newPrivateKey(15), 15)];
      const rows = (list: [string, string, string][]): StoredRecord[] => list.map(([name, record_type, data], id) => ({ name, record_type, data, ttl: 60, id }));
      const before = rows([['', 'CAA', '0 issue "letsencrypt.org"'], ['www', 'A', '192.0.2.1'], ['*.wild', 'TXT', '"w"'], ['a.b.c', 'A', '192.0.2.3'], ['deleg', 'NS', 'ns.deleg.zone.example.'], ['ns.deleg', 'A', '192.0.2.9'], ['mail', 'A', '192.0.2.5'], ['x-y', 'TXT', '"t"']]);
      const after = rows([['', 'CAA', '0 issue "letsencrypt.org"'], ['www', 'A', '192.0.2.1'], ['www', 'A', '192.0.2.2'], ['*.wild', 'TXT', '"w"'], ['a.b.c', 'A', '192.0.2.3'], ['deleg', 'NS', 'ns.deleg.zone.example.'], ['ns.deleg', 'A', '192.0.2.9'], ['new', 'A', '192.0.2.7'], ['x-y', 'TXT', '"t"']]);
      const signed = (records: StoredRecord[], serial: number) => {
        const zone = Zone.build('zone.example', serial, records, settings);
        const signer = new ZoneSigner({ sign: keys, cds: [keys[0]] }, 14 * 86400, 7 * 86400);
        signer.signAll(zone);
        zone.signer = signer;
        return zone;
      };
      const zone = signed(before, 1);
      const owners = ['www.zone.example', 'new.zone.example', 'mail.zone.example'];
      const diff = new SignedZones(ts.store, testConfig(SIGNED)).replaceOwners(zone, 2, owners, after.filter((r) => owners.includes(`${r.name}.zone.example`)), () => {});
      const hex = (z: Zone) => zoneRecords(z).map((b) => b.toString('hex')).sort();
      expect(hex(zone)).toEqual(hex(signed(after, 2)));
      // www's set, mail gone, new came: their NSEC and signatures (two keys), the predecessors' NSEC, the SOA's signatures.
      expect(diff && diff.added.length > 0 && diff.removed.length > 0).toBe(true);
    });

    it('with DO an answer carries its RRSIG and DO is copied; AD is never set, even when asked for', async () => {
      const p = dnsPacket.decode((await udp(port, doQuery('zone.example', 'A', true, true)))!);
      expect({ rcode: p.rcode, aa: p.flag_aa, ad: p.flag_ad, tc: p.flag_tc }).toEqual({ rcode: 'NOERROR', aa: true, ad: false, tc: false });
      expect(kinds(p, 'answers')).toEqual(['A zone.example', 'RRSIG A']);
      expect(p.answers[1]).toMatchObject({ name: 'zone.example', ttl: 3600, data: { typeCovered: 'A', algorithm: 13, labels: 2, originalTTL: 3600, keyTag: key.keyTag, signersName: 'zone.example' } });
      expect(optFlags(p) & dnsPacket.DNSSEC_OK).toBe(dnsPacket.DNSSEC_OK);
      const nx = dnsPacket.decode((await udp(port, doQuery('nothere.zone.example', 'A', true)))!);
      expect({ rcode: nx.rcode, ad: nx.flag_ad }).toEqual({ rcode: 'NXDOMAIN', ad: false });
      expect(kinds(nx, 'authorities')).toEqual(['SOA zone.example', 'RRSIG SOA', 'NSEC many.zone.example', 'RRSIG NSEC', 'NSEC zone.example', 'RRSIG NSEC']);
    });

    it('with DO the quick path answers as the general path does (docs/decisions/0014-dns-zones-in-wire-form.md)', () => {
      const names = ['zone.example', 'mail.zone.example', 'www.zone.example', 'fits.zone.example', 'x.wild.zone.example', 'nothere.zone.example', 'c.zone.example', 'sub.zone.example', 'many.zone.example', 'Zone.Example'];
      let quick = 0;
      for (const name of names) {
        for (const type of ['A', 'AAAA', 'MX', 'TXT', 'CNAME', 'SOA', 'NS', 'DNSKEY', 'CDS', 'CDNSKEY', 'NSEC', 'RRSIG', 'DS', 'CAA']) {
          for (const transport of ['udp', 'tcp'] as const) {
            const msg = doQuery(name, type, true);
            const out = answerQuery(dns.zones, msg, { transport });
            let general = answerQuery(dns.zones, msg, { transport, general: true });
            // Owner names are compressed on the quick path: what the general path truncates may fit.
            if (general && dnsPacket.decode(general).flag_tc && out && !dnsPacket.decode(out).flag_tc) general = answerQuery(dns.zones, msg, { transport: 'tcp', general: true });
            expect(out && dnsPacket.decode(out), `${name} ${type} ${transport}`).toEqual(general && dnsPacket.decode(general));
            if (out && general && out.length < general.length) quick++;
          }
        }
      }
      expect(quick).toBeGreaterThan(30);
    });

    it.each([
      ['nothere.zone.example', 'A', 'NXDOMAIN', ['SOA zone.example', 'RRSIG SOA', 'NSEC many.zone.example', 'RRSIG NSEC', 'NSEC zone.example', 'RRSIG NSEC']],
      ['zz.deep.zone.example', 'A', 'NXDOMAIN', null],
      ['zone.example', 'SRV', 'NOERROR', ['SOA zone.example', 'RRSIG SOA', 'NSEC zone.example', 'RRSIG NSEC']],
      ['b.c.zone.example', 'A', 'NOERROR', null],
      ['x.y.wild.zone.example', 'TXT', 'NOERROR', null],
      ['x.wild.zone.example', 'MX', 'NOERROR', null],
    ] as const)('with DO the denial or wildcard answer to %s %s is copied on the quick path (docs/decisions/0032-dnssec.md)', (name, type, rcode, authority) => {
      const msg = doQuery(name, type, true);
      const out = quickAnswer(dns.zones, msg, { transport: 'udp' });
      expect(out).not.toBeNull();
      const p = dnsPacket.decode(out!);
      expect(p.rcode).toBe(rcode);
      if (authority) expect(kinds(p, 'authorities')).toEqual(authority);
      expect(p).toEqual(dnsPacket.decode(answerQuery(dns.zones, msg, { transport: 'udp', general: true })!));
    });

    it('without DO the answers are those of the unsigned zone', async () => {
      for (const transport of ['udp', 'tcp'] as const) {
        const msg = doQuery('zone.example', 'A', false);
        const raw = transport === 'udp' ? await udp(port, msg) : (await tcp(port, [msg]))[0];
        const p = dnsPacket.decode(raw!);
        expect(kinds(p, 'answers')).toEqual(['A zone.example']);
        expect(p.authorities).toEqual([]);
        expect(optFlags(p)).toBe(0);
        const nx = dnsPacket.decode((await udp(port, doQuery('nothere.zone.example', 'A', false)))!);
        expect(kinds(nx, 'authorities')).toEqual(['SOA zone.example']);
      }
    });

    it('a signed answer too large for UDP is truncated (TC), and comes whole over TCP', async () => {
      const plain = dnsPacket.decode((await udp(port, doQuery('fits.zone.example', 'TXT', false)))!);
      expect({ tc: plain.flag_tc, answers: plain.answers.length }).toEqual({ tc: false, answers: 11 });
      const cut = dnsPacket.decode((await udp(port, doQuery('fits.zone.example', 'TXT', true)))!);
      expect({ tc: cut.flag_tc, answers: cut.answers.length }).toEqual({ tc: true, answers: 0 });
      const whole = dnsPacket.decode((await tcp(port, [doQuery('fits.zone.example', 'TXT', true)]))[0]);
      expect({ tc: whole.flag_tc, kinds: kinds(whole, 'answers').slice(-2), answers: whole.answers.length }).toEqual({ tc: false, kinds: ['TXT fits.zone.example', 'RRSIG TXT'], answers: 12 });
    });

    it('Unbound with the DS as trust anchor resolves through hostplane: AD on answers and denials; a changed record validated again; a wrong DS answers SERVFAIL', async () => {
      const unbound = await startUnbound(port, 'zone.example', dsText('zone.example', key));
      const wrong = await startUnbound(port, 'zone.example', dsText('zone.example', signingKey(newPrivateKey(13), 13)));
      try {
        const resolve = async (u: { port: number }, name: string, type: string) => {
          const out = await runDig(u.port, '+dnssec', '+rec', name, type);
          return { status: /status: ([A-Z]+)/.exec(out)?.[1], ad: / ad[ ;]/.test(/;; flags:[^;]*;/.exec(out)?.[0] ?? ''), out };
        };
        for (const [name, type, status] of [['zone.example', 'A', 'NOERROR'], ['x.y.wild.zone.example', 'TXT', 'NOERROR'], ['nothere.zone.example', 'A', 'NXDOMAIN'], ['zone.example', 'SRV', 'NOERROR']]) {
          const r = await resolve(unbound, name, type);
          expect({ name, status: r.status, ad: r.ad }).toEqual({ name, status, ad: true });
        }
        await change(ts.store, 'zone.example', (db) => db.updateTable('dns_records').set({ data: '192.0.2.27' }).where('domain', '=', 'zone.example').where('name', '=', 'mail').execute(), ['mail']);
        await dns.sync();
        // Unbound keeps nothing longer than a second here (cache-max-ttl).
        await new Promise((r) => setTimeout(r, 1100));
        const changed = await resolve(unbound, 'mail.zone.example', 'A');
        expect({ status: changed.status, ad: changed.ad }).toEqual({ status: 'NOERROR', ad: true });
        expect(changed.out).toMatch(/^mail\.zone\.example\.\s+\d+\s+IN\s+A\s+192\.0\.2\.27$/m);
        const bogus = await resolve(wrong, 'zone.example', 'A');
        expect({ status: bogus.status, ad: bogus.ad }).toEqual({ status: 'SERVFAIL', ad: false });
      } finally {
        await unbound.stop();
        await wrong.stop();
      }
    });

    it('an answer changed on its way (a tampered secondary): Unbound answers SERVFAIL for it, and validates what came untouched the same way', async () => {
      const forged = await startTamperer(port, (p) => {
        const a = p.answers.find((r) => r.type === 'A' && r.name.toLowerCase() === 'mail.zone.example');
        if (a) a.data = '192.0.2.66';
        return a !== undefined;
      });
      const u = await startUnbound(forged.port, 'zone.example', dsText('zone.example', key));
      try {
        const ask = async (name: string) => {
          const out = await runDig(u.port, '+dnssec', '+rec', name, 'A');
          return { status: /status: ([A-Z]+)/.exec(out)?.[1], ad: / ad[ ;]/.test(/;; flags:[^;]*;/.exec(out)?.[0] ?? ''), forged: out.includes('192.0.2.66') };
        };
        expect(await ask('www.zone.example')).toEqual({ status: 'NOERROR', ad: true, forged: false });
        expect(await ask('mail.zone.example')).toEqual({ status: 'SERVFAIL', ad: false, forged: false });
      } finally {
        await u.stop();
        await forged.stop();
      }
    });

    for (const secEngine of ['nsd', 'knot'] as const) {
      requirable(secondaryMissing(secEngine))(`${secEngine} as a secondary`, () => {
        let sec: RunningSecondary | undefined;
        const skey = testKey(`${secEngine}-key`);
        const serial = async () => (await ts.store.db.selectFrom('domains').select('dns_serial').where('name', '=', 'zone.example').executeTakeFirstOrThrow()).dns_serial;
        const serves = async (s: number) =>
          elapsedUntil(async () => (await soaSerial('127.0.0.1', sec!.port, 'zone.example')) === s, 15_000).catch(() => {
            throw new Error(`${secEngine} did not serve serial ${s}: ${sec!.log()}`);
          });
        beforeAll(async () => {
          const service = new DnsSecondariesService(ts.store.db);
          sec = await startSecondary(secEngine, port, skey, ['zone.example'], async (p) => {
            await service.add({ name: secEngine, address: `127.0.0.1:${p}`, keyFileText: skey.bindFile });
          });
        });
        afterAll(async () => {
          await sec?.stop();
          await new DnsSecondariesService(ts.store.db).remove(secEngine).catch(() => {});
        });

        it('serves the signed zone: delv validates its answers and denials; a change reaches it (NOTIFY, transfer) and validates too', async () => {
          await serves(await serial());
          const ds = dsText('zone.example', key);
          const a = await delv(sec!.port, dir, 'zone.example', ds, 'x.y.wild.zone.example', 'TXT');
          expect(a.output).toMatch(/^; fully validated$/m);
          const nx = await delv(sec!.port, dir, 'zone.example', ds, 'nothere.zone.example', 'A');
          expect(nx.output).toMatch(/^; negative response, fully validated$/m);
          await addRecords(ts.store, 'zone.example', [[`${secEngine}-new`, 'A', '192.0.2.78']]);
          await dns.sync();
          await serves(await serial());
          const added = await delv(sec!.port, dir, 'zone.example', ds, `${secEngine}-new.zone.example`, 'A');
          expect(added.output).toMatch(new RegExp(`^; fully validated\\n${secEngine}-new\\.zone\\.example\\.\\s+\\d+\\s+IN\\s+A\\s+192\\.0\\.2\\.78$`, 'm'));
        });
      });
    }

    it('delv with the DS of another key: the answer is not validated', async () => {
      const other = signingKey(newPrivateKey(13), 13);
      const out = (await delv(port, dir, 'zone.example', dsText('zone.example', other), 'zone.example', 'A')).output;
      expect(out).not.toMatch(/fully validated/);
      expect(out).toMatch(/resolution failed/);
    });

    const ask = async (name: string, type: string) => (await delv(port, dir, 'zone.example', dsText('zone.example', key), name, type)).output;

    it.each([
      ['zone.example', 'A'], ['zone.example', 'MX'], ['zone.example', 'DNSKEY'], ['mail.zone.example', 'A'], ['long.zone.example', 'TXT'],
      ['_443._tcp.www2.zone.example', 'TLSA'], ['www.zone.example', 'A'], ['x.y.wild.zone.example', 'TXT'], ['real.wild.zone.example', 'A'],
    ])('delv with the DS as trust anchor: %s %s is fully validated', async (name, type) => {
      const out = await ask(name, type);
      expect(out).toMatch(/^; fully validated$/m);
      expect(out).not.toMatch(/resolution failed|insecure|bogus/);
    });

    it.each([
      ['nothere.zone.example', 'A', 'ncache nxdomain'], ['zz.deep.zone.example', 'A', 'ncache nxdomain'], ['zone.example', 'SRV', 'ncache nxrrset'],
      ['b.c.zone.example', 'A', 'ncache nxrrset'], ['x.wild.zone.example', 'MX', 'ncache nxrrset'], ['real.wild.zone.example', 'TXT', 'ncache nxrrset'],
    ])('delv: the denial of %s %s is fully validated (%s)', async (name, type, kind) => {
      const out = await ask(name, type);
      expect(out).toMatch(/^; negative response, fully validated$/m);
      expect(out).toContain(kind);
    });
  });
});
