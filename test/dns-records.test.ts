// /dns-records (spec §2.6, §3.1, §4.2, §4.3.6, §8; API-NOTES §1.4, §1.5, §1.7–1.9, §1.11, §5, §6
// dns-record; issue 3 items 1 and 4): the record document, POST/DELETE answering 202 with the
// queue-job, validation of every type, names and TTLs, conflicts, tags, tenancy, the byte layout
// acme.sh cuts apart, base records and `admin package set-plan`, the job handlers, and lego's flow
// end to end against the worker and a real DNS server.
import crypto from 'node:crypto';
import dgram from 'node:dgram';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import dnsPacket from 'dns-packet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE, ENGINES, call, createTestApp, freshStore, type EngineName, type TestApp, type TestStore } from './helpers/app.js';
import { seedTenants, type Tenants } from './helpers/tenants.js';
import { EnvSchema } from '../src/config.js';
import type { DnsServer } from '../src/provisioning/dns/server.js';
import { buildHandlers } from '../src/queue/handlers.js';
import type { JobContext, JobResult } from '../src/queue/types.js';
import type { QueueJobRow } from '../src/resources/queue-jobs/queue-jobs.repository.js';
import { applyPollMs } from '../src/resources/dns-records/dns-records.jobs.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DKIM = /^v=DKIM1; k=rsa; p=([A-Za-z0-9+/]+=*)$/;
const HEX64 = 'a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90';

interface Rec {
  record_type: string;
  name?: string;
  name_ace?: string;
  domain: string;
  domain_unicode?: string;
  data: string;
  ttl?: number;
  tag?: 'base' | 'custom' | 'managed';
}

/** The whole resource object of a record, in the attribute order of API-NOTES §6. */
function record(id: string, r: Rec) {
  const name = r.name ?? '';
  const nameAce = r.name_ace ?? name;
  const du = r.domain_unicode ?? r.domain;
  return {
    type: 'dns-record',
    id,
    attributes: {
      record_type: r.record_type,
      name,
      name_ace: nameAce,
      fqdn: name ? `${name}.${du}` : du,
      fqdn_ace: nameAce ? `${nameAce}.${r.domain}` : r.domain,
      domain: r.domain,
      data: r.data,
      ttl: r.ttl ?? 3600,
      tags: [r.tag ?? 'custom'],
    },
    links: { self: `${BASE}/dns-records/${id}` },
  };
}

const recordIdOf = (r: { json: any }) => String(r.json.data.links['dns-record']).replace(`${BASE}/dns-records/`, '');

/** The exact bytes of a 202 (API-NOTES §1.4–1.5): the queue-job first, then links.self of the request. */
function jobBody(r: { json: any }, action: 'create' | 'delete', recordId: string, owner: string, requestUrl: string) {
  const id = r.json.data.id;
  const self = `${BASE}/queue-jobs/${id}`;
  const obj = `${BASE}/dns-records/${recordId}`;
  return (
    `{"data":{"type":"queue-job","id":"${id}","attributes":{"job_type":"dns-record","status":"pending","action":"${action}",` +
    `"created_at":"${r.json.data.attributes.created_at}","finished_at":null,"error":null},` +
    `"relationships":{"owner":{"data":{"type":"customer","id":"${owner}"}}},` +
    `"links":{"self":"${self}","queue-job":"${self}","object":"${obj}","dns-record":"${obj}"}},"links":{"self":"${requestUrl}"}}`
  );
}

const errorBody = (id: string, status: number, title: string, detail: string, self: string, source?: object) => ({
  errors: [{ id, status: String(status), title, detail, ...(source ? { source } : {}) }],
  links: { self },
});
const invalid = (field: string, detail: string) =>
  errorBody('invalid_api_data', 422, 'Invalid data', detail, `${BASE}/dns-records`, { pointer: `/data/attributes/${field}` });
const conflict = (field: string, detail: string) =>
  errorBody('conflict', 409, 'Conflict', detail, `${BASE}/dns-records`, { pointer: `/data/attributes/${field}` });
const notFoundRecord = (url: string) => errorBody('resource_not_found', 404, 'Resource not found', 'No such dns-record.', url);

/**
 * acme.sh's dns_variomedia_rm, step by step in JS (API-NOTES §1.11): strip every `,"tags":[…]`,
 * take the text after the second `[` up to the next `]`, split records on `},{`, keep those
 * containing the name (ignoring case) and the value, then the value of the `id` line.
 */
function acmeShRecordIds(body: string, subDomain: string, txtValue: string): string[] {
  const stripped = body.replace(/,"tags":\[[^\]]*\]/g, '');
  const afterSecond = stripped.split('[')[2] ?? '';
  const records = afterSecond.split(']')[0].replace(/},[ \t]*{/g, '},§{').split('§');
  return records
    .filter((r) => r.toLowerCase().includes(subDomain.toLowerCase()) && r.includes(txtValue))
    .map((r) => r.replace(/^{/, ''))
    .flatMap((r) => r.split(',').map((l) => l.replace(/"/g, '')))
    .filter((l) => l.startsWith('id'))
    .map((l) => l.split(':')[1].replace(/ /g, ''));
}

/** One DNS question over UDP to the test's DNS server. */
async function dig(port: number, name: string, type: string) {
  const socket = dgram.createSocket('udp4');
  try {
    const id = crypto.randomInt(65536);
    const answer = new Promise<ReturnType<typeof dnsPacket.decode>>((resolve, reject) => {
      socket.on('message', (msg) => {
        const p = dnsPacket.decode(msg);
        if (p.id === id) resolve(p);
      });
      socket.on('error', reject);
      setTimeout(() => reject(new Error('DNS timeout')), 2000).unref();
    });
    socket.send(dnsPacket.encode({ type: 'query', id, flags: dnsPacket.RECURSION_DESIRED, questions: [{ type, name }] }), port, '127.0.0.1');
    return await answer;
  } finally {
    socket.close();
  }
}

/** Polls `fn` until `ok`, as a client polls a job (bounded, never a timing assertion). */
async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean, what: string, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe.each(ENGINES)('dns-records on %s', (engine) => {
  let t: TestApp;
  let x: Tenants;
  const post = (attributes: Record<string, unknown>, token = x.end1.token) =>
    call(t.app, 'POST', '/dns-records', { token, body: { data: { type: 'dns-record', attributes } } });
  const txt = (name: string, data: string, extra: Record<string, unknown> = {}) => ({ record_type: 'TXT', name, domain: 'end1.example', data, ...extra });
  const get = (id: string, token = x.end1.token) => call(t.app, 'GET', `/dns-records/${id}`, { token });
  const list = (query: string, token = x.end1.token) => call(t.app, 'GET', `/dns-records${query}`, { token });
  const row = (id: string) => t.store.db.selectFrom('dns_records').selectAll().where('id', '=', Number(id)).executeTakeFirst();
  /** The ids of a zone's records by `type name` (base and managed records are created with the domain). */
  const idsOf = async (domain: string) => {
    const rows = await t.store.db.selectFrom('dns_records').select(['id', 'name', 'record_type']).where('domain', '=', domain).execute();
    return Object.fromEntries(rows.map((r) => [`${r.record_type} ${r.name}`, String(r.id)]));
  };

  beforeAll(async () => {
    t = await createTestApp(engine);
    x = await seedTenants(t.admin);
  });
  afterAll(() => t.close());

  describe('base records (issue 3 item 4, spec §4.3.6)', () => {
    it('a new presence domain has the default template records and a managed DKIM key, served at once', async () => {
      const ids = await idsOf('end1.example');
      const r = await list('?filter[domain]=end1.example');
      expect(r.status).toBe(200);
      const dkim = r.json.data.find((d: any) => d.attributes.name === 'default._domainkey');
      expect(dkim.attributes.data).toMatch(DKIM);
      const d = 'end1.example';
      expect(r.json).toEqual({
        links: { self: `${BASE}/dns-records?filter[domain]=end1.example` },
        data: [
          record(ids['A '], { record_type: 'A', domain: d, data: '192.0.2.10', tag: 'base' }),
          record(ids['AAAA '], { record_type: 'AAAA', domain: d, data: '2001:db8::10', tag: 'base' }),
          record(ids['MX '], { record_type: 'MX', domain: d, data: '10 mail.hostplane.test', tag: 'base' }),
          record(ids['TXT '], { record_type: 'TXT', domain: d, data: 'v=spf1 a mx ~all', tag: 'base' }),
          record(ids['TXT default._domainkey'], { record_type: 'TXT', name: 'default._domainkey', domain: d, data: dkim.attributes.data, tag: 'managed' }),
          record(ids['A www'], { record_type: 'A', name: 'www', domain: d, data: '192.0.2.10', tag: 'base' }),
          record(ids['AAAA www'], { record_type: 'AAAA', name: 'www', domain: d, data: '2001:db8::10', tag: 'base' }),
        ],
        meta: { total: 7 },
      });
      // Written active, with a DNS change in the domain's transaction: the zone is served from the start.
      const states = await t.store.db.selectFrom('dns_records').select('state').distinct().where('domain', '=', d).execute();
      expect(states).toEqual([{ state: 'active' }]);
      const changes = await t.store.db.selectFrom('dns_changes').select('domain').where('domain', '=', d).execute();
      expect(changes).toEqual([{ domain: d }]);
    });

    it('the DKIM TXT publishes an RSA 2048 key whose private half is kept for signing', async () => {
      const r = await list('?filter[domain]=end2.example', x.end2.token);
      const txtData = r.json.data.find((d: any) => d.attributes.name === 'default._domainkey').attributes.data;
      const pub = crypto.createPublicKey({ key: Buffer.from(DKIM.exec(txtData)![1], 'base64'), format: 'der', type: 'spki' });
      expect(pub.asymmetricKeyType).toBe('rsa');
      expect(pub.asymmetricKeyDetails?.modulusLength).toBe(2048);
      const dom = await t.store.db.selectFrom('domains').select('dkim_private_key').where('name', '=', 'end2.example').executeTakeFirstOrThrow();
      const signature = crypto.sign('sha256', Buffer.from('mail'), dom.dkim_private_key!);
      expect(crypto.verify('sha256', Buffer.from('mail'), pub, signature)).toBe(true);
      // Every domain gets its own key.
      const other = (await list('?filter[domain]=end1.example')).json.data.find((d: any) => d.attributes.name === 'default._domainkey');
      expect(other.attributes.data).not.toBe(txtData);
    });

    it('a domain without presence gets no records and no key', async () => {
      await t.admin.createDomain({ name: 'registered-only.example', customerId: Number(x.end1.customerId), registered: true });
      expect(await t.store.db.selectFrom('dns_records').select('id').where('domain', '=', 'registered-only.example').execute()).toEqual([]);
      const dom = await t.store.db.selectFrom('domains').select('dkim_private_key').where('name', '=', 'registered-only.example').executeTakeFirstOrThrow();
      expect(dom.dkim_private_key).toBeNull();
    });

    it("a plan's DNS template replaces the operator default", async () => {
      const { planId } = await t.admin.createPlan({
        name: 'templated',
        dnsTemplate: [
          { name: '@', record_type: 'A', data: '198.51.100.7', ttl: 600 },
          { name: 'shop', record_type: 'CNAME', data: 'shops.example.net.' },
        ],
      });
      const { packageId } = await t.admin.createPackage({ customerId: Number(x.solo.customerId), planId, name: 'templated', linuxUser: 'u_templated' });
      await t.admin.createDomain({ name: 'templated.example', customerId: Number(x.solo.customerId), packageId });
      const ids = await idsOf('templated.example');
      const r = await list('?filter[domain]=templated.example&filter[record_type]=A,CNAME', x.solo.token);
      expect(r.json.data).toEqual([
        record(ids['A '], { record_type: 'A', domain: 'templated.example', data: '198.51.100.7', ttl: 600, tag: 'base' }),
        record(ids['CNAME shop'], { record_type: 'CNAME', name: 'shop', domain: 'templated.example', data: 'shops.example.net', tag: 'base' }),
      ]);
      expect(Object.keys(ids).sort()).toEqual(['A ', 'CNAME shop', 'TXT default._domainkey']);
    });

    it('a template is checked by the API rules when the plan is created', async () => {
      await expect(t.admin.createPlan({ name: 'bad', dnsTemplate: [{ name: 'www', record_type: 'CNAME', data: 'x' }] })).rejects.toThrow(
        'DNS template: record 1: CNAME data must be a fully qualified domain name (it is always absolute, spec §2.6).',
      );
      await expect(
        t.admin.createPlan({
          name: 'bad',
          dnsTemplate: [
            { name: 'www', record_type: 'A', data: '192.0.2.1' },
            { name: 'www', record_type: 'CNAME', data: 'web.example.net' },
          ],
        }),
      ).rejects.toThrow('DNS template: record 2: Other records exist at this name; a CNAME must be the only record at its name.');
      await expect(t.admin.createPlan({ name: 'bad', dnsTemplate: [{ record_type: 'TXT', name: 'default._domainkey', data: 'v=DKIM1; p=' }] })).rejects.toThrow(
        'DNS template: record 1: default._domainkey is reserved for the managed DKIM key.',
      );
      await expect(t.admin.createPlan({ name: 'bad', dnsTemplate: [{ type: 'A', data: '192.0.2.1' }] })).rejects.toThrow(
        'DNS template: record 1 must be {"name":…,"record_type":…,"data":…,"ttl":…} (name and ttl optional).',
      );
    });
  });

  describe('the record document (API-NOTES §1.1–1.3, §1.11, §6)', () => {
    it('GET /dns-records/{id}: data first, attributes in order, tags an array, ids strings, absolute links', async () => {
      const id = (await idsOf('end1.example'))['MX '];
      const r = await get(id);
      expect(r.status).toBe(200);
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.body).toBe(
        `{"data":{"type":"dns-record","id":"${id}","attributes":{"record_type":"MX","name":"","name_ace":"","fqdn":"end1.example",` +
          `"fqdn_ace":"end1.example","domain":"end1.example","data":"10 mail.hostplane.test","ttl":3600,"tags":["base"]},` +
          `"links":{"self":"${BASE}/dns-records/${id}"}},"links":{"self":"${BASE}/dns-records/${id}"}}`,
      );
    });

    it('unknown, malformed and out-of-range ids answer 404', async () => {
      for (const id of ['999999', 'abc', '99999999999', '-1']) {
        const r = await get(id);
        expect(r.status).toBe(404);
        expect(r.json).toEqual(notFoundRecord(`${BASE}/dns-records/${id}`));
      }
    });
  });

  describe('POST /dns-records (spec §3.1, API-NOTES §1.4, §5)', () => {
    it('answers 202 with the queue-job document and Content-Location; the record is listed at once', async () => {
      const r = await call(t.app, 'POST', '/dns-records', {
        token: x.end1.token,
        headers: { accept: 'application/vnd.hostplane.v1+json' },
        body: { data: { type: 'dns-record', attributes: { record_type: 'TXT', name: '_acme-challenge', domain: 'end1.example', data: 'token-value-1', ttl: 300 } } },
      });
      expect(r.status).toBe(202);
      expect(r.headers['content-type']).toBe('application/vnd.api+json');
      const recordId = recordIdOf(r);
      expect(recordId).toMatch(/^[1-9][0-9]*$/);
      expect(r.headers['content-location']).toBe(`${BASE}/queue-jobs/${r.json.data.id}`);
      expect(r.body).toBe(jobBody(r, 'create', recordId, x.end1.customerId, `${BASE}/dns-records`));
      // The job as GET /queue-jobs/{id} shows it: the same representation.
      const job = await call(t.app, 'GET', `/queue-jobs/${r.json.data.id}`, { token: x.end1.token });
      expect(job.json.data).toEqual(r.json.data);
      // Pending (not served yet), but a client listing right after POST finds it.
      expect((await row(recordId))?.state).toBe('pending');
      const expected = record(recordId, { record_type: 'TXT', name: '_acme-challenge', domain: 'end1.example', data: 'token-value-1', ttl: 300 });
      expect((await get(recordId)).json.data).toEqual(expected);
      expect((await list('?filter[domain]=end1.example&filter[record_type]=TXT')).json.data).toContainEqual(expected);
    });

    it('a reseller creates records in its end customers\' domains; the job belongs to the end customer', async () => {
      const r = await post({ record_type: 'A', name: 'by-reseller', domain: 'end2.example', data: '192.0.2.99' }, x.reseller.token);
      expect(r.status).toBe(202);
      expect(r.body).toBe(jobBody(r, 'create', recordIdOf(r), x.end2.customerId, `${BASE}/dns-records`));
      expect((await get(recordIdOf(r), x.end2.token)).json.data).toEqual(
        record(recordIdOf(r), { record_type: 'A', name: 'by-reseller', domain: 'end2.example', data: '192.0.2.99' }),
      );
    });

    it('the record and its job are written in one transaction: a rejected record leaves no job', async () => {
      const before = await t.store.db.selectFrom('queue_jobs').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      expect((await post(txt('', 'v=spf1 a mx ~all'))).status).toBe(409);
      const after = await t.store.db.selectFrom('queue_jobs').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      expect(Number(after.n)).toBe(Number(before.n));
    });
  });

  describe('names, types and data (spec §2.6, API-NOTES §6)', () => {
    const accepted: [string, Record<string, unknown>, Partial<Rec>][] = [
      ['A', { record_type: 'A', name: 'a-host', data: '192.0.2.1' }, { name: 'a-host', data: '192.0.2.1' }],
      ['AAAA, canonical text (RFC 5952)', { record_type: 'AAAA', name: 'v6', data: '2001:DB8:0:0::0:1' }, { name: 'v6', data: '2001:db8::1' }],
      ['CNAME with trailing dot, lower-cased', { record_type: 'CNAME', name: 'alias', data: 'Target.Example.NET.' }, { name: 'alias', data: 'target.example.net' }],
      ['CNAME to an _ name (ACME delegation)', { record_type: 'CNAME', name: '_acme-challenge.deleg', data: '_acme-challenge.auth.example.net' }, { name: '_acme-challenge.deleg', data: '_acme-challenge.auth.example.net' }],
      ['CNAME to an IDN host', { record_type: 'CNAME', name: 'idn-target', data: 'münchen.example' }, { name: 'idn-target', data: 'xn--mnchen-3ya.example' }],
      ['MX, single spaces, lower case', { record_type: 'MX', name: 'mx', data: ' 10  Mail.Example.COM. ' }, { name: 'mx', data: '10 mail.example.com' }],
      ['null MX (RFC 7505)', { record_type: 'MX', name: 'nomail', data: '0 .' }, { name: 'nomail', data: '0 .' }],
      ['TXT kept as sent', { record_type: 'TXT', name: 'note', data: ' two  spaces "and quotes" ' }, { name: 'note', data: ' two  spaces "and quotes" ' }],
      ['TXT of 4096 bytes (split on the wire)', { record_type: 'TXT', name: 'long', data: 'k'.repeat(4096) }, { name: 'long', data: 'k'.repeat(4096) }],
      ['SRV', { record_type: 'SRV', name: '_sip._tcp', data: '10 60 5060 SIP.Example.com.' }, { name: '_sip._tcp', data: '10 60 5060 sip.example.com' }],
      ['SRV "no service"', { record_type: 'SRV', name: '_imap._tcp', data: '0 0 0 .' }, { name: '_imap._tcp', data: '0 0 0 .' }],
      ['CAA, tag lower-cased, value quoted', { record_type: 'CAA', name: '', data: '0 ISSUE letsencrypt.org' }, { data: '0 issue "letsencrypt.org"' }],
      ['CAA iodef', { record_type: 'CAA', name: 'caa', data: '128 iodef "mailto:security@example.com"' }, { name: 'caa', data: '128 iodef "mailto:security@example.com"' }],
      ['NS below the apex', { record_type: 'NS', name: 'sub', data: 'ns1.example.net.' }, { name: 'sub', data: 'ns1.example.net' }],
      ['DS, digest joined and upper-cased', { record_type: 'DS', name: 'sub', data: `12345 13 2 ${HEX64.slice(0, 32)} ${HEX64.slice(32)}` }, { name: 'sub', data: `12345 13 2 ${HEX64.toUpperCase()}` }],
      ['TLSA', { record_type: 'TLSA', name: '_443._tcp.www', data: `3 1 1 ${HEX64}` }, { name: '_443._tcp.www', data: `3 1 1 ${HEX64.toUpperCase()}` }],
      ['record_type in any case', { record_type: 'txt', name: 'lower-type', data: 'x' }, { record_type: 'TXT', name: 'lower-type', data: 'x' }],
      ['@ is the apex', { record_type: 'TXT', name: '@', data: 'at-apex' }, { data: 'at-apex' }],
      ['no name is the apex (clients that omit empty fields)', { record_type: 'TXT', data: 'omitted-name' }, { data: 'omitted-name' }],
      ['several labels, upper case', { record_type: 'A', name: 'A.B.C', data: '192.0.2.2' }, { name: 'a.b.c', data: '192.0.2.2' }],
      ['_ labels', { record_type: 'TXT', name: '_dmarc', data: 'v=DMARC1; p=none' }, { name: '_dmarc', data: 'v=DMARC1; p=none' }],
      ['a leading * wildcard', { record_type: 'A', name: '*', data: '192.0.2.3' }, { name: '*', data: '192.0.2.3' }],
      ['a wildcard below a label', { record_type: 'A', name: '*.shop', data: '192.0.2.4' }, { name: '*.shop', data: '192.0.2.4' }],
      ['an IDN name gets *_ace forms', { record_type: 'A', name: 'Bücher', data: '192.0.2.5' }, { name: 'bücher', name_ace: 'xn--bcher-kva', data: '192.0.2.5' }],
      ['an ACE name shows in Unicode', { record_type: 'A', name: 'xn--mnchen-3ya.shop', data: '192.0.2.6' }, { name: 'münchen.shop', name_ace: 'xn--mnchen-3ya.shop', data: '192.0.2.6' }],
      ['the domain in Unicode, upper case or with a trailing dot', { record_type: 'TXT', name: 'dom', domain: 'END1.Example.', data: 'x' }, { name: 'dom', data: 'x' }],
      ['ttl at both ends', { record_type: 'TXT', name: 'ttl-min', data: 'x', ttl: 300 }, { name: 'ttl-min', data: 'x', ttl: 300 }],
      ['ttl 86400', { record_type: 'TXT', name: 'ttl-max', data: 'x', ttl: 86400 }, { name: 'ttl-max', data: 'x', ttl: 86400 }],
      ['ttl null is the default', { record_type: 'TXT', name: 'ttl-null', data: 'x', ttl: null }, { name: 'ttl-null', data: 'x' }],
    ];
    it.each(accepted)('accepts %s and stores the normalised form', async (_label, attrs, want) => {
      const r = await post({ domain: 'end1.example', ...attrs });
      expect(r.status).toBe(202);
      const id = recordIdOf(r);
      expect(r.body).toBe(jobBody(r, 'create', id, x.end1.customerId, `${BASE}/dns-records`));
      const g = await get(id);
      expect(g.json.data).toEqual(record(id, { record_type: String(attrs.record_type), domain: 'end1.example', data: '', ...want } as Rec));
    });

    const rejected: [string, Record<string, unknown>, string, string][] = [
      ['an uncreatable type', { record_type: 'SOA', data: 'x' }, 'record_type', 'Unsupported record type; creatable types: A, AAAA, CNAME, MX, TXT, SRV, CAA, NS, DS, TLSA.'],
      ['A not an address', { record_type: 'A', data: '192.0.2' }, 'data', 'A data must be an IPv4 address in dotted-decimal form, e.g. 192.0.2.10.'],
      ['A with leading zeros', { record_type: 'A', data: '010.0.0.1' }, 'data', 'A data must be an IPv4 address in dotted-decimal form, e.g. 192.0.2.10.'],
      ['A with two addresses', { record_type: 'A', data: '192.0.2.1 192.0.2.2' }, 'data', 'data must have the form "IPv4 address".'],
      ['AAAA with a zone index', { record_type: 'AAAA', data: 'fe80::1%eth0' }, 'data', 'AAAA data must be an IPv6 address, e.g. 2001:db8::10.'],
      ['AAAA an IPv4 address', { record_type: 'AAAA', data: '192.0.2.1' }, 'data', 'AAAA data must be an IPv6 address, e.g. 2001:db8::10.'],
      ['CNAME a relative name', { record_type: 'CNAME', name: 'c1', data: 'www' }, 'data', 'CNAME data must be a fully qualified domain name (it is always absolute, spec §2.6).'],
      ['CNAME an address', { record_type: 'CNAME', name: 'c2', data: '192.0.2.1' }, 'data', 'CNAME data must be a fully qualified domain name (it is always absolute, spec §2.6).'],
      ['CNAME at the apex', { record_type: 'CNAME', name: '', data: 'target.example.net' }, 'name', 'CNAME records are not allowed at the apex of the domain.'],
      ['MX without preference', { record_type: 'MX', data: 'mail.example.com' }, 'data', 'data must have the form "preference host".'],
      ['MX preference out of range', { record_type: 'MX', data: '65536 mail.example.com' }, 'data', 'MX preference must be a whole number from 0 to 65535.'],
      ['MX "." with a preference', { record_type: 'MX', data: '10 .' }, 'data', 'MX host must be a fully qualified host name (or "." with preference 0: null MX, RFC 7505).'],
      ['MX host with _', { record_type: 'MX', data: '10 _mail.example.com' }, 'data', 'MX host must be a fully qualified host name (or "." with preference 0: null MX, RFC 7505).'],
      ['TXT empty', { record_type: 'TXT', data: '' }, 'data', 'TXT data must not be empty.'],
      ['TXT with a control character', { record_type: 'TXT', data: 'bell\u0007' }, 'data', 'TXT data must be printable text without control characters.'],
      ['TXT over 4096 bytes', { record_type: 'TXT', data: 'ü'.repeat(2049) }, 'data', 'data must be at most 4096 bytes.'],
      ['SRV without _service._proto', { record_type: 'SRV', name: 'sip', data: '10 60 5060 sip.example.com' }, 'name', 'SRV name must start with _service._protocol, e.g. _sip._tcp (RFC 2782).'],
      ['SRV with three fields', { record_type: 'SRV', name: '_sip._tcp', data: '10 5060 sip.example.com' }, 'data', 'data must have the form "priority weight port target".'],
      ['CAA unterminated quote', { record_type: 'CAA', data: '0 issue "letsencrypt.org' }, 'data', 'CAA value: a quoted value needs its closing quote.'],
      ['CAA iodef not a URL', { record_type: 'CAA', data: '0 iodef "ftp://example.com"' }, 'data', 'CAA iodef value must be a mailto: or http(s): URL (RFC 8659 §4.4).'],
      ['CAA flags out of range', { record_type: 'CAA', data: '256 issue "ca.example"' }, 'data', 'CAA flags must be a whole number from 0 to 255.'],
      ['NS at the apex', { record_type: 'NS', name: '@', data: 'ns1.example.net' }, 'name', 'NS records are not allowed at the apex of the domain.'],
      ['NS at a wildcard', { record_type: 'NS', name: '*', data: 'ns1.example.net' }, 'name', 'NS records are not allowed at a wildcard name.'],
      ['DS digest of the wrong length', { record_type: 'DS', name: 'sub', data: '12345 13 2 ABCD' }, 'data', 'DS digest must have 64 hex digits.'],
      ['DS unknown digest type', { record_type: 'DS', name: 'sub', data: `12345 13 3 ${HEX64}` }, 'data', 'DS digest type must be 1 (SHA-1), 2 (SHA-256) or 4 (SHA-384).'],
      ['TLSA without _port._proto', { record_type: 'TLSA', name: 'www', data: `3 1 1 ${HEX64}` }, 'name', 'TLSA name must start with _port._protocol, e.g. _443._tcp (RFC 6698).'],
      ['TLSA odd hex', { record_type: 'TLSA', name: '_443._tcp', data: '3 1 0 abc' }, 'data', 'TLSA certificate association data must be hexadecimal (an even number of digits 0-9, A-F).'],
      ['name with an empty label', { record_type: 'A', name: 'a..b', data: '192.0.2.1' }, 'name', 'name has an empty label.'],
      ['name with a trailing dot', { record_type: 'A', name: 'www.', data: '192.0.2.1' }, 'name', 'name is relative to the domain: leave out the trailing dot and the domain.'],
      ['* not first', { record_type: 'A', name: 'a.*', data: '192.0.2.1' }, 'name', 'A wildcard * is allowed only as the first label of name.'],
      ['* inside a label', { record_type: 'A', name: 'foo*', data: '192.0.2.1' }, 'name', 'A wildcard is a whole label: * alone, as the first label.'],
      ['name with a space', { record_type: 'A', name: 'a b', data: '192.0.2.1' }, 'name', 'name must not contain spaces or control characters.'],
      ['name with a leading hyphen', { record_type: 'A', name: '-a', data: '192.0.2.1' }, 'name', '"-a" is not a valid label: letters, digits, hyphens and underscores, at most 63 characters, no hyphen at either end.'],
      ['a label of 64 characters', { record_type: 'A', name: 'l'.repeat(64), data: '192.0.2.1' }, 'name', `"${'l'.repeat(64)}" is not a valid label: letters, digits, hyphens and underscores, at most 63 characters, no hyphen at either end.`],
      ['a name too long with the domain', { record_type: 'A', name: Array(5).fill('l'.repeat(50)).join('.'), data: '192.0.2.1' }, 'name', 'name and domain together exceed 253 characters.'],
      ['ttl below 300', { record_type: 'TXT', data: 'x', ttl: 299 }, 'ttl', 'ttl must be from 300 to 86400 seconds (spec §8).'],
      ['ttl above 86400', { record_type: 'TXT', data: 'x', ttl: 86401 }, 'ttl', 'ttl must be from 300 to 86400 seconds (spec §8).'],
      ['ttl not whole', { record_type: 'TXT', data: 'x', ttl: 300.5 }, 'ttl', 'Must be integer.'],
      ['ttl as a string', { record_type: 'TXT', data: 'x', ttl: '300' }, 'ttl', 'Must be integer.'],
      ['data not a string', { record_type: 'MX', data: 10 }, 'data', 'Must be string.'],
      ['an unknown attribute', { record_type: 'MX', data: '10 mail.example.com', priority: 10 }, 'priority', 'Unknown or read-only attribute "priority".'],
      ['a response-only attribute', { record_type: 'A', data: '192.0.2.1', fqdn: 'end1.example' }, 'fqdn', 'Unknown or read-only attribute "fqdn".'],
    ];
    it.each(rejected)('422 for %s, pointing at the field', async (_label, attrs, field, detail) => {
      const r = await post({ domain: 'end1.example', ...attrs });
      expect(r.status).toBe(422);
      expect(r.json).toEqual(invalid(field, detail));
    });

    it('every faulty field is reported at once', async () => {
      const r = await post({ record_type: 'MX', name: 'a..b', domain: 'end1.example', data: 'mail', ttl: 1 });
      expect(r.status).toBe(422);
      expect(r.json).toEqual({
        errors: [
          invalid('name', 'name has an empty label.').errors[0],
          invalid('ttl', 'ttl must be from 300 to 86400 seconds (spec §8).').errors[0],
          invalid('data', 'data must have the form "preference host".').errors[0],
        ],
        links: { self: `${BASE}/dns-records` },
      });
    });

    it('the envelope: data.type must be dns-record, no client id, required attributes', async () => {
      const wrongType = await call(t.app, 'POST', '/dns-records', {
        token: x.end1.token,
        body: { data: { type: 'dns-records', attributes: { record_type: 'A', domain: 'end1.example', data: '192.0.2.1' } } },
      });
      expect(wrongType.status).toBe(422);
      expect(wrongType.json).toEqual(
        errorBody('invalid_api_data', 422, 'Invalid data', 'Must be one of: "dns-record".', `${BASE}/dns-records`, { pointer: '/data/type' }),
      );
      const withId = await call(t.app, 'POST', '/dns-records', {
        token: x.end1.token,
        body: { data: { type: 'dns-record', id: '5', attributes: { record_type: 'A', domain: 'end1.example', data: '192.0.2.1' } } },
      });
      expect(withId.json).toEqual(
        errorBody('invalid_api_data', 422, 'Invalid data', 'Unknown or read-only attribute "id".', `${BASE}/dns-records`, { pointer: '/data/id' }),
      );
      const missing = await post({ record_type: 'A', domain: 'end1.example' });
      expect(missing.json).toEqual(invalid('data', '"data" is required.'));
      const noBody = await call(t.app, 'POST', '/dns-records', { token: x.end1.token, headers: { 'content-type': 'application/vnd.api+json' } });
      expect(noBody.status).toBe(422);
      expect(noBody.json).toEqual(errorBody('invalid_api_data', 422, 'Invalid data', 'Must be object.', `${BASE}/dns-records`, { pointer: '/' }));
    });

    it('ttl defaults to DNS_DEFAULT_TTL', async () => {
      const other = await createTestApp(engine, { DNS_DEFAULT_TTL: '900' });
      try {
        const y = await seedTenants(other.admin);
        const r = await call(other.app, 'POST', '/dns-records', {
          token: y.solo.token,
          body: { data: { type: 'dns-record', attributes: { record_type: 'TXT', name: 'x', domain: 'solo.example', data: 'v' } } },
        });
        expect(r.status).toBe(202);
        const g = await call(other.app, 'GET', `/dns-records/${recordIdOf(r)}`, { token: y.solo.token });
        expect(g.json.data).toEqual(record(recordIdOf(r), { record_type: 'TXT', name: 'x', domain: 'solo.example', data: 'v', ttl: 900 }));
        // Base records of that deployment take it too.
        const base = await call(other.app, 'GET', '/dns-records?filter[domain]=solo.example&filter[record_type]=MX', { token: y.solo.token });
        expect(base.json.data.map((d: any) => d.attributes.ttl)).toEqual([900]);
      } finally {
        await other.close();
      }
    });
  });

  describe('the domain (spec §2.6: a presence domain of the caller, without subdomains)', () => {
    it('another tenant\'s domain and an unknown domain answer 404', async () => {
      for (const domain of ['end2.example', 'solo.example', 'reseller.example', 'nowhere.example']) {
        const r = await post({ record_type: 'A', name: 'x', domain, data: '192.0.2.1' });
        expect(r.status).toBe(404);
        expect(r.json).toEqual(errorBody('resource_not_found', 404, 'Resource not found', 'No such domain.', `${BASE}/dns-records`));
      }
    });

    it('a domain without presence answers 422', async () => {
      const r = await post({ record_type: 'A', name: 'x', domain: 'registered-only.example', data: '192.0.2.1' });
      expect(r.status).toBe(422);
      expect(r.json).toEqual(
        invalid('domain', 'registered-only.example is not used in a package (no presence); DNS records need a presence domain (spec §2.6).'),
      );
    });

    it('a subdomain of one of the caller\'s domains answers 422 naming domain and name', async () => {
      const r = await post({ record_type: 'TXT', name: '', domain: '_acme-challenge.www.end1.example', data: 'x' });
      expect(r.status).toBe(422);
      expect(r.json).toEqual(
        invalid('domain', 'domain takes the domain without subdomains (spec §2.6): use domain "end1.example" and name "_acme-challenge.www".'),
      );
      // …but a subdomain of someone else's domain is simply unknown.
      const foreign = await post({ record_type: 'TXT', name: '', domain: 'www.end2.example', data: 'x' });
      expect(foreign.status).toBe(404);
    });

    it('a name that cannot be a domain answers 422', async () => {
      const r = await post({ record_type: 'A', name: 'x', domain: 'not a domain', data: '192.0.2.1' });
      expect(r.json).toEqual(invalid('domain', 'Not ACE-encodable.'));
    });

    it('an IDN domain: domain is its id (ACE), fqdn in Unicode', async () => {
      await t.admin.createDomain({ name: 'Bücher.example', customerId: Number(x.end1.customerId), packageId: Number(x.end1.packageId) });
      const r = await post({ record_type: 'A', name: 'Straße', domain: 'bücher.example', data: '192.0.2.7' });
      expect(r.status).toBe(202);
      const id = recordIdOf(r);
      const g = await get(id);
      expect(g.body).toBe(
        JSON.stringify({
          data: record(id, { record_type: 'A', name: 'straße', name_ace: 'xn--strae-oqa', domain: 'xn--bcher-kva.example', domain_unicode: 'bücher.example', data: '192.0.2.7' }),
          links: { self: `${BASE}/dns-records/${id}` },
        }),
      );
      // Filters take either form.
      for (const f of ['bücher.example', 'XN--BCHER-KVA.example']) {
        const l = await list(`?filter[domain]=${encodeURIComponent(f)}&filter[record_type]=A`);
        expect(l.json.data.map((d: any) => d.id)).toContain(id);
      }
    });
  });

  describe('conflicts (409, API-NOTES §3)', () => {
    it('an identical record answers 409, however its data is written', async () => {
      expect((await post(txt('_dup', 'same'))).status).toBe(202);
      const r = await post(txt('_DUP', 'same'));
      expect(r.status).toBe(409);
      expect(r.json).toEqual(conflict('data', 'An identical TXT record exists at this name.'));
      // The same TXT text at another name, or another text at the name, is fine.
      expect((await post(txt('_dup2', 'same'))).status).toBe(202);
      expect((await post(txt('_dup', 'other'))).status).toBe(202);
      // MX written differently is the same record.
      expect((await post({ record_type: 'MX', name: 'mxdup', domain: 'end1.example', data: '10 mx.example.com' })).status).toBe(202);
      const mx = await post({ record_type: 'MX', name: 'MXDUP', domain: 'end1.example', data: '10   MX.Example.com.' });
      expect(mx.json).toEqual(conflict('data', 'An identical MX record exists at this name.'));
    });

    it('a CNAME with and without trailing dot is the same record (spec §2.6)', async () => {
      expect((await post({ record_type: 'CNAME', name: 'cn', domain: 'end1.example', data: 'target.example.net.' })).status).toBe(202);
      const r = await post({ record_type: 'CNAME', name: 'cn', domain: 'end1.example', data: 'target.example.net' });
      expect(r.json).toEqual(conflict('data', 'An identical CNAME record exists at this name.'));
    });

    it('a CNAME is alone at its name: no CNAME where records exist, no record where a CNAME exists', async () => {
      const r = await post({ record_type: 'CNAME', name: 'www', domain: 'end1.example', data: 'web.example.net' });
      expect(r.status).toBe(409);
      expect(r.json).toEqual(conflict('name', 'Other records exist at this name; a CNAME must be the only record at its name.'));
      const a = await post({ record_type: 'TXT', name: 'cn', domain: 'end1.example', data: 'x' });
      expect(a.json).toEqual(conflict('name', 'This name has a CNAME record; no other record may exist at it.'));
      const second = await post({ record_type: 'CNAME', name: 'cn', domain: 'end1.example', data: 'other.example.net' });
      expect(second.json).toEqual(conflict('name', 'This name has a CNAME record; no other record may exist at it.'));
      // A wildcard is a name of its own.
      expect((await post({ record_type: 'CNAME', name: '*.cn', domain: 'end1.example', data: 'web.example.net' })).status).toBe(202);
    });

    it('the managed DKIM name takes no other record', async () => {
      for (const attrs of [txt('default._domainkey', 'v=DKIM1; k=rsa; p=AAAA'), { record_type: 'CNAME', name: 'default._domainkey', domain: 'end1.example', data: 'dkim.example.net' }]) {
        const r = await post(attrs);
        expect(r.status).toBe(409);
        expect(r.json).toEqual(conflict('name', 'This name holds a record managed by the service (the DKIM key); no other record may be added at it.'));
      }
    });

    it('concurrent identical POSTs create one record', async () => {
      const rs = await Promise.all(Array.from({ length: 6 }, () => post(txt('_race', 'same-value'))));
      expect(rs.map((r) => r.status).sort()).toEqual([202, 409, 409, 409, 409, 409]);
      const rows = await t.store.db.selectFrom('dns_records').select('id').where('domain', '=', 'end1.example').where('name', '=', '_race').execute();
      expect(rows.length).toBe(1);
    });
  });

  describe('delegations (NS below the apex) hide nothing (spec §4.3.6, RFC 1034 §4.2.1)', () => {
    const ns = (name: string, data = 'ns1.other.example') => ({ record_type: 'NS', name, domain: 'end1.example', data });
    /** Marks a record active and DELETEs it: it is then `deleting` until its job runs. */
    const deleting = async (id: string) => {
      await t.store.db.updateTable('dns_records').set({ state: 'active' }).where('id', '=', Number(id)).execute();
      expect((await call(t.app, 'DELETE', `/dns-records/${id}`, { token: x.end1.token })).status).toBe(202);
      expect((await row(id))?.state).toBe('deleting');
    };

    it('an NS above the managed DKIM key is refused (it would hide the undeletable record)', async () => {
      const r = await post(ns('_domainkey'));
      expect(r.status).toBe(409);
      expect(r.json).toEqual(conflict('name', 'A record managed by the service (the DKIM key) is below this name; an NS record would delegate it to other name servers and hide it.'));
      const at = await post(ns('default._domainkey'));
      expect(at.json).toEqual(conflict('name', 'This name holds a record managed by the service (the DKIM key); no other record may be added at it.'));
      const rows = await t.store.db.selectFrom('dns_records').select('id').where('domain', '=', 'end1.example').where('name', 'in', ['_domainkey', 'default._domainkey']).execute();
      expect(rows.length).toBe(1); // the DKIM key alone
    });

    it('an NS is refused where records other than NS/DS are at its name or any record is below it (wildcards too)', async () => {
      expect((await post(txt('hosted', 'v'))).status).toBe(202);
      expect((await post(ns('hosted'))).json).toEqual(
        conflict('name', 'Records other than NS and DS exist at this name; an NS record would delegate it to other name servers and hide them.'),
      );
      expect((await post(txt('_acme-challenge.deep.parent', 'v'))).status).toBe(202);
      for (const name of ['parent', 'deep.parent']) {
        expect((await post(ns(name))).json).toEqual(
          conflict('name', 'Records exist below this name (at "_acme-challenge.deep.parent"); an NS record would delegate them to other name servers and hide them.'),
        );
      }
      expect((await post({ record_type: 'A', name: '*.wild', domain: 'end1.example', data: '192.0.2.7' })).status).toBe(202);
      expect((await post(ns('wild'))).json).toEqual(
        conflict('name', 'Records exist below this name (at "*.wild"); an NS record would delegate them to other name servers and hide them.'),
      );
      // `_` is one character, not a LIKE wildcard: a record at y.aqb is not below a_b.
      expect((await post(txt('y.aqb', 'v'))).status).toBe(202);
      expect((await post(ns('a_b'))).status).toBe(202);
    });

    it('at a delegation only NS and DS may be added, below it nothing (wildcards too)', async () => {
      expect((await post(ns('cut'))).status).toBe(202);
      expect((await post(ns('cut', 'ns2.other.example'))).status).toBe(202);
      expect((await post({ record_type: 'DS', name: 'cut', domain: 'end1.example', data: `12345 13 2 ${HEX64}` })).status).toBe(202);
      for (const attrs of [txt('cut', 'v'), { record_type: 'MX', name: 'cut', domain: 'end1.example', data: '10 mx.example.net' }]) {
        const r = await post(attrs);
        expect(r.status).toBe(409);
        expect(r.json).toEqual(conflict('name', 'An NS record delegates this name to other name servers; only NS and DS records may be added at it.'));
      }
      for (const attrs of [txt('_acme-challenge.cut', 'v'), { record_type: 'A', name: '*.cut', domain: 'end1.example', data: '192.0.2.8' }, ns('child.cut'), txt('a.b.cut', 'v')]) {
        const r = await post(attrs);
        expect(r.status).toBe(409);
        expect(r.json).toEqual(conflict('name', 'This name is below "cut", which an NS record delegates to other name servers; no record may be added below a delegation.'));
      }
    });

    it('records being deleted count, and the detail says so', async () => {
      const id = recordIdOf(await post(ns('leaving')));
      await deleting(id);
      expect((await post(txt('leaving', 'v'))).json).toEqual(
        conflict('name', 'An NS record delegates this name to other name servers; only NS and DS records may be added at it. It is being deleted; try again when its job is done.'),
      );
      expect((await post(txt('x.leaving', 'v'))).json).toEqual(
        conflict('name', 'This name is below "leaving", which an NS record delegates to other name servers; no record may be added below a delegation. It is being deleted; try again when its job is done.'),
      );
      const below = recordIdOf(await post(txt('x.going', 'v')));
      await deleting(below);
      expect((await post(ns('going'))).json).toEqual(
        conflict('name', 'Records exist below this name (at "x.going"); an NS record would delegate them to other name servers and hide them. It is being deleted; try again when its job is done.'),
      );
    });
  });

  describe('the records of one name fit in one DNS answer (RFC 1035 §4.2.2)', () => {
    const sizeDetail = 'The records at this name would exceed 16384 bytes together (each counts its data plus 128 bytes), more than one DNS answer surely holds.';

    it('data of all types at a name count up to 16384 bytes, each record with 128 bytes more; deleting ones count too', async () => {
      const ids: string[] = [];
      for (const c of ['a', 'b', 'c']) ids.push(recordIdOf(await post(txt('_big', c.repeat(4096)))));
      expect((await post({ record_type: 'A', name: '_big', domain: 'end1.example', data: '192.0.2.1' })).status).toBe(202);
      // 3 × (4096 + 128) + (9 + 128) = 12809: 3447 bytes of data (+128) fill it exactly.
      const full = await post(txt('_big', 'd'.repeat(3447)));
      expect(full.status).toBe(202);
      for (const attrs of [txt('_big', 'e'), { record_type: 'AAAA', name: '_big', domain: 'end1.example', data: '2001:db8::1' }]) {
        const r = await post(attrs);
        expect(r.status).toBe(409);
        expect(r.json).toEqual(conflict('data', sizeDetail));
      }
      // Another name has its own budget; identical records still say so first.
      expect((await post(txt('_big2', 'e'))).status).toBe(202);
      expect((await post(txt('_big', 'a'.repeat(4096)))).json).toEqual(conflict('data', 'An identical TXT record exists at this name.'));
      await t.store.db.updateTable('dns_records').set({ state: 'active' }).where('id', '=', Number(ids[0])).execute();
      expect((await call(t.app, 'DELETE', `/dns-records/${ids[0]}`, { token: x.end1.token })).status).toBe(202);
      expect((await post(txt('_big', 'e'))).json).toEqual(conflict('data', `${sizeDetail} Records being deleted count until their jobs are done.`));
      const rows = await t.store.db.selectFrom('dns_records').select('id').where('domain', '=', 'end1.example').where('name', '=', '_big').execute();
      expect(rows.length).toBe(5);
    });
  });

  describe('DELETE /dns-records/{id} (API-NOTES §1.5, spec §4.3.6)', () => {
    it('deleting a pending record: 202 with the job, the record is gone at once (it was never served)', async () => {
      const created = await post(txt('_del-pending', 'v'));
      const id = recordIdOf(created);
      const r = await call(t.app, 'DELETE', `/dns-records/${id}`, { token: x.end1.token });
      expect(r.status).toBe(202);
      expect(r.headers['content-location']).toBe(`${BASE}/queue-jobs/${r.json.data.id}`);
      expect(r.body).toBe(jobBody(r, 'delete', id, x.end1.customerId, `${BASE}/dns-records/${id}`));
      expect(r.json.data.id).not.toBe(created.json.data.id);
      expect(await row(id)).toBeUndefined();
      expect((await get(id)).status).toBe(404);
    });

    it('deleting an active record marks it deleting (still listed and served) until its job runs; a second DELETE answers the same job', async () => {
      const id = (await idsOf('end1.example'))['AAAA www'];
      const r = await call(t.app, 'DELETE', `/dns-records/${id}`, { token: x.end1.token });
      expect(r.status).toBe(202);
      expect(r.body).toBe(jobBody(r, 'delete', id, x.end1.customerId, `${BASE}/dns-records/${id}`));
      expect((await row(id))?.state).toBe('deleting');
      expect((await get(id)).json.data).toEqual(record(id, { record_type: 'AAAA', name: 'www', domain: 'end1.example', data: '2001:db8::10', tag: 'base' }));
      const again = await call(t.app, 'DELETE', `/dns-records/${id}`, { token: x.end1.token });
      expect(again.status).toBe(202);
      expect(again.body).toBe(r.body);
      // Re-creating it before the job has run is a conflict that says why.
      const re = await post({ record_type: 'AAAA', name: 'www', domain: 'end1.example', data: '2001:db8::10' });
      expect(re.json).toEqual(conflict('data', 'An identical AAAA record exists at this name. It is being deleted; try again when its job is done.'));
    });

    it('base records are deletable; the managed DKIM record answers 403 record_not_deletable', async () => {
      const ids = await idsOf('end2.example');
      expect((await call(t.app, 'DELETE', `/dns-records/${ids['TXT ']}`, { token: x.end2.token })).status).toBe(202);
      for (const token of [x.end2.token, x.reseller.token]) {
        const r = await call(t.app, 'DELETE', `/dns-records/${ids['TXT default._domainkey']}`, { token });
        expect(r.status).toBe(403);
        expect(r.json).toEqual(
          errorBody(
            'record_not_deletable',
            403,
            'Record cannot be deleted',
            'This record is managed by the service (e.g. the DKIM key) and cannot be deleted (spec §4.3.6).',
            `${BASE}/dns-records/${ids['TXT default._domainkey']}`,
          ),
        );
      }
      expect((await row(ids['TXT default._domainkey']))?.state).toBe('active');
    });

    it('acme.sh: DELETE //dns-records/<id> with a JSON Content-Type and an empty body (API-NOTES §1.7, §1.8)', async () => {
      const id = recordIdOf(await post(txt('_acme-challenge.www', 'acme-sh-value')));
      const r = await call(t.app, 'DELETE', `//dns-records/${id}`, {
        token: x.end1.token,
        headers: { 'content-type': 'application/vnd.api+json', accept: 'application/vnd.hostplane.v1+json' },
        body: '',
      });
      expect(r.status).toBe(202);
      expect(r.headers['content-type']).toBe('application/vnd.api+json');
      expect(r.body).toBe(jobBody(r, 'delete', id, x.end1.customerId, `${BASE}//dns-records/${id}`));
    });

    it('unknown ids answer 404', async () => {
      const r = await call(t.app, 'DELETE', '/dns-records/987654', { token: x.end1.token });
      expect(r.status).toBe(404);
      expect(r.json).toEqual(notFoundRecord(`${BASE}/dns-records/987654`));
    });
  });

  describe('lists and filters (spec §4.1, §4.2)', () => {
    it('filter[domain] takes the exact domain in any form; subdomains match nothing', async () => {
      const want = (await list('?filter[domain]=end1.example')).json.data.map((d: any) => d.id);
      expect(want.length).toBeGreaterThan(7);
      for (const f of ['END1.example', 'end1.example.', 'end1.example,nowhere.example']) {
        expect((await list(`?filter[domain]=${f}`)).json.data.map((d: any) => d.id)).toEqual(want);
      }
      // Percent-encoded brackets work like raw ones (API-NOTES §1.9).
      expect((await list('?filter%5Bdomain%5D=end1.example')).json.data.map((d: any) => d.id)).toEqual(want);
      const sub = await list('?filter[domain]=www.end1.example');
      expect(sub.json).toEqual({ links: { self: `${BASE}/dns-records?filter[domain]=www.end1.example` }, data: [], meta: { total: 0 } });
    });

    it('filter[record_type] (any case, comma-separated) and filter[package_id]', async () => {
      const r = await list('?filter[domain]=end2.example&filter[record_type]=mx,A', x.reseller.token);
      expect(r.json.data.map((d: any) => `${d.attributes.record_type} ${d.attributes.name}`)).toEqual(['A ', 'MX ', 'A by-reseller', 'A www']);
      const byPackage = await list(`?filter[package_id]=${x.end2.packageId}`, x.reseller.token);
      expect(new Set(byPackage.json.data.map((d: any) => d.attributes.domain))).toEqual(new Set(['end2.example']));
      expect((await list('?filter[package_id]=abc')).json.data).toEqual([]);
    });

    it('an unknown filter answers 400 invalid_parameter', async () => {
      const r = await list('?filter[name]=www');
      expect(r.status).toBe(400);
      expect(r.json).toEqual(
        errorBody('invalid_parameter', 400, 'Invalid query parameter', 'Unknown filter name; allowed: domain, package_id, record_type.', `${BASE}/dns-records?filter[name]=www`, {
          parameter: 'filter[name]',
        }),
      );
    });

    it('paging: links first, then data and meta', async () => {
      const r = await list('?filter[domain]=end1.example&page[size]=2&page[number]=2');
      expect(Object.keys(r.json)).toEqual(['links', 'data', 'meta']);
      expect(r.json.data.length).toBe(2);
      expect(r.json.meta.page).toEqual({ number: 2, size: 2, total_pages: Math.ceil(r.json.meta.total / 2) });
    });
  });

  describe('the list layout acme.sh cuts apart (API-NOTES §1.11)', () => {
    it('raw brackets: exactly one [ before the data array, links first, tags the only (never first) array, no attribute starting with id', async () => {
      const value = 'acme-layout-value_-9';
      const id = recordIdOf(await post(txt('_acme-challenge', value, { ttl: 300 })));
      const r = await call(t.app, 'GET', '/dns-records?filter[domain]=end1.example', {
        token: x.end1.token,
        headers: { 'content-type': 'application/vnd.api+json', accept: 'application/vnd.hostplane.v1+json' },
        body: '',
      });
      expect(r.status).toBe(200);
      const body = r.body;
      expect(body.startsWith(`{"links":{"self":"${BASE}/dns-records?filter[domain]=end1.example"},"data":[{`)).toBe(true);
      const dataStart = body.indexOf('"data":[') + '"data":'.length;
      expect([...body.slice(0, dataStart)].filter((c) => c === '[').length).toBe(1);
      // Without the tags arrays, the only brackets left are the filter's and the data array's.
      const stripped = body.replace(/,"tags":\[[^\]]*\]/g, '');
      expect([...stripped].filter((c) => c === '[').length).toBe(2);
      expect([...stripped].filter((c) => c === ']').length).toBe(2);
      for (const d of r.json.data) {
        const keys = Object.keys(d.attributes);
        expect(keys[0]).toBe('record_type');
        expect(keys.filter((k) => k !== 'id' && k.startsWith('id'))).toEqual([]);
        expect(Object.keys(d)).toEqual(['type', 'id', 'attributes', 'links']);
        for (const [k, v] of Object.entries(d.attributes)) expect(Array.isArray(v)).toBe(k === 'tags');
      }
      // The script's own pipeline finds exactly our record.
      expect(acmeShRecordIds(body, '_acme-challenge', value)).toEqual([id]);
    });
  });

  describe('tenancy (DESIGN "Tenancy is enforced in one place")', () => {
    it('lists never leak: each tenant sees its own zones, a reseller also its end customers\'', async () => {
      const domainsSeen = async (token: string) => new Set((await list('', token)).json.data.map((d: any) => d.attributes.domain));
      expect(await domainsSeen(x.end1.token)).toEqual(new Set(['end1.example', 'xn--bcher-kva.example']));
      expect(await domainsSeen(x.end2.token)).toEqual(new Set(['end2.example']));
      expect(await domainsSeen(x.solo.token)).toEqual(new Set(['solo.example', 'templated.example']));
      expect(await domainsSeen(x.reseller.token)).toEqual(new Set(['reseller.example', 'end1.example', 'xn--bcher-kva.example', 'end2.example']));
      // Filtering for someone else's zone or package finds nothing.
      expect((await list('?filter[domain]=end2.example')).json).toEqual({ links: { self: `${BASE}/dns-records?filter[domain]=end2.example` }, data: [], meta: { total: 0 } });
      expect((await list(`?filter[package_id]=${x.solo.packageId}`)).json.data).toEqual([]);
    });

    it('other tenants\' records answer 404 on GET and DELETE and stay untouched', async () => {
      const foreign = (await idsOf('end2.example'))['A '];
      for (const token of [x.end1.token, x.solo.token]) {
        expect((await get(foreign, token)).json).toEqual(notFoundRecord(`${BASE}/dns-records/${foreign}`));
        const d = await call(t.app, 'DELETE', `/dns-records/${foreign}`, { token });
        expect(d.status).toBe(404);
        expect(d.json).toEqual(notFoundRecord(`${BASE}/dns-records/${foreign}`));
      }
      // The reseller's own record is invisible to its end customers, and the other way round works.
      const resellers = (await idsOf('reseller.example'))['A '];
      expect((await get(resellers, x.end1.token)).status).toBe(404);
      expect((await get(foreign, x.reseller.token)).status).toBe(200);
      expect((await row(foreign))?.state).toBe('active');
    });

    it('without credentials: 401', async () => {
      const r = await call(t.app, 'GET', '/dns-records');
      expect(r.status).toBe(401);
      expect((await call(t.app, 'POST', '/dns-records', { body: { data: { type: 'dns-record', attributes: {} } } })).status).toBe(401);
    });
  });

  describe('the job handlers (docs/decisions/0003-dns-propagation.md)', () => {
    const handlers = () => buildHandlers({ config: t.config, store: t.store });
    /** A JobContext as the worker builds it; progress saved in memory. */
    const ctxFor = (job: QueueJobRow, progress: unknown = null) => {
      const saved: unknown[] = [];
      const ctx: JobContext = {
        job,
        payload: JSON.parse(job.payload ?? 'null'),
        progress,
        async saveProgress(p) {
          saved.push(p);
          ctx.progress = p;
        },
        store: t.store,
        log: t.app.log,
      };
      return { ctx, saved };
    };
    const jobRow = (id: string) => t.store.db.selectFrom('queue_jobs').selectAll().where('id', '=', Number(id)).executeTakeFirstOrThrow();
    const changes = async () => Number((await t.store.db.selectFrom('dns_changes').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);

    it('create: pending → active with one recorded change, then waits until a DNS server answers it; a re-run only waits', async () => {
      const created = await post(txt('_handler', 'h'));
      const id = recordIdOf(created);
      const job = await jobRow(created.json.data.id);
      const before = await changes();
      const serial = (await t.store.db.selectFrom('domains').select('dns_serial').where('name', '=', 'end1.example').executeTakeFirstOrThrow()).dns_serial;
      const { ctx, saved } = ctxFor(job);
      const handler = handlers().get('dns-record', 'create')!;
      // No DNS server runs in this app: the change is never answered, so the job waits.
      expect(await handler(ctx)).toEqual<JobResult>({ status: 'wait', ms: 20 });
      expect((await row(id))?.state).toBe('active');
      expect(await changes()).toBe(before + 1);
      const last = await t.store.db.selectFrom('dns_changes').select(['id', 'domain']).orderBy('id', 'desc').executeTakeFirstOrThrow();
      expect(last.domain).toBe('end1.example');
      expect(saved).toEqual([{ changeId: last.id }]);
      expect((await t.store.db.selectFrom('domains').select('dns_serial').where('name', '=', 'end1.example').executeTakeFirstOrThrow()).dns_serial).toBe(serial + 1);
      expect(await handler(ctx)).toEqual<JobResult>({ status: 'wait', ms: 20 });
      expect(await changes()).toBe(before + 1);
      // Once a live server has applied that change, the job is done.
      await t.store.db.insertInto('dns_servers').values({ id: 'test-server', applied_change_id: last.id, heartbeat_at: new Date().toISOString(), started_at: new Date().toISOString() }).execute();
      try {
        expect(await handler(ctx)).toEqual<JobResult>({ status: 'done' });
      } finally {
        await t.store.db.deleteFrom('dns_servers').where('id', '=', 'test-server').execute();
      }
    });

    it('create of a record deleted before its job ran is done without a change', async () => {
      const created = await post(txt('_handler-gone', 'h'));
      await call(t.app, 'DELETE', `/dns-records/${recordIdOf(created)}`, { token: x.end1.token });
      const before = await changes();
      const { ctx, saved } = ctxFor(await jobRow(created.json.data.id));
      expect(await handlers().get('dns-record', 'create')!(ctx)).toEqual({ status: 'done' });
      expect(await changes()).toBe(before);
      expect(saved).toEqual([]);
    });

    it('delete: the row goes with one change; a re-run after the row is gone announces again rather than finishing early', async () => {
      const id = (await idsOf('end1.example'))['A www'];
      const del = await call(t.app, 'DELETE', `/dns-records/${id}`, { token: x.end1.token });
      const job = await jobRow(del.json.data.id);
      const before = await changes();
      const first = ctxFor(job);
      expect(await handlers().get('dns-record', 'delete')!(first.ctx)).toEqual({ status: 'wait', ms: 20 });
      expect(await row(id)).toBeUndefined();
      expect(await changes()).toBe(before + 1);
      // A run that lost its progress (it died before the commit was acknowledged) records a newer change to wait for.
      const again = ctxFor(job);
      expect(await handlers().get('dns-record', 'delete')!(again.ctx)).toEqual({ status: 'wait', ms: 20 });
      expect(await changes()).toBe(before + 2);
    });

    it('waits briefly at first, then less often (a DNS server that is down costs little)', () => {
      const at = Date.parse('2026-01-01T00:00:00.000Z');
      const job = { created_at: '2026-01-01T00:00:00.000Z' };
      expect([0, 1999, 2000, 29_999, 30_000, 3_600_000].map((ms) => applyPollMs(job, at + ms))).toEqual([20, 20, 200, 200, 1000, 1000]);
    });

    it('a job without a usable record id fails permanently', async () => {
      const job = { ...(await jobRow((await post(txt('_handler-bad', 'h'))).json.data.id)), object_id: 'x' };
      await expect(handlers().get('dns-record', 'create')!(ctxFor(job).ctx)).rejects.toThrow('job has no DNS record or domain');
    });
  });

  describe('admin package set-plan (spec §4.3.6)', () => {
    let planB: number;
    beforeAll(async () => {
      ({ planId: planB } = await t.admin.createPlan({
        name: 'plan B',
        dnsTemplate: [
          { name: '', record_type: 'A', data: '203.0.113.1' },
          { name: 'www', record_type: 'CNAME', data: 'web.example.net' },
          { name: 'app', record_type: 'A', data: '203.0.113.2' },
        ],
      }));
    });

    it('resets base records of each domain of the package; keeps custom and managed; respects dns_update_lock', async () => {
      const { customerId } = await t.admin.createCustomer({ contact: { name: 'P', email: 'p@plan.example' } });
      const { token } = await t.admin.issueToken((await t.admin.listContacts(customerId))[0].id);
      const { planId } = await t.admin.createPlan({ name: 'plan A' });
      const { packageId } = await t.admin.createPackage({ customerId, planId, name: 'p', linuxUser: 'u_plan' });
      await t.admin.createDomain({ name: 'reset.example', customerId, packageId });
      await t.admin.createDomain({ name: 'locked.example', customerId, packageId });
      const lock = await call(t.app, 'PATCH', '/domains/locked.example', {
        token,
        body: { data: { type: 'domain', id: 'locked.example', attributes: { presence: { dns_update_lock: true } } } },
      });
      expect(lock.status).toBe(200);
      // A custom A at app clashes with the new template's app A? No: different data is fine. A custom TXT at www blocks the template's www CNAME.
      const custom = recordIdOf(await post({ record_type: 'TXT', name: 'www', domain: 'reset.example', data: 'keep me' }, token));
      const lockedBefore = await t.store.db.selectFrom('dns_records').selectAll().where('domain', '=', 'locked.example').orderBy('id').execute();
      const serial = async (d: string) => (await t.store.db.selectFrom('domains').select('dns_serial').where('name', '=', d).executeTakeFirstOrThrow()).dns_serial;
      const serials = { reset: await serial('reset.example'), locked: await serial('locked.example') };

      const result = await t.admin.setPackagePlan(packageId, planB);
      expect(result).toEqual({
        packageId,
        planId: planB,
        domains: [
          { domain: 'locked.example', base_records: 'locked', removed: 0, inserted: 0, skipped: 0 },
          { domain: 'reset.example', base_records: 'reset', removed: 6, inserted: 2, skipped: 1 },
        ],
      });
      expect((await t.admin.package(packageId)).plan_id).toBe(planB);
      const ids = await idsOf('reset.example');
      const l = await list('?filter[domain]=reset.example', token);
      const dkim = l.json.data.find((d: any) => d.attributes.name === 'default._domainkey');
      expect(l.json.data).toEqual([
        record(ids['A '], { record_type: 'A', domain: 'reset.example', data: '203.0.113.1', tag: 'base' }),
        record(ids['A app'], { record_type: 'A', name: 'app', domain: 'reset.example', data: '203.0.113.2', tag: 'base' }),
        record(ids['TXT default._domainkey'], { record_type: 'TXT', name: 'default._domainkey', domain: 'reset.example', data: dkim.attributes.data, tag: 'managed' }),
        record(custom, { record_type: 'TXT', name: 'www', domain: 'reset.example', data: 'keep me' }),
      ]);
      expect(await t.store.db.selectFrom('dns_records').selectAll().where('domain', '=', 'locked.example').orderBy('id').execute()).toEqual(lockedBefore);
      // One DNS change for the reset domain, none for the locked one.
      expect(await serial('reset.example')).toBe(serials.reset + 1);
      expect(await serial('locked.example')).toBe(serials.locked);
    });

    it('a plan change leaves out template records that a customer\'s delegation cut would hide', async () => {
      const { customerId } = await t.admin.createCustomer({ contact: { name: 'Q', email: 'q@plan.example' } });
      const { token } = await t.admin.issueToken((await t.admin.listContacts(customerId))[0].id);
      const { planId } = await t.admin.createPlan({ name: 'plan Q' });
      const { packageId } = await t.admin.createPackage({ customerId, planId, name: 'q', linuxUser: 'u_cut' });
      await t.admin.createDomain({ name: 'cut.example', customerId, packageId });
      // The customer delegates app.cut.example; plan B's template has an A record at app.
      const ns = recordIdOf(await post({ record_type: 'NS', name: 'app', domain: 'cut.example', data: 'ns1.elsewhere.example' }, token));
      const result = await t.admin.setPackagePlan(packageId, planB);
      expect(result.domains).toEqual([{ domain: 'cut.example', base_records: 'reset', removed: 6, inserted: 2, skipped: 1 }]);
      const l = await list('?filter[domain]=cut.example', token);
      expect(l.json.data.filter((d: any) => d.attributes.name === 'app').map((d: any) => [d.id, d.attributes.record_type])).toEqual([[ns, 'NS']]);
    });

    it('`hostplane admin package set-plan` prints what it did (--json)', async () => {
      // A store of its own that the CLI process opens by DATABASE_URL.
      const ts: TestStore = await freshStore(engine as EngineName);
      const app = await createTestApp(engine, {}, { store: ts });
      try {
        const y = await seedTenants(app.admin);
        const { planId } = await app.admin.createPlan({ name: 'cli plan', dnsTemplate: [{ name: '', record_type: 'A', data: '203.0.113.9' }] });
        let databaseUrl = ts.url;
        if (ts.schema) {
          const u = new URL(ts.url);
          u.searchParams.set('schema', ts.schema);
          databaseUrl = u.toString();
        }
        const env: NodeJS.ProcessEnv = { ...process.env };
        for (const key of Object.keys(EnvSchema.properties)) delete env[key];
        const out = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
          const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'admin', 'package', 'set-plan', '--package', y.solo.packageId, '--plan', String(planId), '--json'], {
            cwd: ROOT,
            env: { ...env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' },
          });
          let stdout = '';
          let stderr = '';
          child.stdout.on('data', (d) => (stdout += d));
          child.stderr.on('data', (d) => (stderr += d));
          child.on('error', reject);
          child.on('close', (code) => resolve({ code, stdout, stderr }));
        });
        expect(out.stderr).toBe('');
        expect(out.code).toBe(0);
        expect(out.stdout).toBe(
          `${JSON.stringify({ package_id: y.solo.packageId, plan_id: String(planId), domains: [{ domain: 'solo.example', base_records: 'reset', removed: 6, inserted: 1, skipped: 0 }] })}\n`,
        );
        const l = await call(app.app, 'GET', '/dns-records?filter[domain]=solo.example', { token: y.solo.token });
        expect(l.json.data.map((d: any) => `${d.attributes.record_type} ${d.attributes.name} ${d.attributes.data.slice(0, 8)} ${d.attributes.tags[0]}`)).toEqual([
          'A  203.0.11 base',
          'TXT default._domainkey v=DKIM1; managed',
        ]);
      } finally {
        await app.close();
        await ts.drop();
      }
    });
  });
});

describe.each(ENGINES)('lego and acme.sh flows end to end on %s (worker and DNS server running)', (engine) => {
  let t: TestApp;
  let x: Tenants;
  let dns: DnsServer;
  const VENDOR = { accept: 'application/vnd.variomedia.v1+json' };

  beforeAll(async () => {
    // The original service's vendor word: clients send its Accept header (API-NOTES §2).
    t = await createTestApp(engine, { API_VENDOR: 'variomedia', JOB_POLL_MS: '20' }, { worker: true, dns: true });
    dns = t.dns!;
    x = await seedTenants(t.admin);
  });
  afterAll(() => t?.close());

  const jobStatus = async (jobId: string) => {
    const r = await call(t.app, 'GET', `/queue-jobs/${jobId}`, { token: x.end1.token, headers: VENDOR });
    return r.json.data.attributes.status as string;
  };
  const txtAnswers = async (name: string) => {
    const p = await dig(dns.port!, name, 'TXT');
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
    await until(() => jobStatus(created.json.data.id), (s) => s === 'done', 'create job');
    // Done means answered (spec §3.1, issue 3 item 3).
    expect(await txtAnswers('_acme-challenge.end1.example')).toEqual({ rcode: 'NOERROR', texts: [value] });
    const rec = await call(t.app, 'GET', `/dns-records/${recordId}`, { token: x.end1.token, headers: VENDOR });
    expect(rec.json.data).toEqual(record(recordId, { record_type: 'TXT', name: '_acme-challenge', domain: 'end1.example', data: value, ttl: 300 }));

    const deleted = await call(t.app, 'DELETE', `/dns-records/${recordId}`, { token: x.end1.token, headers: VENDOR });
    expect(deleted.status).toBe(202);
    expect(deleted.body).toBe(jobBody(deleted, 'delete', recordId, x.end1.customerId, `${BASE}/dns-records/${recordId}`));
    await until(() => jobStatus(deleted.json.data.id), (s) => s === 'done', 'delete job');
    expect((await txtAnswers('_acme-challenge.end1.example')).texts).toEqual([]);
    expect((await call(t.app, 'GET', `/dns-records/${recordId}`, { token: x.end1.token, headers: VENDOR })).status).toBe(404);
    // Both jobs stay readable as done (API-NOTES §1.6).
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
    await until(() => jobStatus(created.json.data.id), (s) => s === 'done', 'create job');
    expect((await txtAnswers('_acme-challenge.www.end1.example')).texts).toEqual([value]);
    const listed = await call(t.app, 'GET', '/dns-records?filter[domain]=end1.example', { token: x.end1.token, headers: acme, body: '' });
    const ids = acmeShRecordIds(listed.body, '_acme-challenge.www', value);
    expect(ids).toEqual([recordIdOf(created)]);
    const del = await call(t.app, 'DELETE', `//dns-records/${ids[0]}`, { token: x.end1.token, headers: acme, body: '' });
    expect(del.status).toBe(202);
    await until(() => jobStatus(del.json.data.id), (s) => s === 'done', 'delete job');
    expect((await txtAnswers('_acme-challenge.www.end1.example')).texts).toEqual([]);
  });

  it('base records and the DKIM key are answered over DNS from the domain\'s creation', async () => {
    const p = await dig(dns.port!, 'www.end2.example', 'A');
    expect(p.answers.map((a) => a.data)).toEqual(['192.0.2.10']);
    const dkim = await txtAnswers('default._domainkey.end2.example');
    expect(dkim.texts.length).toBe(1);
    expect(dkim.texts[0]).toMatch(DKIM);
  });
});
