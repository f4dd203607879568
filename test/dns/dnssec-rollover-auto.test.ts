// DNS_DNSSEC_ROLLOVER_DAYS (docs/decisions/0032-dnssec.md "Key lifecycle"): a signed zone whose
// active key is older than the setting starts a rollover by itself, on a DNS server's heartbeat: a
// second key is published and signs (two RRSIGs over an answer) while the CDS still names the old.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, freshStore, testConfig, type TestStore } from '../helpers/app.js';
import { ENV, addDomain, addRecords, customer, runDig } from '../helpers/dns.js';
import { dnssecToolsMissing } from '../helpers/dnssec.js';
import { requirable } from '../helpers/required.js';
import { pollUntil } from '../helpers/wait.js';
import { DnsServer } from '../../src/dns/server.js';
import { DnssecRepository } from '../../src/dns/dnssec.repository.js';
import { dsText, publicKey } from '../../src/dns/dnssec-keys.js';

describe.each(ENGINES)('automatic DNSSEC rollover on %s', (engine) => {
  requirable(dnssecToolsMissing())('a key older than DNS_DNSSEC_ROLLOVER_DAYS', () => {
    let ts: TestStore;
    let dns: DnsServer;

    beforeAll(async () => {
      ts = await freshStore(engine);
      const cust = await customer(ts.store);
      await addDomain(ts.store, cust, 'old-key.example');
      await addDomain(ts.store, cust, 'new-key.example');
      await addRecords(ts.store, 'old-key.example', [['www', 'A', '192.0.2.90']]);
      const keys = new DnssecRepository(ts.store.db, []);
      for (const d of ['old-key.example', 'new-key.example']) await keys.signingKey(d, 13);
      // A fixture: the key of old-key.example was made 31 days ago.
      await ts.store.db.updateTable('dnssec_keys').set({ created_at: new Date(Date.now() - 31 * 86_400_000).toISOString() }).where('domain', '=', 'old-key.example').execute();
      dns = await DnsServer.start({ store: ts.store, config: testConfig({ ...ENV, DNS_DNSSEC: 'on', DNS_DNSSEC_ROLLOVER_DAYS: '30' }), listen: '127.0.0.1:0' });
    });
    afterAll(async () => {
      await dns?.stop();
      await ts?.drop();
    });

    it('the old key is rolled over (two keys sign, the CDS names the old one); the young one is left alone', async () => {
      const before = (await new DnssecRepository(ts.store.db, []).publicKeys('old-key.example'))[0];
      const sigs = async () => (await runDig(dns.port!, '+norec', '+dnssec', '+noall', '+answer', 'www.old-key.example', 'A')).split('\n').filter((l) => /\sRRSIG\s/.test(l)).length;
      await pollUntil(sigs, (n) => n === 2, 'two signatures over www', 15_000);
      const keys = await new DnssecRepository(ts.store.db, []).publicKeys('old-key.example');
      expect(keys.map((k) => k.role)).toEqual(['active', 'incoming']);
      const cds = (await runDig(dns.port!, '+norec', '+short', 'old-key.example', 'CDS')).trim().split(/\s+/);
      expect(`${cds[0]} ${cds[1]} ${cds[2]} ${cds.slice(3).join('')}`).toBe(dsText('old-key.example', publicKey(before.flags, before.algorithm, before.public_key)));
      expect((await new DnssecRepository(ts.store.db, []).publicKeys('new-key.example')).map((k) => k.role)).toEqual(['active']);
    });
  });
});
