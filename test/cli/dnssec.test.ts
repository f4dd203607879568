// `hostplane admin domain dnssec enable|disable|status|ds-seen` (docs/decisions/0032-dnssec.md): the DS
// records it prints are what delv validates the served zone with; disabled, the zone stays signed
// with the delete form of CDS until the operator confirms the parent's DS is gone, then is served
// unsigned; no private key in any output; unknown domains and domains without a zone are refused.
import dnsPacket from 'dns-packet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, freshStore, processUrl, testConfig, type TestStore } from '../helpers/app.js';
import { runCli } from '../helpers/cli.js';
import { ENV, addDomain, addRecords, customer, runDig, udp } from '../helpers/dns.js';
import { pollUntil } from '../helpers/wait.js';
import { delv, dnssecToolsMissing, toolDir } from '../helpers/dnssec.js';
import { requirable } from '../helpers/required.js';
import { DnsServer } from '../../src/dns/server.js';

/** Short lifecycle waits: a DS TTL of a second, no propagation delay. */
const LIFECYCLE = { ...ENV, DNS_DNSSEC_DS_TTL_S: '1', DNS_DNSSEC_PROPAGATION_S: '0' };

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
      env = { DATABASE_URL: processUrl(ts), ...LIFECYCLE };
      const cust = await customer(ts.store);
      await addDomain(ts.store, cust, 'signme.example');
      await addDomain(ts.store, cust, 'registered-only.example', false);
      await addRecords(ts.store, 'signme.example', [['', 'A', '192.0.2.5'], ['www', 'A', '192.0.2.6']]);
      dns = await DnsServer.start({ store: ts.store, config: testConfig(LIFECYCLE), listen: '127.0.0.1:0' });
    });
    afterAll(async () => {
      await dns?.stop();
      await ts?.drop();
    });

    it('status, enable (the printed DS validates the served zone with delv), disable (served unsigned again)', async () => {
      const before = await runCli(['admin', 'domain', 'dnssec', 'status', 'signme.example', '--json'], env);
      expect(before.stderr).toBe('');
      expect(JSON.parse(before.stdout)).toEqual({ domain: 'signme.example', enabled: false, choice: 'default', state: 'unsigned', ds_records: [], dnskeys: [], awaiting: null });

      const on = await runCli(['admin', 'domain', 'dnssec', 'enable', 'signme.example', '--json'], env);
      expect(on.stderr).toBe('');
      expect(on.code).toBe(0);
      const status = JSON.parse(on.stdout);
      expect(status).toEqual({
        domain: 'signme.example', enabled: true, choice: 'on', state: 'signed', awaiting: null, change_id: expect.any(Number),
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

      // Off: still signed, CDS/CDNSKEY in their delete form, awaiting the parent (no DNS_DNSSEC_PARENT: ds-seen).
      const off = await runCli(['admin', 'domain', 'dnssec', 'disable', 'signme.example'], env);
      expect(off.code).toBe(0);
      expect(off.stdout).toBe(
        `signme.example: DNSSEC off, disabling\nDNSKEY ${status.dnskeys[0]}\nAwaiting the parent: no DS any more (DNS_DNSSEC_PARENT is asked, or confirm with ds-seen).\n` +
          `The DNS servers publish the delete form of CDS/CDNSKEY once they have applied change ${Number(/change (\d+)/.exec(off.stdout)![1])}.\n`,
      );
      await dns.sync();
      const cds = await runDig(dns.port!, '+norec', '+short', 'signme.example', 'CDS');
      expect(cds.trim()).toBe('0 0 0 00');
      expect(dnsPacket.decode((await udp(dns.port!, dnskeyQuery(true)))!).answers.map((a) => a.type)).toEqual(['DNSKEY', 'RRSIG']);

      const seen = await runCli(['admin', 'domain', 'dnssec', 'ds-seen', 'signme.example', '--json'], env);
      expect(seen.code, seen.stderr).toBe(0);
      expect(JSON.parse(seen.stdout).awaiting).toEqual({ kind: 'time', until: expect.stringMatching(/^\d{4}-/) });
      // DNS_DNSSEC_DS_TTL_S 1, no propagation delay: the DNS server's heartbeat serves it unsigned.
      await pollUntil(async () => {
        await dns.sync();
        return dnsPacket.decode((await udp(dns.port!, dnskeyQuery(true)))!);
      }, (p) => p.answers.length === 0, 'the zone served unsigned', 10_000);
      const unsigned = dnsPacket.decode((await udp(dns.port!, dnskeyQuery(true)))!);
      expect({ rcode: unsigned.rcode, answers: unsigned.answers, authorities: unsigned.authorities.map((a) => a.type) }).toEqual({ rcode: 'NOERROR', answers: [], authorities: ['SOA'] });
      const after = JSON.parse((await runCli(['admin', 'domain', 'dnssec', 'status', 'signme.example', '--json'], env)).stdout);
      expect(after).toMatchObject({ enabled: false, choice: 'off', state: 'unsigned', ds_records: [], dnskeys: [], awaiting: null });
      const again = await runCli(['admin', 'domain', 'dnssec', 'ds-seen', 'signme.example'], env);
      expect(again.code).not.toBe(0);
      expect(again.stderr).toMatch(/does not wait for its parent's DS/);
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
