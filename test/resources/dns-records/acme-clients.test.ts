// lego and acme.sh end to end (API guide "Queue jobs", "Compatibility with existing clients",
// "Documents"; docs/decisions/0003-dns-propagation.md): POST, poll the job until done, the TXT
// answered by a real DNS server, find the id as each client does, DELETE, gone — against the worker
// and the DNS server of the app.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE, ENGINES, call, type TestApp } from '../../helpers/app.js';
import type { Tenants } from '../../helpers/tenants.js';
import { pollUntil } from '../../helpers/wait.js';
import { ask } from '../../helpers/dns.js';
import { DKIM, acmeShRecordIds, dnsRecordsApp, jobBody, record, recordIdOf } from '../../helpers/dns-records.js';
import type { DnsServer } from '../../../src/dns/server.js';

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
  });
  afterAll(() => t?.close());

  const jobStatus = async (jobId: string) => {
    const r = await call(t.app, 'GET', `/queue-jobs/${jobId}`, { token: x.end1.token, headers: VENDOR });
    return r.json.data.attributes.status as string;
  };
  const txtAnswers = async (name: string) => {
    const { p } = await ask(dns.port!, 'udp', name, 'TXT', { rd: true });
    return { rcode: p.rcode, texts: p.answers.filter((a) => a.type === 'TXT').map((a) => Buffer.concat(a.data as Buffer[]).toString()) };
  };

  it('lego: POST → job done → the TXT is answered over DNS → DELETE the id from links.dns-record → job done → gone', async () => {
    const value = 'LEGO-dns01-value_abcdefghijklmnopqrstuvwxyz012';
    const created = await call(t.app, 'POST', '/dns-records', {
      token: x.end1.token,
      headers: VENDOR,
      body: { data: { type: 'dns-record', attributes: { record_type: 'TXT', name: '_acme-challenge', domain: 'end1.example', data: value, ttl: 300 } } },
    });
    expect(created.status).toBe(202);
    expect(created.headers['content-type']).toBe('application/vnd.api+json');
    expect(created.json.data.attributes.status).toBe('pending');
    // lego strips `<base>/dns-records/` from links.dns-record.
    const recordId = String(created.json.data.links['dns-record']).replace(`${BASE}/dns-records/`, '');
    await pollUntil(() => jobStatus(created.json.data.id), (s) => s === 'done', 'create job');
    // Done means answered (API guide "Queue jobs"; docs/decisions/0003-dns-propagation.md).
    expect(await txtAnswers('_acme-challenge.end1.example')).toEqual({ rcode: 'NOERROR', texts: [value] });
    const rec = await call(t.app, 'GET', `/dns-records/${recordId}`, { token: x.end1.token, headers: VENDOR });
    expect(rec.json.data).toEqual(record(recordId, { record_type: 'TXT', name: '_acme-challenge', domain: 'end1.example', data: value, ttl: 300 }));

    const deleted = await call(t.app, 'DELETE', `/dns-records/${recordId}`, { token: x.end1.token, headers: VENDOR });
    expect(deleted.status).toBe(202);
    expect(deleted.body).toBe(jobBody(deleted, 'delete', recordId, x.end1.customerId, `${BASE}/dns-records/${recordId}`));
    await pollUntil(() => jobStatus(deleted.json.data.id), (s) => s === 'done', 'delete job');
    expect((await txtAnswers('_acme-challenge.end1.example')).texts).toEqual([]);
    expect((await call(t.app, 'GET', `/dns-records/${recordId}`, { token: x.end1.token, headers: VENDOR })).status).toBe(404);
    // Both jobs stay readable as done (API guide "Compatibility with existing clients").
    const job = await call(t.app, 'GET', `/queue-jobs/${created.json.data.id}`, { token: x.end1.token, headers: VENDOR });
    expect(job.json.data.attributes).toMatchObject({ job_type: 'dns-record', status: 'done', action: 'create', error: null });
  });

  it('acme.sh: POST, list with raw brackets, find the id with its pipeline, DELETE //dns-records/<id>; the record is gone', async () => {
    const acme = { 'content-type': 'application/vnd.api+json', ...VENDOR };
    const value = 'acmesh-value-0123456789_abcdefghijklmnopqrstuv';
    const created = await call(t.app, 'POST', '/dns-records', {
      token: x.end1.token,
      headers: acme,
      body: `{"data": {"type": "dns-record", "attributes": {"record_type": "TXT", "name": "_acme-challenge.www", "domain": "end1.example", "data": "${value}", "ttl":300}}}`,
    });
    expect(created.status).toBe(202);
    await pollUntil(() => jobStatus(created.json.data.id), (s) => s === 'done', 'create job');
    expect((await txtAnswers('_acme-challenge.www.end1.example')).texts).toEqual([value]);
    const listed = await call(t.app, 'GET', '/dns-records?filter[domain]=end1.example', { token: x.end1.token, headers: acme, body: '' });
    const ids = acmeShRecordIds(listed.body, '_acme-challenge.www', value);
    expect(ids).toEqual([recordIdOf(created)]);
    const del = await call(t.app, 'DELETE', `//dns-records/${ids[0]}`, { token: x.end1.token, headers: acme, body: '' });
    expect(del.status).toBe(202);
    await pollUntil(() => jobStatus(del.json.data.id), (s) => s === 'done', 'delete job');
    expect((await txtAnswers('_acme-challenge.www.end1.example')).texts).toEqual([]);
  });

  it('base records and the DKIM key are answered over DNS from the domain\'s creation', async () => {
    const { p } = await ask(dns.port!, 'udp', 'www.end2.example', 'A', { rd: true });
    expect(p.answers.map((a) => a.data)).toEqual(['192.0.2.10']);
    const dkim = await txtAnswers('default._domainkey.end2.example');
    expect(dkim.texts.length).toBe(1);
    expect(dkim.texts[0]).toMatch(DKIM);
  });
});
