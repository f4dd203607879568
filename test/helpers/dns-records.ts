// Fixtures of the /dns-records tests (API guide "DNS records", "Queue jobs", "Compatibility with
// existing clients"): an app with the standard tenants, the requests the tests send, the whole record
// and 202 documents a client sees, and acme.sh's way of finding a record id in a list.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll } from 'vitest';
import { BASE, call, createTestApp, type EngineName, type TestApp } from './app.js';
import { seedTenants, type Tenants } from './tenants.js';

/** A managed DKIM TXT record's data; group 1 is the base64 public key. */
export const DKIM = /^v=DKIM1; k=rsa; p=([A-Za-z0-9+/]+=*)$/;
/** 32 bytes in hex: a SHA-256 digest for DS and TLSA data. */
export const HEX64 = 'a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90';

export interface Rec {
  record_type: string;
  name?: string;
  name_ace?: string;
  domain: string;
  domain_unicode?: string;
  data: string;
  ttl?: number;
  tag?: 'base' | 'custom' | 'managed';
}

/** The whole resource object of a record, in the attribute order of the API guide "DNS records". */
export function record(id: string, r: Rec) {
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

/** The record id of a 202 answer, as lego finds it: links.dns-record without `<base>/dns-records/`. */
export const recordIdOf = (r: { json: any }) => String(r.json.data.links['dns-record']).replace(`${BASE}/dns-records/`, '');

/**
 * The exact bytes of a 202 (API guide "Compatibility with existing clients"): the queue-job first,
 * then links.self of the request.
 */
export function jobBody(r: { json: any }, action: 'create' | 'delete', recordId: string, owner: string, requestUrl: string) {
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

/**
 * acme.sh's dns_variomedia_rm, step by step in JS (API guide "Compatibility with existing
 * clients"): strip every `,"tags":[…]`, take the text after the second `[` up to the next `]`,
 * split records on `},{`, keep those containing the name (ignoring case) and the value, then the
 * value of the `id` line.
 */
export function acmeShRecordIds(body: string, subDomain: string, txtValue: string): string[] {
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

/** The attributes of a TXT record in end1.example: `post(txt('_acme-challenge', 'value'))`. */
export const txt = (name: string, data: string, extra: Record<string, unknown> = {}) => ({ record_type: 'TXT', name, domain: 'end1.example', data, ...extra });

/** An app on a fresh database of `engine` with the standard tenants (test/helpers/tenants.ts). */
export async function dnsRecordsApp(engine: EngineName, env: Record<string, string> = {}, opts: { worker?: boolean; dns?: boolean } = {}) {
  const t = await createTestApp(engine, env, opts);
  return { t, x: await seedTenants(t.admin) };
}

/**
 * An app with the standard tenants for the tests of the enclosing describe (made in its beforeAll,
 * closed in its afterAll; `use` gets it once made), and the requests and reads the tests send to it
 * (end1's token unless another is given): `const { post, get } = dnsRecordsSuite(engine, (a) => ({ t, x } = a))`.
 */
export function dnsRecordsSuite(engine: EngineName, use: (a: { t: TestApp; x: Tenants }) => void) {
  let a: { t: TestApp; x: Tenants } | undefined;
  beforeAll(async () => {
    a = await dnsRecordsApp(engine);
    use(a);
  });
  afterAll(() => a?.t.close());
  return recordCalls(() => a!);
}

function recordCalls(of: () => { t: TestApp; x: Tenants }) {
  const app = (): FastifyInstance => of().t.app;
  const db = () => of().t.store.db;
  const end1 = () => of().x.end1.token;
  return {
    post: (attributes: Record<string, unknown>, token = end1()) =>
      call(app(), 'POST', '/dns-records', { token, body: { data: { type: 'dns-record', attributes } } }),
    get: (id: string, token = end1()) => call(app(), 'GET', `/dns-records/${id}`, { token }),
    list: (query: string, token = end1()) => call(app(), 'GET', `/dns-records${query}`, { token }),
    row: (id: string) => db().selectFrom('dns_records').selectAll().where('id', '=', Number(id)).executeTakeFirst(),
    /** The ids of a zone's records by `type name` (base and managed records are created with the domain). */
    idsOf: async (domain: string) => {
      const rows = await db().selectFrom('dns_records').select(['id', 'name', 'record_type']).where('domain', '=', domain).execute();
      return Object.fromEntries(rows.map((r) => [`${r.record_type} ${r.name}`, String(r.id)]));
    },
  };
}
