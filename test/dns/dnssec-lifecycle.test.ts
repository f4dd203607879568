// The DNSSEC key lifecycle along a real chain of trust (docs/decisions/0032-dnssec.md "Key
// lifecycle"; API guide "DNSSEC (extension)"): parent.example, signed on hostplane, delegates
// child.parent.example with NS and DS records made through the API; a private Unbound holds only the
// PARENT's DS as trust anchor. The DNS server asks itself for the parent's DS (DNS_DNSSEC_PARENT),
// and the test acts as the registry, changing the DS in the parent zone through the API when the
// child's CDS changes. While a rollover and then a disabling run through their whole timing, Unbound
// is asked in a loop: never SERVFAIL, AD on every signed answer; at the end the old key is gone, then
// the zone is unsigned (no AD).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE, ENGINES, call, createTestApp, testConfig, type TestApp } from '../helpers/app.js';
import { seedTenants, type Tenants } from '../helpers/tenants.js';
import { ENV, change, runDig } from '../helpers/dns.js';
import { dnssecToolsMissing, startUnbound, type RunningUnbound } from '../helpers/dnssec.js';
import { freePort } from '../helpers/ports.js';
import { requirable } from '../helpers/required.js';
import { pollUntil, sleep } from '../helpers/wait.js';
import { DnsServer } from '../../src/dns/server.js';

const PARENT = 'parent.example';
const CHILD = 'child.parent.example';
/** Short timing: TTLs of 2 s in both zones, a second for propagation. */
const TTL = 2;
const LIFECYCLE = { ...ENV, DNS_DNSSEC_PROPAGATION_S: '1', DNS_DNSSEC_DS_TTL_S: '2', DNS_DNSSEC_PARENT_CHECK_S: '1' };

/** One answer of Unbound: when, its status and whether AD is set. */
interface Seen {
  at: number;
  status: string | undefined;
  ad: boolean;
}

describe.each(ENGINES)('the DNSSEC lifecycle along a chain of trust on %s', { timeout: 120_000 }, (engine) => {
  requirable(dnssecToolsMissing())('parent.example delegating child.parent.example, Unbound anchored at the parent', () => {
    let t: TestApp;
    let x: Tenants;
    let dns: DnsServer;
    let unbound: RunningUnbound | undefined;

    const api = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown) => call(t.app, method, url, { token: x.end1.token, body });
    const jobDone = (r: { headers: Record<string, unknown> }) =>
      pollUntil(() => api('GET', String(r.headers['content-location']).replace(BASE, '')), (j) => j.json.data.attributes.status !== 'pending', 'the job ends', 60_000);
    const dnssecOf = async (name: string) => (await api('GET', `/domains/${name}`)).json.data.attributes.presence.dnssec;
    /** Records of the zones with TTL 2 (the API's minimum is 300): what makes the timing short. */
    const shrinkTtls = (domain: string) => change(t.store, domain, (db) => db.updateTable('dns_records').set({ ttl: TTL }).where('domain', '=', domain).execute());
    /** The registry: the parent's DS for the child becomes `ds` (created through the API, the old ones deleted). */
    const parentDs = async (ds: string | null) => {
      const list = await api('GET', `/dns-records?filter[domain]=${PARENT}`);
      const old = (list.json.data as { id: string; attributes: { record_type: string; name: string } }[]).filter((r) => r.attributes.record_type === 'DS' && r.attributes.name === 'child');
      if (ds) {
        const made = await api('POST', '/dns-records', { data: { type: 'dns-record', attributes: { domain: PARENT, name: 'child', record_type: 'DS', data: ds, ttl: 300 } } });
        expect(made.status, made.body).toBe(202);
        await jobDone(made);
      }
      for (const r of old) await jobDone(await api('DELETE', `/dns-records/${r.id}`));
      // About when the parent began to serve the new DS set (its jobs are done a poll after).
      const changedAt = Date.now() - 500;
      await shrinkTtls(PARENT);
      return changedAt;
    };
    /** The child's CDS as hostplane serves it, in DS presentation form. */
    const cds = async () =>
      (await runDig(dns.port!, '+norec', '+short', CHILD, 'CDS')).trim().split('\n').filter(Boolean).map((l) => {
        const [a, b, c, ...rest] = l.split(/\s+/);
        return `${a} ${b} ${c} ${rest.join('')}`;
      });

    /** Asks Unbound for www.child.parent.example A every 100 ms until stopped; returns every answer. */
    function watch() {
      const seen: Seen[] = [];
      let on = true;
      const loop = (async () => {
        while (on) {
          // A dig that fails (no answer at all) counts as a failure, not as an error of the loop.
          const out = await runDig(unbound!.port, '+dnssec', '+rec', `www.${CHILD}`, 'A').catch((e: Error) => e.message);
          seen.push({ at: Date.now(), status: /status: ([A-Z]+)/.exec(out)?.[1], ad: / ad[ ;]/.test(/;; flags:[^;]*;/.exec(out)?.[0] ?? '') });
          await sleep(100);
        }
      })();
      return {
        seen,
        async stop() {
          on = false;
          await loop;
          return seen;
        },
      };
    }

    beforeAll(async () => {
      t = await createTestApp(engine, LIFECYCLE, { worker: true });
      x = await seedTenants(t.admin);
      const end1 = Number(x.end1.customerId);
      for (const name of [PARENT, CHILD]) await t.admin.domains.createDomain({ name, customerId: end1, packageId: Number(x.end1.packageId) });
      // The DNS server asks itself for the parent's DS; the zones' SOA and DNSKEY TTLs are 2 s (a
      // fixture: DNS_DEFAULT_TTL cannot be set below 300).
      const port = await freePort();
      const config = { ...testConfig({ ...LIFECYCLE, DNS_DNSSEC_PARENT: `127.0.0.1:${port}` }), dnsDefaultTtl: TTL };
      dns = await DnsServer.start({ store: t.store, config, listen: `127.0.0.1:${port}` });
      for (const name of [PARENT, CHILD]) {
        const r = await api('PATCH', `/domains/${name}`, { data: { type: 'domain', id: name, attributes: { presence: { dnssec: { enabled: true } } } } });
        expect(r.status, r.body).toBe(202);
        await jobDone(r);
      }
      const ns = await api('POST', '/dns-records', { data: { type: 'dns-record', attributes: { domain: PARENT, name: 'child', record_type: 'NS', data: 'ns1.dns.test' } } });
      expect(ns.status, ns.body).toBe(202);
      await jobDone(ns);
      await parentDs((await dnssecOf(CHILD)).ds_records[0]);
      await shrinkTtls(CHILD);
      await dns.sync();
      // Unbound keeps what it got for the records' own TTLs (2 s), as a resolver would: the timing
      // must hold against real caches.
      unbound = await startUnbound(dns.port!, PARENT, (await dnssecOf(PARENT)).ds_records[0], [CHILD], 3600);
    });
    afterAll(async () => {
      await unbound?.stop();
      await dns?.stop();
      await t?.close();
    });

    it('Unbound validates the child through the parent before anything moves', async () => {
      const out = await runDig(unbound!.port, '+dnssec', '+rec', `www.${CHILD}`, 'A');
      expect(/status: ([A-Z]+)/.exec(out)?.[1], unbound!.log()).toBe('NOERROR');
      expect(/;; flags:[^;]* ad[ ;]/.test(out), out).toBe(true);
    });

    it('a rollover: double signatures, then the CDS names the new key, the registry swaps the DS, the old key goes; Unbound never fails', async () => {
      const before = await dnssecOf(CHILD);
      const watcher = watch();
      const started = Date.now();
      const { status } = await t.admin.dnssec.rollover(CHILD);
      expect(status).toMatchObject({ state: 'rolling', ds_records: before.ds_records, awaiting: { kind: 'time' } });
      expect(status.dnskeys).toHaveLength(2);
      // Both keys sign (double signatures) while the CDS still names the old one.
      const sigs = async () => (await runDig(dns.port!, '+norec', '+dnssec', '+noall', '+answer', `www.${CHILD}`, 'A')).split('\n').filter((l) => /\sRRSIG\s/.test(l)).length;
      await pollUntil(sigs, (n) => n === 2, 'two signatures over www', 10_000);
      expect(await cds()).toEqual(before.ds_records);
      // The CDS names the new key once every cache holds both keys.
      const next = await pollUntil(cds, (c) => c.length === 1 && c[0] !== before.ds_records[0], 'the CDS naming the new key', 30_000);
      // Not before every cache may hold the new key set: the zone's largest TTL and the propagation time.
      expect(Date.now() - started).toBeGreaterThanOrEqual((TTL + 1) * 1000);
      expect(await t.admin.dnssec.status(CHILD)).toMatchObject({ state: 'rolling', ds_records: next, awaiting: { kind: 'parent', ds: next[0] } });
      const swapped = await parentDs(next[0]);
      const done = await pollUntil(() => dnssecOf(CHILD), (d) => d.state === 'signed', 'the rollover to end', 30_000);
      // The old key stays until a cache that took the old DS just before the swap has let it go:
      // the DS's TTL and the propagation time after the parent changed (Unbound, which asks again
      // when a key set fails to validate, would not show a shorter wait).
      expect(Date.now() - swapped).toBeGreaterThanOrEqual((TTL + 1) * 1000);
      expect(done).toEqual({ enabled: true, state: 'signed', ds_records: next, dnskeys: [status.dnskeys[1]] });
      // Unbound asked throughout: in each phase, and a few times once the old key has gone (each
      // dig takes longer on a busy machine, so count answers, not time).
      const ended = Date.now();
      await pollUntil(async () => watcher.seen.filter((x) => x.at > ended).length, (n) => n >= 3, 'three answers after the rollover', 30_000);
      const seen = await watcher.stop();
      const between = (from: number, to: number) => seen.filter((x) => x.at > from && x.at < to).length;
      expect([between(started, swapped), between(swapped, ended)].every((n) => n >= 2), `answers per phase: ${between(started, swapped)}, ${between(swapped, ended)}`).toBe(true);
      expect(seen.filter((s) => s.status !== 'NOERROR' || !s.ad), unbound!.log()).toEqual([]);
      const keys = await runDig(dns.port!, '+norec', '+short', CHILD, 'DNSKEY');
      expect(keys.trim().split('\n')).toHaveLength(1);
    });

    it('turning it off: the delete form, the registry drops the DS, the zone goes unsigned; Unbound never fails, then answers without AD', async () => {
      const watcher = watch();
      const off = await api('PATCH', `/domains/${CHILD}`, { data: { type: 'domain', id: CHILD, attributes: { presence: { dnssec: { enabled: false } } } } });
      expect(off.status, off.body).toBe(202);
      expect(off.json.data.attributes.presence.dnssec.state).toBe('disabling');
      await pollUntil(cds, (c) => c[0] === '0 0 0 00', 'the delete form', 30_000);
      await sleep(1000);
      expect((await api('GET', String(off.headers['content-location']).replace(BASE, ''))).json.data.attributes.status).toBe('pending');
      const dropped = await parentDs(null);
      expect((await jobDone(off)).json.data.attributes).toMatchObject({ status: 'done', error: null });
      // Signed until a cache that took the DS just before it went has let it go.
      expect(Date.now() - dropped).toBeGreaterThanOrEqual((TTL + 1) * 1000);
      expect(await dnssecOf(CHILD)).toEqual({ enabled: false, state: 'unsigned', ds_records: [], dnskeys: [] });
      // Once the caches have let the signed answers go (a busy machine's digs take longer: count answers).
      const ended = Date.now();
      await pollUntil(async () => watcher.seen.filter((x) => x.at > ended && !x.ad).length, (n) => n >= 2, 'two answers without AD', 30_000);
      const seen = await watcher.stop();
      expect(seen.filter((s) => s.status !== 'NOERROR'), unbound!.log()).toEqual([]);
      // Signed answers carried AD until the end; unsigned (insecure) ones at the end do not.
      expect(seen[0].ad).toBe(true);
      expect(seen[seen.length - 1].ad).toBe(false);
    });
  });
});
