// Inputs found by review that once slipped past the rules: each answers a clear JSON:API error
// (or the exact resource) and never a 500, on both engines.
import { describe, expect, it } from 'vitest';
import { loadConfig, ConfigError } from '../../src/config.js';
import { BASE, ENGINES, call } from '../helpers/app.js';
import { useSeededApp } from '../helpers/suite.js';
import { listen, rawRequest } from '../helpers/http-core.js';
import type { Tenants } from '../helpers/tenants.js';

const err = (id: string, status: number, title: string, detail: string, source?: object) => ({
  id,
  status: String(status),
  title,
  detail,
  ...(source ? { source } : {}),
});

describe.each(ENGINES)('hardening on %s', (engine) => {
  const { t, x } = useSeededApp(engine);

  it.each(['filter[linux_user]=%00', 'filter[linux_user]=a%00b', 'filter[owner_id]=%01'])(
    'a filter value with control characters → 400 invalid_parameter (%s)',
    async (q) => {
      const r = await call(t.app, 'GET', `/packages?${q}`, { token: x.reseller.token });
      const key = q.split('=')[0];
      expect(r.status).toBe(400);
      expect(r.json).toEqual({
        errors: [err('invalid_parameter', 400, 'Invalid query parameter', `${key} must not contain control characters.`, { parameter: key })],
        links: { self: `${BASE}/packages?${q}` },
      });
    },
  );

  it('a JSON body with a NUL character → 400 bad_request, nothing changed', async () => {
    const id = x.end1.customerId;
    const r = await call(t.app, 'PATCH', `/customers/${id}`, {
      token: x.reseller.token,
      body: `{"data":{"type":"customer","id":"${id}","attributes":{"external_customer_id":"a\\u0000b"}}}`,
    });
    expect(r.status).toBe(400);
    expect(r.json.errors).toEqual([err('bad_request', 400, 'Bad request', 'Strings must not contain NUL characters (\\u0000).')]);
    const after = await call(t.app, 'GET', `/customers/${id}`, { token: x.end1.token });
    expect(after.json.data.attributes.external_customer_id).toBeNull();
  });

  it.each([
    ['an escaped backslash followed by u0000 (no NUL) → 422 on the attribute', String.raw`a\\u0000b`, 422],
    ['an escaped backslash and then an escaped NUL → 400', String.raw`a\\\u0000b`, 400],
    ['an escaped quote before the NUL → 400', String.raw`a\"\u0000b`, 400],
  ])('a NUL is found by escapes, not by text: %s', async (_name, raw, status) => {
    const id = x.end1.customerId;
    const r = await call(t.app, 'PATCH', `/customers/${id}`, {
      token: x.reseller.token,
      body: `{"data":{"type":"customer","id":"${id}","attributes":{"external_customer_id":"${raw}"}}}`,
    });
    expect(r.status).toBe(status);
    if (status === 400) expect(r.json.errors).toEqual([err('bad_request', 400, 'Bad request', 'Strings must not contain NUL characters (\\u0000).')]);
    else expect(r.json.errors.map((e: any) => e.source)).toEqual([{ pointer: '/data/attributes/external_customer_id' }]);
  });

  it.each(['%2Fx', '%3Fa', '%23a', '%2F', '%5Cx', '%40x', '%3A80', '%20'])(
    'a domain name with URL syntax after it (end1.example%s) is not the domain → 422 Not ACE-encodable.',
    async (suffix) => {
      const r = await call(t.app, 'GET', `/domains/${x.end1.domain}${suffix}`, { token: x.end1.token });
      expect(r.status).toBe(422);
      expect(r.json.errors).toEqual([err('invalid_api_data', 422, 'Invalid data', 'Not ACE-encodable.')]);
    },
  );

  it.each([
    ['trailing slash on one resource', (x: Tenants) => `/customers/${x.end1.customerId}/`],
    ['trailing slash on a domain', (x: Tenants) => `/domains/${x.end1.domain}/`],
    ['an empty id', () => '/customers/'],
    ['an id with a leading zero', (x: Tenants) => `/customers/0${x.end1.customerId}`],
    ['an id longer than any', () => `/packages/${'9'.repeat(300)}`],
  ])('%s → 404 resource_not_found, never 400 or 405', async (_n, url) => {
    const r = await call(t.app, 'GET', url(x), { token: x.end1.token });
    expect(r.status).toBe(404);
    expect(r.json.errors[0]).toMatchObject({ id: 'resource_not_found', status: '404' });
  });

  it('POST /healthz → 405 with Allow, and it counts against the client budget', async () => {
    const r = await call(t.app, 'POST', '/healthz');
    expect(r.status).toBe(405);
    expect(r.headers.allow).toBe('GET');
    expect(r.headers['ratelimit-limit']).toBeDefined();
    const docs404 = await call(t.app, 'GET', '/docs/no-such-thing');
    expect(docs404.status).toBe(404);
    expect(docs404.headers['ratelimit-limit']).toBeDefined();
    const health = await call(t.app, 'GET', '/healthz');
    expect(health.status).toBe(200);
    expect(health.headers['ratelimit-limit']).toBeUndefined();
  });

  it('availability answers every taken name alike: a name hosted here tells nothing more', async () => {
    await t.admin.domains.createDomain({ name: 'secret-project.example', customerId: Number(x.solo.customerId), packageId: Number(x.solo.packageId) });
    const r = await call(t.app, 'GET', `/domain-availability/secret-project.example,${x.end2.domain}`, { token: x.end1.token });
    expect(r.status).toBe(200);
    expect(r.json.data.map((d: any) => d.attributes)).toEqual([
      { domain: 'secret-project.example', available: false, reason: 'Registered.' },
      { domain: x.end2.domain, available: false, reason: 'Registered.' },
    ]);
  });

  it('an absolute-form request target never puts the client\'s host into links', async () => {
    const port = await listen(t.app);
    const r = await rawRequest(
      port,
      `GET http://evil.example/customers?filter[x]=1 HTTP/1.1\r\nHost: evil.example\r\nAuthorization: token ${x.end1.token}\r\nConnection: close\r\n\r\n`,
    );
    expect(JSON.parse(r.body).links).toEqual({ self: `${BASE}/customers?filter[x]=1` });
  });
});

describe('settings', () => {
  it('TRUST_PROXY entries are checked with every other setting and all problems are listed together', () => {
    let e: unknown;
    try {
      loadConfig({ TRUST_PROXY: 'foo,10.0.0.0/33,127.0.0.1,::1/64', PORT: 'abc' });
    } catch (caught) {
      e = caught;
    }
    expect(e).toBeInstanceOf(ConfigError);
    expect((e as ConfigError).problems).toEqual([
      'PORT: must match pattern "^[0-9]+$"',
      'TRUST_PROXY: "foo" is not an IP address or CIDR range',
      'TRUST_PROXY: "10.0.0.0/33" is not an IP address or CIDR range',
    ]);
    expect(loadConfig({ TRUST_PROXY: '127.0.0.1, 10.0.0.0/8,::1/128' }).trustProxy).toEqual(['127.0.0.1', '10.0.0.0/8', '::1/128']);
  });
});
