// The OpenAPI document at /openapi.json (docs/decisions/0006-openapi.md): precise enough for
// clients to generate code from. Redocly's lint engine (what `npx @redocly/cli lint` runs) judges
// the document the app serves; its example validator also judges the answers the API really sends —
// successes and failures — against the schemas documented for their status. The docs page is
// checked in headless Chromium where Chromium is installed (required in CI).
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { createConfig, lintFromString, type NormalizedProblem } from '@redocly/openapi-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE, ENGINES, call, createTestApp, type EngineName, type TestApp } from '../helpers/app.js';
import { filledLater } from '../helpers/suite.js';
import { requirable } from '../helpers/required.js';
import { seedTenants } from '../helpers/tenants.js';
import { placeholderServers } from '../helpers/placeholder-servers.js';
import { loadDemoData } from '../../src/admin/demo.js';
import { EXAMPLE_LOGIN } from '../../src/resources/session/session.schema.js';
import { codeAt, cookieOf } from '../helpers/panel.js';

const codeBody = (code: string) => ({ data: { type: 'totp-enrolment', attributes: { code } } });

const VND = 'application/vnd.hostplane.v1+json';
const METHODS = ['get', 'post', 'patch', 'delete', 'put'];

/** The operation ids clients generate method names from; a rename breaks them, so it shows here. */
const OPERATION_IDS = {
  'GET /customers': 'listCustomers',
  'GET /customers/{id}': 'getCustomer',
  'PATCH /customers/{id}': 'updateCustomer',
  'GET /domains': 'listDomains',
  'GET /domains/{name}': 'getDomain',
  'PATCH /domains/{name}': 'updateDomain',
  'GET /packages': 'listPackages',
  'GET /packages/{id}': 'getPackage',
  'GET /plans': 'listPlans',
  'GET /plans/{id}': 'getPlan',
  'GET /queue-jobs': 'listQueueJobs',
  'GET /queue-jobs/{id}': 'getQueueJob',
  'GET /domain-availability/{domains}': 'checkDomainAvailability',
  'GET /dns-records': 'listDnsRecords',
  'POST /dns-records': 'createDnsRecord',
  'GET /dns-records/{id}': 'getDnsRecord',
  'DELETE /dns-records/{id}': 'deleteDnsRecord',
  'GET /databases': 'listDatabases',
  'POST /databases': 'createDatabase',
  'GET /databases/{id}': 'getDatabase',
  'PATCH /databases/{id}': 'updateDatabase',
  'POST /databases/{id}/password': 'resetDatabasePassword',
  'DELETE /databases/{id}': 'deleteDatabase',
  'GET /subdomains': 'listSubdomains',
  'POST /subdomains': 'createSubdomain',
  'GET /subdomains/{id}': 'getSubdomain',
  'PATCH /subdomains/{id}': 'updateSubdomain',
  'DELETE /subdomains/{id}': 'deleteSubdomain',
  'GET /email-addresses': 'listEmailAddresses',
  'POST /email-addresses': 'createEmailAddress',
  'GET /email-addresses/{id}': 'getEmailAddress',
  'PATCH /email-addresses/{id}': 'updateEmailAddress',
  'DELETE /email-addresses/{id}': 'deleteEmailAddress',
  'POST /email-addresses/{id}/password': 'resetEmailAddressPassword',
  'POST /email-addresses/{id}/forward-to/{target}': 'addForwardTarget',
  'DELETE /email-addresses/{id}/forward-to/{target}': 'removeForwardTarget',
  'GET /email-addresses/{id}/application-passwords': 'listApplicationPasswords',
  'POST /email-addresses/{id}/application-passwords': 'createApplicationPassword',
  'DELETE /email-addresses/{id}/application-passwords/{appId}': 'deleteApplicationPassword',
  'GET /ssh-keys': 'listSshKeys',
  'POST /ssh-keys': 'createSshKey',
  'GET /ssh-keys/{id}': 'getSshKey',
  'DELETE /ssh-keys/{id}': 'deleteSshKey',
  'GET /webhooks': 'listWebhooks',
  'POST /webhooks': 'createWebhook',
  'GET /webhooks/{id}': 'getWebhook',
  'PATCH /webhooks/{id}': 'updateWebhook',
  'DELETE /webhooks/{id}': 'deleteWebhook',
  'GET /webhooks/{id}/deliveries': 'listWebhookDeliveries',
  'GET /audit-events': 'listAuditEvents',
  'GET /audit-events/{id}': 'getAuditEvent',
  'POST /session': 'createSession',
  'GET /session': 'getSession',
  'DELETE /session': 'deleteSession',
  'POST /session/totp': 'enrolTotp',
  'POST /session/totp/confirm': 'confirmTotp',
  'DELETE /session/totp': 'disableTotp',
};

/** The panel's login and its session (API guide "Panel sessions (extension)"): on the session cookie, not a token, and no Idempotency-Key. */
const isPanel = (o: { path: string }) => o.path === '/session' || o.path.startsWith('/session/');

/** Operations the original API does not have: each is marked `x-hostplane-extension: true` (API guide "Beyond the original API"). */
const EXTENSION_OPERATIONS = ['GET /ssh-keys', 'POST /ssh-keys', 'GET /ssh-keys/{id}', 'DELETE /ssh-keys/{id}',
  'GET /webhooks', 'POST /webhooks', 'GET /webhooks/{id}', 'PATCH /webhooks/{id}', 'DELETE /webhooks/{id}', 'GET /webhooks/{id}/deliveries',
  'GET /audit-events', 'GET /audit-events/{id}',
  'POST /session', 'GET /session', 'DELETE /session', 'POST /session/totp', 'POST /session/totp/confirm', 'DELETE /session/totp'];

interface Operation {
  /** `PATCH /customers/{id}` */
  key: string;
  method: string;
  path: string;
  op: any;
}

const operations = (doc: any): Operation[] =>
  Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([p, item]) =>
    Object.entries(item)
      .filter(([m]) => METHODS.includes(m))
      .map(([m, op]) => ({ key: `${m.toUpperCase()} ${p}`, method: m.toUpperCase(), path: p, op })),
  );

const successStatus = (op: any) => Number(Object.keys(op.responses).find((s) => s.startsWith('2')));
const hasPathParams = (o: Operation) => o.path.includes('{');
const readsBody = (o: Operation) => ['POST', 'PATCH', 'DELETE'].includes(o.method);

const describeProblem = (p: NormalizedProblem) => `${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`;

async function lint(doc: unknown, rawConfig: Parameters<typeof createConfig>[0]) {
  const config = await createConfig(rawConfig);
  const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: `${BASE}/openapi.json`, config });
  return problems.map(describeProblem);
}

/** Calls `visit` on a schema and on every schema inside it: members, items, alternatives. */
function eachSchema(schema: any, where: string, visit: (schema: any, where: string) => void) {
  if (!schema || typeof schema !== 'object') return;
  visit(schema, where);
  for (const [name, member] of Object.entries(schema.properties ?? {})) eachSchema(member, `${where}.${name}`, visit);
  if (schema.items) eachSchema(schema.items, `${where}[]`, visit);
  for (const k of ['anyOf', 'oneOf', 'allOf']) (schema[k] ?? []).forEach((alt: any, i: number) => eachSchema(alt, `${where}|${i}`, visit));
  if (typeof schema.additionalProperties === 'object') eachSchema(schema.additionalProperties, `${where}{}`, visit);
}

/** Every schema the document declares: the components and those of parameters, bodies and answers. */
function documentSchemas(doc: any): [string, any][] {
  const out: [string, any][] = Object.entries(doc.components.schemas).map(([name, s]) => [`#/components/schemas/${name}`, s]);
  for (const o of operations(doc)) {
    for (const p of o.op.parameters ?? []) out.push([`${o.key} parameter ${p.name}`, p.schema]);
    for (const [type, m] of Object.entries<any>(o.op.requestBody?.content ?? {})) out.push([`${o.key} body ${type}`, m.schema]);
    for (const [status, r] of Object.entries<any>(o.op.responses)) {
      for (const [type, m] of Object.entries<any>(r.content ?? {})) out.push([`${o.key} ${status} ${type}`, m.schema]);
    }
  }
  return out;
}

describe('the OpenAPI document', () => {
  const t = filledLater<TestApp>();
  let doc: any;
  beforeAll(async () => {
    Object.assign(t, await createTestApp('sqlite'));
    doc = (await call(t.app, 'GET', '/openapi.json')).json;
  });
  afterAll(() => t.close?.());

  it('passes Redocly lint with its recommended rules (those of `npx @redocly/cli lint`): no error, no warning', async () => {
    expect(await lint(doc, { extends: ['recommended'] })).toEqual([]);
  });

  it('names the licence of package.json and the configured public base URL as its server', async () => {
    const pkg = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    expect(doc.info.license).toEqual({ name: pkg.license, identifier: pkg.license });
    expect(doc.servers).toEqual([{ url: BASE, description: expect.any(String) }]);
    // Another base URL, with a path: the server follows it, the paths stay the API's own.
    const other = await createTestApp('sqlite', { PUBLIC_BASE_URL: 'https://hosting.example.net/api/' });
    try {
      const d = (await call(other.app, 'GET', '/openapi.json')).json;
      expect(d.servers).toEqual([{ url: 'https://hosting.example.net/api', description: expect.any(String) }]);
      expect(Object.keys(d.paths)).toEqual(Object.keys(doc.paths));
      expect(d.externalDocs.url).toBe('https://hosting.example.net/api/docs/api-guide.md');
    } finally {
      await other.close();
    }
  });

  it('links the API guide, which the server itself serves', async () => {
    expect(doc.externalDocs).toEqual({ description: 'API guide', url: `${BASE}/docs/api-guide.md` });
    expect(doc.info.description).toContain(`[API guide](${BASE}/docs/api-guide.md)`);
    const r = await call(t.app, 'GET', '/docs/api-guide.md');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(r.body).toBe(fs.readFileSync(new URL('../../docs/api-guide.md', import.meta.url), 'utf8'));
  });

  it('gives every operation its stable camelCase operationId, one declared tag and a summary', () => {
    const ids = Object.fromEntries(operations(doc).map((o) => [o.key, o.op.operationId]));
    expect(ids).toEqual(OPERATION_IDS);
    const declared = doc.tags.map((tag: { name: string }) => tag.name);
    for (const o of operations(doc)) {
      expect(o.op.operationId, o.key).toMatch(/^[a-z][a-zA-Z]+$/);
      expect(o.op.tags, o.key).toEqual([expect.any(String)]);
      expect(declared, o.key).toContain(o.op.tags[0]);
      expect(o.op.summary, o.key).toEqual(expect.any(String));
    }
  });

  it('documents each operation\'s one success and every error status it can answer, all with the one error document', () => {
    const documentsOf = (r: any) => Object.values(r.content).map((m: any) => m.schema.$ref);
    for (const o of operations(doc)) {
      const statuses = Object.keys(o.op.responses).map(Number);
      const success = statuses.filter((s) => s < 300);
      expect(success, o.key).toHaveLength(1);
      const ok = o.op.responses[success[0]];
      // A 204 carries no document: only its description.
      if (success[0] === 204) expect(ok, o.key).toEqual({ description: expect.any(String) });
      else expect(documentsOf(ok), o.key).toEqual([expect.stringMatching(/^#\/components\/schemas\/[A-Z][A-Za-z]+(Document|List)$/), expect.any(String)]);
      // Every operation can meet these: a malformed URL, bad credentials, a token's scope, another version, the rate limit, a fault.
      expect(statuses, o.key).toEqual(expect.arrayContaining([400, 401, 403, 406, 429, 500]));
      if (hasPathParams(o)) expect(statuses, o.key).toContain(414);
      if (readsBody(o)) expect(statuses, o.key).toEqual(expect.arrayContaining([413, 415]));
      if (o.op.requestBody) expect(statuses, o.key).toContain(422);
      for (const s of statuses.filter((x) => x >= 400)) {
        const r = o.op.responses[s];
        expect(Object.keys(r.content), `${o.key} ${s}`).toEqual(['application/vnd.api+json', 'application/json']);
        expect(documentsOf(r), `${o.key} ${s}`).toEqual(['#/components/schemas/ErrorDocument', '#/components/schemas/ErrorDocument']);
        // The description names the error ids of this status, for clients that match on them.
        expect(r.description, `${o.key} ${s}`).toMatch(/^[A-Z][A-Za-z -]+\. Error ids:\n\n(- `[a-z_]+`: .+\n?)+$/);
      }
      expect(o.op.responses[401].headers, o.key).toEqual({ 'WWW-Authenticate': expect.objectContaining({ schema: { type: 'string' } }) });
      expect(o.op.responses[429].headers, o.key).toEqual({ 'Retry-After': expect.objectContaining({ schema: { type: 'integer' } }) });
    }
    const statusesOf = (key: string) => Object.keys(operations(doc).find((o) => o.key === key)!.op.responses).map(Number);
    expect(statusesOf('GET /plans')).toEqual([200, 400, 401, 403, 406, 429, 500]);
    expect(statusesOf('PATCH /customers/{id}')).toEqual([200, 400, 401, 403, 404, 406, 409, 412, 413, 414, 415, 422, 429, 500]);
    expect(statusesOf('POST /dns-records')).toEqual([202, 400, 401, 403, 404, 406, 409, 412, 413, 415, 422, 429, 500]);
    expect(statusesOf('DELETE /dns-records/{id}')).toEqual([202, 400, 401, 403, 404, 406, 409, 412, 413, 414, 415, 422, 429, 500]);
    expect(statusesOf('POST /databases')).toEqual([202, 400, 401, 403, 404, 406, 409, 412, 413, 415, 422, 429, 500]);
    expect(statusesOf('PATCH /databases/{id}')).toEqual([200, 400, 401, 403, 404, 406, 409, 412, 413, 414, 415, 422, 429, 500]);
    expect(statusesOf('POST /databases/{id}/password')).toEqual([202, 400, 401, 403, 404, 406, 409, 412, 413, 414, 415, 422, 429, 500]);
    expect(statusesOf('DELETE /databases/{id}')).toEqual([202, 400, 401, 403, 404, 406, 409, 412, 413, 414, 415, 422, 429, 500]);
    expect(statusesOf('POST /email-addresses')).toEqual([202, 400, 401, 403, 404, 406, 409, 412, 413, 415, 422, 429, 500, 503]);
    expect(statusesOf('POST /email-addresses/{id}/forward-to/{target}')).toEqual([204, 400, 401, 403, 404, 406, 409, 412, 413, 414, 415, 422, 429, 500]);
    expect(statusesOf('DELETE /email-addresses/{id}/application-passwords/{appId}')).toEqual([204, 400, 401, 403, 404, 406, 409, 412, 413, 414, 415, 422, 429, 500]);
    expect(statusesOf('POST /email-addresses/{id}/application-passwords')).toEqual([201, 400, 401, 403, 404, 406, 409, 412, 413, 414, 415, 422, 429, 500]);
    expect(doc.paths['/email-addresses'].post.responses[422].description).toContain('`invalid_password`');
    expect(doc.paths['/email-addresses'].post.responses[503].description).toContain('`service_unavailable`');
    const created = doc.paths['/dns-records'].post.responses[202];
    expect(created.headers).toEqual({ 'Content-Location': { schema: { type: 'string' }, description: expect.any(String) } });
    expect(doc.paths['/dns-records/{id}'].delete.responses[403].description).toContain('`record_not_deletable`');
  });

  it('describes every document by its real shape: each object lists its members, none is an open map', () => {
    let objects = 0;
    for (const [where, schema] of documentSchemas(doc)) {
      eachSchema(schema, where, (s, at) => {
        if (s.type === 'object' || (Array.isArray(s.type) && s.type.includes('object'))) {
          objects++;
          expect(Object.keys(s.properties ?? {}).length, `${at} lists its members`).toBeGreaterThan(0);
        }
        if ('additionalProperties' in s) expect(s.additionalProperties, `${at} is not an open map`).toBe(false);
      });
    }
    expect(objects).toBeGreaterThan(50);
    // The documents are components that the operations refer to; attributes are typed, not `object`.
    expect(doc.components.schemas.DnsRecord.properties.attributes.properties.ttl).toEqual({ type: 'integer', description: 'seconds' });
    expect(doc.components.schemas.CustomerList.properties.data).toEqual({ type: 'array', items: { $ref: '#/components/schemas/Customer' } });
  });

  it('promises only what the server has: a tag per group with routes, every group of the API available, none named as to come', async () => {
    const groups = ['customers', 'domains', 'packages', 'plans', 'queue-jobs', 'dns-records', 'domain-availability', 'subdomains', 'databases', 'email-addresses', 'ssh-keys', 'webhooks', 'audit-events', 'session'];
    expect(doc.tags.map((tag: { name: string }) => tag.name)).toEqual(groups);
    for (const tag of doc.tags) expect(tag.description, tag.name).toEqual(expect.any(String));
    expect(doc.info.description).toContain(`Available: ${groups.join(', ')}.`);
    expect(doc.info.description).not.toContain('Not available yet');
    // Every group's list answers (no tag for a group without routes).
    const x = await seedTenants(t.admin);
    // Every list but the panel's session, which a token has none of.
    for (const segment of groups.filter((g) => g !== 'domain-availability' && g !== 'session')) {
      expect(Object.keys(doc.paths), segment).toContain(`/${segment}`);
      const r = await call(t.app, 'GET', `/${segment}`, { token: x.reseller.token });
      expect(r.status, segment).toBe(200);
    }
  });

  it('marks every addition to the original API with x-hostplane-extension: the ssh-keys and webhooks operations, the attributes added to packages and plans', () => {
    const marked = operations(doc).filter((o) => o.op['x-hostplane-extension'] === true).map((o) => o.key);
    expect(marked.sort()).toEqual([...EXTENSION_OPERATIONS].sort());
    const attributes = (name: string) => doc.components.schemas[name].properties.attributes.properties;
    for (const a of ['sftp_host', 'sftp_port', 'sftp_user']) expect(attributes('Package')[a]['x-hostplane-extension'], a).toBe(true);
    expect(doc.components.schemas.Package.properties.relationships.properties['ssh-keys']['x-hostplane-extension']).toBe(true);
    expect(attributes('Plan').ssh_keys_per_package['x-hostplane-extension']).toBe(true);
    expect(doc.components.schemas.SshKey['x-hostplane-extension']).toBe(true);
    expect(doc.components.schemas.Webhook['x-hostplane-extension']).toBe(true);
    expect(doc.components.schemas.WebhookDelivery['x-hostplane-extension']).toBe(true);
    expect(doc.components.schemas.AuditEvent['x-hostplane-extension']).toBe(true);
    // The original attributes are not marked.
    for (const a of ['name', 'linux_user', 'created_at']) expect(attributes('Package')[a]['x-hostplane-extension'], a).toBeUndefined();
  });

  it('documents safe retries as extensions: Idempotency-Key on every write, ETag and 304 on every GET of one object, If-Match where an object has a tag', () => {
    const headerParams = (o: Operation) => Object.fromEntries((o.op.parameters ?? []).filter((p: any) => p.in === 'header').map((p: any) => [p.name, p]));
    const objectPaths = ['/customers/{id}', '/domains/{name}', '/packages/{id}', '/plans/{id}', '/queue-jobs/{id}', '/dns-records/{id}', '/databases/{id}', '/subdomains/{id}', '/email-addresses/{id}', '/ssh-keys/{id}', '/webhooks/{id}', '/audit-events/{id}'];
    for (const o of operations(doc)) {
      const params = headerParams(o);
      for (const p of Object.values<any>(params)) expect(p.schema['x-hostplane-extension'], `${o.key} ${p.name}`).toBe(true);
      const object = objectPaths.includes(o.path) && o.method !== 'POST';
      expect(Object.keys(params).sort(), o.key).toEqual([...(o.method !== 'GET' && !isPanel(o) ? ['Idempotency-Key'] : []), ...(object ? ['If-Match', 'If-None-Match'] : [])].sort());
      const success = o.op.responses[successStatus(o.op)];
      expect(success.headers?.ETag?.schema?.['x-hostplane-extension'] === true, o.key).toBe(object && o.method !== 'DELETE');
      expect(o.op.responses[304] !== undefined, o.key).toBe(object && o.method === 'GET');
      if (o.method !== 'GET' && !isPanel(o)) {
        expect(o.op.responses[409].description, o.key).toContain('`idempotency_key_in_use`');
        expect(o.op.responses[412].description, o.key).toContain('`precondition_failed`');
        expect(o.op.responses[422].description, o.key).toContain('`idempotency_key_reused`');
      }
    }
    expect(Object.keys(doc.paths['/plans/{id}'].get.responses).map(Number)).toEqual([200, 304, 400, 401, 403, 404, 406, 412, 414, 429, 500]);
    expect(doc.paths['/plans/{id}'].get.responses[304]).toEqual({ description: expect.any(String), headers: { ETag: expect.objectContaining({ schema: { type: 'string', 'x-hostplane-extension': true } }) } });
    expect(doc.components.schemas.ErrorDocument.properties.errors.items.properties.source.properties.header['x-hostplane-extension']).toBe(true);
  });

  it('cites no file a client does not have (no section signs, no notes kept outside the repository)', () => {
    const text = JSON.stringify(doc);
    expect(text).not.toMatch(/§|API.NOTES|spec\.md|DESIGN\.md/);
  });
});

/** One exchange with the API: which operation, what was tried, and the answer. */
interface Sample {
  o: Operation;
  what: string;
  status: number;
  type: string;
  body: unknown;
}

/** The request an operation's examples describe: the URL with its path parameters' examples, the body example. */
function exampleRequest(o: Operation) {
  const url = o.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const param = (o.op.parameters ?? []).find((p: any) => p.in === 'path' && p.name === name);
    if (param?.example === undefined) throw new Error(`${o.key}: no example for {${name}}`);
    return encodeURIComponent(param.example);
  });
  const body = o.op.requestBody?.content['application/vnd.api+json'].example;
  if (o.op.requestBody && body === undefined) throw new Error(`${o.key}: no request body example`);
  return { url, body };
}

/** The URL of `o` with every path parameter set to `value` (raw: it may be malformed on purpose). */
const urlWith = (o: Operation, value: string) => o.path.replace(/\{\w+\}/g, value);

/**
 * The URL of `o` naming an object that does not exist: its first path parameter `nonexistent.example`,
 * the others their examples (a forwarding target must still be an address, else the answer is 422).
 */
function unknownObjectUrl(o: Operation) {
  const [first] = o.path.match(/\{\w+\}/) ?? [''];
  return exampleRequest({ ...o, path: o.path.replace(first, 'nonexistent.example') }).url;
}

/** Problems of the samples against the schema documented for their operation, status and type (Redocly's example validator). */
async function schemaProblems(doc: any, samples: Sample[]) {
  const copy = structuredClone(doc);
  const undocumented: string[] = [];
  samples.forEach((s, i) => {
    // A 204 has no body to judge (the test checks that it is empty).
    if (s.status === 204) return;
    const media = copy.paths[s.o.path][s.o.method.toLowerCase()].responses[s.status]?.content?.[s.type];
    if (!media) return undocumented.push(`${s.o.key} ${s.what}: ${s.status} ${s.type} is not documented`);
    media.examples = { ...media.examples, [`sample${i}`]: { value: s.body } };
  });
  const problems = await lint(copy, { rules: { 'no-invalid-media-type-examples': { severity: 'error', allowAdditionalProperties: false } } });
  return [...undocumented, ...problems.map((p) => p.replace(/\/examples\/sample(\d+)\//, (_, i) => ` (${samples[Number(i)].o.key}: ${samples[Number(i)].what}) /`))];
}

describe.each(ENGINES)('the OpenAPI document against the API it describes on %s', (engine: EngineName) => {
  const t = filledLater<TestApp>();
  const limited = filledLater<TestApp>();
  let doc: any;
  const samples: Sample[] = [];
  /** Answers of failures tried on purpose: the status each should have. */
  const expected = new Map<Sample, number>();

  beforeAll(async () => {
    Object.assign(t, await createTestApp(engine));
    // The examples name objects of the demo dataset; its reseller sees them all.
    const demo = (await loadDemoData(t.admin, BASE)).data;
    // The database examples need a default mariadb 10.11 server (the demo dataset registers one only
    // when DEMO_MARIADB_URL is set), the subdomain examples a web server, the e-mail examples a mail
    // server to place the shop's package on. No worker runs here, so none is ever contacted.
    await placeholderServers(t);
    const reseller = demo.customers.find((c) => c.role === 'reseller')!.token;
    // The webhook examples read webhook 1 and delete the one the POST example creates (2): a
    // DELETE removes a webhook at once, and the lists of webhook 1 are read after it.
    await call(t.app, 'POST', '/webhooks', { token: reseller, body: { data: { type: 'webhook', attributes: { url: 'https://hooks.example.net/first', events: ['*'] } } } });
    const shop = demo.customers.find((c) => c.domain === 'shop-demo.example')!.token;
    doc = (await call(t.app, 'GET', '/openapi.json')).json;
    const ops = operations(doc);

    const send = async (o: Operation, what: string, url: string, req: { token?: string | null; body?: unknown; headers?: Record<string, string> } = {}, status?: number, app = t.app) => {
      const token = req.token === null ? undefined : (req.token ?? reseller);
      const r = await call(app, o.method as 'GET', url, { token, body: req.body, headers: { accept: VND, ...req.headers } });
      const sample = { o, what, status: r.status, type: String(r.headers['content-type']), body: r.json };
      samples.push(sample);
      if (status !== undefined) expected.set(sample, status);
      return r;
    };

    // Writes first (the GET examples name the job the POST creates), deletes last, the deepest paths
    // first: a forwarding target and an application password go before their address.
    const rank = (o: Operation) => ['POST', 'PATCH', 'GET', 'DELETE'].indexOf(o.method);
    const depth = (o: Operation) => (o.method === 'DELETE' ? -o.path.split('/').length : 0);
    // The panel's operations run on the session of the login example (the demo reseller's contact,
    // given that portal password): the cookie and its anti-CSRF header instead of a token; the TOTP
    // confirmation with the current code of the enrolment, its removal with a recovery code.
    const rita = await t.store.db.selectFrom('contacts').select('id').where('email', '=', EXAMPLE_LOGIN.email).executeTakeFirstOrThrow();
    await t.admin.customers.setPortalPassword(rita.id, EXAMPLE_LOGIN.password);
    const panel = { headers: {} as Record<string, string>, secret: '', recovery: '' };
    const panelBody = (o: Operation, body: unknown) =>
      o.key === 'POST /session/totp/confirm' ? codeBody(codeAt(panel.secret)) : o.key === 'DELETE /session/totp' ? codeBody(panel.recovery) : body;
    for (const o of [...ops].sort((a, b) => rank(a) - rank(b) || depth(a) - depth(b))) {
      const { url, body } = exampleRequest(o);
      if (!isPanel(o)) {
        await send(o, 'its examples', url, { body });
        continue;
      }
      const r = await send(o, 'its examples', url, { token: null, headers: panel.headers, body: panelBody(o, body) });
      if (o.key === 'POST /session') panel.headers = { cookie: `hostplane_session=${cookieOf(r.headers['set-cookie'])}`, 'x-csrf-token': r.json.data.attributes.csrf_token };
      if (o.key === 'POST /session/totp') panel.secret = r.json.data.attributes.secret;
      if (o.key === 'POST /session/totp/confirm') panel.recovery = r.json.data.attributes.recovery_codes[0];
    }

    for (const o of ops) {
      // The login needs none.
      if (o.key !== 'POST /session') await send(o, 'no credentials', exampleRequest(o).url, { token: null }, 401);
      await send(o, 'another API version', exampleRequest(o).url, { headers: { accept: 'application/vnd.hostplane.v2+json' } }, 406);
      if (o.op.parameters?.some((p: any) => p.in === 'query')) {
        const { url } = exampleRequest(o);
        await send(o, 'an unknown filter', `${url}?filter[no_such_filter]=1`, {}, 400);
        await send(o, 'a paged list', `${url}?page[number]=1&page[size]=1`, {}, 200);
      }
      if (hasPathParams(o)) {
        await send(o, 'a malformed URL', urlWith(o, '%zz'), {}, 400);
        await send(o, 'a too long path segment', urlWith(o, 'a'.repeat(3000)), {}, 414);
        if (o.op.responses[404]) {
          // A PATCH names its object in the body too (else the answer is 409 id_mismatch).
          const body = exampleRequest(o).body as { data: object } | undefined;
          const named = body && o.method === 'PATCH' ? { data: { ...body.data, id: 'nonexistent.example' } } : body;
          await send(o, 'an unknown object', unknownObjectUrl(o), { body: named }, 404);
        }
      }
      if (readsBody(o)) {
        const { url } = exampleRequest(o);
        await send(o, 'a body that is not JSON', url, { body: 'x', headers: { 'content-type': 'text/plain' } }, 415);
        await send(o, 'malformed JSON', url, { body: '{"data":', headers: { 'content-type': 'application/vnd.api+json' } }, 400);
        await send(o, 'a body over the limit', url, { body: `"${'x'.repeat(t.config.http.bodyLimit)}"` }, 413);
      }
      if (o.op.requestBody) await send(o, 'an empty document', exampleRequest(o).url, { body: {} }, 422);
    }

    // Failures particular to one operation.
    const op = (key: string) => ops.find((o) => o.key === key)!;
    const patchCustomer = exampleRequest(op('PATCH /customers/{id}'));
    await send(op('PATCH /customers/{id}'), 'by the customer itself', patchCustomer.url, { token: shop, body: patchCustomer.body }, 403);
    await send(op('PATCH /customers/{id}'), 'data.id of another customer', patchCustomer.url, { body: { data: { type: 'customer', id: '10003', attributes: {} } } }, 409);
    await send(op('PATCH /domains/{name}'), 'data.id of another domain', exampleRequest(op('PATCH /domains/{name}')).url, {
      body: { data: { type: 'domain', id: 'blog-demo.example', attributes: {} } },
    }, 409);
    await send(op('GET /domains/{name}'), 'a name that is not ACE-encodable', '/domains/a_b.example', {}, 422);
    await send(op('POST /dns-records'), 'the example record again', '/dns-records', { body: exampleRequest(op('POST /dns-records')).body }, 409);
    const managed = (await call(t.app, 'GET', '/dns-records?filter[domain]=shop-demo.example', { token: reseller })).json.data.find(
      (r: any) => r.attributes.tags[0] === 'managed',
    );
    await send(op('DELETE /dns-records/{id}'), 'a managed record', `/dns-records/${managed.id}`, {}, 403);
    const names = Array.from({ length: 11 }, (_, i) => `n${i}.example`).join(',');
    await send(op('GET /domain-availability/{domains}'), 'eleven names', `/domain-availability/${names}`, {}, 422);

    // E-mail addresses. The example address (1) is being deleted by now; a forward is live.
    const postEmail = op('POST /email-addresses');
    const emailBody = (attributes: object) => ({ data: { type: 'email-address', attributes } });
    await send(postEmail, 'the example address again', '/email-addresses', { body: exampleRequest(postEmail).body }, 409);
    await send(postEmail, 'a password that breaks the rules', '/email-addresses', {
      body: emailBody({ address: 'weak@shop-demo.example', address_type: 'mailbox', password: 'password' }),
    }, 422);
    await send(postEmail, "a domain of another customer", '/email-addresses', {
      token: shop, body: emailBody({ address: 'info@blog-demo.example', address_type: 'mailbox' }),
    }, 404);
    const forward = await send(postEmail, 'a forward', '/email-addresses', {
      body: emailBody({ address: 'sales@shop-demo.example', address_type: 'forward', forward_to: ['orders@shop-demo.example'] }),
    }, 202);
    const fwd = `/email-addresses/${forward.json.data.id}`;
    await send(op('PATCH /email-addresses/{id}'), 'an address being deleted', '/email-addresses/1', {
      body: { data: { type: 'email-address', id: '1', attributes: { description: 'late' } } },
    }, 409);
    await send(op('PATCH /email-addresses/{id}'), 'a password for a forward', fwd, {
      body: { data: { type: 'email-address', id: forward.json.data.id, attributes: { password: 'Vq7#mZ2!xB9?kR4&wT6s' } } },
    }, 422);
    await send(op('PATCH /email-addresses/{id}'), 'an autoresponder for a forward', fwd, {
      body: { data: { type: 'email-address', id: forward.json.data.id, attributes: { autoresponder: { active: true } } } },
    }, 422);
    await send(op('POST /email-addresses/{id}/password'), 'a forward', `${fwd}/password`, {}, 409);
    await send(op('POST /email-addresses/{id}/application-passwords'), 'a forward', `${fwd}/application-passwords`, {
      body: exampleRequest(op('POST /email-addresses/{id}/application-passwords')).body,
    }, 409);
    await send(op('POST /email-addresses/{id}/forward-to/{target}'), 'the address itself', `${fwd}/forward-to/sales%40shop-demo.example`, {}, 422);
    await send(op('POST /email-addresses/{id}/forward-to/{target}'), 'a target that is not an address', `${fwd}/forward-to/nobody`, {}, 422);
    await send(op('DELETE /email-addresses/{id}/forward-to/{target}'), 'a target it does not have', `${fwd}/forward-to/other%40shop-demo.example`, {}, 404);
    await send(op('DELETE /email-addresses/{id}/forward-to/{target}'), "a forward's last target", `${fwd}/forward-to/orders%40shop-demo.example`, {}, 409);
    await send(op('DELETE /email-addresses/{id}/application-passwords/{appId}'), 'an unknown application password', '/email-addresses/1/application-passwords/99999', {}, 404);

    // SSH keys: the example key again, a short RSA key.
    const postKey = op('POST /ssh-keys');
    await send(postKey, 'the example key again', '/ssh-keys', { body: exampleRequest(postKey).body }, 409);
    await send(postKey, 'a private key', '/ssh-keys', { body: { data: { type: 'ssh-key', attributes: { package_id: '2', public_key: '-----BEGIN OPENSSH PRIVATE KEY-----' } } } }, 422);

    // Over the rate limit (a server allowing one request per window), each from its own address.
    Object.assign(limited, await createTestApp(engine, { RATE_LIMIT_MAX: '1' }));
    for (const [i, o] of ops.entries()) {
      const from = `198.51.100.${i + 1}`;
      const { url, body } = exampleRequest(o);
      await call(limited.app, o.method as 'GET', url, { body, remoteAddress: from });
      const r = await limited.app.inject({ method: o.method as 'GET', url, headers: { accept: VND }, remoteAddress: from });
      const sample = { o, what: 'over the rate limit', status: r.statusCode, type: String(r.headers['content-type']), body: JSON.parse(r.body) };
      samples.push(sample);
      expected.set(sample, 429);
    }
  });
  afterAll(async () => {
    await t.close?.();
    await limited.close?.();
  });

  it('every operation, sent with the examples of its parameters and body, answers its documented success status', () => {
    const tried = samples.filter((s) => s.what === 'its examples');
    expect(tried.map((s) => s.o.key).sort()).toEqual(Object.keys(OPERATION_IDS).sort());
    for (const s of tried) expect(`${s.o.key} → ${s.status} ${String(JSON.stringify(s.body)).slice(0, 300)}`).toBe(`${s.o.key} → ${successStatus(s.o.op)} ${String(JSON.stringify(s.body)).slice(0, 300)}`);
  });

  it('each failure tried answers the status it should, and the operation documents that status', () => {
    expect(expected.size).toBeGreaterThan(80);
    for (const [s, status] of expected) {
      expect(`${s.o.key}, ${s.what} → ${s.status}`).toBe(`${s.o.key}, ${s.what} → ${status}`);
      expect(Object.keys(s.o.op.responses), `${s.o.key}, ${s.what}`).toContain(String(status));
    }
  });

  it('every answer — successes, paged lists, failures — fits the schema documented for its operation and status', async () => {
    expect(samples.length).toBeGreaterThan(100);
    expect(await schemaProblems(doc, samples)).toEqual([]);
    // A 204 is empty: no body, no content type.
    const empty = samples.filter((s) => s.status === 204);
    expect(empty.map((s) => s.o.key).sort()).toEqual(Object.keys(OPERATION_IDS).filter((k) => /forward-to|DELETE .*application-passwords|DELETE \/webhooks|DELETE \/session/.test(k)).sort());
    for (const s of empty) expect([s.type, s.body], `${s.o.key} ${s.what}`).toEqual(['undefined', undefined]);
  });
});

/** The Chromium binary on PATH, or null. */
function findChromium(): string | null {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const file = path.join(dir, 'chromium');
    if (dir && fs.existsSync(file)) return file;
  }
  return null;
}

const chromium = findChromium();

requirable(chromium ? null : 'chromium is not installed (apt-get install chromium)')('the docs page in headless Chromium', () => {
  const t = filledLater<TestApp>();
  let origin = '';
  let doc: any;
  let profile = '';
  beforeAll(async () => {
    Object.assign(t, await createTestApp('sqlite'));
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const address = t.app.server.address() as { port: number };
    origin = `http://127.0.0.1:${address.port}`;
    doc = (await call(t.app, 'GET', '/openapi.json')).json;
    profile = fs.mkdtempSync(path.join(os.tmpdir(), 'hostplane-chromium-'));
  });
  afterAll(async () => {
    await t.close?.();
    if (profile) fs.rmSync(profile, { recursive: true, force: true });
  });

  /** The page's DOM after its scripts ran, as text: tags dropped, entities decoded, spaces folded. */
  async function renderedText(url: string) {
    const { stdout } = await promisify(execFile)(
      chromium!,
      ['--headless', '--no-sandbox', '--disable-gpu', `--user-data-dir=${profile}`, '--virtual-time-budget=10000', '--dump-dom', url],
      { timeout: 60_000, maxBuffer: 64 * 1024 * 1024 },
    );
    const text = stdout
      .replace(/<[^>]+>/g, ' ')
      .replace(/&quot;/g, '"')
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&#39;/g, "'")
      .replace(/&amp;/g, '&')
      .replace(/\s+/g, ' ');
    return { dom: stdout, text };
  }

  it('renders the description, every operation and every schema of the document', async () => {
    const { dom, text } = await renderedText(`${origin}/docs/`);
    expect(text).not.toContain('Failed to load API definition');
    expect(dom).not.toContain('errors-wrapper');
    expect(text).toContain('hostplane — Customer Hosting Management API');
    expect(text).toContain('Available: customers, domains, packages, plans, queue-jobs, dns-records, domain-availability, subdomains, databases, email-addresses, ssh-keys, webhooks, audit-events, session.');
    expect(text).not.toContain('Not available yet');
    for (const o of operations(doc)) expect(text, o.key).toContain(o.op.summary);
    const schemas = Object.keys(doc.components.schemas);
    const shown = [...dom.matchAll(/json-schema-2020-12__title">([^<]+)</g)].map((m) => m[1]);
    expect(shown).toEqual(schemas);
  }, 90_000);

  it('shows an operation\'s request example and its documented answers', async () => {
    const { text } = await renderedText(`${origin}/docs/#/dns-records/createDnsRecord`);
    expect(text).toContain('"record_type" : "TXT"');
    expect(text).toContain('"ttl" : 300');
    for (const status of Object.keys(doc.paths['/dns-records'].post.responses)) expect(text).toContain(` ${status} `);
    expect(text).toContain('Content-Location');
    expect(text).toContain('conflict : the record clashes with existing records');
  }, 90_000);

  it('shows a 204 answer by its description alone', async () => {
    const { text } = await renderedText(`${origin}/docs/#/email-addresses/addForwardTarget`);
    expect(text).toContain(' 204 Added: mail is forwarded there from now on');
    expect(text).toContain('orders+shop@shop-demo.example');
  }, 90_000);
});
