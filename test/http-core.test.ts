// The HTTP core of issue 2 item 3, against GET /customers and PATCH /customers/{id}: Accept
// versioning (spec §9, API-NOTES §2), response content types (§5.7), request bodies (spec §4,
// API-NOTES §1.7, §3), 404/405, double slashes and raw brackets (API-NOTES §1.8–1.9), filters and
// paging (spec §4.1), authentication (spec §5, API-NOTES §4), secret-free logs with request ids
// (issue 2 item 7) and the request/header timeouts of a listening server (issue 2 item 4).
import net from 'node:net';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE, ENGINES, call, createTestApp, freshStore, type TestApp, type TestStore } from './helpers/app.js';
import { seedTenants, type Tenant, type Tenants } from './helpers/tenants.js';

const VND = 'application/vnd.api+json';
const JSON_CT = 'application/json';
const basic = (user: string, password: string) => 'Basic ' + Buffer.from(`${user}:${password}`).toString('base64');

/** The whole wire representation of a seeded tenant's customer (API-NOTES §6). */
function customer(key: string, c: Tenant, reseller: Tenant | null, isReseller = false) {
  return {
    type: 'customer',
    id: c.customerId,
    attributes: {
      organization: `${key} GmbH`,
      name: `${key} Admin`,
      email: `admin@${key}.example`,
      phone: '+49 30 1234567',
      is_reseller: isReseller,
      is_login_disabled: false,
      external_customer_id: null,
    },
    relationships: { reseller: { data: reseller ? { type: 'customer', id: reseller.customerId } : null } },
    links: { self: `${BASE}/customers/${c.customerId}` },
  };
}

const errorDoc = (url: string, error: Record<string, unknown>) => ({ errors: [error], links: { self: `${BASE}${url}` } });

const UNAUTHORIZED = (detail: string) => ({ id: 'unauthorized', status: '401', title: 'Authentication required', detail });
const NOT_ACCEPTABLE = (vendor: string) => ({
  id: 'not_acceptable',
  status: '406',
  title: 'Not acceptable',
  detail: `Accept names no supported representation; use application/vnd.${vendor}.v1+json or application/vnd.api+json.`,
});
const UNSUPPORTED = {
  id: 'unsupported_media_type',
  status: '415',
  title: 'Unsupported media type',
  detail: 'Send request bodies as application/json or application/vnd.api+json.',
};

describe.each(ENGINES)('HTTP core on %s', (engine) => {
  let ts: TestStore;
  let t: TestApp;
  let vario: TestApp;
  let x: Tenants;
  let resellerList: unknown;

  beforeAll(async () => {
    ts = await freshStore(engine);
    t = await createTestApp(engine, { BODY_LIMIT_BYTES: '2048' }, { store: ts });
    vario = await createTestApp(engine, { API_VENDOR: 'variomedia' }, { store: ts });
    x = await seedTenants(t.admin);
    resellerList = {
      links: { self: `${BASE}/customers` },
      data: [customer('reseller', x.reseller, null, true), customer('end1', x.end1, x.reseller), customer('end2', x.end2, x.reseller)],
      meta: { total: 3 },
    };
  });
  afterAll(async () => {
    await t?.close();
    await vario?.close();
    await ts?.drop();
  });

  const patchBody = (id: string, attributes: Record<string, unknown> = { is_login_disabled: false }) =>
    JSON.stringify({ data: { type: 'customer', id, attributes } });

  describe('Accept versioning (spec §9, API-NOTES §2)', () => {
    it.each([
      ['application/vnd.hostplane.v1+json', VND],
      ['application/vnd.api+json', VND],
      ['application/json', JSON_CT],
      ['*/*', JSON_CT],
      ['application/*', JSON_CT],
      ['text/html,application/xhtml+xml,*/*;q=0.8', JSON_CT],
      ['application/vnd.hostplane.v2+json, application/json;q=0.5', VND],
      [undefined, JSON_CT],
      ['', JSON_CT],
    ])('Accept %j is served as the newest version, content type %s', async (accept, type) => {
      const headers: Record<string, string> = accept === undefined ? {} : { accept };
      const r = await call(t.app, 'GET', '/customers', { token: x.reseller.token, headers });
      expect(r.status).toBe(200);
      expect(r.headers['content-type']).toBe(type);
      expect(r.json).toEqual(resellerList);
    });

    it.each([
      ['application/vnd.hostplane.v2+json', VND],
      ['application/vnd.hostplane.v0+json', VND],
      ['application/vnd.variomedia.v1+json', VND],
      ['application/vnd.api+json;q=0', JSON_CT],
      ['text/html', JSON_CT],
      ['application/xml, text/plain', JSON_CT],
    ])('Accept %j → 406 not_acceptable (content type %s)', async (accept, type) => {
      const r = await call(t.app, 'GET', '/customers', { token: x.reseller.token, headers: { accept } });
      expect(r.status).toBe(406);
      expect(r.headers['content-type']).toBe(type);
      expect(r.json).toEqual(errorDoc('/customers', NOT_ACCEPTABLE('hostplane')));
    });

    it('API_VENDOR=variomedia serves application/vnd.variomedia.v1+json and refuses hostplane\'s type', async () => {
      const ok = await call(vario.app, 'GET', '/customers', { token: x.reseller.token, headers: { accept: 'application/vnd.variomedia.v1+json' } });
      expect(ok.status).toBe(200);
      expect(ok.headers['content-type']).toBe(VND);
      expect(ok.json).toEqual(resellerList);
      for (const accept of ['application/vnd.hostplane.v1+json', 'application/vnd.variomedia.v2+json']) {
        const r = await call(vario.app, 'GET', '/customers', { token: x.reseller.token, headers: { accept } });
        expect(r.status).toBe(406);
        expect(r.headers['content-type']).toBe(VND);
        expect(r.json).toEqual(errorDoc('/customers', NOT_ACCEPTABLE('variomedia')));
      }
    });

    it('406 is decided before authentication (no token needed to learn the versions)', async () => {
      const r = await call(t.app, 'GET', '/customers', { headers: { accept: 'application/vnd.hostplane.v2+json' } });
      expect(r.status).toBe(406);
      expect(r.json).toEqual(errorDoc('/customers', NOT_ACCEPTABLE('hostplane')));
    });
  });

  describe('response content type (spec §5.7, API-NOTES §2)', () => {
    it('follows a JSON:API Content-Type on a GET without body (API-NOTES §1.7)', async () => {
      const r = await call(t.app, 'GET', '/customers', { token: x.reseller.token, headers: { 'content-type': VND } });
      expect(r.status).toBe(200);
      expect(r.headers['content-type']).toBe(VND);
      expect(r.json).toEqual(resellerList);
    });

    it('PATCH: application/json in and no Accept → application/json; JSON:API in either header → vnd.api+json', async () => {
      const id = x.end1.customerId;
      const cases: [Record<string, string>, string][] = [
        [{ 'content-type': JSON_CT }, JSON_CT],
        [{ 'content-type': 'application/json; charset=utf-8' }, JSON_CT],
        [{ 'content-type': VND }, VND],
        [{ 'content-type': JSON_CT, accept: VND }, VND],
        [{ 'content-type': JSON_CT, accept: 'application/vnd.hostplane.v1+json' }, VND],
      ];
      for (const [headers, type] of cases) {
        const r = await call(t.app, 'PATCH', `/customers/${id}`, { token: x.reseller.token, body: patchBody(id), headers });
        expect(r.status, JSON.stringify(headers)).toBe(200);
        expect(r.headers['content-type'], JSON.stringify(headers)).toBe(type);
        expect(r.json).toEqual({ data: customer('end1', x.end1, x.reseller), links: { self: `${BASE}/customers/${id}` } });
      }
    });

    it.each([
      ['401', 'GET', '/customers', false],
      ['404', 'GET', '/no-such-endpoint', true],
      ['405', 'DELETE', '/customers', true],
    ] as const)('error documents (%s) follow the same rule, with no charset parameter', async (status, method, url, withToken) => {
      for (const [headers, type] of [
        [{}, JSON_CT],
        [{ accept: VND }, VND],
        [{ accept: 'application/vnd.hostplane.v1+json' }, VND],
        [{ 'content-type': VND }, VND],
        [{ accept: '*/*' }, JSON_CT],
      ] as [Record<string, string>, string][]) {
        const r = await call(t.app, method, url, { token: withToken ? x.reseller.token : undefined, headers });
        expect(String(r.status)).toBe(status);
        expect(r.headers['content-type'], JSON.stringify(headers)).toBe(type);
        expect(r.json.errors[0].status).toBe(status);
      }
    });
  });

  describe('request bodies (spec §4, §5.7; API-NOTES §1.7, §3)', () => {
    it.each(['text/plain', 'application/x-www-form-urlencoded', 'application/xml', 'application/jsonx', 'application/vnd.hostplane.v1+json'])(
      'PATCH with Content-Type %s → 415 unsupported_media_type, nothing changed',
      async (ct) => {
        const id = x.end1.customerId;
        const r = await call(t.app, 'PATCH', `/customers/${id}`, {
          token: x.reseller.token,
          body: patchBody(id, { external_customer_id: 'via-415' }),
          headers: { 'content-type': ct },
        });
        expect(r.status).toBe(415);
        expect(r.json).toEqual(errorDoc(`/customers/${id}`, UNSUPPORTED));
        const after = await call(t.app, 'GET', `/customers/${id}`, { token: x.end1.token });
        expect(after.json.data.attributes.external_customer_id).toBe(null);
      },
    );

    it('PATCH with a body and no Content-Type → 415', async () => {
      const id = x.end1.customerId;
      const res = await t.app.inject({
        method: 'PATCH',
        url: `/customers/${id}`,
        headers: { authorization: `token ${x.reseller.token}` },
        payload: patchBody(id),
      });
      expect(res.statusCode).toBe(415);
      expect(res.headers['content-type']).toBe(JSON_CT);
      expect(JSON.parse(res.body)).toEqual(errorDoc(`/customers/${id}`, UNSUPPORTED));
    });

    it('POST on /customers (no POST route) → 405 whatever the Content-Type, never 415', async () => {
      for (const ct of [undefined, 'text/plain', VND]) {
        const res = await t.app.inject({
          method: 'POST',
          url: '/customers',
          headers: { authorization: `token ${x.reseller.token}`, ...(ct ? { 'content-type': ct } : {}) },
          payload: '{"data":{}}',
        });
        expect(res.statusCode).toBe(405);
        expect(res.headers.allow).toBe('GET');
      }
    });

    it('malformed JSON → 400 bad_request', async () => {
      const id = x.end1.customerId;
      for (const body of ['{bad', '{"data":', '{"data":{}}x']) {
        const r = await call(t.app, 'PATCH', `/customers/${id}`, { token: x.reseller.token, body });
        expect(r.status).toBe(400);
        expect(r.headers['content-type']).toBe(VND);
        expect(r.json).toEqual(
          errorDoc(`/customers/${id}`, { id: 'bad_request', status: '400', title: 'Bad request', detail: expect.stringMatching(/^Malformed JSON: /) }),
        );
      }
    });

    it('a body over BODY_LIMIT_BYTES → 413 payload_too_large', async () => {
      const id = x.end1.customerId;
      const body = patchBody(id, { external_customer_id: 'x'.repeat(3000) });
      const r = await call(t.app, 'PATCH', `/customers/${id}`, { token: x.reseller.token, body });
      expect(r.status).toBe(413);
      expect(r.json).toEqual(
        errorDoc(`/customers/${id}`, { id: 'payload_too_large', status: '413', title: 'Payload too large', detail: 'The request body is too large.' }),
      );
    });

    it.each(['[]', 'null', '"x"', '1', 'true', ''])('a JSON body that is not an object (%j) → 422 invalid_api_data, not 500', async (body) => {
      const id = x.end1.customerId;
      const r = await call(t.app, 'PATCH', `/customers/${id}`, { token: x.reseller.token, body, headers: { 'content-type': VND } });
      expect(r.status).toBe(422);
      expect(r.json).toEqual(
        errorDoc(`/customers/${id}`, { id: 'invalid_api_data', status: '422', title: 'Invalid data', detail: 'Must be object.', source: { pointer: '/' } }),
      );
    });

    it('a "__proto__" attribute is an unknown attribute (422), not a prototype change', async () => {
      const id = x.end1.customerId;
      const body = `{"data":{"type":"customer","id":"${id}","attributes":{"__proto__":{"is_login_disabled":true}}}}`;
      const r = await call(t.app, 'PATCH', `/customers/${id}`, { token: x.reseller.token, body });
      expect(r.status).toBe(422);
      expect(r.json).toEqual(
        errorDoc(`/customers/${id}`, {
          id: 'invalid_api_data',
          status: '422',
          title: 'Invalid data',
          detail: 'Unknown or read-only attribute "__proto__".',
          source: { pointer: '/data/attributes/__proto__' },
        }),
      );
    });

    it('GET and DELETE with Content-Type application/vnd.api+json and an empty body are accepted (API-NOTES §1.7)', async () => {
      const get = await call(t.app, 'GET', '/customers', { token: x.reseller.token, headers: { 'content-type': VND }, body: '' });
      expect(get.status).toBe(200);
      expect(get.json).toEqual(resellerList);
      // /customers/{id} has no DELETE: the answer is the 405 of the path, not a body error.
      const del = await call(t.app, 'DELETE', `/customers/${x.end1.customerId}`, { token: x.reseller.token, headers: { 'content-type': VND }, body: '' });
      expect(del.status).toBe(405);
      expect(del.headers.allow).toBe('GET, PATCH');
      expect(del.json).toEqual(
        errorDoc(`/customers/${x.end1.customerId}`, { id: 'method_not_allowed', status: '405', title: 'Method not allowed', detail: 'Use GET, PATCH on this path.' }),
      );
    });
  });

  describe('routing (API-NOTES §1.8, §3)', () => {
    it.each([
      ['DELETE', '/customers/{id}', 'GET, PATCH'],
      ['PUT', '/customers/{id}', 'GET, PATCH'],
      ['POST', '/customers/{id}', 'GET, PATCH'],
      ['DELETE', '/customers', 'GET'],
      ['PATCH', '/customers', 'GET'],
    ])('%s %s → 405 method_not_allowed with Allow: %s', async (method, path, allow) => {
      const url = path.replace('{id}', x.end1.customerId);
      const r = await call(t.app, method as 'GET', url, { token: x.reseller.token });
      expect(r.status).toBe(405);
      expect(r.headers.allow).toBe(allow);
      expect(r.json).toEqual(errorDoc(url, { id: 'method_not_allowed', status: '405', title: 'Method not allowed', detail: `Use ${allow} on this path.` }));
    });

    it.each(['/no-such-endpoint', '/customers/1/extra', '/customer', '/Customers'])('unknown path %s → 404 resource_not_found', async (url) => {
      const r = await call(t.app, 'GET', url, { token: x.reseller.token });
      expect(r.status).toBe(404);
      expect(r.json).toEqual(errorDoc(url, { id: 'resource_not_found', status: '404', title: 'Resource not found', detail: 'No such endpoint.' }));
    });

    it('a known resource path with an unknown id → 404 from the resource, after authentication', async () => {
      const r = await call(t.app, 'GET', '/customers/99999999', { token: x.reseller.token });
      expect(r.status).toBe(404);
      expect(r.json.errors[0]).toMatchObject({ id: 'resource_not_found', status: '404' });
      const anon = await call(t.app, 'GET', '/customers/99999999');
      expect(anon.status).toBe(401);
    });

    it('double slashes route like single ones: //customers/<id>, //customers (API-NOTES §1.8)', async () => {
      const id = x.end1.customerId;
      const one = await call(t.app, 'GET', `//customers/${id}`, { token: x.reseller.token });
      expect(one.status).toBe(200);
      // links.self echoes the request URL as sent.
      expect(one.json).toEqual({ data: customer('end1', x.end1, x.reseller), links: { self: `${BASE}//customers/${id}` } });
      const list = await call(t.app, 'GET', '//customers', { token: x.reseller.token });
      expect(list.status).toBe(200);
      expect(list.json.data).toEqual((resellerList as { data: unknown }).data);
      const patch = await call(t.app, 'PATCH', `//customers/${id}`, { token: x.reseller.token, body: patchBody(id) });
      expect(patch.status).toBe(200);
      expect(patch.json.data).toEqual(customer('end1', x.end1, x.reseller));
      const wrong = await call(t.app, 'DELETE', `//customers/${id}`, { token: x.reseller.token });
      expect(wrong.status).toBe(405);
      expect(wrong.headers.allow).toBe('GET, PATCH');
    });
  });

  describe('filters and paging (spec §4.1, API-NOTES §1.9, §2)', () => {
    it.each(['filter[x]=1', 'filter%5Bx%5D=1', 'filter%5bx%5d=1'])('an unknown filter (%s) → 400 invalid_parameter naming it', async (qs) => {
      const r = await call(t.app, 'GET', `/customers?${qs}`, { token: x.reseller.token });
      expect(r.status).toBe(400);
      expect(r.json).toEqual(
        errorDoc(`/customers?${qs}`, {
          id: 'invalid_parameter',
          status: '400',
          title: 'Invalid query parameter',
          detail: 'This list has no filters.',
          source: { parameter: 'filter[x]' },
        }),
      );
    });

    it.each([
      ['page[size]=0', 'page[size]', 'page[size] must be between 1 and 1000.'],
      ['page[size]=1001', 'page[size]', 'page[size] must be between 1 and 1000.'],
      ['page[size]=abc', 'page[size]', 'page[size] must be a whole number.'],
      ['page[size]=-1', 'page[size]', 'page[size] must be a whole number.'],
      ['page[size]=1.5', 'page[size]', 'page[size] must be a whole number.'],
      ['page[size]=', 'page[size]', 'page[size] must be a whole number.'],
      ['page%5Bsize%5D=x', 'page[size]', 'page[size] must be a whole number.'],
      ['page[number]=0', 'page[number]', 'page[number] must be between 1 and 999999999.'],
      ['page[number]=1234567890', 'page[number]', 'page[number] must be between 1 and 999999999.'],
      ['page[number]=99999999999999999999', 'page[number]', 'page[number] must be between 1 and 999999999.'],
      ['page[size]=001001', 'page[size]', 'page[size] must be between 1 and 1000.'],
      ['page[number]=1e3', 'page[number]', 'page[number] must be a whole number.'],
      ['page[size]=1&page[size]=2', 'page[size]', 'page[size] must be given once.'],
      ['page[offset]=1', 'page[offset]', 'Unknown query parameter page[offset].'],
      ['sort=name', 'sort', 'Unknown query parameter sort.'],
    ])('bad paging or parameter %s → 400 invalid_parameter', async (qs, parameter, detail) => {
      const r = await call(t.app, 'GET', `/customers?${qs}`, { token: x.reseller.token });
      expect(r.status).toBe(400);
      expect(r.json).toEqual(errorDoc(`/customers?${qs}`, { id: 'invalid_parameter', status: '400', title: 'Invalid query parameter', detail, source: { parameter } }));
    });

    it('page[size]=1 pages through the list with absolute links in raw brackets and meta.page', async () => {
      const all = (resellerList as { data: unknown[] }).data;
      const link = (n: number) => `${BASE}/customers?page[number]=${n}&page[size]=1`;
      for (const n of [1, 2, 3]) {
        const url = n === 1 ? '/customers?page[size]=1' : `/customers?page%5Bsize%5D=1&page%5Bnumber%5D=${n}`;
        const r = await call(t.app, 'GET', url, { token: x.reseller.token });
        expect(r.status).toBe(200);
        expect(r.json).toEqual({
          links: { self: `${BASE}${url}`, first: link(1), last: link(3), prev: n > 1 ? link(n - 1) : null, next: n < 3 ? link(n + 1) : null },
          data: [all[n - 1]],
          meta: { total: 3, page: { number: n, size: 1, total_pages: 3 } },
        });
        // links come first, data right after them (API-NOTES §1.11)
        expect(r.body.startsWith('{"links":{"self":')).toBe(true);
      }
      const past = await call(t.app, 'GET', '/customers?page[number]=9&page[size]=2', { token: x.reseller.token });
      expect(past.json).toEqual({
        links: {
          self: `${BASE}/customers?page[number]=9&page[size]=2`,
          first: `${BASE}/customers?page[number]=1&page[size]=2`,
          last: `${BASE}/customers?page[number]=2&page[size]=2`,
          prev: `${BASE}/customers?page[number]=2&page[size]=2`,
          next: null,
        },
        data: [],
        meta: { total: 3, page: { number: 9, size: 2, total_pages: 2 } },
      });
    });
    it('the largest page number and size are served (empty page), never a 500 from the OFFSET', async () => {
      const url = '/customers?page[number]=999999999&page[size]=1000';
      const r = await call(t.app, 'GET', url, { token: x.reseller.token });
      expect(r.status).toBe(200);
      expect(r.json).toEqual({
        links: {
          self: `${BASE}${url}`,
          first: `${BASE}/customers?page[number]=1&page[size]=1000`,
          last: `${BASE}/customers?page[number]=1&page[size]=1000`,
          prev: `${BASE}/customers?page[number]=1&page[size]=1000`,
          next: null,
        },
        data: [],
        meta: { total: 3, page: { number: 999999999, size: 1000, total_pages: 1 } },
      });
    });
  });

  describe('authentication (spec §5, API-NOTES §4)', () => {
    const WWW = 'Basic realm="API"';

    it('token T, Token T and Basic token:T all authenticate', async () => {
      for (const authorization of [`token ${x.reseller.token}`, `Token ${x.reseller.token}`, basic('token', x.reseller.token), `basic ${Buffer.from(`token:${x.reseller.token}`).toString('base64')}`]) {
        const r = await call(t.app, 'GET', '/customers', { headers: { authorization } });
        expect(r.status, authorization.slice(0, 6)).toBe(200);
        expect(r.json).toEqual(resellerList);
      }
    });

    it.each([
      ['missing', undefined, 'Missing Authorization header.'],
      ['unknown token', 'token hp_not_a_real_token', 'Invalid or revoked API token.'],
      ['empty Basic password', basic('token', ''), 'Invalid or revoked API token.'],
      ['Bearer scheme', 'Bearer hp_abc', 'Unsupported Authorization header; use "token <API_TOKEN>".'],
      ['scheme only', 'token', 'Unsupported Authorization header; use "token <API_TOKEN>".'],
      ['Basic without colon', 'Basic ' + Buffer.from('tokenonly').toString('base64'), 'Unsupported Authorization header; use "token <API_TOKEN>".'],
      ['Basic garbage', 'Basic !!!', 'Unsupported Authorization header; use "token <API_TOKEN>".'],
      ['Basic other user', basic('admin', 'secret'), 'Invalid credentials.'],
    ])('%s → 401 unauthorized with WWW-Authenticate', async (_name, authorization, detail) => {
      const r = await call(t.app, 'GET', '/customers', { headers: authorization ? { authorization } : {} });
      expect(r.status).toBe(401);
      expect(r.headers['www-authenticate']).toBe(WWW);
      expect(r.json).toEqual(errorDoc('/customers', UNAUTHORIZED(detail)));
    });

    it('the reseller\'s legacy password is refused on /customers (spec §5.6)', async () => {
      await t.admin.setLegacyPassword(Number(x.reseller.customerId), 'legacy-password-1234');
      const r = await call(t.app, 'GET', '/customers', { headers: { authorization: basic(x.reseller.customerId, 'legacy-password-1234') } });
      expect(r.status).toBe(401);
      expect(r.headers['www-authenticate']).toBe(WWW);
      expect(r.json).toEqual(errorDoc('/customers', UNAUTHORIZED('Invalid credentials.')));
    });

    it('authentication comes before the body: PATCH without token and with a broken body → 401', async () => {
      const id = x.end1.customerId;
      const r = await call(t.app, 'PATCH', `/customers/${id}`, { body: '{broken', headers: { 'content-type': 'text/plain' } });
      expect(r.status).toBe(401);
      expect(r.json).toEqual(errorDoc(`/customers/${id}`, UNAUTHORIZED('Missing Authorization header.')));
    });

    it('a revoked token → 401 at once', async () => {
      const { tokenId, token } = await t.admin.issueToken(x.solo.contactId, 'to revoke');
      expect((await call(t.app, 'GET', '/customers', { token })).status).toBe(200);
      await t.admin.revokeToken(tokenId);
      for (const authorization of [`token ${token}`, basic('token', token)]) {
        const r = await call(t.app, 'GET', '/customers', { headers: { authorization } });
        expect(r.status).toBe(401);
        expect(r.headers['www-authenticate']).toBe(WWW);
        expect(r.json).toEqual(errorDoc('/customers', UNAUTHORIZED('Invalid or revoked API token.')));
      }
      // the customer's other token keeps working
      expect((await call(t.app, 'GET', '/customers', { token: x.solo.token })).status).toBe(200);
    });

    it('deleting a contact invalidates its token at once (spec §5.5)', async () => {
      const { contactId } = await t.admin.createContact(Number(x.solo.customerId), { name: 'Second', email: 'second@solo.example' });
      const { token } = await t.admin.issueToken(contactId, 'second');
      const before = await call(t.app, 'GET', '/customers', { token });
      expect(before.status).toBe(200);
      expect(before.json).toEqual({ links: { self: `${BASE}/customers` }, data: [customer('solo', x.solo, null)], meta: { total: 1 } });
      await t.admin.deleteContact(contactId);
      const r = await call(t.app, 'GET', '/customers', { token });
      expect(r.status).toBe(401);
      expect(r.headers['www-authenticate']).toBe(WWW);
      expect(r.json).toEqual(errorDoc('/customers', UNAUTHORIZED('Invalid or revoked API token.')));
      expect((await call(t.app, 'GET', '/customers', { token: x.solo.token })).status).toBe(200);
    });
  });

  describe('logs (issue 2 item 7)', () => {
    it('carry request ids and never a token, a Basic credential or a password', async () => {
      const lines: string[] = [];
      const logStream = new PassThrough();
      logStream.on('data', (chunk) => lines.push(...String(chunk).split('\n').filter(Boolean)));
      const logged = await createTestApp(engine, { LOG_LEVEL: 'info' }, { store: ts, logStream });
      try {
        const legacy = 'legacy-password-5678';
        await logged.admin.setLegacyPassword(Number(x.reseller.customerId), legacy);
        const secrets = [
          x.reseller.token,
          x.end1.token,
          basic('token', x.end1.token).slice(6),
          basic(x.reseller.customerId, legacy).slice(6),
          legacy,
          'hp_forged_token_value',
        ];
        const sent = [
          await call(logged.app, 'GET', '/customers', { token: x.reseller.token, headers: { 'x-request-id': 'req-abc.123' } }),
          await call(logged.app, 'GET', '/customers', { headers: { authorization: basic('token', x.end1.token) } }),
          await call(logged.app, 'GET', '/customers', { headers: { authorization: basic(x.reseller.customerId, legacy) } }),
          await call(logged.app, 'GET', '/customers', { headers: { authorization: 'token hp_forged_token_value' } }),
          await call(logged.app, 'PATCH', `/customers/${x.end1.customerId}`, { token: x.reseller.token, body: '{bad json' }),
          await call(logged.app, 'GET', '/nope', { token: x.end1.token }),
        ];
        expect(sent.map((r) => r.status)).toEqual([200, 200, 401, 401, 400, 404]);
        // Every response names its request id; a well-formed client id is kept.
        expect(sent[0].headers['x-request-id']).toBe('req-abc.123');
        for (const r of sent) expect(r.headers['x-request-id']).toMatch(/^[A-Za-z0-9._-]{1,64}$/);
        const ids = new Set(sent.map((r) => String(r.headers['x-request-id'])));
        expect(ids.size).toBe(sent.length);

        expect(lines.length).toBeGreaterThanOrEqual(sent.length);
        const parsed = lines.map((l) => JSON.parse(l));
        for (const line of lines) for (const s of secrets) expect(line.includes(s), `a log line contains a secret: ${line}`).toBe(false);
        const reqLines = parsed.filter((p) => p.msg === 'request');
        for (const p of reqLines) expect(p.reqId).toEqual(expect.any(String));
        for (const id of ids) expect(reqLines.filter((p) => p.reqId === id).length, `log lines of ${id}`).toBe(1);
      } finally {
        await logged.close();
      }
    });

    it('a forged x-request-id that could break a log line is replaced', async () => {
      const r = await call(t.app, 'GET', '/customers', { token: x.reseller.token, headers: { 'x-request-id': 'evil\u0000id with spaces' } });
      expect(r.status).toBe(200);
      expect(r.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    });
  });
});

// Slow clients (issue 2 item 4): a real listening server with short timeouts. The slow client never
// reaches the database, so one engine is enough.
describe('timeouts of a listening server', () => {
  let t: TestApp;
  let x: Tenants;
  let port: number;
  beforeAll(async () => {
    t = await createTestApp('sqlite', { REQUEST_TIMEOUT_MS: '1500', HEADERS_TIMEOUT_MS: '1000', KEEP_ALIVE_TIMEOUT_MS: '1000' });
    x = await seedTenants(t.admin);
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    port = (t.app.server.address() as net.AddressInfo).port;
  });
  afterAll(() => t?.close());

  /** Sends `head` at once, then `drip` one byte every `gapMs`; resolves when the server closes the socket. */
  function slowClient(head: string, drip: string, gapMs = 200) {
    return new Promise<{ ms: number; response: string; dripped: number }>((resolve, reject) => {
      const started = Date.now();
      let response = '';
      let i = 0;
      const socket = net.connect(port, '127.0.0.1', () => {
        if (head) socket.write(head);
      });
      const timer = setInterval(() => {
        if (i < drip.length && !socket.destroyed) socket.write(drip[i++]);
      }, gapMs);
      const guard = setTimeout(() => {
        socket.destroy();
        reject(new Error(`socket still open after 8 s (sent ${i} bytes)`));
      }, 8000);
      socket.on('data', (d) => (response += d));
      socket.on('error', () => {});
      socket.on('close', () => {
        clearInterval(timer);
        clearTimeout(guard);
        resolve({ ms: Date.now() - started, response, dripped: i });
      });
    });
  }

  it('a client sending its headers byte by byte is cut off within seconds (HEADERS_TIMEOUT_MS)', async () => {
    const r = await slowClient('GET /customers HTTP/1.1\r\nHost: api.test\r\n', `X-Slow: ${'a'.repeat(200)}\r\n\r\n`);
    expect(r.ms).toBeLessThan(5000);
    expect(r.dripped).toBeLessThan(200);
    expect(r.response).toMatch(/^HTTP\/1\.1 408 /);
    expect(r.response.split('\r\n\r\n')[1]).toBe('{"errors":[{"id":"request_timeout","status":"408","title":"Request timeout"}]}');
  });

  it('a client that sends its headers and then the body slowly is cut off (REQUEST_TIMEOUT_MS)', async () => {
    const head =
      `PATCH /customers/${x.end1.customerId} HTTP/1.1\r\nHost: api.test\r\nAuthorization: token ${x.reseller.token}\r\n` +
      `Content-Type: application/json\r\nContent-Length: 200\r\n\r\n`;
    const r = await slowClient(head, 'a'.repeat(200));
    expect(r.ms).toBeLessThan(5000);
    expect(r.dripped).toBeLessThan(200);
    expect(r.response).toMatch(/^HTTP\/1\.1 408 /);
    expect(r.response.split('\r\n\r\n')[1]).toBe('{"errors":[{"id":"request_timeout","status":"408","title":"Request timeout"}]}');
  });

  it('an unauthenticated slow body is answered 401 and the socket still closes within seconds', async () => {
    const head =
      `PATCH /customers/${x.end1.customerId} HTTP/1.1\r\nHost: api.test\r\n` +
      `Content-Type: application/json\r\nContent-Length: 200\r\n\r\n`;
    const r = await slowClient(head, 'a'.repeat(200));
    expect(r.ms).toBeLessThan(5000);
    expect(r.dripped).toBeLessThan(200);
    expect(r.response).toMatch(/^HTTP\/1\.1 401 /);
  });

  it('a connection that sends nothing is closed within seconds', async () => {
    const r = await slowClient('', '');
    expect(r.ms).toBeLessThan(5000);
  });

  it('a normal request on the same server is answered', async () => {
    const res = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });
});
