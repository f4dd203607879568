// PATCH /domains/{name} with presence.dnssec.enabled (API guide "DNSSEC (extension)"): a change of
// whether the zone is signed answers 202 with the domain and its queue-job, which is done only once
// hostplane's DNS server and a registered NSD secondary serve the zone signed (dig +dnssec shows
// RRSIGs) or unsigned again; a PATCH that changes nothing answers 200; the usual refusals.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE, ENGINES, call, type TestApp } from '../../helpers/app.js';
import { errorAt, useDomains } from '../../helpers/domains.js';
import { dnsRecordsApp } from '../../helpers/dns-records.js';
import { runDig } from '../../helpers/dns.js';
import { requirable } from '../../helpers/required.js';
import { secondaryMissing, startSecondary, testKey, type RunningSecondary } from '../../helpers/secondaries.js';
import { pollUntil } from '../../helpers/wait.js';
import type { Tenants } from '../../helpers/tenants.js';
import { DnsSecondariesService } from '../../../src/admin/dns-secondaries.service.js';

const body = (name: string, presence: object) => ({ type: 'domain', id: name, attributes: { presence } });
const relative = (url: unknown) => String(url).replace(BASE, '');

describe.each(ENGINES)('PATCH presence.dnssec on %s', (engine) => {
  const { t, x, get, patch } = useDomains(engine);

  it('turning it on: 202 with the domain as it will be served (DS records) and links.queue-job; the job document as every job\'s', async () => {
    const r = await patch('flags.example', body('flags.example', { dnssec: { enabled: true }, dns_update_lock: true }));
    expect(r.status, r.body).toBe(202);
    const jobUrl = String(r.headers['content-location']);
    expect(jobUrl).toMatch(new RegExp(`^${BASE}/queue-jobs/\\d+$`));
    const jobId = jobUrl.split('/').pop()!;
    const shown = (await get('flags.example')).json.data;
    expect(shown.attributes.presence).toEqual({
      dns_update_lock: true,
      dns_migration_mode: { enabled: false },
      dnssec: { enabled: true, state: 'signed', ds_records: [expect.stringMatching(/^\d{1,5} 13 2 [0-9A-F]{64}$/)], dnskeys: [expect.stringMatching(/^257 3 13 [A-Za-z0-9+/]{86}==$/)] },
    });
    // The domain as GET shows it, plus links.queue-job; the ETag is the one GET answers.
    expect(r.json).toEqual({ data: { ...shown, links: { ...shown.links, 'queue-job': jobUrl } }, links: { self: `${BASE}/domains/flags.example` } });
    expect(r.headers.etag).toBe((await get('flags.example')).headers.etag);
    const job = await call(t.app, 'GET', relative(jobUrl), { token: x.end1.token });
    expect(job.json.data).toEqual({
      type: 'queue-job',
      id: jobId,
      attributes: { job_type: 'domain', status: 'pending', action: 'update', created_at: job.json.data.attributes.created_at, finished_at: null, error: null },
      relationships: { owner: { data: { type: 'customer', id: x.end1.customerId } } },
      links: { self: jobUrl, 'queue-job': jobUrl, object: `${BASE}/domains/flags.example`, domain: `${BASE}/domains/flags.example` },
    });
  });

  it('a PATCH that changes nothing served answers 200 with the domain, and enqueues nothing', async () => {
    const before = await call(t.app, 'GET', '/queue-jobs', { token: x.end1.token });
    const r = await patch('flags.example', body('flags.example', { dnssec: { enabled: true } }));
    expect(r.status, r.body).toBe(200);
    expect(r.headers['content-location']).toBeUndefined();
    expect(r.json.data).toEqual((await get('flags.example')).json.data);
    expect((await call(t.app, 'GET', '/queue-jobs', { token: x.end1.token })).json.data).toEqual(before.json.data);
    // Off by default and asked off: the choice is kept, nothing is served differently.
    const idn = await patch('xn--bcher-kva.example', body('xn--bcher-kva.example', { dnssec: { enabled: false } }));
    expect(idn.status).toBe(200);
    expect(idn.json.data.attributes.presence.dnssec).toEqual({ enabled: false, state: 'unsigned', ds_records: [], dnskeys: [] });
  });

  it("a reseller turns it on for its end customer's domain with If-Match: 412 on a stale tag, 202 on the current one", async () => {
    const current = await get('xn--bcher-kva.example', x.reseller.token);
    expect(current.status).toBe(200);
    const send = (tag: string) =>
      call(t.app, 'PATCH', '/domains/xn--bcher-kva.example', { token: x.reseller.token, headers: { 'if-match': tag }, body: { data: body('xn--bcher-kva.example', { dnssec: { enabled: true } }) } });
    const stale = await send('"stale"');
    expect(stale.status).toBe(412);
    expect((await get('xn--bcher-kva.example')).json.data.attributes.presence.dnssec.enabled).toBe(false);
    const ok = await send(String(current.headers.etag));
    expect(ok.status, ok.body).toBe(202);
    expect(ok.json.data.attributes.presence.dnssec.enabled).toBe(true);
  });

  it('refused, nothing changed: a domain without presence (409 on presence), a foreign domain (404), a read-only token (403 token_scope)', async () => {
    const noZone = await patch('registered-only.example', body('registered-only.example', { dnssec: { enabled: true } }));
    expect(noZone.status).toBe(409);
    expect(noZone.json).toEqual(
      errorAt('/domains/registered-only.example', 'invalid_state', 409, 'Not allowed in the current state', 'This domain is not assigned to a presence; it has no presence flags to change.', {
        pointer: '/data/attributes/presence',
      }),
    );
    const foreign = await patch('end2.example', body('end2.example', { dnssec: { enabled: true } }));
    expect(foreign.status).toBe(404);
    expect(foreign.json.errors[0]).toMatchObject({ id: 'resource_not_found', status: '404' });
    const { token } = await t.admin.customers.issueToken(x.end1.contactId, 'read', { readOnly: true });
    const ro = await patch('end1.example', body('end1.example', { dnssec: { enabled: true } }), token);
    expect(ro.status).toBe(403);
    expect(ro.json.errors[0]).toMatchObject({ id: 'token_scope', status: '403', detail: 'This token is read-only.' });
    const bad = await patch('end1.example', body('end1.example', { dnssec: { enabled: 'yes' } }));
    expect(bad.status).toBe(422);
    expect(bad.json.errors[0]).toMatchObject({ id: 'invalid_api_data', source: { pointer: '/data/attributes/presence/dnssec/enabled' } });
    expect(await t.store.db.selectFrom('dnssec_keys').select('domain').where('domain', 'in', ['registered-only.example', 'end2.example', 'end1.example']).execute()).toEqual([]);
  });
});

requirable(secondaryMissing('nsd'))('the DNSSEC job with a secondary', () => {
  describe.each(ENGINES)('on %s', { timeout: 60_000 }, (engine) => {
    let t: TestApp;
    let x: Tenants;
    let ns: RunningSecondary;

    beforeAll(async () => {
      ({ t, x } = await dnsRecordsApp(engine, { DNS_SECONDARY_TIMEOUT_MS: '20000', DNS_HEARTBEAT_MS: '200', DNS_POLL_MS: '100', DNS_DNSSEC_DS_TTL_S: '1', DNS_DNSSEC_PROPAGATION_S: '0' }, { worker: true, dns: true }));
      const key = testKey('ns2-key');
      ns = await startSecondary('nsd', t.dns!.port!, key, ['end1.example'], (port) =>
        new DnsSecondariesService(t.store.db).add({ name: 'ns2', address: `127.0.0.1:${port}`, keyFileText: key.bindFile }).then(() => undefined),
      );
    });
    afterAll(async () => {
      await ns?.stop();
      await t?.close();
    });

    const set = (enabled: boolean) => call(t.app, 'PATCH', '/domains/end1.example', { token: x.end1.token, body: { data: body('end1.example', { dnssec: { enabled } }) } });
    const done = (r: { headers: Record<string, unknown> }) =>
      pollUntil(() => call(t.app, 'GET', relative(r.headers['content-location']), { token: x.end1.token }), (j) => j.json.data.attributes.status !== 'pending', 'the job ends', 30_000);
    /** The record types dig +dnssec shows for the apex's A at `port`. */
    const typesAt = async (port: number) =>
      (await runDig(port, '+dnssec', '+norec', '+noall', '+answer', 'end1.example', 'A')).split('\n').filter(Boolean).map((l) => l.split(/\s+/)[3]);

    const jobStatus = async (r: { headers: Record<string, unknown> }) => (await call(t.app, 'GET', relative(r.headers['content-location']), { token: x.end1.token })).json.data.attributes.status;
    /** The CDS and CDNSKEY records dig shows at `port`. */
    const cdsAt = async (port: number) =>
      (await Promise.all(['CDS', 'CDNSKEY'].map((type) => runDig(port, '+norec', '+short', 'end1.example', type)))).map((o) => {
        // dig splits long digests and keys into groups: joined again.
        const [a, b, c, ...rest] = o.trim().split(/\s+/);
        return `${a} ${b} ${c} ${rest.join('')}`;
      });

    it('on: done only once hostplane and the NSD secondary serve the zone signed (CDS/CDNSKEY name its key); off: disabling (delete form) until the parent dropped the DS, done once both serve it unsigned', async () => {
      const on = await set(true);
      expect(on.status, on.body).toBe(202);
      const ended = await done(on);
      expect(ended.json.data.attributes).toMatchObject({ status: 'done', error: null });
      // Done means served signed everywhere, the secondary included.
      expect(await typesAt(t.dns!.port!)).toEqual(['A', 'RRSIG']);
      expect(await typesAt(ns.port)).toEqual(['A', 'RRSIG']);

      const { ds_records: [ds], dnskeys: [dnskey] } = on.json.data.attributes.presence.dnssec;
      const [tag, alg, , digest] = ds.split(' ');
      expect(await cdsAt(ns.port)).toEqual([`${tag} ${alg} 2 ${digest}`, dnskey]);

      const off = await set(false);
      expect(off.status, off.body).toBe(202);
      expect(off.json.data.attributes.presence.dnssec).toEqual({ enabled: false, state: 'disabling', ds_records: [], dnskeys: [dnskey] });
      // Still signed, asking the parent to drop the DS (RFC 8078); the job waits for the parent.
      await pollUntil(() => cdsAt(ns.port), (v) => v[0] === '0 0 0 00', 'the delete form on the secondary', 20_000);
      expect(await cdsAt(t.dns!.port!)).toEqual(['0 0 0 00', '0 3 0 AA==']);
      expect(await typesAt(ns.port)).toEqual(['A', 'RRSIG']);
      await new Promise((r) => setTimeout(r, 1500));
      expect(await jobStatus(off)).toBe('pending');
      // The operator confirms the parent has no DS any more; a DS TTL (1 s here) later the zone goes unsigned.
      const seen = await t.admin.dnssec.dsSeen('end1.example');
      expect(seen.awaiting).toEqual({ kind: 'time', until: expect.any(String) });
      expect((await done(off)).json.data.attributes).toMatchObject({ status: 'done', error: null });
      expect(await typesAt(t.dns!.port!)).toEqual(['A']);
      expect(await typesAt(ns.port)).toEqual(['A']);
    });
  });
});
