// The OpenAPI document at /openapi.json (docs/decisions/0006-openapi.md): precise enough for
// clients to generate code from. Redocly's lint engine (what `npx @redocly/cli lint` runs) judges
// the document the app serves. The answers the API really sends are judged against it in
// openapi-answers.test.ts; the docs page in docs-page.test.ts.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE, call, createTestApp, type TestApp } from '../helpers/app.js';
import { filledLater } from '../helpers/suite.js';
import { seedTenants } from '../helpers/tenants.js';
import { OPERATION_IDS, isPanel, EXTENSION_OPERATIONS, type Operation, operations, successStatus, hasPathParams, readsBody, lint, eachSchema, documentSchemas } from '../helpers/openapi.js';

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

  it('documents each operation\'s one success (or 200 and a 202 with a queue-job) and every error status it can answer, all with the one error document', () => {
    const documentsOf = (r: any) => Object.values(r.content).map((m: any) => m.schema.$ref);
    for (const o of operations(doc)) {
      const statuses = Object.keys(o.op.responses).map(Number);
      const success = statuses.filter((s) => s < 300);
      // A PATCH whose change may run as a job answers 200 or 202 (API guide "DNSSEC (extension)").
      expect(success.length === 1 || success.join() === '200,202', `${o.key}: ${success}`).toBe(true);
      const ok = o.op.responses[success[0]];
      // A 204 carries no document: only its description.
      if (success[0] === 204) expect(ok, o.key).toEqual({ description: expect.any(String) });
      else expect(documentsOf(ok), o.key).toEqual([expect.stringMatching(/^#\/components\/schemas\/[A-Z][A-Za-z]+(Document|List)$/), expect.any(String)]);
      if (success[1]) expect(documentsOf(o.op.responses[202]), o.key).toEqual(documentsOf(ok));
      // Every operation can meet these: a malformed URL, bad credentials, a token's scope, another version, the rate limit, a fault.
      expect(statuses, o.key).toEqual(expect.arrayContaining([400, 401, 403, 406, 429, 500, 503]));
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
    expect(statusesOf('GET /plans')).toEqual([200, 400, 401, 403, 406, 429, 500, 503]);
    expect(statusesOf('PATCH /customers/{id}')).toEqual([200, 400, 401, 403, 404, 406, 409, 412, 413, 414, 415, 422, 429, 500, 503]);
    expect(statusesOf('POST /dns-records')).toEqual([202, 400, 401, 403, 404, 406, 409, 412, 413, 415, 422, 429, 500, 503]);
    expect(statusesOf('DELETE /dns-records/{id}')).toEqual([202, 400, 401, 403, 404, 406, 409, 412, 413, 414, 415, 422, 429, 500, 503]);
    expect(statusesOf('POST /databases')).toEqual([202, 400, 401, 403, 404, 406, 409, 412, 413, 415, 422, 429, 500, 503]);
    expect(statusesOf('PATCH /databases/{id}')).toEqual([200, 400, 401, 403, 404, 406, 409, 412, 413, 414, 415, 422, 429, 500, 503]);
    expect(statusesOf('POST /databases/{id}/password')).toEqual([202, 400, 401, 403, 404, 406, 409, 412, 413, 414, 415, 422, 429, 500, 503]);
    expect(statusesOf('DELETE /databases/{id}')).toEqual([202, 400, 401, 403, 404, 406, 409, 412, 413, 414, 415, 422, 429, 500, 503]);
    expect(statusesOf('POST /email-addresses')).toEqual([202, 400, 401, 403, 404, 406, 409, 412, 413, 415, 422, 429, 500, 503]);
    expect(statusesOf('POST /email-addresses/{id}/forward-to/{target}')).toEqual([204, 400, 401, 403, 404, 406, 409, 412, 413, 414, 415, 422, 429, 500, 503]);
    expect(statusesOf('DELETE /email-addresses/{id}/application-passwords/{appId}')).toEqual([204, 400, 401, 403, 404, 406, 409, 412, 413, 414, 415, 422, 429, 500, 503]);
    expect(statusesOf('POST /email-addresses/{id}/application-passwords')).toEqual([201, 400, 401, 403, 404, 406, 409, 412, 413, 414, 415, 422, 429, 500, 503]);
    expect(doc.paths['/email-addresses'].post.responses[422].description).toContain('`invalid_password`');
    expect(doc.paths['/email-addresses'].post.responses[503].description).toContain('`service_unavailable`');
    // A store that cannot answer, on every operation; beside an operation's own reason, not instead.
    expect(doc.paths['/email-addresses'].post.responses[503].description).toMatch(/no mail server is registered yet; or the data store, or a server the request needs, is busy or unreachable/);
    expect(doc.paths['/plans'].get.responses[503].headers).toEqual({ 'Retry-After': { schema: { type: 'integer' }, description: expect.stringContaining('busy or unreachable') } });
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
    expect(Object.keys(doc.paths['/plans/{id}'].get.responses).map(Number)).toEqual([200, 304, 400, 401, 403, 404, 406, 412, 414, 429, 500, 503]);
    expect(doc.paths['/plans/{id}'].get.responses[304]).toEqual({ description: expect.any(String), headers: { ETag: expect.objectContaining({ schema: { type: 'string', 'x-hostplane-extension': true } }) } });
    expect(doc.components.schemas.ErrorDocument.properties.errors.items.properties.source.properties.header['x-hostplane-extension']).toBe(true);
  });

  it('cites no file a client does not have (no section signs, no notes kept outside the repository)', () => {
    const text = JSON.stringify(doc);
    expect(text).not.toMatch(/§|API.NOTES|spec\.md|DESIGN\.md/);
  });
});
