// lego and acme.sh end to end (API guide "Queue jobs", "Compatibility with existing clients",
// "Documents"; docs/decisions/0003-dns-propagation.md): POST, poll the job until done, the TXT
// answered by a real DNS server, find the id as each client does, DELETE, gone — against the worker
// and the DNS server of the app. Each flow runs with the customer's own token and with one limited
// to ACME challenges of the domain (API guide "Scoped tokens"), which can do nothing else.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE, ENGINES, call, type TestApp } from '../../helpers/app.js';
import type { Tenants } from '../../helpers/tenants.js';
import { pollUntil } from '../../helpers/wait.js';
import { ask } from '../../helpers/dns.js';
import { DKIM, acmeShRecordIds, dnsRecordsApp, jobBody, record, recordIdOf } from '../../helpers/dns-records.js';
import type { DnsServer } from '../../../src/dns/server.js';
import { errorBody } from '../../helpers/errors.js';

const TOKENS = ['full', 'acme-challenge'] as const;

describe.each(ENGINES)('lego and acme.sh flows end to end on %s (worker and DNS server running)', (engine) => {
  let t: TestApp;
  let x: Tenants;
  let dns: DnsServer;
  const VENDOR = { accept: 'application/vnd.variomedia.v1+json' };

  beforeAll(async () => {
    // The original service's vendor word: clients send its Accept header (API guide "Versioning and
    // content types").
    ({ t, x } = await dnsRecordsApp(engine, { API_VENDOR: 'variomedia', JOB_POLL_MS: '20' }, { worker: true, dns: true }));
    dns = t.dns!;
    acmeToken = (await t.admin.customers.issueToken(x.end1.contactId, 'acme', { acmeChallenge: true, domains: ['end1.example'] })).token;
  });
  let acmeToken: string;
  const tokenOf = (kind: (typeof TOKENS)[number]) => (kind === 'full' ? x.end1.token : acmeToken);
  afterAll(() => t?.close());

  const jobStatus = async (jobId: string, token = x.end1.token) => {
    const r = await call(t.app, 'GET', `/queue-jobs/${jobId}`, { token, headers: VENDOR });
    return r.json.data.attributes.status as string;
  };
  const txtAnswers = async (name: string) => {
    const { p } = await ask(dns.port!, 'udp', name, 'TXT', { rd: true });
    return { rcode: p.rcode, texts: p.answers.filter((a) => a.type === 'TXT').map((a) => Buffer.concat(a.data as Buffer[]).toString()) };
  };

  it.each(TOKENS)('lego with the %s token: POST → job done → the TXT is answered over DNS → DELETE the id from links.dns-record → job done → gone', async (kind) => {
    const token = tokenOf(kind);
    const value = `LEGO-dns01-value_abcdefghijklmnopqrstuvwxyz012-${kind}`;
    const created = await call(t.app, 'POST', '/dns-records', {
      token,
      headers: VENDOR,
      body: { data: { type: 'dns-record', attributes: { record_type: 'TXT', name: '_acme-challenge', domain: 'end1.example', data: value, ttl: 300 } } },
    });
    expect(created.status).toBe(202);
    expect(created.headers['content-type']).toBe('application/vnd.api+json');
    expect(created.json.data.attributes.status).toBe('pending');
    // lego strips `<base>/dns-records/` from links.dns-record.
    const recordId = String(created.json.data.links['dns-record']).replace(`${BASE}/dns-records/`, '');
    await pollUntil(() => jobStatus(created.json.data.id, token), (s) => s === 'done', 'create job');
    // Done means answered (API guide "Queue jobs"; docs/decisions/0003-dns-propagation.md).
    expect(await txtAnswers('_acme-challenge.end1.example')).toEqual({ rcode: 'NOERROR', texts: [value] });
    const rec = await call(t.app, 'GET', `/dns-records/${recordId}`, { token, headers: VENDOR });
    expect(rec.json.data).toEqual(record(recordId, { record_type: 'TXT', name: '_acme-challenge', domain: 'end1.example', data: value, ttl: 300 }));

    const deleted = await call(t.app, 'DELETE', `/dns-records/${recordId}`, { token, headers: VENDOR });
    expect(deleted.status).toBe(202);
    expect(deleted.body).toBe(jobBody(deleted, 'delete', recordId, x.end1.customerId, `${BASE}/dns-records/${recordId}`));
    await pollUntil(() => jobStatus(deleted.json.data.id, token), (s) => s === 'done', 'delete job');
    expect((await txtAnswers('_acme-challenge.end1.example')).texts).toEqual([]);
    expect((await call(t.app, 'GET', `/dns-records/${recordId}`, { token, headers: VENDOR })).status).toBe(404);
    // Both jobs stay readable as done (API guide "Compatibility with existing clients").
    const job = await call(t.app, 'GET', `/queue-jobs/${created.json.data.id}`, { token, headers: VENDOR });
    expect(job.json.data.attributes).toMatchObject({ job_type: 'dns-record', status: 'done', action: 'create', error: null });
  });

  it.each(TOKENS)('acme.sh with the %s token: find the zone, POST, list with raw brackets, find the id with its pipeline, DELETE //dns-records/<id>; the record is gone', async (kind) => {
    const token = tokenOf(kind);
    const acme = { 'content-type': 'application/vnd.api+json', ...VENDOR };
    const value = `acmesh-value-0123456789_abcdefghijklmnopqrstuv-${kind}`;
    // acme.sh walks down the name until GET /domains/<name> answers its id.
    const walk = [];
    for (const name of ['_acme-challenge.www.end1.example', 'www.end1.example', 'end1.example']) {
      walk.push((await call(t.app, 'GET', `/domains/${name}`, { token, headers: acme, body: '' })).status);
    }
    expect(walk).toEqual([422, 404, 200]);
    const created = await call(t.app, 'POST', '/dns-records', {
      token,
      headers: acme,
      body: `{"data": {"type": "dns-record", "attributes": {"record_type": "TXT", "name": "_acme-challenge.www", "domain": "end1.example", "data": "${value}", "ttl":300}}}`,
    });
    expect(created.status).toBe(202);
    await pollUntil(() => jobStatus(created.json.data.id, token), (s) => s === 'done', 'create job');
    expect((await txtAnswers('_acme-challenge.www.end1.example')).texts).toEqual([value]);
    const listed = await call(t.app, 'GET', '/dns-records?filter[domain]=end1.example', { token, headers: acme, body: '' });
    const ids = acmeShRecordIds(listed.body, '_acme-challenge.www', value);
    expect(ids).toEqual([recordIdOf(created)]);
    const del = await call(t.app, 'DELETE', `//dns-records/${ids[0]}`, { token, headers: acme, body: '' });
    expect(del.status).toBe(202);
    await pollUntil(() => jobStatus(del.json.data.id, token), (s) => s === 'done', 'delete job');
    expect((await txtAnswers('_acme-challenge.www.end1.example')).texts).toEqual([]);
  });

  it('the ACME-challenge token changes nothing but _acme-challenge TXT records of its domain (API guide "Scoped tokens")', async () => {
    const detail = 'This token may only change TXT records named _acme-challenge or _acme-challenge.<subdomain> of the domains end1.example.';
    const post = (attributes: Record<string, unknown>) =>
      call(t.app, 'POST', '/dns-records', { token: acmeToken, headers: VENDOR, body: { data: { type: 'dns-record', attributes } } });
    const base = await t.store.db.selectFrom('dns_records').select('id').where('domain', '=', 'end1.example').where('record_type', '=', 'MX').executeTakeFirstOrThrow();
    const before = await t.store.db.selectFrom('dns_records').selectAll().orderBy('id').execute();
    expect((await post({ record_type: 'A', name: 'www', domain: 'end1.example', data: '192.0.2.66' })).json).toEqual(errorBody('token_scope', 403, "Outside the token's scope", detail, `${BASE}/dns-records`));
    expect((await post({ record_type: 'TXT', name: '@', domain: 'end1.example', data: 'v=spf1 -all' })).status).toBe(403);
    expect((await post({ record_type: 'TXT', name: '_acme-challenge', domain: 'end2.example', data: 'x' })).status).toBe(404);
    expect((await call(t.app, 'DELETE', `/dns-records/${base.id}`, { token: acmeToken, headers: VENDOR })).status).toBe(404);
    expect((await call(t.app, 'GET', '/customers', { token: acmeToken, headers: VENDOR })).status).toBe(403);
    expect(await t.store.db.selectFrom('dns_records').selectAll().orderBy('id').execute()).toEqual(before);
  });

  it('base records and the DKIM key are answered over DNS from the domain\'s creation', async () => {
    const { p } = await ask(dns.port!, 'udp', 'www.end2.example', 'A', { rd: true });
    expect(p.answers.map((a) => a.data)).toEqual(['192.0.2.10']);
    const dkim = await txtAnswers('default._domainkey.end2.example');
    expect(dkim.texts.length).toBe(1);
    expect(dkim.texts[0]).toMatch(DKIM);
  });
});
