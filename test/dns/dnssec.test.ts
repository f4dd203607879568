// DNSSEC from hostplane's own DNS server (docs/decisions/0032-dnssec.md), checked by real tools only:
// an AXFR of a signed zone passes ldns-verify-zone and kzonecheck --dnssec on, after a change too;
// delv, with the zone's DS as its trust anchor, validates answers, denials and wildcards.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, freshStore, testConfig, type TestStore } from '../helpers/app.js';
import { ENV, ZONE, addDomain, addRecords, change, customer } from '../helpers/dns.js';
import { axfrText, delv, dnssecToolsMissing, kzonecheck, ldnsVerify, toolDir } from '../helpers/dnssec.js';
import { requirable } from '../helpers/required.js';
import { testKey } from '../helpers/secondaries.js';
import { DnsServer } from '../../src/dns/server.js';
import { DnssecRepository } from '../../src/dns/dnssec.repository.js';
import { dsText, type SigningKey } from '../../src/dns/dnssec-keys.js';
import { DnsSecondariesService } from '../../src/admin/dns-secondaries.service.js';

const SIGNED = { ...ENV, DNS_DNSSEC: 'on' };

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
      await addRecords(ts.store, 'zone.example', ZONE);
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
      const ldns = await ldnsVerify(text, dir);
      expect(ldns.output).toMatch(/Zone is verified and complete/);
      expect(ldns.ok).toBe(true);
      const knot = await kzonecheck(text, 'zone.example', dir);
      expect(knot.output).toBe('');
      expect(knot.ok).toBe(true);
    });

    it('a record changed in the store: the zone verifies again with the new serial', async () => {
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
