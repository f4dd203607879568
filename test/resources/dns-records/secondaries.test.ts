// A DNS-record job with a registered secondary, through HTTP and the worker (API guide "Queue
// jobs"; docs/decisions/0013-dns-secondaries.md): the job a client polls is `done` only once the
// secondary (a private NSD fed by AXFR/IXFR with TSIG and NOTIFY) answers the new record, and it
// fails with an error naming the secondary when that one stops following. A Knot secondary that
// reads hostplane's catalog zone (RFC 9432; decision 0014) serves a domain added later by itself.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import dnsPacket from 'dns-packet';
import { ENGINES, call, type TestApp } from '../../helpers/app.js';
import { dnsRecordsApp, txt } from '../../helpers/dns-records.js';
import { query, udp } from '../../helpers/dns.js';
import { requirable } from '../../helpers/required.js';
import { secondaryMissing, startSecondary, testKey, type RunningSecondary, type SecondaryEngine } from '../../helpers/secondaries.js';
import { pollUntil } from '../../helpers/wait.js';
import type { Tenants } from '../../helpers/tenants.js';
import { DnsSecondariesService } from '../../../src/admin/dns-secondaries.service.js';

/** The secondary at `port` answers for `zone`'s apex: it holds the zone. */
const holds = (port: number, zone: string, ms = 20_000) =>
  pollUntil(() => udp(port, query(zone, 'SOA'), 300), (r) => r !== null && dnsPacket.decode(r).rcode === 'NOERROR', `the secondary holds ${zone}`, ms);

/** An app with worker and DNS server, and `engine` started as its registered secondary ns2 for `zones`. */
async function withSecondary(engine: (typeof ENGINES)[number], secondary: SecondaryEngine, zones: string[]) {
  const { t, x } = await dnsRecordsApp(engine, { DNS_SECONDARY_TIMEOUT_MS: '4000', DNS_HEARTBEAT_MS: '200', DNS_POLL_MS: '100' }, { worker: true, dns: true });
  const key = testKey('ns2-key');
  const ns = await startSecondary(secondary, t.dns!.port!, key, zones, (port) =>
    new DnsSecondariesService(t.store.db).add({ name: 'ns2', address: `127.0.0.1:${port}`, keyFileText: key.bindFile }).then(() => undefined),
  );
  await holds(ns.port, 'end1.example');
  return { t, x, ns };
}

/** The TXT strings the secondary answers for `name`, or null when it does not answer. */
async function txtAt(port: number, name: string): Promise<string[] | null> {
  const reply = await udp(port, query(name, 'TXT'), 300);
  if (!reply) return null;
  return dnsPacket.decode(reply).answers.filter((a) => a.type === 'TXT').map((a) => Buffer.concat(a.data as Buffer[]).toString());
}

const postTxt = (t: TestApp, x: Tenants, name: string, data: string, domain = 'end1.example') =>
  call(t.app, 'POST', '/dns-records', { token: x.end1.token, body: { data: { type: 'dns-record', attributes: txt(name, data, { domain }) } } });
const jobOf = (t: TestApp, x: Tenants, r: { headers: Record<string, unknown> }) =>
  call(t.app, 'GET', String(r.headers['content-location']).replace(/^https?:\/\/[^/]+/, ''), { token: x.end1.token });

requirable(secondaryMissing('nsd'))('DNS-record jobs with a secondary', () => {
  describe.each(ENGINES)('on %s', { timeout: 60_000 }, (engine) => {
    let t: TestApp;
    let x: Tenants;
    let ns: RunningSecondary;

    beforeAll(async () => {
      ({ t, x, ns } = await withSecondary(engine, 'nsd', ['end1.example']));
    });
    afterAll(async () => {
      await ns?.stop();
      await t?.close();
    });

    const post = (name: string, data: string) => postTxt(t, x, name, data);
    const job = (r: { headers: Record<string, unknown> }) => jobOf(t, x, r);

    it('the job is done only when the secondary answers the new record', async () => {
      const r = await post('via-secondary', 'fed by ixfr');
      expect(r.status, r.body).toBe(202);
      const done = await pollUntil(() => job(r), (j) => j.json.data.attributes.status !== 'pending', 'the job ends', 20_000);
      expect(done.json.data.attributes).toMatchObject({ status: 'done', error: null });
      // Done means the secondary serves it, not only hostplane.
      expect(await txtAt(ns.port, 'via-secondary.end1.example')).toEqual(['fed by ixfr']);
    });

    it('a secondary that stops following makes the job fail, its error naming the secondary; hostplane serves the record all the same', async () => {
      await ns.stop();
      const r = await post('lagging', 'not on ns2');
      expect(r.status, r.body).toBe(202);
      const ended = await pollUntil(() => job(r), (j) => j.json.data.attributes.status !== 'pending', 'the job ends', 30_000);
      expect(ended.json.data.attributes.status).toBe('failed');
      expect(ended.json.data.attributes.error).toMatch(/^end1\.example serial \d+ is not served by DNS secondary "ns2" \(127\.0\.0\.1:\d+\) .+ after \d+ s$/);
      expect(await txtAt(t.dns!.port!, 'lagging.end1.example')).toEqual(['not on ns2']);
    });
  });
});

requirable(secondaryMissing('knot'))('a secondary that reads the catalog zone', () => {
  describe.each(ENGINES)('on %s', { timeout: 60_000 }, (engine) => {
    let t: TestApp;
    let x: Tenants;
    let ns: RunningSecondary;

    beforeAll(async () => {
      ({ t, x, ns } = await withSecondary(engine, 'knot', ['catalog:catalog.hostplane.invalid']));
    });
    afterAll(async () => {
      await ns?.stop();
      await t?.close();
    });

    it('serves every zone the catalog lists, and a domain added later by itself; that domain’s jobs are done once it answers', async () => {
      for (const zone of ['end2.example', 'solo.example']) await holds(ns.port, zone);
      await t.admin.domains.createDomain({ name: 'later.example', customerId: Number(x.end1.customerId), packageId: Number(x.end1.packageId) });
      await holds(ns.port, 'later.example');
      const r = await postTxt(t, x, 'fresh', 'listed by the catalog', 'later.example');
      expect(r.status, r.body).toBe(202);
      const done = await pollUntil(() => jobOf(t, x, r), (j) => j.json.data.attributes.status !== 'pending', 'the job ends', 20_000);
      expect(done.json.data.attributes).toMatchObject({ status: 'done', error: null });
      expect(await txtAt(ns.port, 'fresh.later.example')).toEqual(['listed by the catalog']);
    });
  });
});
