// Signatures renewed by the timer alone (docs/decisions/0032-dnssec.md "Validity"): with a short
// DNS_DNSSEC_VALIDITY_S/DNS_DNSSEC_REFRESH_S, a zone whose signatures come within the refresh time of
// their end is signed again without any record change (its serial and the signatures' expiration
// move), and Unbound, anchored at the zone's DS, keeps validating. The process's clock is moved to
// the next hour (signature times are whole hours), so the new inception is still in the real past.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ENGINES, freshStore, testConfig, type TestStore } from '../helpers/app.js';
import { ENV, addDomain, addRecords, customer, runDig } from '../helpers/dns.js';
import { dnssecToolsMissing, startUnbound, type RunningUnbound } from '../helpers/dnssec.js';
import { requirable } from '../helpers/required.js';
import { pollUntil } from '../helpers/wait.js';
import { DnsServer } from '../../src/dns/server.js';
import { DnssecRepository } from '../../src/dns/dnssec.repository.js';
import { dsText } from '../../src/dns/dnssec-keys.js';

/** Ten minutes of refresh, the least validity the settings allow with it. */
const SHORT = { ...ENV, DNS_DNSSEC: 'on', DNS_DNSSEC_VALIDITY_S: '7800', DNS_DNSSEC_REFRESH_S: '600' };

describe.each(ENGINES)('DNSSEC signatures renewed by the timer on %s', (engine) => {
  requirable(dnssecToolsMissing())('a signed zone whose signatures come due', () => {
    let ts: TestStore;
    let dns: DnsServer;
    let unbound: RunningUnbound;

    beforeAll(async () => {
      ts = await freshStore(engine);
      await addDomain(ts.store, await customer(ts.store), 'renew.example');
      await addRecords(ts.store, 'renew.example', [['www', 'A', '192.0.2.80']]);
      dns = await DnsServer.start({ store: ts.store, config: testConfig(SHORT), listen: '127.0.0.1:0' });
      const key = await new DnssecRepository(ts.store.db, []).signingKey('renew.example', 13);
      unbound = await startUnbound(dns.port!, 'renew.example', dsText('renew.example', key));
    });
    afterEach(() => {
      vi.useRealTimers();
    });
    afterAll(async () => {
      await unbound?.stop();
      await dns?.stop();
      await ts?.drop();
    });

    /** The SOA serial and the expiration of www's RRSIG (YYYYMMDDHHmmSS) as hostplane serves them. */
    const served = async () => {
      const soa = (await runDig(dns.port!, '+norec', '+short', 'renew.example', 'SOA')).trim().split(/\s+/);
      const sig = (await runDig(dns.port!, '+norec', '+dnssec', '+noall', '+answer', 'www.renew.example', 'A')).split('\n').find((l) => /\sRRSIG\s/.test(l))!;
      return { serial: Number(soa[2]), expiration: sig.split(/\s+/)[8] };
    };
    const validated = async () => {
      const out = await runDig(unbound.port, '+dnssec', '+rec', 'www.renew.example', 'A');
      return { status: /status: ([A-Z]+)/.exec(out)?.[1], ad: /;; flags:[^;]* ad[ ;]/.test(out) };
    };

    it('signed again without a record change: serial and expiration move, Unbound keeps validating', async () => {
      const before = await served();
      expect(await validated()).toEqual({ status: 'NOERROR', ad: true });
      // A minute into the next hour: the signatures have less than the refresh time left.
      const nextHour = Math.floor(Date.now() / 3_600_000) * 3_600_000 + 3_600_000;
      vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
      vi.setSystemTime(nextHour + 60_000);
      const after = await pollUntil(served, (s) => s.serial !== before.serial && s.expiration !== before.expiration, 'new signatures', 15_000);
      expect(Number(after.expiration)).toBeGreaterThan(Number(before.expiration));
      expect(after.serial).toBeGreaterThan(before.serial);
      vi.useRealTimers();
      // Unbound keeps nothing longer than a second here.
      await new Promise((r) => setTimeout(r, 1100));
      expect(await validated()).toEqual({ status: 'NOERROR', ad: true });
    });
  });
});
