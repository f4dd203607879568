// The DNS server through the real `dig` (docs/decisions/0003-dns-propagation.md): the answers of every
// type, long TXT, NXDOMAIN and NODATA, referrals, truncation with dig's own retry over TCP, and a new
// record seen by dig once isApplied (docs/decisions/0003-dns-propagation.md). Skipped without dig,
// failed under CI_REQUIRE_ALL=1.
import { describe, expect, it } from 'vitest';
import { ENGINES, type TestStore } from '../helpers/app.js';
import { requirable } from '../helpers/required.js';
import { elapsedUntil } from '../helpers/wait.js';
import { HEX32, HEX32B, addRecords, digMissing, flags, runDig, section, serveTestZones, status } from '../helpers/dns.js';
import { isApplied } from '../../src/provisioning/dns/propagation.js';

describe.each(ENGINES)('DNS server on %s', (engine) => {
  let ts: TestStore;
  let port: number;
  serveTestZones(engine, (s) => ({ ts, port } = s));

  requirable(digMissing())('with the real dig', () => {
    const dig = (...args: string[]) => runDig(port, ...args);

    it('answers A with aa, and the +short forms of every type', async () => {
      const out = await dig('zone.example', 'A', '+norecurse');
      expect({ status: status(out), flags: flags(out), answer: section(out, 'ANSWER') }).toEqual({
        status: 'NOERROR', flags: 'aa qr', answer: ['zone.example. 3600 IN A 192.0.2.1'],
      });
      const short = async (name: string, type: string) => (await dig(name, type, '+norecurse', '+short')).trim().split('\n');
      expect(await short('zone.example', 'MX')).toEqual(['10 mail.zone.example.', '20 mail2.zone.example.']);
      expect(await short('zone.example', 'CAA')).toEqual(['0 issue "letsencrypt.org"']);
      expect(await short('zone.example', 'SOA')).toEqual([expect.stringMatching(/^ns1\.dns\.test\. hostmaster\.dns\.test\. \d+ 3600 600 1209600 300$/)]);
      expect(await short('_sip._tcp.zone.example', 'SRV')).toEqual(['0 5 5060 sip.zone.example.']);
      expect(await short('sub.zone.example', 'DS')).toEqual([`12345 13 2 ${HEX32B.slice(0, 56)} ${HEX32B.slice(56)}`]);
      expect(await short('_443._tcp.www2.zone.example', 'TLSA')).toEqual([`3 1 1 ${HEX32.slice(0, 56)} ${HEX32.slice(56)}`]);
      expect(await short('zone.example', 'AAAA')).toEqual(['2001:db8::1']);
      expect(await short('www.zone.example', 'A')).toEqual(['zone.example.', '192.0.2.1']);
      expect(await short('x.wild.zone.example', 'A')).toEqual(['192.0.2.99']);
    });

    it('long TXT is split into 255-byte strings', async () => {
      const out = (await dig('_acme-challenge.zone.example', 'TXT', '+norecurse', '+short')).trim();
      expect(out).toBe('"token-value"');
      const long = (await dig('long.zone.example', 'TXT', '+norecurse', '+short')).trim();
      const strings = long.match(/"[^"]*"/g)!;
      expect(strings).toHaveLength(3);
      expect(strings[0]).toBe(`"${'a'.repeat(250)}\\195\\188${'b'.repeat(3)}"`);
    });

    it('NXDOMAIN and NODATA with the SOA in AUTHORITY; REFUSED outside our zones', async () => {
      const nx = await dig('nope.zone.example', 'A', '+norecurse');
      expect({ status: status(nx), flags: flags(nx), authority: section(nx, 'AUTHORITY') }).toEqual({
        status: 'NXDOMAIN', flags: 'aa qr', authority: [expect.stringMatching(/^zone\.example\. 300 IN SOA ns1\.dns\.test\. hostmaster\.dns\.test\. \d+ 3600 600 1209600 300$/)],
      });
      const nodata = await dig('mail.zone.example', 'AAAA', '+norecurse');
      expect({ status: status(nodata), answer: section(nodata, 'ANSWER'), authority: section(nodata, 'AUTHORITY').length }).toEqual({ status: 'NOERROR', answer: [], authority: 1 });
      const refused = await dig('example.org', 'A', '+norecurse');
      expect({ status: status(refused), flags: flags(refused) }).toEqual({ status: 'REFUSED', flags: 'qr' });
    });

    it('a referral for a delegated name; RD set is answered (dig notes that recursion is not available)', async () => {
      const ref = await dig('host.sub.zone.example', 'A', '+norecurse');
      expect({ status: status(ref), flags: flags(ref), authority: section(ref, 'AUTHORITY'), additional: section(ref, 'ADDITIONAL').filter((l) => !l.startsWith(';')) }).toEqual({
        status: 'NOERROR', flags: 'qr',
        authority: ['sub.zone.example. 3600 IN NS ns1.sub.zone.example.', 'sub.zone.example. 3600 IN NS ns.elsewhere.example.'],
        additional: ['ns1.sub.zone.example. 3600 IN A 192.0.2.53'],
      });
      const rd = await dig('zone.example', 'A');
      expect({ status: status(rd), flags: flags(rd), warns: rd.includes('recursion requested but not available') }).toEqual({ status: 'NOERROR', flags: 'aa qr rd', warns: true });
    });

    it('truncation: +ignore shows TC; dig retries over TCP by itself and gets everything; +tcp directly', async () => {
      const tc = await dig('some.zone.example', 'A', '+norecurse', '+noedns', '+ignore');
      expect(flags(tc)).toBe('aa qr tc');
      const retried = await dig('some.zone.example', 'A', '+norecurse', '+noedns');
      expect(retried).toContain('Truncated, retrying in TCP mode');
      expect(section(retried, 'ANSWER')).toHaveLength(40);
      const viaTcp = await dig('many.zone.example', 'A', '+norecurse', '+tcp');
      expect(section(viaTcp, 'ANSWER')).toHaveLength(100);
      const edns = await dig('some.zone.example', 'A', '+norecurse', '+bufsize=1232');
      expect({ flags: flags(edns), n: section(edns, 'ANSWER').length, opt: /EDNS: version: 0, flags:; udp: 1232/.test(edns) }).toEqual({ flags: 'aa qr', n: 40, opt: true });
    });

    it('a record created in the store is answered by dig within a second of isApplied', async () => {
      const id = await addRecords(ts.store, 'zone.example', [['_acme-challenge.www', 'TXT', 'dig-sees-this']]);
      await elapsedUntil(() => isApplied(ts.store, id), 1000);
      expect((await dig('_acme-challenge.www.zone.example', 'TXT', '+norecurse', '+short')).trim()).toBe('"dig-sees-this"');
    });
  });
});
