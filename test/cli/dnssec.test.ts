// `hostplane admin domain dnssec enable|disable|status` (docs/decisions/0032-dnssec.md): the DS records
// it prints are what delv validates the served zone with; disabled, the zone is served unsigned again;
// no private key in any output; unknown domains and domains without a zone are refused.
import dnsPacket from 'dns-packet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, freshStore, processUrl, testConfig, type TestStore } from '../helpers/app.js';
import { runCli } from '../helpers/cli.js';
import { ENV, addDomain, addRecords, customer, udp } from '../helpers/dns.js';
import { delv, dnssecToolsMissing, toolDir } from '../helpers/dnssec.js';
import { requirable } from '../helpers/required.js';
import { DnsServer } from '../../src/dns/server.js';

const dnskeyQuery = (dnssecOk: boolean) =>
  dnsPacket.encode({ type: 'query', id: 9, questions: [{ name: 'signme.example', type: 'DNSKEY', class: 'IN' }], additionals: [{ type: 'OPT', name: '.', udpPayloadSize: 1232, flags: dnssecOk ? dnsPacket.DNSSEC_OK : 0 }] });

describe.each(ENGINES)('hostplane admin domain dnssec on %s', (engine) => {
  requirable(dnssecToolsMissing())('with a DNS server and delv', () => {
    let ts: TestStore;
    let env: Record<string, string>;
    let dns: DnsServer;
    const dir = toolDir();
    beforeAll(async () => {
      ts = await freshStore(engine);
      env = { DATABASE_URL: processUrl(ts) };
      const cust = await customer(ts.store);
      await addDomain(ts.store, cust, 'signme.example');
      await addDomain(ts.store, cust, 'registered-only.example', false);
      await addRecords(ts.store, 'signme.example', [['', 'A', '192.0.2.5'], ['www', 'A', '192.0.2.6']]);
      dns = await DnsServer.start({ store: ts.store, config: testConfig(ENV), listen: '127.0.0.1:0' });
    });
    afterAll(async () => {
      await dns?.stop();
      await ts?.drop();
    });

    it('status, enable (the printed DS validates the served zone with delv), disable (served unsigned again)', async () => {
      const before = await runCli(['admin', 'domain', 'dnssec', 'status', 'signme.example', '--json'], env);
      expect(before.stderr).toBe('');
      expect(JSON.parse(before.stdout)).toEqual({ domain: 'signme.example', enabled: false, choice: 'default', ds_records: [], dnskeys: [] });

      const on = await runCli(['admin', 'domain', 'dnssec', 'enable', 'signme.example', '--json'], env);
      expect(on.stderr).toBe('');
      expect(on.code).toBe(0);
      const status = JSON.parse(on.stdout);
      expect(status).toEqual({
        domain: 'signme.example', enabled: true, choice: 'on', change_id: expect.any(Number),
        ds_records: [expect.stringMatching(/^[0-9]{1,5} 13 2 [0-9A-F]{64}$/)], dnskeys: [expect.stringMatching(/^257 3 13 [A-Za-z0-9+/]{86}==$/)],
      });
      const text = await runCli(['admin', 'domain', 'dnssec', 'status', 'signme.example'], env);
      expect(text.stdout).toBe(`signme.example: DNSSEC on\nDS ${status.ds_records[0]}\nDNSKEY ${status.dnskeys[0]}\n`);
      const sealed = (await ts.store.db.selectFrom('dnssec_keys').select('private_key').executeTakeFirstOrThrow()).private_key;
      for (const out of [on.stdout, text.stdout]) {
        expect(out).not.toContain('PRIVATE');
        expect(out).not.toContain(sealed);
      }

      await dns.sync();
      const served = dnsPacket.decode((await udp(dns.port!, dnskeyQuery(true)))!);
      expect(served.answers.map((a) => a.type)).toEqual(['DNSKEY', 'RRSIG']);
      const valid = await delv(dns.port!, dir, 'signme.example', status.ds_records[0], 'www.signme.example', 'A');
      expect(valid.output).toMatch(/^; fully validated\nwww\.signme\.example\.\s+\d+\s+IN\s+A\s+192\.0\.2\.6$/m);

      const off = await runCli(['admin', 'domain', 'dnssec', 'disable', 'signme.example'], env);
      expect(off.code).toBe(0);
      expect(off.stdout).toMatch(/^signme\.example: DNSSEC off\nThe DNS servers serve it unsigned once they have applied change \d+\.\n$/);
      await dns.sync();
      const unsigned = dnsPacket.decode((await udp(dns.port!, dnskeyQuery(true)))!);
      expect({ rcode: unsigned.rcode, answers: unsigned.answers, authorities: unsigned.authorities.map((a) => a.type) }).toEqual({ rcode: 'NOERROR', answers: [], authorities: ['SOA'] });
    });

    it('an unknown domain and one without a zone are refused, and nothing changes', async () => {
      const unknown = await runCli(['admin', 'domain', 'dnssec', 'enable', 'nowhere.example'], env);
      expect(unknown.code).not.toBe(0);
      expect(unknown.stderr).toMatch(/No domain nowhere\.example/);
      const noZone = await runCli(['admin', 'domain', 'dnssec', 'enable', 'registered-only.example'], env);
      expect(noZone.code).not.toBe(0);
      expect(noZone.stderr).toMatch(/not used in a package: it has no zone to sign/);
      expect(await ts.store.db.selectFrom('dnssec_keys').select('domain').where('domain', '!=', 'signme.example').execute()).toEqual([]);
    });
  });
});
